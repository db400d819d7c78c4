package gitsync_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/health"
)

// operatorRepository adds to repository(ns) what installs an operator from Git alone, as
// examples/local does: a ConfigMap catalog of the bundles and its CatalogSource (in the
// cluster-scope app, ns being the marketplace namespace), a Subscription to widget, and a
// Widget of the CRD the operator brings.
func operatorRepository(t *testing.T, ns string, api olmtest.API, bundles ...olmtest.Bundle) map[string]string {
	t.Helper()
	catalog, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cat", "namespace": ns},
		"data":     olmtest.ConfigMapData(t, bundles),
	})
	if err != nil {
		t.Fatal(err)
	}
	return with(repository(ns), map[string]string{
		"cluster-scope/catalog.yaml":       string(catalog),
		"cluster-scope/catalogsource.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cat, namespace: %s}\nspec: {sourceType: configmap, configMap: cat, displayName: cat}\n", ns),
		"team/subscription.yaml":           fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: widget}\nspec: {name: widget, channel: stable, source: cat, sourceNamespace: %s, installPlanApproval: Automatic}\n", ns),
		"team/widget.yaml":                 fmt.Sprintf("apiVersion: %s/%s\nkind: %s\nmetadata: {name: w}\nspec: {size: 3}\n", api.Group, api.Version, api.Kind),
	})
}

// TestOperatorInstalledFromGit: a repository holding a namespace, its OperatorGroup and a
// ConfigMap catalog with its CatalogSource is synced; then a commit adds a Subscription and
// a custom resource of the operator's CRD, and that is enough: the embedded OLM resolves
// the Subscription, the InstallPlan
// completes, the CSV Succeeds, the custom resource is applied once its CRD is there, and
// the Sync reports every app Healthy and Ready. A commit adding a version to the catalog
// upgrades the operator, and the Sync follows it to Healthy again.
func TestOperatorInstalledFromGit(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("olm")
	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(kubelet) }()
	t.Cleanup(func() { cancel(); <-kubelet })

	api := olmtest.API{Group: ns + ".test.olmsync.dev", Version: "v1", Kind: "Widget"}
	v100 := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{api}}
	all := operatorRepository(t, ns, api, v100)
	up := gittest.NewUpstream(t, with(all, map[string]string{"team/subscription.yaml": "", "team/widget.yaml": ""}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-olm")
	s := newSync(t, env, "olmsync-olm", ns, srv.RepoURL(), nil)
	appliedAt(t, env, s, up.Head(t)) // the catalog, no operator yet

	// A commit adding the Subscription, and a Widget of the operator's CRD.
	subscribed := up.Push(t, map[string]string{"team/subscription.yaml": all["team/subscription.yaml"], "team/widget.yaml": all["team/widget.yaml"]}, "subscribe to widget")
	got := operatorHealthy(t, env, s, ns, subscribed, v100.Name())
	if object(t, env, schema.GroupVersionKind{Group: api.Group, Version: api.Version, Kind: api.Kind}, ns, "w") == nil {
		t.Error("the Widget was not applied once the operator brought its CRD")
	}
	if !hasEntry(got, ns+"_w_"+api.Group+"_Widget") {
		t.Errorf("the Widget is not in the inventory: %+v", got.Status.Inventory)
	}
	plansSettle(t, env, ns, "[widget.v1.0.0] Complete")

	// A new version in the catalog, through Git.
	v110 := olmtest.Bundle{Package: "widget", Version: "1.1.0", Replaces: v100.Name(), Owns: []olmtest.API{api}}
	upgrade := up.Push(t, operatorRepository(t, ns, api, v100, v110), "widget 1.1.0")
	operatorHealthy(t, env, s, ns, upgrade, v110.Name())
	plansSettle(t, env, ns, "[widget.v1.0.0] Complete", "[widget.v1.1.0] Complete")
	olmtest.Eventually(t, "the replaced CSV gone", func() error {
		var l v1alpha1.ClusterServiceVersionList
		if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
			return err
		}
		var names []string
		for _, c := range l.Items {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, []string{v110.Name()}) {
			return fmt.Errorf("CSVs %v", names)
		}
		return nil
	})
}

// operatorHealthy waits until the Sync is Ready at the commit with every app Healthy
// while the Subscription widget of ns is AtLatestKnown at csv and the CSV Succeeded, and
// returns the Sync.
func operatorHealthy(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync, ns, commit, csv string) *olmsyncv1alpha1.Sync {
	t.Helper()
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, fmt.Sprintf("Sync %s Ready at %s with %s installed", s.Name, commit, csv), func() error {
		sub := &v1alpha1.Subscription{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "widget"}, sub); err != nil {
			return err
		}
		if sub.Status.State != v1alpha1.SubscriptionStateAtLatest || sub.Status.InstalledCSV != csv {
			return fmt.Errorf("Subscription state %q, installed %q, conditions %+v", sub.Status.State, sub.Status.InstalledCSV, sub.Status.Conditions)
		}
		c := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: csv}, c); err != nil {
			return err
		}
		if c.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("CSV %s phase %s: %s", csv, c.Status.Phase, c.Status.Message)
		}
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		ready := conditions.Get(got, olmsyncv1alpha1.ReadyCondition)
		if ready == nil || ready.Status != metav1.ConditionTrue || got.Status.LastAppliedRevision != "main@sha1:"+commit {
			return fmt.Errorf("Sync at %q, Ready %+v", got.Status.LastAppliedRevision, ready)
		}
		for _, a := range got.Status.Apps {
			if a.Health != health.Healthy || a.Sync != olmsyncv1alpha1.SyncStatusSynced {
				return fmt.Errorf("app %s: %+v", a.Name, a)
			}
		}
		if len(got.Status.Apps) != 2 {
			return fmt.Errorf("apps %+v, want cluster-scope and team", got.Status.Apps)
		}
		return nil
	})
	return got
}

