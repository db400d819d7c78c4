package check

import (
	"context"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/sources"
)

// files is a small repository: repository-relative path → content (leading newlines
// trimmed).
type files = map[string]string

// writeRepo writes files into a new folder and opens it as a working tree.
func writeRepo(t testing.TB, fs files) *sources.Tree {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, fs)
	tree, err := sources.OpenWorkTree(root, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// writeFiles writes files into root, each without its leading newlines.
func writeFiles(t testing.TB, root string, fs files) {
	t.Helper()
	trimmed := make(files, len(fs))
	for p, content := range fs {
		trimmed[p] = strings.TrimLeft(content, "\n")
	}
	gittest.Write(t, root, trimmed)
}

func run(t testing.TB, tree *sources.Tree, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), tree, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Manifests of the test repositories.
const (
	clusterScopeKustomization = "resources:\n- namespace.yaml\n- operatorgroup.yaml\n"
	namespaceTeamA            = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
	operatorGroupTeamA        = `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: team-a
  namespace: team-a
spec:
  targetNamespaces: [team-a]
`
	subscriptionEtcd = `
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
spec:
  channel: singlenamespace-alpha
  name: etcd
  source: community-operators
  sourceNamespace: openshift-marketplace
`
	configTwoApps = `
apps:
- {name: cluster-scope, path: cluster-scope}
- {name: team-a, path: team-a, namespace: team-a}
`
)

// passingRepo is a cluster-scope app with team-a's Namespace and OperatorGroup, and the
// app team-a with a Subscription: no rule is broken.
func passingRepo() files {
	return files{
		"olmsync.yaml":                     configTwoApps,
		"cluster-scope/kustomization.yaml": clusterScopeKustomization,
		"cluster-scope/namespace.yaml":     namespaceTeamA,
		"cluster-scope/operatorgroup.yaml": operatorGroupTeamA,
		"team-a/subscription.yaml":         subscriptionEtcd,
	}
}

// ruleIDs lists the rule of each violation that is not waived.
func ruleIDs(res *Result) []string {
	var ids []string
	for _, v := range res.Violations {
		if !v.Waived {
			ids = append(ids, v.Rule)
		}
	}
	return ids
}
