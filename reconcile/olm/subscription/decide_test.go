package subscription_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func TestSyncInstalledCSV(t *testing.T) {
	const (
		complete = v1alpha1.InstallPlanPhaseComplete
		failed   = v1alpha1.InstallPlanPhaseFailed
		none     = v1alpha1.InstallPlanPhaseNone
	)
	tests := []struct {
		name        string
		sub         *v1alpha1.Subscription
		exists      bool
		plan        v1alpha1.InstallPlanPhase
		failForward bool
		changed     bool
		installed   string
		state       v1alpha1.SubscriptionState
	}{
		{"nothing resolved yet", sub("s", "a"), false, none, false, false, "", ""},
		{"plan made, CSV not yet there", sub("s", "a", pending("a.v1.0.0", "install-1")), false, none, false, false, "", v1alpha1.SubscriptionStateUpgradePending},
		{"the CSV appears", sub("s", "a", pending("a.v1.0.0", "install-1")), true, complete, false, true, "a.v1.0.0", v1alpha1.SubscriptionStateAtLatest},
		{"steady", sub("s", "a", installed("a.v1.0.0")), true, none, false, false, "a.v1.0.0", v1alpha1.SubscriptionStateAtLatest},
		{"the installed CSV disappears", sub("s", "a", installed("a.v1.0.0")), false, none, false, true, "a.v1.0.0", v1alpha1.SubscriptionStateUpgradePending},
		{"the CSV its complete plan made is deleted: install again", sub("s", "a", pending("a.v1.0.0", "install-1"), installed("a.v1.0.0")), false, complete, false, true, "", ""},
		{"an upgrade is known and the CSV stays", sub("s", "a", installed("a.v1.0.0"), func(s *v1alpha1.Subscription) {
			s.Status.State = v1alpha1.SubscriptionStateUpgradeAvailable
		}), true, none, false, false, "a.v1.0.0", v1alpha1.SubscriptionStateUpgradeAvailable},
		// OLM's ensureSubscriptionCSVState: UpgradeFailed only with fail-forward.
		{"the plan Failed: Default stays UpgradePending", sub("s", "a", installed("a.v1.0.0"), pending("a.v1.1.0", "install-2")), false, failed, false, false, "a.v1.0.0", v1alpha1.SubscriptionStateUpgradePending},
		{"the plan Failed: fail-forward says UpgradeFailed", sub("s", "a", installed("a.v1.0.0"), pending("a.v1.1.0", "install-2")), false, failed, true, true, "a.v1.0.0", v1alpha1.SubscriptionStateFailed},
		{"fail-forward, the plan still running", sub("s", "a", installed("a.v1.0.0"), pending("a.v1.1.0", "install-2")), false, v1alpha1.InstallPlanPhaseInstalling, true, false, "a.v1.0.0", v1alpha1.SubscriptionStateUpgradePending},
		{"fail-forward, the CSV of the failed plan exists: AtLatestKnown", sub("s", "a", installed("a.v1.0.0"), pending("a.v1.1.0", "install-2")), true, failed, true, true, "a.v1.1.0", v1alpha1.SubscriptionStateAtLatest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := subscription.SyncInstalledCSV(tt.sub, tt.exists, tt.plan, tt.failForward, t1)
			if changed != tt.changed || tt.sub.Status.InstalledCSV != tt.installed || tt.sub.Status.State != tt.state {
				t.Errorf("changed %t, installed %q, state %q; want %t, %q, %q", changed, tt.sub.Status.InstalledCSV, tt.sub.Status.State, tt.changed, tt.installed, tt.state)
			}
			if !tt.exists && tt.plan == complete && (tt.sub.Status.InstallPlanRef != nil || tt.sub.Status.CurrentCSV != "") {
				t.Errorf("references kept: %+v", tt.sub.Status)
			}
			if changed != tt.sub.Status.LastUpdated.Equal(&t1) {
				t.Errorf("lastUpdated %v moved=%t, changed=%t", tt.sub.Status.LastUpdated, !changed, changed)
			}
		})
	}
}

