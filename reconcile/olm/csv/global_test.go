package csv_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestGlobalGroupCopiesAndClusterRoles installs the real clusterwide etcd 0.9.4 CSV in a global
// group and checks what seed 000 says a global group makes: copies of the CSV in every other
// namespace (new ones included), the group's aggregated ClusterRoles and the per-API
// ClusterRoles of the CSV's owned CRDs; then that turning copies off removes the copies.
func TestGlobalGroupCopiesAndClusterRoles(t *testing.T) {
	env := testenv.Get(t)
	mgr := startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4-clusterwide")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "global")
	tenant := newNamespace(t, env, "tenant")
	ogName := "global-" + ns
	operatorGroup(t, env, ns, ogName)
	csv := loadCSV(t, dir, ns)
	parent := installAndSucceed(t, env, csv)
	outer := t

	t.Run("copies", func(t *testing.T) {
		late := newNamespace(t, env, "late-tenant")
		for _, target := range []string{tenant, late, "default"} {
			eventually(t, "copy in "+target, func() error {
				c := &v1alpha1.ClusterServiceVersion{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: target, Name: csv.Name}, c); err != nil {
					return err
				}
				return checkCopy(c, parent)
			})
		}
		if c := &(v1alpha1.ClusterServiceVersion{}); env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: csv.Name}, c) == nil && c.Labels[v1alpha1.CopiedLabelKey] != "" {
			t.Error("the parent's namespace got a copy")
		}
		var list v1alpha1.ClusterServiceVersionList
		if err := env.Client.List(ctx, &list); err != nil {
			t.Fatal(err)
		}
		local := 0
		for i := range list.Items {
			if list.Items[i].Labels[v1alpha1.CopiedLabelKey] == "" {
				local++
			}
		}
		eventually(t, "csv_count counts no copies", func() error {
			if v := testutil.ToFloat64(metrics.CSVCount); int(v) != local {
				return fmt.Errorf("csv_count = %v, want %d", v, local)
			}
			return nil
		})
	})

	t.Run("group cluster roles", func(t *testing.T) {
		group := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ogName}}
		for _, suffix := range []string{"admin", "edit", "view"} {
			name := groups.GroupClusterRoleName(group, suffix)
			eventually(t, "clusterrole "+name, func() error {
				role := &rbacv1.ClusterRole{}
				if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
					return err
				}
				// One selector per API the etcd CSV owns, sorted: EtcdCluster, EtcdBackup and
				// EtcdRestore (v1beta2, etcd.database.coreos.com), hashed as OLM does.
				var got []string
				if role.AggregationRule != nil {
					for _, sel := range role.AggregationRule.ClusterRoleSelectors {
						for k, v := range sel.MatchLabels {
							got = append(got, k+"="+v)
						}
					}
				}
				want := []string{
					"olm.opgroup.permissions/aggregate-to-2c1e6f7e17c07035-" + suffix + "=true",
					"olm.opgroup.permissions/aggregate-to-2fdc3540750c4d2b-" + suffix + "=true",
					"olm.opgroup.permissions/aggregate-to-c571d720f17289d3-" + suffix + "=true",
				}
				if !slices.Equal(got, want) {
					return fmt.Errorf("aggregation rule selects %v, want %v", got, want)
				}
				if role.Labels["olm.owner.kind"] != operatorsv1.OperatorGroupKind || role.Labels["olm.owner.namespace"] != ns {
					return fmt.Errorf("owner labels %v", role.Labels)
				}
				return nil
			})
		}
	})

	t.Run("per-API cluster roles", func(t *testing.T) {
		verbs := map[string][]string{
			"admin": {"*"}, "edit": {"create", "update", "patch", "delete"}, "view": {"get", "list", "watch"},
		}
		for _, suffix := range []string{"admin", "edit", "view"} {
			name := "etcdclusters.etcd.database.coreos.com-v1beta2-" + suffix
			role := &rbacv1.ClusterRole{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
				t.Fatalf("clusterrole %s: %v", name, err)
			}
			for k, v := range map[string]string{
				"rbac.authorization.k8s.io/aggregate-to-" + suffix:                "true",
				"olm.opgroup.permissions/aggregate-to-c571d720f17289d3-" + suffix: "true",
				"olm.managed": "true", "olm.owner": csv.Name, "olm.owner.namespace": ns,
			} {
				if role.Labels[k] != v {
					t.Errorf("%s: label %s = %q, want %q", name, k, role.Labels[k], v)
				}
			}
			if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, verbs[suffix]) || role.Rules[0].Resources[0] != "etcdclusters" {
				t.Errorf("%s: rules %+v", name, role.Rules)
			}
		}
		crdview := &rbacv1.ClusterRole{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "etcdclusters.etcd.database.coreos.com-v1beta2-crdview"}, crdview); err != nil {
			t.Fatal(err)
		}
		if r := crdview.Rules[0]; r.ResourceNames[0] != "etcdclusters.etcd.database.coreos.com" || r.Verbs[0] != "get" {
			t.Errorf("crdview rule %+v", r)
		}
	})

	t.Run("cluster permissions", func(t *testing.T) {
		var roles rbacv1.ClusterRoleList
		if err := env.Client.List(ctx, &roles, client.MatchingLabels(install.OwnerSelector(parent)), client.HasLabels{install.PermissionsHashLabel}); err != nil {
			t.Fatal(err)
		}
		if len(roles.Items) != 1 || len(roles.Items[0].Name) > 63 {
			t.Fatalf("clusterPermissions roles %d, want 1 with a name of at most 63 characters", len(roles.Items))
		}
		binding := &rbacv1.ClusterRoleBinding{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: roles.Items[0].Name}, binding); err != nil {
			t.Fatal(err)
		}
		if binding.Subjects[0].Name != "etcd-operator" || binding.Subjects[0].Namespace != ns {
			t.Errorf("binding subjects %+v", binding.Subjects)
		}
	})

	t.Run("copies disabled", func(t *testing.T) {
		mgr.shutdown()
		startManager(outer, env, olm.Options{DisableCopiedCSVs: true, ProtectedNamespaces: []string{"default"}})
		eventually(t, "copies removed", func() error {
			copies := listCopies(t, env, ns, csv.Name)
			if len(copies) != 1 || copies[0].Namespace != "default" {
				var where []string
				for _, c := range copies {
					where = append(where, c.Namespace)
				}
				return fmt.Errorf("copies in %v, want only the protected namespace default", where)
			}
			return nil
		})
	})

	// Leave no global operator behind: its copies would land in every later test's namespaces.
	deleteAndWait(t, env, parent.DeepCopy())
}