// plansSettle waits until the InstallPlans of ns are want (as installPlans prints them). A
// CSV can be Succeeded, and its Subscription AtLatestKnown, before the plan that created it
// says Complete: OLM's ensureSubscriptionCSVState moves the Subscription as soon as the CSV
// exists, and the plan's last status write may still be on its way (a later step retried,
// a write refused from a stale copy). So the plans are waited for, not read once.
func plansSettle(t *testing.T, env *testenv.Env, ns string, want ...string) {
	t.Helper()
	olmtest.Eventually(t, fmt.Sprintf("InstallPlans of %s %v", ns, want), func() error {
		if plans := installPlans(t, env, ns); !slices.Equal(plans, want) {
			return fmt.Errorf("InstallPlans %v", plans)
		}
		return nil
	})
}

// installPlans lists the InstallPlans of ns, oldest generation first, as "[csvs] phase".
func installPlans(t *testing.T, env *testenv.Env, ns string) []string {
	t.Helper()
	var l v1alpha1.InstallPlanList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(l.Items, func(a, b v1alpha1.InstallPlan) int { return a.Spec.Generation - b.Spec.Generation })
	var out []string
	for _, ip := range l.Items {
		out = append(out, fmt.Sprintf("%v %s", ip.Spec.ClusterServiceVersionNames, ip.Status.Phase))
	}
	return out
}

// TestOperatorComesAndGoesWithGit: a commit that removes a Subscription removes the
// operator it installed (the CSV goes with it, spec.pruneOptions.operators: Delete, the
// default), and `git revert` of that commit brings the operator back. With Keep, the
// CSV stays when the Subscription goes, and the Subscription the revert brings back takes
// it again instead of failing as OLM's does.
func TestOperatorComesAndGoesWithGit(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	for _, policy := range []olmsyncv1alpha1.PruneOperatorsPolicy{olmsyncv1alpha1.PruneOperatorsDelete, olmsyncv1alpha1.PruneOperatorsKeep} {
		t.Run(string(policy), func(t *testing.T) {
			ns := uniqueNS("operators")
			ctx, cancel := context.WithCancel(context.Background())
			kubelet := make(chan struct{})
			go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(kubelet) }()
			t.Cleanup(func() { cancel(); <-kubelet })
			api := olmtest.API{Group: ns + ".test.olmsync.dev", Version: "v1", Kind: "Widget"}
			v100 := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{api}}
			up := gittest.NewUpstream(t, with(operatorRepository(t, ns, api, v100), map[string]string{"team/widget.yaml": ""}))
			srv := gittest.Serve(t, up, gittest.ServerOptions{})
			createNamespace(t, env, "olmsync-operators")
			s := newSync(t, env, "olmsync-operators", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
				spec.PruneOptions.Operators = policy
			})
			operatorHealthy(t, env, s, ns, up.Head(t), v100.Name())
			plansBefore := len(installPlans(t, env, ns))

			removed := up.Push(t, map[string]string{"team/subscription.yaml": ""}, "remove the operator")
			got := appliedAt(t, env, s, removed)
			if object(t, env, subscriptionGVK, ns, "widget") != nil {
				t.Fatal("the Subscription was not pruned")
			}
			csvGone := func() error {
				if object(t, env, csvGVK, ns, v100.Name()) != nil {
					return fmt.Errorf("CSV %s is still there", v100.Name())
				}
				return nil
			}
			if policy == olmsyncv1alpha1.PruneOperatorsDelete {
				olmtest.Eventually(t, "the operator's CSV deleted with its Subscription", csvGone)
				if lp := got.Status.LastPrune; lp == nil || lp.Stale != 1 || lp.Deleted != 2 {
					t.Errorf("status.lastPrune = %+v, want the Subscription and its CSV deleted", lp)
				}
				waitEvent(t, env, s, "Normal Pruned: ", "2 deleted", `ClusterServiceVersion "`+ns+"/"+v100.Name()+`"`)
			} else if csvGone() == nil {
				t.Fatal("the CSV was deleted although spec.pruneOptions.operators is Keep")
			}

			gittest.Git(t, up.Work, "revert", "--no-edit", removed)
			up.PushRefs(t)
			reverted := up.Head(t)
			operatorHealthy(t, env, s, ns, reverted, v100.Name())
			plans := installPlans(t, env, ns)
			switch {
			case policy == olmsyncv1alpha1.PruneOperatorsDelete && len(plans) != plansBefore+1:
				t.Errorf("InstallPlans %v: want one more, installing the operator again", plans)
			case policy == olmsyncv1alpha1.PruneOperatorsKeep && len(plans) != plansBefore:
				t.Errorf("InstallPlans %v: want none more, the kept CSV adopted", plans)
			}
		})
	}
}

var (
	subscriptionGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}
	csvGVK          = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}
)
