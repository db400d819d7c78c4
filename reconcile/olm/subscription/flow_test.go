package subscription_test

// End-to-end tests of the embedded OLM through Subscriptions: every controller runs
// (olm.SetupWithManager) against the real API server, catalogs are ConfigMap catalogs, and
// olmtest plays the kubelet by marking Deployments Available.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

// flow starts the whole embedded OLM and a fresh namespace with its own OperatorGroup,
// whose Deployments become Available as they appear.
func flow(t *testing.T) (*testenv.Env, string, *olmtest.Manager) {
	t.Helper()
	return flowWith(t, olm.Options{})
}

// flowWith is flow with the embedded OLM's options.
func flowWith(t *testing.T, opts olm.Options) (*testenv.Env, string, *olmtest.Manager) {
	t.Helper()
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "flow")
	olmtest.OwnGroup(t, env, ns)
	m := olmtest.StartManager(t, env, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return env, ns, m
}

func widget(version string, edges ...func(*olmtest.Bundle)) olmtest.Bundle {
	b := olmtest.Bundle{Package: "widget", Version: version, Owns: []olmtest.API{{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}}}
	for _, e := range edges {
		e(&b)
	}
	return b
}

func replacing(csv string) func(*olmtest.Bundle)   { return func(b *olmtest.Bundle) { b.Replaces = csv } }
func skipping(csv ...string) func(*olmtest.Bundle) { return func(b *olmtest.Bundle) { b.Skips = csv } }
func ranging(r string) func(*olmtest.Bundle)       { return func(b *olmtest.Bundle) { b.SkipRange = r } }

func subscribe(t *testing.T, env *testenv.Env, ns, name, pkg string, opts ...func(*v1alpha1.Subscription)) {
	t.Helper()
	s := &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: pkg, Channel: "stable"},
	}
	for _, o := range opts {
		o(s)
	}
	olmtest.Create(t, env, s)
}

// waitInstalled waits until the Subscription is AtLatestKnown at csv and the CSV Succeeded.
func waitInstalled(t *testing.T, env *testenv.Env, ns, sub, csv string) {
	t.Helper()
	olmtest.Eventually(t, fmt.Sprintf("subscription %s at %s, Succeeded", sub, csv), func() error {
		s := &v1alpha1.Subscription{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: sub}, s); err != nil {
			return err
		}
		if s.Status.State != v1alpha1.SubscriptionStateAtLatest || s.Status.InstalledCSV != csv {
			return fmt.Errorf("state %q installed %q current %q conditions %+v", s.Status.State, s.Status.InstalledCSV, s.Status.CurrentCSV, s.Status.Conditions)
		}
		c := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: csv}, c); err != nil {
			return err
		}
		if c.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("csv %s: %s %s %s (csvs of the namespace: %s)", csv, c.Status.Phase, c.Status.Reason, c.Status.Message, describeCSVs(t, env, ns))
		}
		return nil
	})
}

// waitCSVSucceeded waits until the Subscription's installed CSV is csv and it Succeeded,
// whatever the Subscription's state (a pinned one already waits on its next plan).
func waitCSVSucceeded(t *testing.T, env *testenv.Env, ns, sub, csv string) {
	t.Helper()
	olmtest.Eventually(t, fmt.Sprintf("subscription %s installed %s, Succeeded", sub, csv), func() error {
		s := &v1alpha1.Subscription{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: sub}, s); err != nil {
			return err
		}
		c := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: csv}, c); err != nil {
			return err
		}
		if s.Status.InstalledCSV != csv || c.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("installed %q; csv %s %s", s.Status.InstalledCSV, c.Status.Phase, c.Status.Reason)
		}
		return nil
	})
}

// describeCSVs says what CSVs a namespace holds, for failure messages.
func describeCSVs(t *testing.T, env *testenv.Env, ns string) string {
	var l v1alpha1.ClusterServiceVersionList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range l.Items {
		out = append(out, fmt.Sprintf("%s(%s/%s replaces=%q deleting=%t)", c.Name, c.Status.Phase, c.Status.Reason, c.Spec.Replaces, !c.DeletionTimestamp.IsZero()))
	}
	return fmt.Sprint(out)
}

// plannedCSVs lists what each InstallPlan of ns installs, oldest generation first.
func plannedCSVs(t *testing.T, env *testenv.Env, ns string) [][]string {
	t.Helper()
	var out [][]string
	for _, ip := range plansOf(t, env.Client, ns) {
		out = append(out, ip.Spec.ClusterServiceVersionNames)
	}
	return out
}

