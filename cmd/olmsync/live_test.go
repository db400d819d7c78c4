package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/report"
)

// The cluster state tests preview with the OLM preview's own small catalog: etcd
// (channel stable: v0.9.2, v0.9.3, v0.9.4 skipping v0.9.3; one namespace only) and
// future (minKubeVersion 1.99.0).
var previewCatalog = "community-operators=" + filepath.Join("..", "..", "check", "preview", "testdata", "catalog")

// clusterKubeVersion is the Kubernetes version of the clusters of clusterCases: what the
// pinned envtest kube-apiserver reports, and what their state folders say.
const clusterKubeVersion = "1.36.3"

// clusterCase is a cluster's objects and a repository's, and what the OLM preview says of
// the repository's Subscriptions without the cluster's objects and with them. The same
// table runs against a --cluster-state folder and, through --kubeconfig, against a real
// API server holding the same objects: the outcomes must be the same. Each case has
// namespaces of its own, since the API server keeps every case's objects.
type clusterCase struct {
	name    string
	cluster string            // YAML on the cluster
	git     map[string]string // the cluster-scope app's files, beside its olmsync.yaml
	without []string          // the outcome on a cluster of clusterKubeVersion without the objects
	want    []string          // the outcome with them
}

const (
	subscriptionStatus = "  lastUpdated: \"2026-01-05T10:00:00Z\"\n  state: AtLatestKnown\n"
	etcdInstallModes   = "  installModes:\n  - {type: OwnNamespace, supported: true}\n  - {type: SingleNamespace, supported: true}\n" +
		"  - {type: MultiNamespace, supported: false}\n  - {type: AllNamespaces, supported: false}\n"
)

// installedEtcd is a Subscription in ns that has installed the CSV etcd.<version>, and
// that CSV, Succeeded.
func installedEtcd(ns, version string) string {
	return fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: %[1]s}
spec: {name: etcd, channel: stable, source: community-operators, sourceNamespace: openshift-marketplace}
status:
  installedCSV: etcd.%[2]s
%[3]s---
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: etcd.%[2]s, namespace: %[1]s}
spec:
  displayName: etcd
  version: %[4]s
%[5]s  customresourcedefinitions:
    owned:
    - {name: etcdclusters.etcd.database.coreos.com, version: v1beta2, kind: EtcdCluster}
  install: {strategy: deployment}
