package tree

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
)

// TestBuild: the tree's shape and what each node says, from a reader holding OLM's
// objects (a fake client: Build only reads, and the controllers' end-to-end tests and the
// dashboard's run it against a real API server).
func TestBuild(t *testing.T) {
	ns := "team"
	objects := []client.Object{
		&operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd"},
			Status: operatorsv1alpha1.SubscriptionStatus{State: operatorsv1alpha1.SubscriptionStateAtLatest, InstalledCSV: "etcd.v0.9.4",
				InstallPlanRef: &corev1.ObjectReference{Name: "install-1"}}},
		&operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "install-1"},
			Spec:   operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"etcd.v0.9.4"}, Approval: operatorsv1alpha1.ApprovalAutomatic, Approved: true},
			Status: operatorsv1alpha1.InstallPlanStatus{Phase: operatorsv1alpha1.InstallPlanPhaseComplete}},
		&operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd.v0.9.4"},
			Spec: operatorsv1alpha1.ClusterServiceVersionSpec{InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{
				StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{Name: "etcd-operator"}}}}},
			Status: operatorsv1alpha1.ClusterServiceVersionStatus{Phase: operatorsv1alpha1.CSVPhaseSucceeded, Reason: operatorsv1alpha1.CSVReasonInstallSuccessful}},
		&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"}, Status: operatorsv1.OperatorGroupStatus{Namespaces: []string{ns}}},
	}
	c := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(objects...).WithStatusSubresource(objects...).Build()
	sync := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "platform"}, Status: olmsyncv1alpha1.SyncStatus{
		Inventory: &olmsyncv1alpha1.ResourceInventory{Entries: []olmsyncv1alpha1.ResourceRef{
			{ID: ns + "_etcd_operators.coreos.com_Subscription", Version: "v1alpha1"},
			{ID: ns + "_og_operators.coreos.com_OperatorGroup", Version: "v1"},
			{ID: ns + "_settings__ConfigMap", Version: "v1"},
			{ID: ns + "_gone_operators.coreos.com_Subscription", Version: "v1alpha1"},
		}},
		Apps: []olmsyncv1alpha1.AppStatus{{Name: "team", Namespace: ns, Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: olmsyncv1alpha1.HealthHealthy,
			Resources: []olmsyncv1alpha1.ResourceStatus{{ObjectReference: olmsyncv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"},
				Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: olmsyncv1alpha1.HealthUnknown, Reason: "PolicyViolation", Message: "not applied"}}}},
	}}

	root, err := Build(context.Background(), c, sync, Options{TargetNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	root.Write(&b)
	want := `Sync/ops/platform
├── Subscription/team/etcd
│   └── InstallPlan/team/install-1
│       └── ClusterServiceVersion/team/etcd.v0.9.4
│           └── Deployment/team/etcd-operator (not found)
├── Subscription/team/gone (not found)
├── OperatorGroup/team/og
│   └── Namespace/team
└── ConfigMap/team/settings
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("tree (-want +got)\n%s", diff)
	}
	got := map[string]string{}
	root.Walk(func(n *Node) { got[n.Label()] = strings.Join([]string{n.Sync, n.Health, n.Phase, n.Reason}, "|") })
	for label, state := range map[string]string{
		"ConfigMap/team/settings":                   "OutOfSync|Unknown||PolicyViolation",
		"Subscription/team/gone (not found)":        "Synced|Missing||",
		"InstallPlan/team/install-1":                "|Healthy|Complete|",
		"ClusterServiceVersion/team/etcd.v0.9.4":    "|Healthy|Succeeded|InstallSucceeded",
		"Deployment/team/etcd-operator (not found)": "|Missing||",
		"Subscription/team/etcd":                    "Synced|Healthy|AtLatestKnown|",
	} {
		if got[label] != state {
			t.Errorf("%s: sync|health|phase|reason %q, want %q", label, got[label], state)
		}
	}

	// A newer plan that is not the installed CSV's (an upgrade waiting for approval):
	// the installed CSV stays below the Subscription.
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "etcd"}, sub); err != nil {
		t.Fatal(err)
	}
	sub.Status.InstallPlanRef.Name = "install-2"
	if err := c.Status().Update(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "install-2"},
		Spec: operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"etcd.v0.9.5"}, Approval: operatorsv1alpha1.ApprovalManual}}); err != nil {
		t.Fatal(err)
	}
	root, err = Build(context.Background(), c, sync, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	root.Write(&b)
	if want := `├── Subscription/team/etcd
│   ├── InstallPlan/team/install-2
│   └── ClusterServiceVersion/team/etcd.v0.9.4
`; !strings.Contains(b.String(), want) {
		t.Errorf("with an upgrade waiting, want\n%s\nin\n%s", want, b.String())
	}

	// With apps: the inventory below its apps, by AppOf; an object it does not know
	// below an app without a name.
	root, err = Build(context.Background(), c, sync, Options{Apps: true, AppOf: map[string]string{ns + "_settings__ConfigMap": "team"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Children) != 2 || root.Children[0].Name != "team" || len(root.Children[0].Children) != 1 || root.Children[1].Name != "" || len(root.Children[1].Children) != 3 {
		b.Reset()
		root.Write(&b)
		t.Errorf("apps: want team with the ConfigMap and an unnamed app with the rest:\n%s", b.String())
	}
}

// TestWorkloads: with Workloads, a CSV's Deployment has below it the ReplicaSets it
// controls that have replicas, and below each the Pods it controls; a Subscription names
// its CatalogSource, and CatalogSourceNode reads one outside the tree.
func TestWorkloads(t *testing.T) {
	ns := "team"
	owner := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	objects := []client.Object{
		&operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd"},
			Spec:   operatorsv1alpha1.SubscriptionSpec{CatalogSource: "global", CatalogSourceNamespace: "olm", Package: "etcd"},
			Status: operatorsv1alpha1.SubscriptionStatus{State: operatorsv1alpha1.SubscriptionStateAtLatest, InstalledCSV: "etcd.v1"}},
		&operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd.v1"},
			Spec: operatorsv1alpha1.ClusterServiceVersionSpec{InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{
				StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{Name: "etcd-operator"}}}}},
			Status: operatorsv1alpha1.ClusterServiceVersionStatus{Phase: operatorsv1alpha1.CSVPhaseSucceeded}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-operator", UID: "dep-uid"}},
		// The current ReplicaSet, an old one scaled to zero, and one another Deployment owns.
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-operator-new", UID: "rs-new", OwnerReferences: owner("Deployment", "etcd-operator", "dep-uid")},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1)}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-operator-old", UID: "rs-old", OwnerReferences: owner("Deployment", "etcd-operator", "dep-uid")},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0)}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", UID: "rs-other", OwnerReferences: owner("Deployment", "other", "other-uid")},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1)}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-operator-new-x1", OwnerReferences: owner("ReplicaSet", "etcd-operator-new", "rs-new")},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "etcd",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}}}}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-x2", OwnerReferences: owner("ReplicaSet", "other", "rs-other")}},
		&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: "global"},
			Status: operatorsv1alpha1.CatalogSourceStatus{GRPCConnectionState: &operatorsv1alpha1.GRPCConnectionState{LastObservedState: "READY"}}},
	}
	c := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(objects...).WithStatusSubresource(objects...).Build()
	sync := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "platform"}, Status: olmsyncv1alpha1.SyncStatus{
		Inventory: &olmsyncv1alpha1.ResourceInventory{Entries: []olmsyncv1alpha1.ResourceRef{{ID: ns + "_etcd_operators.coreos.com_Subscription", Version: "v1alpha1"}}}}}

	root, err := Build(context.Background(), c, sync, Options{Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	root.Write(&b)
	want := `Sync/ops/platform
└── Subscription/team/etcd
    └── ClusterServiceVersion/team/etcd.v1
        └── Deployment/team/etcd-operator
            └── ReplicaSet/team/etcd-operator-new
                └── Pod/team/etcd-operator-new-x1
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("tree (-want +got)\n%s", diff)
	}
	sub := root.Children[0]
	if sub.CatalogSource != "olm/global" {
		t.Errorf("Subscription's catalogSource %q, want olm/global", sub.CatalogSource)
	}
	pod := sub.Children[0].Children[0].Children[0].Children[0]
	if pod.Health != "Degraded" || pod.Phase != "Running" || pod.Reason != "CrashLoopBackOff" {
		t.Errorf("pod health|phase|reason %s|%s|%s, want Degraded|Running|CrashLoopBackOff", pod.Health, pod.Phase, pod.Reason)
	}

	// Without Workloads the tree ends at the Deployment, as before.
	root, err = Build(context.Background(), c, sync, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dep := root.Children[0].Children[0].Children[0]; len(dep.Children) != 0 {
		t.Errorf("without Workloads the Deployment has children %+v", dep.Children)
	}

	cs := CatalogSourceNode(context.Background(), c, types.NamespacedName{Namespace: "olm", Name: "global"})
	if cs.Kind != "CatalogSource" || cs.Phase != "READY" || cs.Health != "Healthy" || cs.Note != "" {
		t.Errorf("CatalogSourceNode %+v, want READY and Healthy", cs)
	}
	if missing := CatalogSourceNode(context.Background(), c, types.NamespacedName{Namespace: "olm", Name: "none"}); missing.Note != "not found" || missing.Health != "Missing" {
		t.Errorf("a missing CatalogSource: %+v", missing)
	}
}