func TestNeedsResolution(t *testing.T) {
	a := *sub("a", "a", pending("a.v1.0.0", "install-1"))
	c := *sub("c", "c", pending("c.v2.0.0", "install-2"))
	fresh := *sub("b", "b")
	at := *sub("d", "a", installed("a.v1.2.0"))
	// OLM's nothingToUpdate: a plan that Failed under fail-forward does not hold the pass.
	upgradeFailed := *sub("e", "e", pending("e.v2.0.0", "install-3"), func(s *v1alpha1.Subscription) { s.Status.State = v1alpha1.SubscriptionStateFailed })
	if subscription.NeedsResolution([]v1alpha1.Subscription{a, c}) {
		t.Error("every Subscription waits on its plan: OLM skips the pass")
	}
	for _, subs := range [][]v1alpha1.Subscription{{a, fresh}, {at}, {c, at}, {a, upgradeFailed}} {
		if !subscription.NeedsResolution(subs) {
			t.Errorf("%s: needs a resolution", subs[len(subs)-1].Name)
		}
	}
}

func TestApplyResolutionOnTheFixture(t *testing.T) {
	tests := []struct {
		name      string
		sub       *v1alpha1.Subscription
		needsPlan bool
		state     v1alpha1.SubscriptionState
		failed    string
		held      string
	}{
		{name: "a new Subscription gets the channel head", sub: sub("s", "a"), needsPlan: true, state: v1alpha1.SubscriptionStateUpgradeAvailable, failed: "-", held: "-"},
		{name: "one step along replaces", sub: sub("s", "a", installed("a.v1.0.0")), needsPlan: true, state: v1alpha1.SubscriptionStateUpgradeAvailable, failed: "-", held: "-"},
		{name: "at the head", sub: sub("s", "a", installed("a.v1.2.0")), state: v1alpha1.SubscriptionStateAtLatest, failed: "-", held: "-"},
		{name: "already waiting on a plan for the same CSV", sub: sub("s", "a", pending("a.v1.2.0", "install-1")), state: v1alpha1.SubscriptionStateUpgradePending, failed: "-", held: "-"},
		// OLM's ResolveSteps moves currentCSV only when the resolution differs from it: a plan
		// that Failed under fail-forward is superseded by a new resolution, not by the same CSV.
		{name: "UpgradeFailed, the same CSV resolved: no new plan", sub: sub("s", "a", pending("a.v1.2.0", "install-1"), func(s *v1alpha1.Subscription) {
			s.Status.State = v1alpha1.SubscriptionStateFailed
		}), state: v1alpha1.SubscriptionStateFailed, failed: "-", held: "-"},
		{name: "UpgradeFailed, the catalog offers another CSV: a new plan", sub: sub("s", "a", pending("a.v1.1.0", "install-1"), func(s *v1alpha1.Subscription) {
			s.Status.State = v1alpha1.SubscriptionStateFailed
		}), needsPlan: true, state: v1alpha1.SubscriptionStateUpgradeAvailable, failed: "-", held: "-"},
		{
			name: "a missing package", sub: sub("s", "nope"), state: "", held: "-",
			failed: "True/ConstraintsNotSatisfiable: constraints not satisfiable: no operators found in package nope in the catalog referenced by subscription s, subscription s exists",
		},
		{
			name: "a failure clears once resolution succeeds", sub: sub("s", "a", func(s *v1alpha1.Subscription) {
				s.Status.Conditions = []v1alpha1.SubscriptionCondition{{Type: v1alpha1.SubscriptionResolutionFailed, Status: corev1.ConditionTrue, Reason: v1alpha1.ConstraintsNotSatisfiable}}
			}), needsPlan: true, state: v1alpha1.SubscriptionStateUpgradeAvailable, failed: "-", held: "-",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resolveFixture(t, tt.sub)
			r := res.Subscription(tt.sub.Name)
			needsPlan, _ := subscription.ApplyResolution(tt.sub, r, t1)
			if needsPlan != tt.needsPlan || tt.sub.Status.State != tt.state {
				t.Errorf("needsPlan %t, state %q; want %t, %q (resolution %+v)", needsPlan, tt.sub.Status.State, tt.needsPlan, tt.state, r.Resolution)
			}
			if got := cond(tt.sub, v1alpha1.SubscriptionResolutionFailed); got != tt.failed {
				t.Errorf("ResolutionFailed %s, want %s", got, tt.failed)
			}
			if got := cond(tt.sub, subscription.UpgradeHeld); got != tt.held {
				t.Errorf("UpgradeHeld %s, want %s", got, tt.held)
			}
		})
	}
}

