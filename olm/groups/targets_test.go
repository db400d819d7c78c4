package groups_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/api/operators/v1alpha2"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestTargetNamespaces(t *testing.T) {
	cluster := []corev1.Namespace{
		namespace("ops"),
		namespace("prod-a", "env", "prod", "team", "a"),
		namespace("prod-b", "env", "prod", "team", "b"),
		namespace("dev", "env", "dev"),
	}
	tests := []struct {
		name    string
		group   operatorsv1.OperatorGroup
		want    []string
		wantErr string
	}{
		{name: "no spec is global", group: og("ops", "g"), want: []string{""}},
		{
			name:  "empty selector is global",
			group: og("ops", "g", func(g *operatorsv1.OperatorGroup) { g.Spec.Selector = &metav1.LabelSelector{} }),
			want:  []string{""},
		},
		{
			name:  "targetNamespaces as given, sorted and deduplicated, existence not checked",
			group: og("ops", "g", specTargets("zeta", "ops", "zeta", "absent")),
			want:  []string{"absent", "ops", "zeta"},
		},
		{
			name:  "targetNamespaces wins over selector",
			group: og("ops", "g", specTargets("dev"), matchLabels("env", "prod")),
			want:  []string{"dev"},
		},
		{
			name:  "selector matches namespace labels; own namespace not added",
			group: og("ops", "g", matchLabels("env", "prod")),
			want:  []string{"prod-a", "prod-b"},
		},
		{
			name:  "selector with two labels",
			group: og("ops", "g", matchLabels("env", "prod", "team", "b")),
			want:  []string{"prod-b"},
		},
		{
			name: "selector with an expression",
			group: og("ops", "g", func(g *operatorsv1.OperatorGroup) {
				g.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"dev", "prod"}},
				}}
			}),
			want: []string{"dev", "prod-a", "prod-b"},
		},
		{
			name:  "selector matching nothing selects nothing",
			group: og("ops", "g", matchLabels("env", "staging")),
			want:  nil,
		},
		{
			name:    "NamespaceAll in targetNamespaces",
			group:   og("ops", "g", specTargets("a", "")),
			wantErr: `operatorgroup ops/g: TargetNamespaces cannot contain NamespaceAll: [a ]`,
		},
		{
			name: "invalid selector",
			group: og("ops", "g", func(g *operatorsv1.OperatorGroup) {
				g.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "env", Operator: "Near"},
				}}
			}),
			wantErr: `operatorgroup ops/g: spec.selector: "Near" is not a valid label selector operator`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := groups.TargetNamespaces(&tt.group, cluster)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamespaceAllInTargetsError(t *testing.T) {
	g := og("ops", "g", specTargets("", "b"))
	_, err := groups.TargetNamespaces(&g, nil)
	var e *groups.NamespaceAllInTargetsError
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *NamespaceAllInTargetsError", err)
	}
	if got, want := e.Message(), "TargetNamespaces cannot contain NamespaceAll: [ b]"; got != want {
		t.Errorf("Message() = %q, want OLM's %q", got, want)
	}
	if e.Namespace != "ops" || e.Name != "g" {
		t.Errorf("error names %s/%s, want ops/g", e.Namespace, e.Name)
	}
}

func TestTargetNamespacesAnnotation(t *testing.T) {
	tests := []struct {
		targets []string
		want    string
	}{
		{[]string{""}, ""},
		{[]string{"ops"}, "ops"},
		{[]string{"zeta", "alpha", "ops"}, "alpha,ops,zeta"},
	}
	for _, tt := range tests {
		got := groups.TargetNamespacesAnnotation(tt.targets)
		if got != tt.want {
			t.Errorf("TargetNamespacesAnnotation(%q) = %q, want %q", tt.targets, got, tt.want)
		}
		if back := groups.ParseTargetNamespacesAnnotation(got); !cmp.Equal(back, slices.Sorted(slices.Values(tt.targets))) {
			t.Errorf("ParseTargetNamespacesAnnotation(%q) = %q, want %q", got, back, slices.Sorted(slices.Values(tt.targets)))
		}
	}
}

