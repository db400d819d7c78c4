package subscription_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func TestPlansToDelete(t *testing.T) {
	ip := func(name string, gen int, age time.Duration) v1alpha1.InstallPlan {
		p := v1alpha1.InstallPlan{}
		p.Name, p.Spec.Generation = name, gen
		p.CreationTimestamp = metav1.NewTime(t0.Add(-age))
		return p
	}
	refs := func(names ...string) []v1alpha1.Subscription {
		var out []v1alpha1.Subscription
		for _, n := range names {
			out = append(out, *sub("s-"+n, "a", pending("a.v1.0.0", n)))
		}
		return out
	}
	seven := []v1alpha1.InstallPlan{ip("g7", 7, 0), ip("g1", 1, 7), ip("g3", 3, 5), ip("g2b", 2, 5), ip("g2a", 2, 6), ip("g5", 5, 3), ip("g6", 6, 1)}
	tests := []struct {
		name  string
		plans []v1alpha1.InstallPlan
		subs  []v1alpha1.Subscription
		keep  int
		want  []string
	}{
		{"five or fewer", seven[:5], nil, 5, nil},
		{"oldest generations first, ties by age", seven, nil, 5, []string{"g1", "g2a"}},
		{"a referenced plan stays", seven, refs("g1"), 5, []string{"g2a", "g2b"}},
		{"the newest stays even if all else is referenced", seven, refs("g1", "g2a", "g2b", "g3", "g5", "g6"), 1, nil},
		{"keep one", seven, nil, 1, []string{"g1", "g2a", "g2b", "g3", "g5", "g6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subscription.PlansToDelete(tt.plans, tt.subs, tt.keep); !equal(got, tt.want) {
				t.Errorf("%v, want %v", got, tt.want)
			}
		})
	}
}

func TestReusablePlan(t *testing.T) {
	s := sub("s", "a")
	s.UID = "uid-s"
	plan := func(name string, phase v1alpha1.InstallPlanPhase, owner string, csvs ...string) v1alpha1.InstallPlan {
		ip := v1alpha1.InstallPlan{}
		ip.Name, ip.Status.Phase, ip.Spec.ClusterServiceVersionNames = name, phase, csvs
		ip.OwnerReferences = []metav1.OwnerReference{{Kind: v1alpha1.SubscriptionKind, Name: "s", UID: types.UID(owner)}}
		return ip
	}
	plans := []v1alpha1.InstallPlan{
		plan("done", v1alpha1.InstallPlanPhaseComplete, "uid-s", "a.v1.2.0", "b.v1.0.0"),
		plan("other-sub", v1alpha1.InstallPlanPhaseInstalling, "uid-x", "a.v1.2.0", "b.v1.0.0"),
		plan("other-csvs", v1alpha1.InstallPlanPhaseInstalling, "uid-s", "a.v1.2.0"),
		plan("mine", v1alpha1.InstallPlanPhaseRequiresApproval, "uid-s", "b.v1.0.0", "a.v1.2.0"),
	}
	if ip := subscription.ReusablePlan(s, plans, []string{"a.v1.2.0", "b.v1.0.0"}); ip == nil || ip.Name != "mine" {
		t.Errorf("reused %v, want mine", ip)
	}
	if ip := subscription.ReusablePlan(s, plans[:3], []string{"a.v1.2.0", "b.v1.0.0"}); ip != nil {
		t.Errorf("reused %s: complete, another Subscription's, or other CSVs", ip.Name)
	}
}
