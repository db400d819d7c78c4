package csv_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/csv"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestInstallOwnNamespace installs the real etcd 0.9.4 CSV in an OwnNamespace group and checks
// every step OLM takes and everything its install strategy makes.
func TestInstallOwnNamespace(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "etcd-own")
	operatorGroup(t, env, ns, "og", ns)
	want := loadCSV(t, dir, ns)
	specBefore := want.Spec.DeepCopy()

	got := installAndSucceed(t, env, want.DeepCopy())

	t.Run("phases and history", func(t *testing.T) {
		var phases []string
		for _, c := range got.Status.Conditions {
			phases = append(phases, string(c.Phase)+"/"+string(c.Reason))
		}
		wantPhases := []string{
			"Pending/RequirementsUnknown", "InstallReady/AllRequirementsMet",
			"Installing/InstallSucceeded", "Installing/InstallWaiting", "Succeeded/InstallSucceeded",
		}
		if diff := cmp.Diff(wantPhases, phases); diff != "" {
			t.Errorf("condition history (-want +got):\n%s", diff)
		}
		if got.Status.Message != "install strategy completed with no errors" {
			t.Errorf("message = %q", got.Status.Message)
		}
		if got.Status.LastTransitionTime == nil || got.Status.LastUpdateTime == nil {
			t.Error("lastTransitionTime or lastUpdateTime not set")
		}
	})

	t.Run("csv metadata as OLM writes it", func(t *testing.T) {
		if diff := cmp.Diff(*specBefore, got.Spec); diff != "" {
			t.Errorf("the controller changed the spec (-before +after):\n%s", diff)
		}
		if !slices.Contains(got.Finalizers, csv.Finalizer) {
			t.Errorf("finalizers = %v, want %s", got.Finalizers, csv.Finalizer)
		}
		for k, v := range map[string]string{
			operatorsv1.OperatorGroupAnnotationKey:              "og",
			operatorsv1.OperatorGroupNamespaceAnnotationKey:     ns,
			operatorsv1.OperatorGroupNamespaceAnnotationKeySeed: ns,
			operatorsv1.OperatorGroupTargetsAnnotationKey:       ns,
		} {
			if got.Annotations[k] != v {
				t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
			}
		}
		// FNV-64a of EtcdCluster.v1beta2.etcd.database.coreos.com (see groups' tests).
		if got.Labels["olm.api.c571d720f17289d3"] != "provided" {
			t.Errorf("labels = %v, want the provided-API label of EtcdCluster", got.Labels)
		}
	})

	t.Run("requirement status", func(t *testing.T) {
		byName := map[string]v1alpha1.RequirementStatus{}
		for _, r := range got.Status.RequirementStatus {
			byName[r.Kind+"/"+r.Name] = r
		}
		for _, crd := range []string{"etcdclusters", "etcdbackups", "etcdrestores"} {
			r := byName["CustomResourceDefinition/"+crd+".etcd.database.coreos.com"]
			if r.Status != v1alpha1.RequirementStatusReasonPresent || r.Message != "CRD is present and Established condition is true" || r.UUID == "" {
				t.Errorf("requirement of crd %s = %+v", crd, r)
			}
		}
		sa := byName["ServiceAccount/etcd-operator"]
		if sa.Status != v1alpha1.RequirementStatusReasonPresent || len(sa.Dependents) != 4 {
			t.Fatalf("service account requirement = %+v", sa)
		}
		for _, d := range sa.Dependents {
			if d.Status != v1alpha1.DependentStatusReasonSatisfied || d.Kind != "PolicyRule" {
				t.Errorf("dependent %+v", d)
			}
		}
	})

	t.Run("deployment", func(t *testing.T) {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-operator"}, d); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"olm.owner": want.Name, "olm.owner.namespace": ns, "olm.owner.kind": "ClusterServiceVersion", "olm.managed": "true"} {
			if d.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, d.Labels[k], v)
			}
		}
		if d.Labels[install.DeploymentSpecHashLabel] == "" {
			t.Error("no spec hash label")
		}
		if len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != got.UID || *d.OwnerReferences[0].BlockOwnerDeletion {
			t.Errorf("owner references = %+v, want one non-blocking reference to the csv", d.OwnerReferences)
		}
		if d.Spec.Template.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] != ns ||
			d.Spec.Template.Annotations["alm-examples"] != want.Annotations["alm-examples"] {
			t.Error("the csv's annotations are not projected into the pod template")
		}
		if *d.Spec.RevisionHistoryLimit != 1 {
			t.Errorf("revisionHistoryLimit = %d", *d.Spec.RevisionHistoryLimit)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !slices.Contains(c.Env, corev1.EnvVar{Name: "OPERATOR_CONDITION_NAME", Value: want.Name}) {
				t.Errorf("container %s lacks OPERATOR_CONDITION_NAME", c.Name)
			}
		}
	})

	t.Run("service account and rbac", func(t *testing.T) {
		sa := &corev1.ServiceAccount{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-operator"}, sa); err != nil {
			t.Fatal(err)
		}
		if len(sa.OwnerReferences) != 1 || sa.OwnerReferences[0].UID != got.UID {
			t.Errorf("service account owners = %+v", sa.OwnerReferences)
		}
		var roles rbacv1.RoleList
		var bindings rbacv1.RoleBindingList
		owner := client.MatchingLabels(install.OwnerSelector(got))
		if err := env.Client.List(ctx, &roles, client.InNamespace(ns), owner); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.List(ctx, &bindings, client.InNamespace(ns), owner); err != nil {
			t.Fatal(err)
		}
		if len(roles.Items) != 1 || len(bindings.Items) != 1 {
			t.Fatalf("roles %d, bindings %d; want 1 and 1", len(roles.Items), len(bindings.Items))
		}
		if diff := cmp.Diff(want.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules, roles.Items[0].Rules); diff != "" {
			t.Errorf("role rules (-want +got):\n%s", diff)
		}
		if b := bindings.Items[0]; b.RoleRef.Name != roles.Items[0].Name || b.Subjects[0].Name != "etcd-operator" {
			t.Errorf("binding %+v does not bind the role to the service account", b)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// The metrics are set after the status writes the test saw.
		eventually(t, "csv_succeeded and csv_count", func() error {
			if v := testutil.ToFloat64(metrics.CSVSucceeded.WithLabelValues(ns, want.Name, "0.9.4")); v != 1 {
				return fmt.Errorf("csv_succeeded = %v, want 1", v)
			}
			var list v1alpha1.ClusterServiceVersionList
			if err := env.Client.List(ctx, &list); err != nil {
				return err
			}
			n := 0
			for i := range list.Items {
				if list.Items[i].Labels[v1alpha1.CopiedLabelKey] == "" {
					n++
				}
			}
			if v := testutil.ToFloat64(metrics.CSVCount); int(v) != n {
				return fmt.Errorf("csv_count = %v, want %d (the csvs that are not copies)", v, n)
			}
			return nil
		})
	})

	t.Run("events", func(t *testing.T) {
		reasons := map[string]bool{}
		eventually(t, "phase events", func() error {
			var list corev1.EventList
			if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.InvolvedObject.Name == want.Name {
					reasons[e.Reason] = true
				}
			}
			for _, r := range []string{"RequirementsUnknown", "AllRequirementsMet", "InstallSucceeded", "InstallWaiting"} {
				if !reasons[r] {
					return &missingEvent{r}
				}
			}
			return nil
		})
	})
}

type missingEvent struct{ reason string }

func (e *missingEvent) Error() string { return "no event with reason " + e.reason }