// checkCopy compares a copied CSV with its parent as seed 000 and OLM's code describe it.
func checkCopy(c, parent *v1alpha1.ClusterServiceVersion) error {
	switch {
	case c.Status.Reason != v1alpha1.CSVReasonCopied:
		return fmt.Errorf("copy reason %q", c.Status.Reason)
	case c.Status.Phase != parent.Status.Phase:
		return fmt.Errorf("copy phase %q, parent's %q", c.Status.Phase, parent.Status.Phase)
	case c.Status.Message != "The operator is running in "+parent.Namespace+" but is managing this namespace":
		return fmt.Errorf("copy message %q", c.Status.Message)
	case c.Labels[v1alpha1.CopiedLabelKey] != parent.Namespace:
		return fmt.Errorf("copy labels %v", c.Labels)
	case c.Annotations[operatorsv1.OperatorGroupNamespaceAnnotationKey] != parent.Namespace:
		return fmt.Errorf("copy annotations %v", c.Annotations)
	case slices.Contains(c.Finalizers, "operators.coreos.com/csv-cleanup"):
		return fmt.Errorf("copy has the cleanup finalizer")
	}
	if _, ok := c.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]; ok {
		return fmt.Errorf("copy keeps olm.targetNamespaces")
	}
	return nil
}

// TestDeleteCSV deletes a Succeeded CSV of a global group: its cleanup removes its cluster-scoped
// RBAC, per-API ClusterRoles, the webhook configurations carrying its owner labels (made here
// by hand, as OLM's finalizer deletes any) and copies, its group stops listing its APIs, its
// metrics go, and its namespaced objects are left to the garbage collector through their owner
// references (envtest runs none).
func TestDeleteCSV(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4-clusterwide")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "delete")
	tenant := newNamespace(t, env, "delete-tenant")
	operatorGroup(t, env, ns, "global-"+ns)
	csv := installAndSucceed(t, env, loadCSV(t, dir, ns))
	eventually(t, "copy in tenant", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: tenant, Name: csv.Name}, &v1alpha1.ClusterServiceVersion{})
	})
	owner := client.MatchingLabels(install.OwnerSelector(csv))
	var before rbacv1.ClusterRoleList
	if err := env.Client.List(ctx, &before, owner); err != nil || len(before.Items) == 0 {
		t.Fatalf("no cluster roles of the csv before deletion (%v)", err)
	}

	if series := csvSeries(t, "csv_succeeded", ns, csv.Name); len(series) != 1 {
		t.Fatalf("csv_succeeded series before deletion: %v, want one", series)
	}
	ownerLabels := install.OwnerSelector(csv)
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{GenerateName: "owned-", Labels: ownerLabels}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{GenerateName: "owned-", Labels: ownerLabels}}
	create(t, env, validating)
	create(t, env, mutating)

	deleteAndWait(t, env, csv.DeepCopy())
	for _, obj := range []client.Object{validating, mutating} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s of the deleted csv: %v, want it deleted", obj, obj.GetName(), err)
		}
	}
	// The group stops listing the deleted CSV's APIs: a group left listing them would conflict
	// with every later group providing them (InterOperatorGroupOwnerConflict).
	waitGroupAPIs(t, env, ns, "global-"+ns, "")

	var roles rbacv1.ClusterRoleList
	var bindings rbacv1.ClusterRoleBindingList
	if err := env.Client.List(ctx, &roles, owner); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(ctx, &bindings, owner); err != nil {
		t.Fatal(err)
	}
	if len(roles.Items)+len(bindings.Items) != 0 {
		t.Errorf("%d cluster roles and %d bindings of the deleted csv are left", len(roles.Items), len(bindings.Items))
	}
	if copies := listCopies(t, env, ns, csv.Name); len(copies) != 0 {
		t.Errorf("%d copies left", len(copies))
	}
	for _, family := range []string{"csv_abnormal", "csv_succeeded"} {
		if series := csvSeries(t, family, ns, csv.Name); len(series) != 0 {
			t.Errorf("%s series of the deleted csv are left: %v", family, series)
		}
	}
	d := &appsv1.Deployment{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-operator"}, d)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatal(err)
	case len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != csv.UID:
		t.Errorf("deployment owner references %+v, want the deleted csv (for the garbage collector)", d.OwnerReferences)
	}
}
