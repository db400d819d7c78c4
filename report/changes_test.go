package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// manifest builds a Manifest from YAML, as rendering would hand it over.
func manifest(t *testing.T, app, file string, line int, doc string) Manifest {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("fixture YAML: %v", err)
	}
	return Manifest{Cluster: "c1", App: app, File: file, Line: line, Object: obj}
}

const subYAML = `
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
  namespace: etcd
  annotations:
    config.kubernetes.io/origin: "path: base/sub.yaml"
spec:
  channel: stable
  name: etcd
  source: community-operators
  sourceNamespace: openshift-marketplace
`

func TestDiffObjects(t *testing.T) {
	sub := func(app, file string, line int, edits ...string) Manifest {
		return manifest(t, app, file, line, strings.NewReplacer(edits...).Replace(subYAML))
	}
	og := func(spec string) Manifest {
		return manifest(t, "cluster-scope", "cs/og.yaml", 1, `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: etcd, namespace: etcd}
spec:
`+spec)
	}
	ns := manifest(t, "cluster-scope", "cs/ns.yaml", 1, "apiVersion: v1\nkind: Namespace\nmetadata: {name: etcd}\n")
	subRef := ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "etcd", Name: "etcd"}
	ogRef := ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "etcd", Name: "etcd"}
	longImage := strings.Repeat("x", maxFieldValue+1)

	tests := []struct {
		name       string
		base, head []Manifest
		want       []Change
	}{
		{"nothing changed", []Manifest{sub("etcd", "a.yaml", 1)}, []Manifest{sub("etcd", "a.yaml", 1)}, nil},
		{"moved within the file, new origin annotation", []Manifest{sub("etcd", "a.yaml", 1)},
			[]Manifest{sub("etcd", "a.yaml", 20, "base/sub.yaml", "overlay/sub.yaml")}, nil},
		{"not an OLM kind", []Manifest{ns}, nil, nil},
		{
			"added", nil, []Manifest{sub("etcd", "a.yaml", 3)},
			[]Change{{Type: ChangeAdded, Object: subRef, App: "etcd", Cluster: "c1", File: "a.yaml", Line: 3, Fields: []FieldChange{
				{Path: "spec.channel", New: "stable"}, {Path: "spec.name", New: "etcd"},
				{Path: "spec.source", New: "community-operators"}, {Path: "spec.sourceNamespace", New: "openshift-marketplace"},
			}}},
		},
		{
			"removed", []Manifest{og("  targetNamespaces: [etcd]\n")}, nil,
			[]Change{{Type: ChangeRemoved, Object: ogRef, App: "cluster-scope", Cluster: "c1", File: "cs/og.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.targetNamespaces", Old: "[etcd]"}}}},
		},
		{
			"channel, approval and startingCSV", []Manifest{sub("etcd", "a.yaml", 1)},
			[]Manifest{sub("etcd", "a.yaml", 1, "channel: stable", "channel: fast\n  installPlanApproval: Manual\n  startingCSV: etcd.v0.9.4")},
			[]Change{{Type: ChangeModified, Object: subRef, App: "etcd", Cluster: "c1", File: "a.yaml", Line: 1, Fields: []FieldChange{
				{Path: "spec.channel", Old: "stable", New: "fast"},
				{Path: "spec.installPlanApproval", New: "Manual"},
				{Path: "spec.startingCSV", New: "etcd.v0.9.4"},
			}}},
		},
		{
			"source removed", []Manifest{sub("etcd", "a.yaml", 1)}, []Manifest{sub("etcd", "a.yaml", 1, "  source: community-operators\n", "")},
			[]Change{{Type: ChangeModified, Object: subRef, App: "etcd", Cluster: "c1", File: "a.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.source", Old: "community-operators"}}}},
		},
		{
			"moved to another app and file", []Manifest{sub("etcd", "apps/etcd/sub.yaml", 1)}, []Manifest{sub("cluster-scope", "cs/sub.yaml", 4)},
			[]Change{{Type: ChangeModified, Object: subRef, App: "cluster-scope", Cluster: "c1", File: "cs/sub.yaml", Line: 4,
				Fields: []FieldChange{{Path: "app", Old: "etcd", New: "cluster-scope"}}}},
		},
		{
			"target namespaces: a list shown whole", []Manifest{og("  targetNamespaces: [etcd]\n")}, []Manifest{og("  targetNamespaces: [etcd, etcd-prod]\n")},
			[]Change{{Type: ChangeModified, Object: ogRef, App: "cluster-scope", Cluster: "c1", File: "cs/og.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.targetNamespaces", Old: "[etcd]", New: "[etcd, etcd-prod]"}}}},
		},
		{
			"from one target namespace to global", []Manifest{og("  targetNamespaces: [etcd]\n")}, []Manifest{og("  selector: {}\n")},
			[]Change{{Type: ChangeModified, Object: ogRef, App: "cluster-scope", Cluster: "c1", File: "cs/og.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.targetNamespaces", Old: "[etcd]"}}}},
		},
		{
			"selector labels and an annotation with dots", []Manifest{og("  selector:\n    matchLabels: {team: a}\n")},
			[]Manifest{manifest(t, "cluster-scope", "cs/og.yaml", 1, `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: etcd
  namespace: etcd
  annotations: {olmsync.dev/waive: "OP002: reviewed"}
spec:
  selector:
    matchLabels: {team: b}
`)},
			[]Change{{Type: ChangeModified, Object: ogRef, App: "cluster-scope", Cluster: "c1", File: "cs/og.yaml", Line: 1, Fields: []FieldChange{
				{Path: "spec.selector.matchLabels.team", Old: "a", New: "b"},
				{Path: `metadata.annotations["olmsync.dev/waive"]`, New: "OP002: reviewed"},
			}}},
		},
		{
			"a large value is reported without it", []Manifest{og("  upgradeStrategy: {name: Default}\n")},
			[]Manifest{og("  upgradeStrategy: {name: " + longImage + "}\n")},
			[]Change{{Type: ChangeModified, Object: ogRef, App: "cluster-scope", Cluster: "c1", File: "cs/og.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.upgradeStrategy.name", Omitted: true}}}},
		},
		{
			"an API version change alone is no change",
			[]Manifest{manifest(t, "cluster-scope", "cs/og.yaml", 1, "apiVersion: operators.coreos.com/v1alpha2\nkind: OperatorGroup\nmetadata: {name: etcd, namespace: etcd}\n")},
			[]Manifest{og("  {}\n")}, nil,
		},
		{
			"an object without a namespace is where its app deploys it",
			[]Manifest{func() Manifest {
				m := sub("etcd", "a.yaml", 1, "  namespace: etcd\n", "")
				m.Namespace = "etcd"
				return m
			}()},
			[]Manifest{func() Manifest {
				m := sub("etcd", "a.yaml", 1, "  namespace: etcd\n", "")
				m.Namespace = "etcd-prod"
				return m
			}()},
			[]Change{
				{Type: ChangeAdded, Object: ObjectRef{APIVersion: subRef.APIVersion, Kind: "Subscription", Namespace: "etcd-prod", Name: "etcd"},
					App: "etcd", Cluster: "c1", File: "a.yaml", Line: 1, Fields: []FieldChange{
						{Path: "spec.channel", New: "stable"}, {Path: "spec.name", New: "etcd"},
						{Path: "spec.source", New: "community-operators"}, {Path: "spec.sourceNamespace", New: "openshift-marketplace"},
					}},
				{Type: ChangeRemoved, Object: subRef, App: "etcd", Cluster: "c1", File: "a.yaml", Line: 1, Fields: []FieldChange{
					{Path: "spec.channel", Old: "stable"}, {Path: "spec.name", Old: "etcd"},
					{Path: "spec.source", Old: "community-operators"}, {Path: "spec.sourceNamespace", Old: "openshift-marketplace"},
				}},
			},
		},
		{
			"the same object in two clusters is two objects",
			[]Manifest{sub("etcd", "a.yaml", 1)},
			[]Manifest{sub("etcd", "a.yaml", 1), func() Manifest { m := sub("etcd", "b.yaml", 1); m.Cluster = "c2"; return m }()},
			[]Change{{Type: ChangeAdded, Object: subRef, App: "etcd", Cluster: "c2", File: "b.yaml", Line: 1, Fields: []FieldChange{
				{Path: "spec.channel", New: "stable"}, {Path: "spec.name", New: "etcd"},
				{Path: "spec.source", New: "community-operators"}, {Path: "spec.sourceNamespace", New: "openshift-marketplace"},
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DiffObjects(tt.base, tt.head)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlattenValues(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"priority": float64(-100),
		"grpcPodConfig": map[string]any{
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":  []any{map[string]any{"key": "infra", "effect": "NoSchedule"}},
		},
		"secrets": []any{"a", "b"},
		"enabled": true,
		"empty":   []any{},
		"nothing": nil,
	}}
	want := []field{
		{"spec.enabled", "true"},
		{`spec.grpcPodConfig.nodeSelector["kubernetes.io/os"]`, "linux"},
		{"spec.grpcPodConfig.tolerations", `[{"effect":"NoSchedule","key":"infra"}]`},
		{"spec.priority", "-100"},
		{"spec.secrets", "[a, b]"},
	}
	if diff := cmp.Diff(want, flattenObject(obj, false), cmp.AllowUnexported(field{})); diff != "" {
		t.Errorf("leaves (-want +got):\n%s", diff)
	}
}
