package subscription_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func TestBehind(t *testing.T) {
	sub := func(name, rv string) subscription.Write {
		return subscription.Write{Kind: "Subscription", Name: name, ResourceVersion: rv}
	}
	plan := func(name, rv string) subscription.Write {
		return subscription.Write{Kind: "InstallPlan", Name: name, ResourceVersion: rv}
	}
	view := map[string]map[string]string{
		"Subscription": {"a": "100", "b": "99"},
		"InstallPlan":  {"install-1": "1000"},
	}
	tests := map[string]struct {
		writes []subscription.Write
		want   subscription.CacheLag
	}{
		"nothing written": {},
		"shown at the version written": {
			writes: []subscription.Write{sub("a", "100"), plan("install-1", "1000")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("a", "100"), plan("install-1", "1000")}},
		},
		"shown at a newer version (compared as numbers, not strings)": {
			writes: []subscription.Write{sub("b", "98"), plan("install-1", "999")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("b", "98"), plan("install-1", "999")}},
		},
		"held at an older version": {
			writes: []subscription.Write{sub("a", "101"), sub("b", "100")},
			want:   subscription.CacheLag{Older: []subscription.Write{sub("a", "101"), sub("b", "100")}},
		},
		"not held: a plan just created, a Subscription of another kind's name": {
			writes: []subscription.Write{plan("install-2", "1001"), sub("install-1", "5")},
			want:   subscription.CacheLag{Missing: []subscription.Write{plan("install-2", "1001"), sub("install-1", "5")}},
		},
		"a resourceVersion that is no number waits for nothing": {
			writes: []subscription.Write{sub("a", "x7")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("a", "x7")}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, subscription.Behind(tc.writes, view)); diff != "" {
				t.Errorf("Behind (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSameSubscriptions(t *testing.T) {
	read := func(uid string, generation int64, annotations map[string]string) v1alpha1.Subscription {
		return v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid), Generation: generation, Annotations: annotations, ResourceVersion: "10"}}
	}
	now := func(uid string, generation int64, annotations map[string]string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid), Generation: generation, Annotations: annotations, ResourceVersion: "11"}}
	}
	pin := map[string]string{plans.PinnedCSVAnnotation: "a.v1.1.0"}
	tests := map[string]struct {
		resolved []v1alpha1.Subscription
		now      []metav1.PartialObjectMetadata
		want     bool
	}{
		"none, none":               {want: true},
		"the same; status written": {resolved: []v1alpha1.Subscription{read("a", 1, nil), read("b", 2, pin)}, now: []metav1.PartialObjectMetadata{now("b", 2, pin), now("a", 1, map[string]string{})}, want: true},
		"one created meanwhile":    {resolved: []v1alpha1.Subscription{read("a", 1, nil)}, now: []metav1.PartialObjectMetadata{now("a", 1, nil), now("b", 1, nil)}},
		"one deleted meanwhile":    {resolved: []v1alpha1.Subscription{read("a", 1, nil), read("b", 1, nil)}, now: []metav1.PartialObjectMetadata{now("a", 1, nil)}},
		"one deleted, one created": {resolved: []v1alpha1.Subscription{read("a", 1, nil), read("b", 1, nil)}, now: []metav1.PartialObjectMetadata{now("a", 1, nil), now("c", 1, nil)}},
		"deleted and made again":   {resolved: []v1alpha1.Subscription{read("a", 1, nil)}, now: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a2", Generation: 1}}}},
		"a spec changed":           {resolved: []v1alpha1.Subscription{read("a", 1, nil)}, now: []metav1.PartialObjectMetadata{now("a", 2, nil)}},
		"a pin set":                {resolved: []v1alpha1.Subscription{read("a", 1, nil)}, now: []metav1.PartialObjectMetadata{now("a", 1, pin)}},
		"a pin removed":            {resolved: []v1alpha1.Subscription{read("a", 1, pin)}, now: []metav1.PartialObjectMetadata{now("a", 1, nil)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := subscription.SameSubscriptions(tc.resolved, tc.now); got != tc.want {
				t.Errorf("SameSubscriptions = %v, want %v", got, tc.want)
			}
		})
	}
}
