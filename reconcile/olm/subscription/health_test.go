package subscription_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func catsrc(ns, name, state string) v1alpha1.CatalogSource {
	cs := v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)}}
	if state != "" {
		cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{LastObservedState: state}
	}
	return cs
}

func TestCatalogHealthy(t *testing.T) {
	ready := catsrc("olm", "cat", v1alpha1.ConnectionStateReady)
	invalid := ready
	invalid.Status.Reason = v1alpha1.CatalogSourceSpecInvalidError
	for _, tt := range []struct {
		cs   v1alpha1.CatalogSource
		want bool
	}{
		{ready, true},
		{invalid, false},
		{catsrc("olm", "cat", v1alpha1.ConnectionStateConnecting), false},
		{catsrc("olm", "cat", v1alpha1.ConnectionStateTransientFailure), false},
		{catsrc("olm", "cat", ""), false},
	} {
		if got := subscription.CatalogHealthy(&tt.cs); got != tt.want {
			t.Errorf("%+v: healthy %t, want %t", tt.cs.Status, got, tt.want)
		}
	}
}

// TestUpdateCatalogHealth walks one Subscription through the catalog changes OLM's catalog
// health reconciler tests: the reason records what the pass saw change.
func TestUpdateCatalogHealth(t *testing.T) {
	s := sub("s", "a")
	steps := []struct {
		name     string
		visible  []v1alpha1.CatalogSource
		changed  bool
		want     string
		nHealthy int
	}{
		{"no catalogs at all", nil, true, "True/NoCatalogSourcesFound: dependency resolution requires at least one catalogsource", 0},
		{"the same again", nil, false, "True/NoCatalogSourcesFound: dependency resolution requires at least one catalogsource", 0},
		{"the targeted catalog appears, connecting", []v1alpha1.CatalogSource{catsrc("olm", "cat", v1alpha1.ConnectionStateConnecting)}, true, "True/CatalogSourcesAdded: targeted catalogsource olm/cat unhealthy", 0},
		{"it becomes ready", []v1alpha1.CatalogSource{catsrc("olm", "cat", v1alpha1.ConnectionStateReady)}, true, "False/CatalogSourcesUpdated: all available catalogsources are healthy", 1},
		{"steady", []v1alpha1.CatalogSource{catsrc("olm", "cat", v1alpha1.ConnectionStateReady)}, true, "False/AllCatalogSourcesHealthy: all available catalogsources are healthy", 1},
		{"steady, no write", []v1alpha1.CatalogSource{catsrc("olm", "cat", v1alpha1.ConnectionStateReady)}, false, "False/AllCatalogSourcesHealthy: all available catalogsources are healthy", 1},
		{"another catalog, broken", []v1alpha1.CatalogSource{catsrc("ns", "other", v1alpha1.ConnectionStateTransientFailure), catsrc("olm", "cat", v1alpha1.ConnectionStateReady)}, true, "True/CatalogSourcesAdded", 1},
		{"the targeted catalog goes", []v1alpha1.CatalogSource{catsrc("ns", "other", v1alpha1.ConnectionStateReady)}, true, "True/CatalogSourcesDeleted: targeted catalogsource olm/cat missing", 1},
		{"still missing", []v1alpha1.CatalogSource{catsrc("ns", "other", v1alpha1.ConnectionStateReady)}, true, "True/UnhealthyCatalogSourceFound: targeted catalogsource olm/cat missing", 1},
	}
	for _, st := range steps {
		changed := subscription.UpdateCatalogHealth(s, st.visible, t1)
		if changed != st.changed {
			t.Errorf("%s: changed %t, want %t", st.name, changed, st.changed)
		}
		if got := cond(s, v1alpha1.SubscriptionCatalogSourcesUnhealthy); got != st.want {
			t.Errorf("%s: %s, want %s", st.name, got, st.want)
		}
		healthy := 0
		for _, h := range s.Status.CatalogHealth {
			if h.Healthy {
				healthy++
			}
		}
		if healthy != st.nHealthy || len(s.Status.CatalogHealth) != len(st.visible) {
			t.Errorf("%s: catalogHealth %+v", st.name, s.Status.CatalogHealth)
		}
	}
	// Sorted by namespace, then name.
	subscription.UpdateCatalogHealth(s, []v1alpha1.CatalogSource{catsrc("olm", "z", "READY"), catsrc("ns", "b", "READY"), catsrc("olm", "cat", "READY")}, t1)
	var got []string
	for _, h := range s.Status.CatalogHealth {
		got = append(got, h.CatalogSourceRef.Namespace+"/"+h.CatalogSourceRef.Name)
	}
	if want := []string{"ns/b", "olm/cat", "olm/z"}; !equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
