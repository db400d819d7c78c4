package resolve_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

func og(strategy operatorsv1.UpgradeStrategy) *operatorsv1.OperatorGroup {
	g := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "og"}}
	g.Spec.UpgradeStrategy = strategy
	return g
}

func TestFailForwardEnabled(t *testing.T) {
	tests := []struct {
		name   string
		groups []*operatorsv1.OperatorGroup
		want   bool
	}{
		{"no group", nil, false},
		{"unset: Default", []*operatorsv1.OperatorGroup{og("")}, false},
		{"Default", []*operatorsv1.OperatorGroup{og(operatorsv1.UpgradeStrategyDefault)}, false},
		{"TechPreviewUnsafeFailForward", []*operatorsv1.OperatorGroup{og(operatorsv1.UpgradeStrategyUnsafeFailForward)}, true},
		{"an unknown strategy is Default", []*operatorsv1.OperatorGroup{og("FailForward")}, false},
		// OLM's IsFailForwardEnabled: "found 2 operatorGroups, expected 1" — never enabled.
		{"two groups", []*operatorsv1.OperatorGroup{og(operatorsv1.UpgradeStrategyUnsafeFailForward), og(operatorsv1.UpgradeStrategyUnsafeFailForward)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve.FailForwardEnabled(tt.groups...); got != tt.want {
				t.Errorf("FailForwardEnabled = %t, want %t", got, tt.want)
			}
		})
	}
}

// csvIn is a CSV of namespace ns in a phase, replacing another.
func csvIn(name, replaces string, phase v1alpha1.ClusterServiceVersionPhase) v1alpha1.ClusterServiceVersion {
	c := v1alpha1.ClusterServiceVersion{}
	c.Name, c.Namespace, c.Spec.Replaces, c.Status.Phase = name, "ns", replaces, phase
	return c
}

// TestHiddenByFailForward holds OLM's isReplacementChainThatEndsInFailure cases
// (resolver/fail_forward.go), and olmsync's choice where OLM's walk errs.
func TestHiddenByFailForward(t *testing.T) {
	const (
		replacing = v1alpha1.CSVPhaseReplacing
		failed    = v1alpha1.CSVPhaseFailed
		succeeded = v1alpha1.CSVPhaseSucceeded
		pending   = v1alpha1.CSVPhasePending
	)
	copied := csvIn("a.v1", "", replacing)
	copied.Status.Reason = v1alpha1.CSVReasonCopied
	tests := []struct {
		name string
		csvs []v1alpha1.ClusterServiceVersion // the first is asked about
		want bool
	}{
		{"Replacing, replaced by a Failed CSV", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "", replacing), csvIn("a.v2", "a.v1", failed)}, true},
		{"a chain of Replacing CSVs ending in a Failed one", []v1alpha1.ClusterServiceVersion{
			csvIn("a.v1", "", replacing), csvIn("a.v2", "a.v1", replacing), csvIn("a.v3", "a.v2", failed)}, true},
		{"Replacing, replaced by a Pending CSV (an upgrade under way)", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "", replacing), csvIn("a.v2", "a.v1", pending)}, false},
		{"Replacing, replaced by a Succeeded CSV", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "", replacing), csvIn("a.v2", "a.v1", succeeded)}, false},
		{"the Failed CSV itself stays", []v1alpha1.ClusterServiceVersion{csvIn("a.v2", "a.v1", failed), csvIn("a.v1", "", replacing)}, false},
		{"a Succeeded CSV is never hidden", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "", succeeded), csvIn("a.v2", "a.v1", failed)}, false},
		{"Replacing with nothing replacing it", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "", replacing)}, false},
		// OLM: "csv ns/a.v2 in phase Succeeded instead of Replacing" fails the namespace's
		// resolution; olmsync keeps a.v1 in view (docs/olm.md).
		{"a CSV in the middle of the chain not Replacing", []v1alpha1.ClusterServiceVersion{
			csvIn("a.v1", "", replacing), csvIn("a.v2", "a.v1", succeeded), csvIn("a.v3", "a.v2", failed)}, false},
		// OLM: "csv ns/a.v1 has already been seen".
		{"a cycle of Replacing CSVs", []v1alpha1.ClusterServiceVersion{csvIn("a.v1", "a.v2", replacing), csvIn("a.v2", "a.v1", replacing)}, false},
		{"a copied CSV", []v1alpha1.ClusterServiceVersion{copied, csvIn("a.v2", "a.v1", failed)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve.HiddenByFailForward(&tt.csvs[0], tt.csvs); got != tt.want {
				t.Errorf("HiddenByFailForward = %t, want %t", got, tt.want)
			}
		})
	}
}

