package preview

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/report"
)

// TestPreviewFailForward: the cluster ran etcd.v0.9.2, whose upgrade to etcd.v0.9.3 failed
// (v0.9.2 Replacing, v0.9.3 Failed). The catalog's etcd.v0.9.4 skips v0.9.3. The preview
// asks resolve.FailForwardEnabled of the OperatorGroup in Git, as the Subscription
// controller does: with TechPreviewUnsafeFailForward v0.9.4 is installed over the Failed
// CSV; with Default resolution fails as OLM's does.
func TestPreviewFailForward(t *testing.T) {
	base, err := LoadClusterState(filepath.Join("testdata", "cluster-state"))
	if err != nil {
		t.Fatal(err)
	}
	var template *v1alpha1.ClusterServiceVersion
	for i := range base.CSVs {
		if base.CSVs[i].Name == "etcd.v0.9.2" {
			template = &base.CSVs[i]
		}
	}
	if template == nil {
		t.Fatal("no etcd.v0.9.2 in the cluster state")
	}
	state := &ClusterState{KubeVersion: base.KubeVersion}
	for _, c := range []struct {
		name, version, replaces string
		phase                   v1alpha1.ClusterServiceVersionPhase
	}{{"etcd.v0.9.2", "0.9.2", "", v1alpha1.CSVPhaseReplacing}, {"etcd.v0.9.3", "0.9.3", "etcd.v0.9.2", v1alpha1.CSVPhaseFailed}} {
		csv := template.DeepCopy()
		csv.Namespace, csv.Name, csv.Spec.Version, csv.Spec.Replaces = "team-ff", c.name, v1alpha1.OperatorVersion(c.version), c.replaces
		csv.Status.Phase = c.phase
		state.CSVs = append(state.CSVs, *csv)
	}
	s := v1alpha1.Subscription{}
	s.Namespace, s.Name = "team-ff", "etcd"
	s.Spec = v1alpha1.SubscriptionSpec{Package: "etcd", Channel: "stable", CatalogSource: "community-operators", CatalogSourceNamespace: "openshift-marketplace"}
	s.Status.InstalledCSV, s.Status.CurrentCSV, s.Status.State = "etcd.v0.9.3", "etcd.v0.9.3", v1alpha1.SubscriptionStateAtLatest
	state.Subscriptions = []v1alpha1.Subscription{s}

	for _, strategy := range []operatorsv1.UpgradeStrategy{operatorsv1.UpgradeStrategyDefault, operatorsv1.UpgradeStrategyUnsafeFailForward} {
		t.Run(string(strategy), func(t *testing.T) {
			repo := files{
				"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
				"cluster-scope/group.yaml": "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team-ff}\n" +
					"spec:\n  targetNamespaces: [team-ff]\n  upgradeStrategy: " + string(strategy) + "\n",
				"cluster-scope/subscription.yaml": sub("team-ff", "etcd", "etcd", "stable", "community-operators", "Automatic"),
			}
			_, rep := checkWith(t, writeTree(t, repo), Options{
				Catalogs:      []CatalogSpec{fixtureCatalog},
				ClusterStates: map[string]*ClusterState{"": state},
			})
			var got *report.SubscriptionPreview
			for i := range rep.Subscriptions {
				if rep.Subscriptions[i].Namespace == "team-ff" {
					got = &rep.Subscriptions[i]
				}
			}
			if got == nil {
				t.Fatalf("no preview of team-ff/etcd: %+v", rep.Subscriptions)
			}
			if strategy == operatorsv1.UpgradeStrategyDefault {
				if got.Resolution.Status != "Failed" || got.Resolution.Reason != "ConstraintsNotSatisfiable" ||
					!strings.Contains(got.Resolution.Message, "clusterserviceversion etcd.v0.9.2 exists and is not referenced by a subscription") {
					t.Errorf("Default: %+v", got.Resolution)
				}
				return
			}
			if diff := cmp.Diff([]string{"etcd.v0.9.4"}, got.Resolution.Path); got.Resolution.Status != "Resolved" || got.Resolution.Next != "etcd.v0.9.4" || diff != "" {
				t.Errorf("fail-forward: %+v (path -want +got %s)", got.Resolution, diff)
			}
		})
	}
}