func csvNames(t *testing.T, env *testenv.Env, ns string) []string {
	t.Helper()
	var l v1alpha1.ClusterServiceVersionList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range l.Items {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// TestUpgradeWalksTheGraph installs widget from a ConfigMap catalog with Automatic approval,
// then changes the catalog three times: a replaces chain is walked one CSV at a time, skips
// and olm.skipRange jump straight to the head, and each replaced CSV is removed.
func TestUpgradeWalksTheGraph(t *testing.T) {
	env, ns, _ := flow(t)
	v100 := widget("1.0.0")
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100)
	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")

	// A replaces chain: one step at a time.
	v110, v120 := widget("1.1.0", replacing("widget.v1.0.0")), widget("1.2.0", replacing("widget.v1.1.0"))
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110, v120)
	waitInstalled(t, env, ns, "widget", "widget.v1.2.0")

	// skips: 1.4.0 replaces 1.2.0 and skips the broken 1.3.0.
	v130 := widget("1.3.0", replacing("widget.v1.2.0"))
	v140 := widget("1.4.0", replacing("widget.v1.2.0"), skipping("widget.v1.3.0"))
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110, v120, v130, v140)
	waitInstalled(t, env, ns, "widget", "widget.v1.4.0")

	// olm.skipRange: 2.0.0 takes every 1.x straight to itself, past 1.5.0.
	v150 := widget("1.5.0", replacing("widget.v1.4.0"))
	v200 := widget("2.0.0", replacing("widget.v1.5.0"), ranging(">=1.0.0 <2.0.0"))
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110, v120, v130, v140, v150, v200)
	waitInstalled(t, env, ns, "widget", "widget.v2.0.0")

	want := [][]string{{"widget.v1.0.0"}, {"widget.v1.1.0"}, {"widget.v1.2.0"}, {"widget.v1.4.0"}, {"widget.v2.0.0"}}
	if got := plannedCSVs(t, env, ns); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("plans installed %v, want %v", got, want)
	}
	olmtest.Eventually(t, "replaced CSVs are gone", func() error {
		if got := csvNames(t, env, ns); !slices.Equal(got, []string{"widget.v2.0.0"}) {
			return fmt.Errorf("csvs %v", got)
		}
		return nil
	})
}

// TestManualApprovalAndPins: a Manual Subscription waits for a person; a pinned one is
// approved by olmsync up to its pin, waits after it, and goes on when the pin moves.
func TestManualApprovalAndPins(t *testing.T) {
	env, ns, _ := flow(t)
	olmtest.ConfigMapCatalog(t, env, ns, "cat",
		widget("1.0.0"), widget("1.1.0", replacing("widget.v1.0.0")), widget("1.2.0", replacing("widget.v1.1.0")))
	subscribe(t, env, ns, "widget", "widget", func(s *v1alpha1.Subscription) {
		s.Annotations = map[string]string{plans.PinnedCSVAnnotation: "widget.v1.1.0"}
	})
	waitCSVSucceeded(t, env, ns, "widget", "widget.v1.1.0") // the pin acted as startingCSV
	var waiting v1alpha1.InstallPlan
	olmtest.Eventually(t, "a plan for 1.2.0 waits for approval", func() error {
		plans := plansOf(t, env.Client, ns)
		last := plans[len(plans)-1]
		if !slices.Equal(last.Spec.ClusterServiceVersionNames, []string{"widget.v1.2.0"}) || last.Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval || last.Spec.Approved {
			return fmt.Errorf("last plan %s %+v %s", last.Name, last.Spec, last.Status.Phase)
		}
		waiting = last
		s := getSub(t, env.Client, ns, "widget")
		if got := cond(s, v1alpha1.SubscriptionInstallPlanPending); got != "True/RequiresApproval" {
			return fmt.Errorf("InstallPlanPending %s", got)
		}
		return nil
	})
	s := getSub(t, env.Client, ns, "widget")
	before := s.DeepCopy()
	s.Annotations[plans.PinnedCSVAnnotation] = "widget.v1.2.0"
	if err := env.Client.Patch(context.Background(), s, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitInstalled(t, env, ns, "widget", "widget.v1.2.0")
	if n := len(plansOf(t, env.Client, ns)); n != 2 {
		t.Errorf("%d plans; moving the pin approves the waiting plan %s, it makes no new one", n, waiting.Name)
	}

	// Manual, in a namespace of its own: nothing installs until a person approves.
	ns2 := olmtest.NewNamespace(t, env, "manual")
	olmtest.OwnGroup(t, env, ns2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns2)
	olmtest.ConfigMapCatalog(t, env, ns2, "cat", widget("1.0.0"))
	subscribe(t, env, ns2, "widget", "widget", func(s *v1alpha1.Subscription) { s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual })
	var ip v1alpha1.InstallPlan
	olmtest.Eventually(t, "the manual plan waits", func() error {
		plans := plansOf(t, env.Client, ns2)
		if len(plans) != 1 || plans[0].Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval {
			return fmt.Errorf("plans %+v", plans)
		}
		ip = plans[0]
		return nil
	})
	if got := csvNames(t, env, ns2); len(got) != 0 {
		t.Fatalf("installed before approval: %v", got)
	}
	before2 := ip.DeepCopy()
	ip.Spec.Approved = true
	if err := env.Client.Patch(context.Background(), &ip, client.MergeFrom(before2)); err != nil {
		t.Fatal(err)
	}
	waitInstalled(t, env, ns2, "widget", "widget.v1.0.0")
}

// TestDependencySuppliesRequiredCRD: gadget requires the Widget API, which only widget
// provides: one plan installs both, with the Subscription OLM generates for widget.
func TestDependencySuppliesRequiredCRD(t *testing.T) {
	env, ns, _ := flow(t)
	gadget := olmtest.Bundle{Package: "gadget", Version: "1.0.0", Requires: []olmtest.API{{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}}}
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"), gadget)
	subscribe(t, env, ns, "gadget", "gadget")
	waitInstalled(t, env, ns, "gadget", "gadget.v1.0.0")
	generated := "widget-stable-cat-" + ns
	waitInstalled(t, env, ns, generated, "widget.v1.0.0")
	plans := plannedCSVs(t, env, ns)
	if len(plans) != 1 || !slices.Equal(slices.Sorted(slices.Values(plans[0])), []string{"gadget.v1.0.0", "widget.v1.0.0"}) {
		t.Errorf("plans %v, want one installing gadget and widget", plans)
	}
}

// TestDeletedCSVComesBackAndSubscriptionDeletionKeepsIt: a deleted CSV is installed again
// (olmsync; OLM leaves the Subscription stuck), and deleting the Subscription leaves the
// operator installed, as in OLM.
func TestDeletedCSVComesBackAndSubscriptionDeletionKeepsIt(t *testing.T) {
	env, ns, _ := flow(t)
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"))
	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.Namespace, csv.Name = ns, "widget.v1.0.0"
	uid := func() string {
		c := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(csv), c); err != nil {
			return ""
		}
		return string(c.UID)
	}
	first := uid()
	if err := env.Client.Delete(context.Background(), csv); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "a new CSV", func() error {
		if u := uid(); u == "" || u == first {
			return fmt.Errorf("uid %q", u)
		}
		return nil
	})
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")

	s := getSub(t, env.Client, ns, "widget")
	if err := env.Client.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the Subscription is gone", func() error {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &v1alpha1.Subscription{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("get: %w", err)
		}
		return nil
	})
	if got := csvNames(t, env, ns); !slices.Equal(got, []string{"widget.v1.0.0"}) {
		t.Errorf("csvs after deleting the Subscription %v, want the operator kept", got)
	}
}

