package gitsync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// TestServiceAccountLimitsTheSync: a Sync naming a service account that does not exist
// waits, ServiceAccountNotFound, and applies nothing. Once the account exists with a Role
// granting ConfigMaps in one namespace only, the Sync applies as that account: the
// ConfigMap of that namespace is applied, the one of the other namespace is refused as
// forbidden for system:serviceaccount:<namespace>:<name>. Granted both, it is Ready; and
// an account deleted and created again makes it wait, then Ready again at the next retry.
func TestServiceAccountLimitsTheSync(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	allowed, denied := uniqueNS("sa-allowed"), uniqueNS("sa-denied")
	createNamespace(t, env, allowed)
	createNamespace(t, env, denied)
	up := gittest.NewUpstream(t, map[string]string{
		"olmsync.yaml":           fmt.Sprintf("apps:\n- {name: allowed, path: allowed, namespace: %s}\n- {name: denied, path: denied, namespace: %s}\n", allowed, denied),
		"allowed/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n",
		"denied/configmap.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n",
	})
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	syncNS := uniqueNS("olmsync-sa")
	createNamespace(t, env, syncNS)
	s := newSync(t, env, syncNS, "team", srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.ServiceAccountName = "deployer"
		// No drift correction during the test: what is applied again is applied because
		// the reconciler knows it must.
		spec.Interval = metav1.Duration{Duration: time.Hour}
	})

	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.ServiceAccountNotFoundReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, syncNS+"/deployer") {
		t.Errorf("Ready message %q does not name the service account", msg)
	}
	if object(t, env, configMapGVK, allowed, "settings") != nil || got.Status.LastAppliedRevision != "" {
		t.Error("a Sync whose service account is missing applied something")
	}

	// The grant first: a reconcile that the account's creation wakes must not find it
	// without its rights. RBAC reaches the authorizer through an informer, so the first
	// apply may still be refused everywhere; the next one applies what is allowed.
	grantConfigMaps(t, env, allowed, syncNS, "deployer")
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: "deployer"}}
	create(t, env, account.DeepCopy())

	olmtest.Eventually(t, "the allowed ConfigMap applied, the other refused", func() error {
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		// A failed pass is retried: each retry first records the objects it is about to
		// apply (both ConfigMaps) and then the inventory of what it applied. A read between
		// the two shows the pending record, so the test waits for a pass's end: Reconciling
		// says the retry, and the inventory has dropped what was refused. Were the refused
		// ConfigMap kept, this never happens and the test fails here.
		c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition)
		r := conditions.Get(got, olmsyncv1alpha1.ReconcilingCondition)
		if c == nil || c.Reason != olmsyncv1alpha1.ApplyFailedReason || r == nil || r.Reason != olmsyncv1alpha1.ProgressingWithRetryReason ||
			!hasEntry(got, allowed+"_settings__ConfigMap") || hasEntry(got, denied+"_settings__ConfigMap") {
			return fmt.Errorf("Ready %+v, Reconciling %+v, inventory %+v (want the applied ConfigMap only)", c, r, got.Status.Inventory)
		}
		return nil
	})
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	user := fmt.Sprintf("system:serviceaccount:%s:deployer", syncNS)
	if !strings.Contains(msg, "forbidden") || !strings.Contains(msg, user) || !strings.Contains(msg, denied) {
		t.Errorf("Ready message %q does not say %s is forbidden in %s", msg, user, denied)
	}
	if object(t, env, configMapGVK, allowed, "settings") == nil {
		t.Errorf("ConfigMap %s/settings, which the account may write, was not applied", allowed)
	}
	if object(t, env, configMapGVK, denied, "settings") != nil {
		t.Errorf("ConfigMap %s/settings was applied although the account may not", denied)
	}

	// Granted the other namespace too, the account applies everything.
	grantConfigMaps(t, env, denied, syncNS, "deployer")
	head := up.Head(t)
	appliedAt(t, env, s, head)
	if object(t, env, configMapGVK, denied, "settings") == nil {
		t.Errorf("ConfigMap %s/settings was not applied once the account may", denied)
	}

	// The account deleted, the Sync waits; the account back, the Sync is Ready again at
	// once, not an interval later.
	if err := env.Client.Delete(context.Background(), account); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.ServiceAccountNotFoundReason)
	create(t, env, account.DeepCopy())
	got = appliedAt(t, env, s, head)
	if c := conditions.Get(got, olmsyncv1alpha1.ApplyFailedCondition); c != nil {
		t.Errorf("ApplyFailed is still there: %+v", c)
	}
}

// grantConfigMaps lets the service account ns/name write ConfigMaps in namespace target:
// a Role and its RoleBinding there.
func grantConfigMaps(t *testing.T, env *testenv.Env, target, ns, name string) {
	t.Helper()
	create(t, env, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: target, Name: "configmaps"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	})
	create(t, env, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: target, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	})
}

func create(t *testing.T, env *testenv.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
	}
}
