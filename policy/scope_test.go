package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/olmsync/olmsync/internal/testenv"
)

func crd(group, kind, scope string) map[string]any {
	return withSpec(manifest("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", strings.ToLower(kind)+"s."+group),
		map[string]any{"group": group, "names": map[string]any{"kind": kind, "plural": strings.ToLower(kind) + "s"}, "scope": scope})
}

func TestScopesOf(t *testing.T) {
	scopes := NewScopes()
	for _, m := range []map[string]any{
		crd("example.com", "Widget", "Namespaced"),
		crd("example.com", "ClusterWidget", "Cluster"),
		crd("snapshot.storage.k8s.io", "VolumeSnapshotClass", "Namespaced"), // Git's CRD wins over the table
	} {
		if !scopes.AddCRD(m) {
			t.Fatalf("AddCRD(%v) = false", m)
		}
	}
	tests := []struct {
		apiVersion, kind string
		want             Scope
	}{
		{"v1", "Namespace", ScopeCluster},
		{"olm.operatorframework.io/v1", "ClusterExtension", ScopeCluster}, // OLM v1: OP011 keeps them in the cluster-scope app
		{"olm.operatorframework.io/v1", "ClusterCatalog", ScopeCluster},
		{"v1", "ConfigMap", ScopeNamespaced},
		{"apps/v1", "Deployment", ScopeNamespaced},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", ScopeCluster},
		{"rbac.authorization.k8s.io/v1", "Role", ScopeNamespaced},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", ScopeCluster},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", ScopeCluster}, // any version
		{"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", ScopeCluster},
		{"apiregistration.k8s.io/v1", "APIService", ScopeCluster},
		{"security.openshift.io/v1", "SecurityContextConstraints", ScopeCluster},
		{"config.openshift.io/v1", "ClusterVersion", ScopeCluster},
		{"project.openshift.io/v1", "Project", ScopeCluster},
		{"route.openshift.io/v1", "Route", ScopeNamespaced},
		{"operators.coreos.com/v1alpha1", "Subscription", ScopeNamespaced},
		{"operators.coreos.com/v1", "OperatorGroup", ScopeNamespaced},
		{"operators.coreos.com/v1alpha2", "OperatorGroup", ScopeNamespaced},
		{"operators.coreos.com/v1", "Operator", ScopeCluster},
		{"example.com/v1", "Widget", ScopeNamespaced},
		{"example.com/v1alpha1", "ClusterWidget", ScopeCluster},
		{"snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", ScopeNamespaced},
		{"example.com/v1", "Gadget", ScopeUnknown},
		{"other.example.com/v1", "Widget", ScopeUnknown}, // same kind, other group
		{"v1", "Widget", ScopeUnknown},
		{"", "", ScopeUnknown},
	}
	for _, tt := range tests {
		if got := scopes.Of(tt.apiVersion, tt.kind); got != tt.want {
			t.Errorf("Of(%q, %q) = %s, want %s", tt.apiVersion, tt.kind, got, tt.want)
		}
	}
}

func TestAddCRDRefusesWhatIsNotACRD(t *testing.T) {
	for name, m := range map[string]map[string]any{
		"a ConfigMap":              configMap("a", "b"),
		"a CRD of another group":   withSpec(manifest("example.com/v1", "CustomResourceDefinition", "", "x"), crd("a.b", "X", "Cluster")["spec"]),
		"no scope":                 crd("a.b", "X", ""),
		"an unknown scope":         crd("a.b", "X", "Galaxy"),
		"no group":                 crd("", "X", "Cluster"),
		"no kind":                  crd("a.b", "", "Cluster"),
		"no spec":                  manifest("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x"),
		"a spec that is no object": withSpec(manifest("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x"), "oops"),
	} {
		if NewScopes().AddCRD(m) {
			t.Errorf("AddCRD(%s) = true, want false", name)
		}
	}
}

// TestBuiltinScopesMatchAPIServer asks a real kube-apiserver (v1.36, with olmsync's CRDs)
// for every kind it serves and whether it is namespaced, and checks the built-in table
// agrees on each one. The table was written from k8s.io/api's markers; this keeps it
// honest against the server.
func TestBuiltinScopesMatchAPIServer(t *testing.T) {
	env := testenv.Get(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			want := ScopeCluster
			if r.Namespaced {
				want = ScopeNamespaced
			}
			got, ok := BuiltinScope(schema.GroupKind{Group: gv.Group, Kind: r.Kind})
			if !ok || got != want {
				t.Errorf("%s %s: built-in table says %q (known: %v), the API server says %s", list.GroupVersion, r.Kind, got, ok, want)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d kinds discovered", checked)
	}
	t.Logf("%d kinds agree with the API server", checked)
}
