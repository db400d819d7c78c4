package subscription_test

import (
	"sort"
	"testing"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

// TestDecideApproval resolves each Subscription against the fixture catalog and decides
// its plan's approval: a's channel is a.v1.0.0 → a.v1.1.0 → a.v1.2.0.
func TestDecideApproval(t *testing.T) {
	pin := func(csv string) func(*v1alpha1.Subscription) { return annotated(plans.PinnedCSVAnnotation, csv) }
	firstAuto := annotated(plans.ApprovalAnnotation, plans.ApprovalFirstAutomatic)
	tests := []struct {
		name     string
		sub      *v1alpha1.Subscription
		next     string
		approval v1alpha1.Approval
		approved bool
	}{
		{"Automatic", sub("s", "a"), "a.v1.2.0", v1alpha1.ApprovalAutomatic, true},
		{"Manual", sub("s", "a", manual), "a.v1.2.0", v1alpha1.ApprovalManual, false},
		{"a pin installs the pinned CSV first", sub("s", "a", pin("a.v1.1.0")), "a.v1.1.0", v1alpha1.ApprovalManual, true},
		{"a pin approves the steps up to it", sub("s", "a", pin("a.v1.1.0"), installed("a.v1.0.0")), "a.v1.1.0", v1alpha1.ApprovalManual, true},
		{"a pin approves nothing past it", sub("s", "a", pin("a.v1.1.0"), installed("a.v1.1.0")), "a.v1.2.0", v1alpha1.ApprovalManual, false},
		{"a pin outranks Manual", sub("s", "a", manual, pin("a.v1.2.0"), installed("a.v1.1.0")), "a.v1.2.0", v1alpha1.ApprovalManual, true},
		{"a pin to a CSV not in the channel approves nothing", sub("s", "a", pin("a.v9.0.0"), installed("a.v1.0.0")), "a.v1.1.0", v1alpha1.ApprovalManual, false},
		{"first-automatic: the first install", sub("s", "a", firstAuto), "a.v1.2.0", v1alpha1.ApprovalManual, true},
		{"first-automatic: an upgrade", sub("s", "a", firstAuto, installed("a.v1.0.0")), "a.v1.1.0", v1alpha1.ApprovalManual, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolveFixture(t, tt.sub).Subscription("s")
			if r.Resolution.Next != tt.next {
				t.Fatalf("resolved %+v, want next %s", r.Resolution, tt.next)
			}
			a := plans.DecideApproval(tt.sub, r)
			if a.Approval != tt.approval || a.Approved != tt.approved || a.Why == "" {
				t.Errorf("%+v; want %s approved=%t", a, tt.approval, tt.approved)
			}
		})
	}
}

func TestForResolverLeavesTheSubscriptionAlone(t *testing.T) {
	s := sub("s", "a", annotated(plans.PinnedCSVAnnotation, "a.v1.1.0"))
	got := plans.ForResolver(s)
	if got.Spec.StartingCSV != "a.v1.1.0" || s.Spec.StartingCSV != "" {
		t.Errorf("resolver sees %q; the Subscription now says %q", got.Spec.StartingCSV, s.Spec.StartingCSV)
	}
	s.Spec.StartingCSV = "a.v1.0.0"
	if plans.ForResolver(s).Spec.StartingCSV != "a.v1.0.0" {
		t.Error("an explicit startingCSV wins over the pin")
	}
}

// TestSplit: two new Subscriptions need the API that b provides. OLM would install a, b and
// c with one plan; olmsync gives a's plan a and its dependency b (and the Subscription OLM
// generates for b), and c's plan c alone.
func TestSplit(t *testing.T) {
	a, c := sub("a", "a"), sub("c", "c", manual)
	res := resolveFixture(t, a, c)
	if len(res.Bundles) != 3 || len(res.Generated) != 1 {
		t.Fatalf("resolution: bundles %+v, generated %d", res.Bundles, len(res.Generated))
	}
	parts := plans.Split(res, map[string]bool{"a": true, "c": true})
	got := map[string][]string{}
	for name, p := range parts {
		for _, b := range p.Bundles {
			got[name] = append(got[name], b.Name)
		}
		for _, g := range p.Generated {
			got[name] = append(got[name], "sub:"+g.Name)
		}
		sort.Strings(got[name])
		if len(p.Subscriptions) != 1 || p.Subscriptions[0].Name != name {
			t.Errorf("%s: part carries Subscriptions %+v", name, p.Subscriptions)
		}
	}
	want := map[string][]string{
		"a": {"a.v1.2.0", "b.v1.0.0", "sub:b-stable-cat-olm"},
		"c": {"c.v2.0.0"},
	}
	if len(got) != len(want) || !equal(got["a"], want["a"]) || !equal(got["c"], want["c"]) {
		t.Errorf("split %v, want %v", got, want)
	}
	// Each part makes a plan with its own Subscription's approval.
	for name, wantApproval := range map[string]v1alpha1.Approval{"a": v1alpha1.ApprovalAutomatic, "c": v1alpha1.ApprovalManual} {
		p, err := resolve.NewPlan(parts[name])
		if err != nil || p == nil {
			t.Fatalf("%s: plan %v, %v", name, p, err)
		}
		if p.Approval != wantApproval {
			t.Errorf("%s: plan approval %s, want %s", name, p.Approval, wantApproval)
		}
	}
	// A dependency goes with the Subscription that needs it, not the first one.
	parts = plans.Split(resolveFixture(t, sub("d", "d"), sub("a", "a")), map[string]bool{"a": true, "d": true})
	if len(parts["d"].Bundles) != 1 || len(parts["a"].Bundles) != 2 || len(parts["a"].Generated) != 1 {
		t.Errorf("d, then a that needs b: %+v", parts)
	}
	// c already has its plan: only a is split for, and c's bundle is in no part.
	parts = plans.Split(res, map[string]bool{"a": true})
	if _, ok := parts["c"]; ok || len(parts["a"].Bundles) != 2 {
		t.Errorf("split for a alone: %+v", parts)
	}
}