func TestApplyResolutionHeldAndNoPath(t *testing.T) {
	for _, tt := range []struct {
		reason string
		state  v1alpha1.SubscriptionState
	}{
		{resolve.ReasonUpgradeHeld, v1alpha1.SubscriptionStateUpgradeAvailable},
		{resolve.ReasonNoUpgradePath, v1alpha1.SubscriptionStateAtLatest},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			s := sub("s", "a", installed("a.v1.0.0"))
			r := &resolve.SubscriptionResult{Name: "s", Installed: "a.v1.0.0", Resolution: resolve.Resolution{Status: resolve.StatusFailed, Reason: tt.reason, Message: "why"}}
			needsPlan, changed := subscription.ApplyResolution(s, r, t1)
			if needsPlan || !changed || s.Status.State != tt.state {
				t.Errorf("needsPlan %t changed %t state %q; want false true %q", needsPlan, changed, s.Status.State, tt.state)
			}
			if got, want := cond(s, subscription.UpgradeHeld), "True/"+tt.reason+": why"; got != want {
				t.Errorf("UpgradeHeld %s, want %s", got, want)
			}
			if cond(s, v1alpha1.SubscriptionResolutionFailed) != "-" {
				t.Error("a held upgrade is not a failed resolution")
			}
			if _, changed := subscription.ApplyResolution(s, r, t1); changed {
				t.Error("the same resolution again changes nothing")
			}
		})
	}
}

func TestApplyResolutionDeprecations(t *testing.T) {
	s := sub("s", "a", installed("a.v1.0.0"))
	r := &resolve.SubscriptionResult{Name: "s", Resolution: resolve.Resolution{Status: resolve.StatusUpToDate}, Deprecations: []resolve.Deprecation{
		{Condition: v1alpha1.SubscriptionPackageDeprecated, Message: "olm.package/a: use b"},
		{Condition: v1alpha1.SubscriptionBundleDeprecated, Message: "olm.bundle/a.v1.0.0: broken"},
	}}
	subscription.ApplyResolution(s, r, t1)
	want := map[v1alpha1.SubscriptionConditionType]string{
		v1alpha1.SubscriptionPackageDeprecated: "True/: olm.package/a: use b",
		v1alpha1.SubscriptionChannelDeprecated: "-",
		v1alpha1.SubscriptionBundleDeprecated:  "True/: olm.bundle/a.v1.0.0: broken",
		v1alpha1.SubscriptionDeprecated:        "True/: olm.package/a: use b; olm.bundle/a.v1.0.0: broken",
	}
	for ct, w := range want {
		if got := cond(s, ct); got != w {
			t.Errorf("%s: %s, want %s", ct, got, w)
		}
	}
	r.Deprecations = nil
	subscription.ApplyResolution(s, r, t1)
	if len(s.Status.Conditions) != 0 {
		t.Errorf("deprecations gone, conditions left: %+v", s.Status.Conditions)
	}
}

func TestOperatorGroupsFailed(t *testing.T) {
	s := sub("s", "a")
	if !subscription.OperatorGroupsFailed(s, 0, t1) {
		t.Fatal("no change")
	}
	if got, want := cond(s, v1alpha1.SubscriptionResolutionFailed), "True/ErrorPreventedResolution: expected 1 OperatorGroup in the namespace, found 0"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if subscription.OperatorGroupsFailed(s, 0, t1) {
		t.Error("the same condition again is no change")
	}
}