func TestClassifyTargets(t *testing.T) {
	tests := []struct {
		name    string
		targets []string
		want    v1alpha1.InstallModeType
		wantErr string
	}{
		{"own namespace", []string{"ops"}, v1alpha1.InstallModeTypeOwnNamespace, ""},
		{"one other namespace", []string{"apps"}, v1alpha1.InstallModeTypeSingleNamespace, ""},
		{"all namespaces", []string{""}, v1alpha1.InstallModeTypeAllNamespaces, ""},
		{"several without own", []string{"a", "b"}, v1alpha1.InstallModeTypeMultiNamespace, ""},
		{"several with own", []string{"ops", "b"}, v1alpha1.InstallModeTypeMultiNamespace, ""},
		{"none", nil, "", "operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces"},
		{"all among others", []string{"a", ""}, "", "operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := groups.ClassifyTargets("ops", tt.targets)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ClassifyTargets = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestGroupsIntersect(t *testing.T) {
	tests := []struct {
		name string
		a, b operatorsv1.OperatorGroup
		want bool
	}{
		{"disjoint own namespaces", og("a", "g", targets("a")), og("b", "g", targets("b")), false},
		{"same target", og("a", "g", targets("x")), og("b", "g", targets("x")), true},
		{"a targets b's own namespace", og("a", "g", targets("b")), og("b", "g", targets("c")), true},
		{"b targets a's own namespace", og("a", "g", targets("c")), og("b", "g", targets("a", "d")), true},
		{"different targets, different namespaces", og("a", "g", targets("x", "y")), og("b", "g", targets("z")), false},
		{"global intersects a single-namespace group", og("a", "g", global()), og("b", "g", targets("b")), true},
		{"two global groups", og("a", "g", global()), og("b", "g", global()), true},
		// Seed 000: a group's own namespace always counts, even before its status lists it.
		{"no status still counts the own namespace", og("a", "g"), og("b", "h", targets("a")), true},
		{"two groups without status in different namespaces", og("a", "g"), og("b", "g"), false},
		{"two groups without status in one namespace", og("a", "g"), og("a", "h"), true},
		{"global with a group without status", og("a", "g", global()), og("b", "g"), true},
		{"no status, targets elsewhere", og("a", "g"), og("b", "h", targets("c")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groups.GroupsIntersect(&tt.a, &tt.b); got != tt.want {
				t.Errorf("GroupsIntersect(a, b) = %v, want %v", got, tt.want)
			}
			if got := groups.GroupsIntersect(&tt.b, &tt.a); got != tt.want {
				t.Errorf("GroupsIntersect(b, a) = %v, want %v (must be symmetric)", got, tt.want)
			}
		})
	}
}

func TestFromV1alpha2(t *testing.T) {
	in := &v1alpha2.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "g", Annotations: map[string]string{"a": "b"}},
		Spec: v1alpha2.OperatorGroupSpec{
			Selector:           &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			TargetNamespaces:   []string{"x"},
			ServiceAccountName: "sa",
			StaticProvidedAPIs: true,
		},
		Status: v1alpha2.OperatorGroupStatus{Namespaces: []string{"x"}},
	}
	want := &operatorsv1.OperatorGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "g", Annotations: map[string]string{"a": "b"}},
		Spec: operatorsv1.OperatorGroupSpec{
			Selector:           &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			TargetNamespaces:   []string{"x"},
			ServiceAccountName: "sa",
			StaticProvidedAPIs: true,
			UpgradeStrategy:    operatorsv1.UpgradeStrategyDefault,
		},
		Status: operatorsv1.OperatorGroupStatus{Namespaces: []string{"x"}},
	}
	got := groups.FromV1alpha2(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromV1alpha2 (-want +got):\n%s", diff)
	}
	got.Annotations["a"] = "changed"
	got.Spec.Selector.MatchLabels["env"] = "changed"
	if in.Annotations["a"] != "b" || in.Spec.Selector.MatchLabels["env"] != "prod" {
		t.Error("FromV1alpha2 shares maps with its input")
	}
}

// TestTargetsPending checks when members of a group wait for its status rather than fail.
func TestTargetsPending(t *testing.T) {
	cluster := []corev1.Namespace{namespace("ops"), namespace("prod-a", "env", "prod")}
	tests := []struct {
		name  string
		group operatorsv1.OperatorGroup
		want  bool
	}{
		{name: "global group without status", group: og("ops", "g"), want: true},
		{name: "global group with status", group: og("ops", "g", global()), want: false},
		{name: "explicit targets without status", group: og("ops", "g", specTargets("ops")), want: true},
		{name: "explicit targets with status", group: og("ops", "g", specTargets("ops"), targets("ops")), want: false},
		{name: "selector matching a namespace, no status yet", group: og("ops", "g", matchLabels("env", "prod")), want: true},
		{name: "selector matching nothing", group: og("ops", "g", matchLabels("env", "staging")), want: false},
		{name: "NamespaceAll in targets cannot be resolved", group: og("ops", "g", specTargets("")), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groups.TargetsPending(&tt.group, cluster); got != tt.want {
				t.Errorf("TargetsPending = %v, want %v", got, tt.want)
			}
		})
	}
}
