package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const changesConfig = `
apps:
- {name: cs, path: cluster-scope/cl1, cluster: cl1}
- {name: team, path: apps/team, namespace: team, cluster: cl1}
- {name: flaky, path: apps/flaky, namespace: flaky, cluster: cl1}
- {name: cs, path: cluster-scope/cl2, cluster: cl2}
`

func sub(name, ns, channel, extra string) string {
	s := "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: " + name + "\n"
	if ns != "" {
		s += "  namespace: " + ns + "\n"
	}
	return s + "spec:\n  name: " + name + "\n  channel: " + channel + "\n  source: community-operators\n  sourceNamespace: openshift-marketplace\n" + extra
}

var changesBase = files{
	"olmsync.yaml": changesConfig,
	"cluster-scope/cl1/olm.yaml": sub("sub-a", "openshift-operators", "stable", "  installPlanApproval: Automatic\n") + "---\n" +
		sub("gone", "openshift-operators", "stable", "") + "---\n" +
		sub("labelled", "openshift-operators", "stable", "") + "---\n" +
		"apiVersion: operators.coreos.com/v1alpha2\nkind: OperatorGroup\nmetadata:\n  name: same\n  namespace: same\nspec: {}\n---\n" +
		"apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: tools\nspec: {}\n---\n" +
		"apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: cat\n  namespace: openshift-marketplace\nspec:\n  sourceType: grpc\n  image: quay.io/cat:v1\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-olm\n  namespace: tools\ndata: {a: b}\n",
	"apps/team/sub.yaml":      sub("team-sub", "", "stable", ""),
	"apps/flaky/sub.yaml":     sub("flaky-sub", "", "stable", ""),
	"cluster-scope/cl2/.keep": "",
}

var changesHead = files{
	"olmsync.yaml": changesConfig,
	"cluster-scope/cl1/olm.yaml": sub("sub-a", "openshift-operators", "fast", "  installPlanApproval: Manual\n  startingCSV: a.v2.0.0\n") + "---\n" +
		"apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: labelled\n  namespace: openshift-operators\n  labels: {reviewed: \"yes\"}\nspec:\n  name: labelled\n  channel: stable\n  source: community-operators\n  sourceNamespace: openshift-marketplace\n---\n" +
		"apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: same\n  namespace: same\nspec: {}\n---\n" +
		"apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: tools\nspec:\n  targetNamespaces: [tools]\n---\n" +
		"apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: cat\n  namespace: openshift-marketplace\nspec:\n  sourceType: grpc\n  image: quay.io/cat:v2\n  priority: 10\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-olm\n  namespace: tools\ndata: {a: changed}\n",
	"apps/team/sub.yaml":         sub("team-sub", "", "stable", ""),
	"apps/flaky/sub.yaml":        "apiVersion: v1\nkind: [broken\n",
	"cluster-scope/cl2/new.yaml": sub("new", "openshift-operators", "alpha", ""),
}

func TestChanges(t *testing.T) {
	bfs, broot := memRepo(t, changesBase)
	hfs, hroot := memRepo(t, changesHead)
	base, head := renderRepo(t, bfs, broot, Options{}), renderRepo(t, hfs, hroot, Options{})

	got := Changes(base, head)
	type change struct {
		Type                         ChangeType
		Cluster, App, Kind, NS, Name string
		File                         string
		Line                         int
		Fields                       []FieldChange
	}
	var gotChanges []change
	for _, c := range got.Changes {
		gotChanges = append(gotChanges, change{c.Type, c.Cluster, c.App, c.Kind, c.Namespace, c.Name, c.Source.File, c.Source.Line, c.Fields})
	}
	want := []change{
		{ChangeModified, "cl1", "cs", "CatalogSource", "openshift-marketplace", "cat", "cluster-scope/cl1/olm.yaml", 41, []FieldChange{
			{Field: "spec.image", Label: "image", Old: "quay.io/cat:v1", New: "quay.io/cat:v2"},
			{Field: "spec.priority", Label: "priority", New: "10"},
		}},
		{ChangeModified, "cl1", "cs", "OperatorGroup", "tools", "og", "cluster-scope/cl1/olm.yaml", 33, []FieldChange{
			{Field: "spec.targetNamespaces", Label: "target namespaces", New: `["tools"]`},
			{Field: "global", Label: "global", Old: "true", New: "false"},
		}},
		{ChangeRemoved, "cl1", "cs", "Subscription", "openshift-operators", "gone", "cluster-scope/cl1/olm.yaml", 13, []FieldChange{
			{Field: "spec.name", Label: "package", Old: "gone"},
			{Field: "spec.channel", Label: "channel", Old: "stable"},
			{Field: "spec.source", Label: "source", Old: "community-operators"},
			{Field: "spec.sourceNamespace", Label: "source namespace", Old: "openshift-marketplace"},
		}},
		{ChangeModified, "cl1", "cs", "Subscription", "openshift-operators", "labelled", "cluster-scope/cl1/olm.yaml", 14, []FieldChange{
			{Field: "metadata.labels", New: `{"reviewed":"yes"}`},
		}},
		{ChangeModified, "cl1", "cs", "Subscription", "openshift-operators", "sub-a", "cluster-scope/cl1/olm.yaml", 1, []FieldChange{
			{Field: "spec.channel", Label: "channel", Old: "stable", New: "fast"},
			{Field: "spec.installPlanApproval", Label: "approval", Old: "Automatic", New: "Manual"},
			{Field: "spec.startingCSV", Label: "starting CSV", New: "a.v2.0.0"},
		}},
		{ChangeAdded, "cl2", "cs", "Subscription", "openshift-operators", "new", "cluster-scope/cl2/new.yaml", 1, []FieldChange{
			{Field: "spec.name", Label: "package", New: "new"},
			{Field: "spec.channel", Label: "channel", New: "alpha"},
			{Field: "spec.source", Label: "source", New: "community-operators"},
			{Field: "spec.sourceNamespace", Label: "source namespace", New: "openshift-marketplace"},
		}},
	}
	if diff := cmp.Diff(want, gotChanges); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cl1/flaky"}, got.Incomplete); diff != "" {
		t.Errorf("incomplete (-want +got):\n%s", diff)
	}
	if len(Changes(head, head).Changes) != 0 {
		t.Error("a render compared with itself has changes")
	}
}