func TestPlanCreated(t *testing.T) {
	s := sub("s", "a")
	ip := &v1alpha1.InstallPlan{}
	ip.Namespace, ip.Name, ip.UID, ip.Spec.Generation = "ns", "install-abc", "uid-1", 3
	subscription.PlanCreated(s, ip, "a.v1.2.0", t1)
	want := v1alpha1.SubscriptionStatus{
		CurrentCSV: "a.v1.2.0", State: v1alpha1.SubscriptionStateUpgradePending, InstallPlanGeneration: 3, LastUpdated: t1,
		InstallPlanRef: &corev1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Namespace: "ns", Name: "install-abc", UID: "uid-1"},
		Install:        &v1alpha1.InstallPlanReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Name: "install-abc", UID: "uid-1"},
	}
	if diff := cmp.Diff(want, s.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	adopt := sub("s", "a")
	subscription.PlanCreated(adopt, nil, "a.v1.0.0", t1)
	if adopt.Status.CurrentCSV != "a.v1.0.0" || adopt.Status.InstallPlanRef != nil || adopt.Status.State != "" {
		t.Errorf("adopting an installed CSV: %+v", adopt.Status)
	}
}

// A Subscription that has installed nothing takes the one CSV of its package that nobody
// else refers to (a difference from OLM, docs/olm.md), and nothing else.
func TestAdoptInstalledCSV(t *testing.T) {
	copied := installedCSV("etcd", "etcd.v0.9.2")
	copied.Labels = map[string]string{v1alpha1.CopiedLabelKey: "operators"}
	deleting := installedCSV("etcd", "etcd.v0.9.2")
	deleting.DeletionTimestamp = &t0
	unlabelled := installedCSV("etcd", "etcd.v0.9.2")
	unlabelled.Annotations = nil
	for _, tc := range []struct {
		name   string
		sub    *v1alpha1.Subscription
		others []*v1alpha1.Subscription
		csvs   []v1alpha1.ClusterServiceVersion
		want   string
	}{
		{"the operator a deleted Subscription left", sub("etcd", "etcd"), nil, []v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.2")}, "etcd.v0.9.2"},
		{"another package's CSV", sub("etcd", "etcd"), nil, []v1alpha1.ClusterServiceVersion{installedCSV("prometheus", "prometheus.v0.47.0")}, ""},
		{"referenced by another Subscription", sub("etcd-again", "etcd"), []*v1alpha1.Subscription{sub("etcd", "etcd", installed("etcd.v0.9.2"))},
			[]v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.2")}, ""},
		{"on its way for another Subscription", sub("etcd-again", "etcd"), []*v1alpha1.Subscription{sub("etcd", "etcd", pending("etcd.v0.9.2", "install-1"))},
			[]v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.2")}, ""},
		{"a Subscription that installed something already", sub("etcd", "etcd", installed("etcd.v0.9.0")), nil, []v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.2")}, ""},
		{"a Subscription waiting on its plan", sub("etcd", "etcd", pending("etcd.v0.9.2", "install-1")), nil, []v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.2")}, ""},
		{"a copied CSV", sub("etcd", "etcd"), nil, []v1alpha1.ClusterServiceVersion{copied}, ""},
		{"a CSV being deleted", sub("etcd", "etcd"), nil, []v1alpha1.ClusterServiceVersion{deleting}, ""},
		{"a CSV that says no package", sub("etcd", "etcd"), nil, []v1alpha1.ClusterServiceVersion{unlabelled}, ""},
		{"two of the package: a replacement under way", sub("etcd", "etcd"), nil,
			[]v1alpha1.ClusterServiceVersion{installedCSV("etcd", "etcd.v0.9.0"), installedCSV("etcd", "etcd.v0.9.2")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			subs := []v1alpha1.Subscription{*tc.sub}
			for _, o := range tc.others {
				subs = append(subs, *o)
			}
			before := tc.sub.Status.DeepCopy()
			got := subscription.AdoptInstalledCSV(tc.sub, subs, tc.csvs, t1)
			if got != tc.want {
				t.Fatalf("adopted %q, want %q", got, tc.want)
			}
			st := tc.sub.Status
			switch {
			case got == "" && !equality.Semantic.DeepEqual(*before, st):
				t.Errorf("nothing adopted, but the status changed: %+v", st)
			case got != "" && (st.InstalledCSV != got || st.CurrentCSV != got || st.State != v1alpha1.SubscriptionStateAtLatest || !st.LastUpdated.Equal(&t1)):
				t.Errorf("status after adopting %s: %+v", got, st)
			}
		})
	}
}