// TestRestartMidInstall stops the manager once the plan exists and starts another: the
// new one finishes the install with no second plan.
func TestRestartMidInstall(t *testing.T) {
	env, ns, m := flow(t)
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"))
	subscribe(t, env, ns, "widget", "widget")
	olmtest.Eventually(t, "a plan", func() error {
		if len(plansOf(t, env.Client, ns)) == 0 {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	m.Stop(t)
	olmtest.StartManager(t, env, olm.Options{})
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")
	if n := len(plansOf(t, env.Client, ns)); n != 1 {
		t.Errorf("%d plans after the restart, want 1", n)
	}
}

// TestResubscribeAdoptsInstalledCSV: the operator a deleted Subscription left is taken
// back by the Subscription that comes back (a `git revert` of its removal), which then
// upgrades from it along the channel. OLM fails it instead: "clusterserviceversion
// widget.v1.0.0 exists and is not referenced by a subscription" (docs/olm.md).
func TestResubscribeAdoptsInstalledCSV(t *testing.T) {
	env, ns, _ := flow(t)
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"))
	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")
	s := getSub(t, env.Client, ns, "widget")
	if err := env.Client.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the Subscription is gone", func() error {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &v1alpha1.Subscription{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})

	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")
	got := getSub(t, env.Client, ns, "widget")
	if c := subscription.Condition(&got.Status, v1alpha1.SubscriptionResolutionFailed); c != nil && c.Status == "True" {
		t.Errorf("the Subscription failed to resolve: %s", c.Message)
	}
	if got.Status.InstallPlanRef != nil {
		t.Errorf("the Subscription made InstallPlan %s for a CSV already installed", got.Status.InstallPlanRef.Name)
	}
	olmtest.Eventually(t, "an Event saying the CSV was adopted", func() error {
		var list corev1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "widget" && e.Reason == subscription.ReasonAdoptedCSV && strings.Contains(e.Message, "widget.v1.0.0") {
				return nil
			}
		}
		return fmt.Errorf("no %s Event among %d", subscription.ReasonAdoptedCSV, len(list.Items))
	})

	// It upgrades from the adopted CSV as from any installed one.
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"), widget("1.1.0", replacing("widget.v1.0.0")))
	waitInstalled(t, env, ns, "widget", "widget.v1.1.0")
}
