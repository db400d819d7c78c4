package gitsync

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// twoClusters is a repository of two clusters: alpha (cluster-scope and team-a, whose
// OperatorGroup sits in team-a, breaking OP001) and beta (cluster-scope only).
var twoClusters = map[string]string{
	"olmsync.yaml": `apps:
- {name: cluster-scope, path: alpha/cluster-scope, cluster: alpha}
- {name: team-a, path: alpha/team-a, namespace: team-a, cluster: alpha}
- {name: cluster-scope, path: beta/cluster-scope, cluster: beta}
policy:
  operatorGroups: []
`,
	"alpha/cluster-scope/ns.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
	"alpha/team-a/og.yaml":         "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og}\nspec: {targetNamespaces: [team-a]}\n",
	"alpha/team-a/sub.yaml":        "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: etcd}\nspec: {name: etcd, channel: stable, source: cat, sourceNamespace: openshift-marketplace}\n",
	"alpha/team-a/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}\n",
	"beta/cluster-scope/ns.yaml":   "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n",
	"beta/cluster-scope/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: []\n",
}

func checked(t *testing.T, files map[string]string) *check.Result {
	t.Helper()
	dir := t.TempDir()
	gittest.Write(t, dir, files)
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Run(context.Background(), tree, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func syncOf(cluster string, mode olmsyncv1alpha1.PolicyMode, apps ...string) *olmsyncv1alpha1.Sync {
	s := &olmsyncv1alpha1.Sync{}
	s.Spec.Cluster, s.Spec.Policy.Mode, s.Spec.Apps = cluster, mode, apps
	return s
}

func appNames(b *Build) []string {
	var out []string
	for _, a := range b.Apps {
		out = append(out, a.Name)
	}
	return out
}

func objectNames(b *Build) []string {
	var out []string
	for _, o := range b.Objects() {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func TestSelect(t *testing.T) {
	res := checked(t, twoClusters)
	tests := []struct {
		name        string
		sync        *olmsyncv1alpha1.Sync
		apps        []string
		objects     []string
		rules       []string
		problems    []string
		gatedStatus bool
	}{
		{
			name: "enforce keeps the violating OperatorGroup out, and what depends on nothing goes in",
			sync: syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce),
			apps: []string{"cluster-scope", "team-a"},
			// The OperatorGroup breaks OP001 (not in the cluster-scope app); the
			// Subscription is applied: its group exists in Git, only in the wrong app.
			objects:     []string{"Namespace//team-a", "ConfigMap/team-a/settings", "Subscription/team-a/etcd"},
			rules:       []string{"OP001"},
			gatedStatus: true,
		},
		{
			name:    "audit applies everything and reports",
			sync:    syncOf("alpha", olmsyncv1alpha1.PolicyModeAudit),
			apps:    []string{"cluster-scope", "team-a"},
			objects: []string{"Namespace//team-a", "ConfigMap/team-a/settings", "OperatorGroup/team-a/og", "Subscription/team-a/etcd"},
			rules:   []string{"OP001"},
		},
		{
			name:    "another cluster's apps, and none of alpha's findings",
			sync:    syncOf("beta", olmsyncv1alpha1.PolicyModeEnforce),
			apps:    []string{"cluster-scope"},
			objects: []string{"Namespace//team-b", "ClusterRole//reader"},
		},
		{
			name:    "spec.apps narrows the cluster's apps, and their findings",
			sync:    syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce, "cluster-scope"),
			apps:    []string{"cluster-scope"},
			objects: []string{"Namespace//team-a"},
		},
		{
			name:     "spec.apps naming an app the revision lacks is a problem",
			sync:     syncOf("beta", olmsyncv1alpha1.PolicyModeEnforce, "cluster-scope", "team-b"),
			apps:     []string{"cluster-scope"},
			objects:  []string{"Namespace//team-b", "ClusterRole//reader"},
			problems: []string{`spec.apps names app "team-b", which`},
		},
		{
			name:     "a cluster with no apps is a problem, not an empty desired state",
			sync:     syncOf("gamma", olmsyncv1alpha1.PolicyModeEnforce),
			problems: []string{`found no apps of cluster "gamma"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Select(res, tt.sync)
			if diff := cmp.Diff(tt.apps, appNames(b)); diff != "" {
				t.Errorf("apps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.objects, objectNames(b)); diff != "" {
				t.Errorf("objects to apply (-want +got):\n%s", diff)
			}
			var rules []string
			for _, v := range b.Violations {
				rules = append(rules, v.Rule)
			}
			if diff := cmp.Diff(tt.rules, rules); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if len(b.Problems) != len(tt.problems) {
				t.Fatalf("problems %+v, want %q", b.Problems, tt.problems)
			}
			for i, p := range tt.problems {
				if !strings.Contains(b.Problems[i].Message, p) {
					t.Errorf("problem %q does not say %q", b.Problems[i].Message, p)
				}
			}
			if b.Complete() != (len(tt.problems) == 0) {
				t.Errorf("Complete() = %v with problems %v", b.Complete(), b.Problems)
			}
			status, count := b.StatusViolations()
			if count != len(tt.rules) || len(status) != len(tt.rules) {
				t.Fatalf("status violations %+v (count %d), want %d", status, count, len(tt.rules))
			}
			for _, v := range status {
				if v.Gated != tt.gatedStatus {
					t.Errorf("violation %s gated = %v, want %v", v.Rule, v.Gated, tt.gatedStatus)
				}
			}
		})
	}
}

// The messages that reach conditions and Events name the rule, the object, the file and
// the line; a build problem names the file and line of the broken app.
func TestBuildMessages(t *testing.T) {
	b := Select(checked(t, twoClusters), syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce))
	want := `1 placement-rule error(s), not applied: OP001 OperatorGroup "team-a/og" (alpha/team-a/og.yaml:1): `
	if got := b.PolicyMessage(); !strings.HasPrefix(got, want) {
		t.Errorf("PolicyMessage() = %q, want it to start with %q", got, want)
	}

	broken := map[string]string{}
	for k, v := range twoClusters {
		broken[k] = v
	}
	broken["alpha/team-a/kustomization.yaml"] = "resources:\n- og.yaml\n- missing.yaml\n"
	b = Select(checked(t, broken), syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce))
	if b.Complete() {
		t.Fatal("a build with an app that does not render is complete")
	}
	if got := b.ProblemMessage(); !strings.Contains(got, "alpha/team-a/kustomization.yaml") || !strings.Contains(got, "missing.yaml") {
		t.Errorf("ProblemMessage() = %q, want it to name the kustomization and the missing file", got)
	}
	// The other cluster does not care.
	if b := Select(checked(t, broken), syncOf("beta", olmsyncv1alpha1.PolicyModeEnforce)); !b.Complete() {
		t.Errorf("beta's build is incomplete because of alpha's app: %v", b.Problems)
	}
}

// TestSelectLeavesUncoveredRootsOut: in a repository whose Argo CD Applications name what
// is deployed, a kustomization root no Application covers is checked (a library root, on no
// cluster) but not applied.
func TestSelectLeavesUncoveredRootsOut(t *testing.T) {
	res := checked(t, map[string]string{
		"argocd/team-a.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: team-a}
spec:
  destination: {name: alpha, namespace: team-a}
  source: {repoURL: https://github.com/org/apps, path: team-a/overlays/alpha}
`,
		"team-a/overlays/alpha/kustomization.yaml": "resources: [cm.yaml]\n",
		"team-a/overlays/alpha/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"team-b/overlays/alpha/kustomization.yaml": "resources: [cm.yaml]\n",
		"team-b/overlays/alpha/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	var checkedApps []string
	for _, a := range res.Render.Apps {
		checkedApps = append(checkedApps, a.Cluster+"/"+a.Name)
	}
	if diff := cmp.Diff([]string{"alpha/team-a", "/team-b/overlays/alpha"}, checkedApps); diff != "" {
		t.Fatalf("checked apps (-want +got):\n%s", diff)
	}
	b := Select(res, syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce))
	if diff := cmp.Diff([]string{"team-a"}, appNames(b)); diff != "" {
		t.Errorf("applied apps (-want +got):\n%s", diff)
	}
}

// TestIncompleteReason: a build whose only problems are generators left out for their
// plugin is PluginSkipped; with any other problem, BuildFailed.
func TestIncompleteReason(t *testing.T) {
	ksops := "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata: {name: secrets}\n"
	with := func(files, more map[string]string) map[string]string {
		out := maps.Clone(files)
		maps.Copy(out, more)
		return out
	}
	skipping := with(twoClusters, map[string]string{
		"alpha/team-a/kustomization.yaml": "resources: [og.yaml, sub.yaml, cm.yaml]\ngenerators: [gen.yaml]\n",
		"alpha/team-a/gen.yaml":           ksops,
	})
	tests := []struct {
		name  string
		files map[string]string
		sync  *olmsyncv1alpha1.Sync
		want  string
	}{
		{"complete", twoClusters, syncOf("alpha", ""), ""},
		{"a skipped generator", skipping, syncOf("alpha", ""), olmsyncv1alpha1.PluginSkippedReason},
		{"another cluster's skipped generator", skipping, syncOf("beta", ""), ""},
		{"a skipped generator and a broken app", with(skipping, map[string]string{
			"alpha/cluster-scope/kustomization.yaml": "resources: [missing.yaml]\n",
		}), syncOf("alpha", ""), olmsyncv1alpha1.BuildFailedReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Select(checked(t, tt.files), tt.sync)
			got := ""
			if !b.Complete() {
				got = b.IncompleteReason()
			}
			if got != tt.want {
				t.Errorf("reason %q, want %q (problems %+v)", got, tt.want, b.Problems)
			}
		})
	}
}

// TestBuildDeploysRootsWithoutEntryPoints: a repository with no entry point of its own
// (no Argo CD Application, ApplicationSet or Flux Kustomization) is library roots to
// `olmsync check`, but a Sync deploys it: its roots are apps, and the cluster the Sync
// names is one the path conventions may find (overlays/alpha is cluster alpha).
func TestBuildDeploysRootsWithoutEntryPoints(t *testing.T) {
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{
		"base/kustomization.yaml":           "resources: [cm.yaml]\n",
		"base/cm.yaml":                      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team-a}\n",
		"overlays/alpha/kustomization.yaml": "resources: [../../base]\n",
		"overlays/beta/kustomization.yaml":  "resources: [../../base]\n",
	})
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sync := syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce)
	sync.Namespace, sync.Name = "olmsync-system", "fleet"
	b, err := BuildRevision(t.Context(), tree, sync, check.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Complete() {
		t.Fatalf("problems: %v", b.Problems)
	}
	if diff := cmp.Diff([]string{"overlays/alpha"}, appNames(b)); diff != "" {
		t.Errorf("applied apps (-want +got):\n%s", diff)
	}
	for _, a := range b.Apps {
		if a.Library || a.ClusterFrom != render.ClusterFromPath {
			t.Errorf("app %s: library %t, cluster from %s; want an app placed by its path", a.Name, a.Library, a.ClusterFrom)
		}
	}
}