func TestChangesMovedBetweenApps(t *testing.T) {
	cfg := "apps:\n- {name: a, path: a, namespace: ns}\n- {name: b, path: b, namespace: ns}\n"
	bfs, broot := memRepo(t, files{"olmsync.yaml": cfg, "a/s.yaml": sub("s", "", "stable", ""), "b/.keep": ""})
	hfs, hroot := memRepo(t, files{"olmsync.yaml": cfg, "a/.keep": "", "b/s.yaml": sub("s", "ns", "stable", "")})
	cs := Changes(renderRepo(t, bfs, broot, Options{}), renderRepo(t, hfs, hroot, Options{}))
	if len(cs.Changes) != 1 {
		t.Fatalf("changes = %+v", cs.Changes)
	}
	c := cs.Changes[0]
	if c.Type != ChangeModified || c.App != "b" || c.BaseApp != "a" || len(c.Fields) != 0 {
		t.Errorf("change = %+v, want a move from app a to b with no field change", c)
	}
}

func TestOperatorGroupGlobal(t *testing.T) {
	tests := []struct {
		name string
		spec map[string]any
		want bool
	}{
		{"no spec", nil, true},
		{"empty spec", map[string]any{}, true},
		{"empty selector", map[string]any{"selector": map[string]any{}}, true},
		{"empty matchLabels", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{}}}, true},
		{"target namespaces", map[string]any{"targetNamespaces": []any{"a"}}, false},
		{"empty target namespaces", map[string]any{"targetNamespaces": []any{}}, true},
		{"selector with labels", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}, false},
		{"selector with expressions", map[string]any{"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Exists"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup"}}
			if tt.spec != nil {
				u.Object["spec"] = tt.spec
			}
			got, ok := operatorGroupGlobal(u)
			if !ok || got != tt.want {
				t.Errorf("global = %v, want %t", got, tt.want)
			}
		})
	}
}

func TestFieldDiffGeneric(t *testing.T) {
	old := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"olm.skipRange": ">=1.0.0 <1.2.0", "keep": "x"}},
		"spec":     map[string]any{"version": "1.2.0", "install": map[string]any{"strategy": "deployment"}},
	}}
	new := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"olm.skipRange": ">=1.0.0 <1.3.0", "keep": "x", "added": "y"}},
		"spec":     map[string]any{"version": "1.3.0", "replaces": "a.v1.2.0", "install": map[string]any{"strategy": "other"}},
	}}
	want := []FieldChange{
		{Field: "spec.version", Label: "version", Old: "1.2.0", New: "1.3.0"},
		{Field: "spec.replaces", Label: "replaces", New: "a.v1.2.0"},
		{Field: `metadata.annotations["olm.skipRange"]`, Label: "skip range", Old: ">=1.0.0 <1.2.0", New: ">=1.0.0 <1.3.0"},
		{Field: "spec.install.strategy", Old: "deployment", New: "other"},
		{Field: "metadata.annotations.added", New: "y"},
	}
	if diff := cmp.Diff(want, fieldDiff("ClusterServiceVersion", old, new)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