// TestSplitOrphans: a bundle no Subscription's tree names (a provider an installed CSV
// needs again) goes with the first Subscription that installs something.
func TestSplitOrphans(t *testing.T) {
	res := &resolve.Result{
		Namespace: "ns",
		Subscriptions: []resolve.SubscriptionResult{
			{Name: "x", Resolution: resolve.Resolution{Status: resolve.StatusUpToDate}},
			{Name: "y", Resolution: resolve.Resolution{Status: resolve.StatusResolved, Next: "y.v2"}},
		},
		Bundles: []resolve.Bundle{{Name: "y.v2", Subscription: "y"}, {Name: "p.v1"}},
	}
	parts := plans.Split(res, map[string]bool{"x": true, "y": true})
	if len(parts) != 1 || len(parts["y"].Bundles) != 2 || parts["y"].Bundles[1].Name != "p.v1" {
		t.Errorf("parts %+v", parts)
	}
}

// TestApprovesWaitingPlan: a pin moved past the CSV a waiting plan installs approves it;
// nothing else does.
func TestApprovesWaitingPlan(t *testing.T) {
	waiting := func(csv string, approved bool, phase v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
		ip := &v1alpha1.InstallPlan{}
		ip.Name, ip.Spec.ClusterServiceVersionNames, ip.Spec.Approved, ip.Status.Phase = "install-2", []string{csv}, approved, phase
		return ip
	}
	pinnedAt := func(pin string) *v1alpha1.Subscription {
		return sub("s", "a", annotated(plans.PinnedCSVAnnotation, pin), installed("a.v1.1.0"), pending("a.v1.2.0", "install-2"))
	}
	tests := []struct {
		name string
		sub  *v1alpha1.Subscription
		plan *v1alpha1.InstallPlan
		want bool
	}{
		{"the pin moved to the plan's CSV", pinnedAt("a.v1.2.0"), waiting("a.v1.2.0", false, v1alpha1.InstallPlanPhaseRequiresApproval), true},
		{"the pin stays behind", pinnedAt("a.v1.1.0"), waiting("a.v1.2.0", false, v1alpha1.InstallPlanPhaseRequiresApproval), false},
		{"already approved", pinnedAt("a.v1.2.0"), waiting("a.v1.2.0", true, v1alpha1.InstallPlanPhaseInstalling), false},
		{"a plan for another CSV", pinnedAt("a.v1.2.0"), waiting("a.v1.1.5", false, v1alpha1.InstallPlanPhaseRequiresApproval), false},
		{"Manual without annotations is a person's call", sub("s", "a", manual, installed("a.v1.1.0"), pending("a.v1.2.0", "install-2")), waiting("a.v1.2.0", false, v1alpha1.InstallPlanPhaseRequiresApproval), false},
		{"no plan", pinnedAt("a.v1.2.0"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !subscription.NeedsResolution([]v1alpha1.Subscription{*tt.sub}) && tt.want {
				t.Fatal("a Subscription whose approval olmsync decides is resolved even while it waits")
			}
			r := resolveFixture(t, tt.sub).Subscription("s")
			if _, got := subscription.ApprovesWaitingPlan(tt.sub, tt.plan, r); got != tt.want {
				t.Errorf("approves %t, want %t (resolution %+v)", got, tt.want, r.Resolution)
			}
		})
	}
}

func TestAdoptGeneratedPlan(t *testing.T) {
	ip := v1alpha1.InstallPlan{}
	ip.Name, ip.UID, ip.Spec.Generation = "install-7", "uid-7", 7
	gen := sub("b-stable-cat-olm", "b", annotated(installplan.GeneratedByAnnotation, "install-7"), func(s *v1alpha1.Subscription) { s.Spec.StartingCSV = "b.v1.0.0" })
	if !subscription.AdoptGeneratedPlan(gen, []v1alpha1.InstallPlan{ip}, false, t1) {
		t.Fatal("not adopted")
	}
	if st := gen.Status; st.InstallPlanRef == nil || st.InstallPlanRef.Name != "install-7" || st.CurrentCSV != "b.v1.0.0" || st.State != v1alpha1.SubscriptionStateUpgradePending || st.InstallPlanGeneration != 7 {
		t.Errorf("status %+v", st)
	}
	if subscription.AdoptGeneratedPlan(gen, []v1alpha1.InstallPlan{ip}, false, t1) {
		t.Error("adopted twice")
	}
	if subscription.AdoptGeneratedPlan(sub("x", "a"), []v1alpha1.InstallPlan{ip}, false, t1) {
		t.Error("a Subscription nobody generated adopted a plan")
	}
	// OLM's ensureSubscriptionInstallPlanState: a Failed plan makes it UpgradeFailed under
	// fail-forward only.
	ip.Status.Phase = v1alpha1.InstallPlanPhaseFailed
	for _, ff := range []bool{false, true} {
		gen := sub("b-stable-cat-olm", "b", annotated(installplan.GeneratedByAnnotation, "install-7"))
		want := v1alpha1.SubscriptionStateUpgradePending
		if ff {
			want = v1alpha1.SubscriptionStateFailed
		}
		if !subscription.AdoptGeneratedPlan(gen, []v1alpha1.InstallPlan{ip}, ff, t1) || gen.Status.State != want {
			t.Errorf("fail-forward %t: state %q, want %q", ff, gen.Status.State, want)
		}
	}
}