status: {phase: Succeeded, reason: InstallSucceeded}
`, ns, version, subscriptionStatus, strings.TrimPrefix(version, "v"), etcdInstallModes)
}

func clusterGroup(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: %s, namespace: %s}\nspec: %s\n", name, ns, spec)
}

// gitSubscription is a namespace, its OperatorGroup (unless noGroup) and a Subscription to
// pkg in Git.
func gitSubscription(ns, pkg string, noGroup bool) map[string]string {
	files := map[string]string{
		"subscription.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: %s, namespace: %s}\n"+
			"spec: {name: %s, channel: stable, source: community-operators, sourceNamespace: openshift-marketplace}\n", pkg, ns, pkg),
	}
	if !noGroup {
		files["namespace.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n"
		files["group.yaml"] = clusterGroup(ns, ns, "{targetNamespaces: ["+ns+"]}")
	}
	return files
}

var clusterCases = []clusterCase{
	{
		name:    "an installed CSV upgrades along the channel",
		cluster: installedEtcd("live-upgrade", "v0.9.2"),
		git:     gitSubscription("live-upgrade", "etcd", false),
		without: []string{"live-upgrade/etcd Resolved installed= path=[etcd.v0.9.4] Succeeded/InstallSucceeded"},
		want:    []string{"live-upgrade/etcd Resolved installed=etcd.v0.9.2 path=[etcd.v0.9.4] Succeeded/InstallSucceeded"},
	},
	{
		name:    "an installed CSV with no upgrade path",
		cluster: installedEtcd("live-stuck", "v0.9.0"),
		git:     gitSubscription("live-stuck", "etcd", false),
		without: []string{"live-stuck/etcd Resolved installed= path=[etcd.v0.9.4] Succeeded/InstallSucceeded"},
		want:    []string{"live-stuck/etcd Failed installed=etcd.v0.9.0 path=[] Succeeded/InstallSucceeded OLM005"},
	},
	{
		name:    "a second OperatorGroup on the cluster",
		cluster: clusterGroup("live-two", "other", "{targetNamespaces: [live-two]}"),
		git:     gitSubscription("live-two", "etcd", false),
		without: []string{"live-two/etcd Resolved installed= path=[etcd.v0.9.4] Succeeded/InstallSucceeded"},
		want:    []string{"live-two/etcd Failed installed= path=[] OLM001"},
	},
	{
		name: "a group on the cluster selects namespaces by their labels",
		cluster: "apiVersion: v1\nkind: Namespace\nmetadata: {name: live-sel-a, labels: {olmsync.dev/test: sel}}\n---\n" +
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: live-sel-b, labels: {olmsync.dev/test: sel}}\n---\n" +
			clusterGroup("live-sel-a", "sel", "{selector: {matchLabels: {olmsync.dev/test: sel}}}"),
		git:     gitSubscription("live-sel-a", "etcd", true),
		without: []string{"live-sel-a/etcd Failed installed= path=[] OLM001"},
		want:    []string{"live-sel-a/etcd Resolved installed= path=[etcd.v0.9.4] Failed/UnsupportedOperatorGroup OLM002"},
	},
	{
		name:    "the cluster's version is below a CSV's minKubeVersion",
		git:     gitSubscription("live-future", "future", false),
		without: []string{"live-future/future Resolved installed= path=[future.v1.0.0] Pending/RequirementsNotMet OLM004"},
		want:    []string{"live-future/future Resolved installed= path=[future.v1.0.0] Pending/RequirementsNotMet OLM004"},
	},
}

// writeCaseRepo writes the case's repository: one cluster-scope app.
func writeCaseRepo(t *testing.T, c clusterCase) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n"}
	for name, content := range c.git {
		files["cluster-scope/"+name] = content
	}
	writeFiles(t, dir, files)
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// previewOutcome runs olmsync check with the preview and the given cluster flags, and
// says what it predicts: one line per Subscription with the OLM rules it breaks.
func previewOutcome(t *testing.T, repo string, clusterFlags ...string) []string {
	t.Helper()
	r, err := checkJSON(t, append([]string{repo, "--catalog", previewCatalog}, clusterFlags...)...)
	if err != nil && exitCode(err) != exitFindings {
		t.Fatalf("olmsync check %v: %v; problems %+v", clusterFlags, err, r.Problems)
	}
	return outcomeLines(r)
}

func outcomeLines(r *report.Report) []string {
	var out []string
	for _, s := range r.Subscriptions {
		line := fmt.Sprintf("%s %s installed=%s path=%v", s.ID(), s.Resolution.Status, s.Installed, s.Resolution.Path)
		if s.Outcome != nil {
			line += " " + s.Outcome.Phase + "/" + s.Outcome.Reason
		}
		for _, v := range r.Violations {
			if strings.HasPrefix(v.Rule, "OLM") && v.Object.Kind == "Subscription" && v.Object.Namespace == s.Namespace && v.Object.Name == s.Name {
				line += " " + v.Rule
			}
		}
		out = append(out, line)
	}
	return out
}

// TestClusterStateFolder runs clusterCases with --cluster-state: a folder holding only the
// cluster's version, then one with the case's objects too.
func TestClusterStateFolder(t *testing.T) {
	for _, c := range clusterCases {
		t.Run(c.name, func(t *testing.T) {
			repo := writeCaseRepo(t, c)
			state := t.TempDir()
			writeFiles(t, state, map[string]string{"version.yaml": "serverVersion:\n  gitVersion: v" + clusterKubeVersion + "\n"})
			if diff := cmp.Diff(c.without, previewOutcome(t, repo, "--cluster-state", state)); diff != "" {
				t.Errorf("without the objects (-want +got):\n%s", diff)
			}
			writeFiles(t, state, map[string]string{"olm.yaml": c.cluster})
			if diff := cmp.Diff(c.want, previewOutcome(t, repo, "--cluster-state", state)); diff != "" {
				t.Errorf("with the objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeconfig runs clusterCases with --kubeconfig against a real API server (envtest):
// the preview before the case's objects are created on it, and after. The outcomes are
// those of the --cluster-state folders.
func TestKubeconfig(t *testing.T) {
	env := testenv.Get(t)
	version, err := env.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if version != "v"+clusterKubeVersion {
		t.Fatalf("the API server is Kubernetes %s; clusterCases are written for v%s", version, clusterKubeVersion)
	}
	kubeconfig := env.UserKubeconfig(t, envtest.User{Name: "admin", Groups: []string{"system:masters"}})
	for _, c := range clusterCases {
		t.Run(c.name, func(t *testing.T) {
			repo := writeCaseRepo(t, c)
			if diff := cmp.Diff(c.without, previewOutcome(t, repo, "--kubeconfig", kubeconfig)); diff != "" {
				t.Errorf("before the objects are created (-want +got):\n%s", diff)
			}
			if c.cluster != "" {
				env.Create(t, c.cluster)
			}
			if diff := cmp.Diff(c.want, previewOutcome(t, repo, "--kubeconfig", kubeconfig, "--context", "envtest")); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeconfigErrors: a cluster that cannot be read stops the check with exit code 2
// and an error naming the kubeconfig and the context; two states for one cluster are
// refused before any cluster is read.
func TestKubeconfigErrors(t *testing.T) {
	repo := writeCaseRepo(t, clusterCases[0])
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "unreachable")
	writeFiles(t, dir, map[string]string{"unreachable": `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: someone
  user: {token: not-a-secret}
contexts:
- name: prod
  context: {cluster: gone, user: someone}
current-context: prod
`})
	state := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unreachable", []string{"--kubeconfig", unreachable},
			[]string{"--kubeconfig: read the cluster of kubeconfig " + unreachable + " (current context) at https://127.0.0.1:1", "connection refused"}},
		{"unreachable context", []string{"--kubeconfig", unreachable, "--context", "alpha=prod"},
			[]string{`--context: read the cluster of kubeconfig ` + unreachable + ` (context "prod")`, "connection refused"}},
		{"unknown context", []string{"--kubeconfig", unreachable, "--context", "nope"},
			[]string{`load kubeconfig ` + unreachable + ` (context "nope")`, `context "nope" does not exist`}},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "missing")},
			[]string{"load kubeconfig " + filepath.Join(dir, "missing")}},
		{"two states for every cluster", []string{"--cluster-state", state, "--kubeconfig", unreachable},
			[]string{"--kubeconfig " + unreachable + ": a second state for every cluster"}},
		{"two states for one cluster", []string{"--cluster-state", "alpha=" + state, "--context", "alpha=prod"},
			[]string{`--context alpha=prod: a second state for cluster "alpha"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, append([]string{"check", repo, "--catalog", previewCatalog}, tt.args...)...)
			wantExit(t, err, exitUsage)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}