// TestResolveFailForward is OLM's TestResolver FailForward cases on olmsync's resolver: a
// failed upgrade left a.v1 Replacing and a.v2 Failed (the Subscription's installed CSV); the
// catalog now has a.v3, replacing a.v2.
func TestResolveFailForward(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1"), e("a.v2", replaces("a.v1")), e("a.v3", replaces("a.v2"))))
	catalogs := []resolve.Catalog{cat("cat", "ns", a)}
	v1, v2 := installed(a, "a.v1"), installed(a, "a.v2")
	v1.Spec.Replaces, v1.Status.Phase = "", v1alpha1.CSVPhaseReplacing
	v2.Spec.Replaces, v2.Status.Phase = "a.v1", v1alpha1.CSVPhaseFailed
	in := ns(subs(sub("a", "a", "stable", "cat", "ns").at("a.v2")), v1, v2)

	t.Run("Default: the Replacing CSV no Subscription references stays, nothing fits", func(t *testing.T) {
		got := resolveNS(t, catalogs, in).Subscriptions[0].Resolution
		if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonConstraintsNotSatisfiable ||
			!strings.Contains(got.Message, "clusterserviceversion a.v1 exists and is not referenced by a subscription") {
			t.Errorf("resolution %+v", got)
		}
	})
	t.Run("fail-forward: the Failed CSV is replaced", func(t *testing.T) {
		in := in
		in.FailForward = true
		got := resolveNS(t, catalogs, in).Subscriptions[0].Resolution
		if got.Status != resolve.StatusResolved || got.Next != "a.v3" {
			t.Errorf("resolution %+v", got)
		}
	})
}

// TestResolveDuringAReplacesUpgrade is what OLM's resolver sees while a replaces-upgrade is
// under way (issue 31): the Subscription's installedCSV is already the new a.v2 (OLM's
// ensureSubscriptionCSVState sets it as soon as the CSV exists), and a.v1, Replacing until
// a.v2 succeeds, is referenced by no Subscription. OLM's csvSourceProvider (source_csvs.go)
// hides a Replacing CSV only under fail-forward, so a.v1 is mandatory and conflicts with
// a.v2 in the package: ConstraintsNotSatisfiable with these words, until a.v1 is deleted.
// olmsync matches it; with a.v1 gone the Subscription is up to date.
func TestResolveDuringAReplacesUpgrade(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1"), e("a.v2", replaces("a.v1"))))
	catalogs := []resolve.Catalog{cat("cat", "ns", a)}
	v1, v2 := installed(a, "a.v1"), installed(a, "a.v2")
	v1.Status.Phase = v1alpha1.CSVPhaseReplacing
	v2.Spec.Replaces, v2.Status.Phase = "a.v1", v1alpha1.CSVPhaseInstalling
	got := resolveNS(t, catalogs, ns(subs(sub("a", "a", "stable", "cat", "ns").at("a.v2")), v1, v2)).Subscriptions[0].Resolution
	const want = "constraints not satisfiable: @existing/ns//a.v1 and @existing/ns//a.v2 originate from package a, " +
		"clusterserviceversion a.v1 exists and is not referenced by a subscription, subscription a exists, subscription a requires @existing/ns//a.v2"
	if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonConstraintsNotSatisfiable || got.Message != want {
		t.Errorf("resolution %+v, want ConstraintsNotSatisfiable %q", got, want)
	}
	after := resolveNS(t, catalogs, ns(subs(sub("a", "a", "stable", "cat", "ns").at("a.v2")), v2)).Subscriptions[0].Resolution
	if after.Status == resolve.StatusFailed {
		t.Errorf("with a.v1 deleted: %+v", after)
	}
}
