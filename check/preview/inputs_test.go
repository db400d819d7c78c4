package preview

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInputsOneStatePerCluster: a cluster given two states is refused before any is read
// (no folder here exists, and no cluster is reachable).
func TestInputsOneStatePerCluster(t *testing.T) {
	for _, tc := range []struct {
		in   Inputs
		want string
	}{
		{Inputs{ClusterStates: []string{"a", "b"}}, "--cluster-state b: a second state for every cluster"},
		{Inputs{ClusterStates: []string{"prod=a"}, Contexts: []string{"prod=ctx"}}, `--context prod=ctx: a second state for cluster "prod"`},
		{Inputs{ClusterStates: []string{"a"}, Kubeconfig: "kc"}, "--kubeconfig kc: a second state for every cluster"},
	} {
		_, err := tc.in.Load(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestInputsGlobalCatalogNamespaces: the flag's namespace for every cluster, else each
// cluster's own, as read with its state.
func TestInputsGlobalCatalogNamespaces(t *testing.T) {
	opts := Options{ClusterStates: map[string]*ClusterState{
		"prod": {GlobalCatalogNamespace: "olm"}, "dev": {},
	}}
	if diff := cmp.Diff(map[string]string{"prod": "olm"}, Inputs{}.GlobalCatalogNamespaces(opts)); diff != "" {
		t.Errorf("from the states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"": "marketplace"}, Inputs{GlobalCatalogNamespace: "marketplace"}.GlobalCatalogNamespaces(opts)); diff != "" {
		t.Errorf("from the flag (-want +got):\n%s", diff)
	}
}
