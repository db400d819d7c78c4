package operatorcondition_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// flow starts the whole embedded OLM and a namespace with its own OperatorGroup and a
// catalog "cat", whose Deployments become Available as they appear.
func flow(t *testing.T) (*testenv.Env, string, *olmtest.Manager) {
	t.Helper()
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "cond")
	olmtest.OwnGroup(t, env, ns)
	m := olmtest.StartManager(t, env, olm.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return env, ns, m
}

func widget(version, replaces string) olmtest.Bundle {
	return olmtest.Bundle{Package: "widget", Version: version, Replaces: replaces,
		Owns: []olmtest.API{{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}}}
}

func subscribe(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	olmtest.Create(t, env, &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: "widget", Channel: "stable"},
	})
}

func getCSV(env *testenv.Env, ns, name string) (*v1alpha1.ClusterServiceVersion, error) {
	c := &v1alpha1.ClusterServiceVersion{}
	return c, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)
}

func waitPhase(t *testing.T, env *testenv.Env, ns, name string, phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	var c *v1alpha1.ClusterServiceVersion
	olmtest.Eventually(t, fmt.Sprintf("csv %s %s/%s", name, phase, reason), func() error {
		var err error
		if c, err = getCSV(env, ns, name); err != nil {
			return err
		}
		if c.Status.Phase != phase || c.Status.Reason != reason {
			return fmt.Errorf("%s/%s: %s", c.Status.Phase, c.Status.Reason, c.Status.Message)
		}
		return nil
	})
	return c
}

// asServiceAccount is a client that acts as the service account, as the operator's pod would.
func asServiceAccount(t *testing.T, env *testenv.Env, ns, sa string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setUpgradeable sets the Upgradeable condition in spec.conditions, as the operator does
// through the rights OLM gave its service account.
func setUpgradeable(t *testing.T, c client.Client, ns, name string, status metav1.ConditionStatus, message string) {
	t.Helper()
	olmtest.Eventually(t, "operator writes its condition", func() error {
		cond := &operatorsv2.OperatorCondition{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cond); err != nil {
			return err
		}
		meta.SetStatusCondition(&cond.Spec.Conditions, metav1.Condition{Type: "Upgradeable", Status: status, Reason: "Migration", Message: message})
		return c.Update(context.Background(), cond)
	})
}

// TestOperatorConditionGatesUpgrade: every CSV gets an OperatorCondition of its name, with
// OLM's spec, owner and RBAC; the operator, as its service account, sets Upgradeable=False
// in spec.conditions, the controller copies it to status, and the next CSV in the channel
// stays Pending with OLM's reason and message (OLM operator.go:2232-2239) while the old one
// keeps running; once the operator says True the upgrade goes through.
func TestOperatorConditionGatesUpgrade(t *testing.T) {
	env, ns, m := flow(t)
	ctx := context.Background()
	v1 := widget("1.0.0", "")
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v1)
	subscribe(t, env, ns)
	old := waitPhase(t, env, ns, "widget.v1.0.0", v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)

	cond := &operatorsv2.OperatorCondition{}
	olmtest.Eventually(t, "OperatorCondition of the csv", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Name}, cond)
	})
	if got := cond.Spec.ServiceAccounts; !slices.Equal(got, []string{"widget-operator"}) {
		t.Errorf("spec.serviceAccounts = %v", got)
	}
	if got := cond.Spec.Deployments; !slices.Equal(got, []string{"widget-operator"}) {
		t.Errorf("spec.deployments = %v", got)
	}
	if ref := metav1.GetControllerOf(cond); ref == nil || ref.UID != old.UID || ref.Kind != "ClusterServiceVersion" {
		t.Errorf("controller of the OperatorCondition = %+v, want the csv", ref)
	}
	olmtest.Eventually(t, "Role and RoleBinding of the OperatorCondition", func() error {
		role, binding := &rbacv1.Role{}, &rbacv1.RoleBinding{}
		key := client.ObjectKey{Namespace: ns, Name: old.Name}
		if err := env.Client.Get(ctx, key, role); err != nil {
			return err
		}
		if err := env.Client.Get(ctx, key, binding); err != nil {
			return err
		}
		want := rbacv1.PolicyRule{Verbs: []string{"get", "update", "patch"}, APIGroups: []string{"operators.coreos.com"},
			Resources: []string{"operatorconditions"}, ResourceNames: []string{old.Name}}
		if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, want.Verbs) || !slices.Equal(role.Rules[0].ResourceNames, want.ResourceNames) ||
			role.Labels["olm.managed"] != "true" {
			return fmt.Errorf("role %+v labels %v", role.Rules, role.Labels)
		}
		if len(binding.Subjects) != 1 || binding.Subjects[0].Name != "widget-operator" || binding.RoleRef.Name != old.Name {
			return fmt.Errorf("binding subjects %+v roleRef %+v", binding.Subjects, binding.RoleRef)
		}
		return nil
	})

	// As in OLM, the Role and RoleBinding are watched: deleted, they are made again at once,
	// with no change to the OperatorCondition.
	for _, obj := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: old.Name}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: old.Name}},
	} {
		if err := env.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	olmtest.Eventually(t, "the deleted Role and RoleBinding made again", func() error {
		key := client.ObjectKey{Namespace: ns, Name: old.Name}
		if err := env.Client.Get(ctx, key, &rbacv1.Role{}); err != nil {
			return err
		}
		return env.Client.Get(ctx, key, &rbacv1.RoleBinding{})
	})
	// They are read through the cache (olm.CacheByObject selects olm.managed=true, as OLM's
	// manager does), not from the API server before they exist.
	for _, kind := range []string{"GET roles 404", "GET rolebindings 404"} {
		if n := m.Refused.Count(kind); n != 0 {
			t.Errorf("%d requests %q: the OperatorCondition's RBAC read from the API server", n, kind)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Name}, cond); err != nil {
		t.Fatal(err)
	}

	operator := asServiceAccount(t, env, ns, "widget-operator")
	setUpgradeable(t, operator, ns, old.Name, metav1.ConditionFalse, "migration in progress")
	if err := operator.Status().Update(ctx, cond); err == nil {
		t.Error("the operator's service account may write the OperatorCondition's status; OLM's Role grants only the object")
	}
	olmtest.Eventually(t, "Upgradeable copied to status at the current generation", func() error {
		c := &operatorsv2.OperatorCondition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Name}, c); err != nil {
			return err
		}
		s := meta.FindStatusCondition(c.Status.Conditions, "Upgradeable")
		if s == nil || s.Status != metav1.ConditionFalse || s.ObservedGeneration != c.Generation || s.Message != "migration in progress" {
			return fmt.Errorf("status.conditions %+v at generation %d", c.Status.Conditions, c.Generation)
		}
		return nil
	})

	olmtest.ConfigMapCatalog(t, env, ns, "cat", v1, widget("1.1.0", "widget.v1.0.0"))
	held := waitPhase(t, env, ns, "widget.v1.1.0", v1alpha1.CSVPhasePending, v1alpha1.CSVReasonOperatorConditionNotUpgradeable)
	// OLM operator.go:2237 wraps operatorconditions.go:50.
	if want := "operator is not upgradeable: the operator is not upgradeable: migration in progress"; held.Status.Message != want {
		t.Errorf("message = %q, want %q", held.Status.Message, want)
	}
	if c, err := getCSV(env, ns, old.Name); err != nil || c.Status.Phase == v1alpha1.CSVPhaseDeleting {
		t.Errorf("the old csv: %v, phase %q", err, c.Status.Phase)
	}

	setUpgradeable(t, operator, ns, old.Name, metav1.ConditionTrue, "done")
	waitPhase(t, env, ns, "widget.v1.1.0", v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
}

// TestOperatorConditionV1Served: OLM serves v1 beside the stored v2; an OperatorCondition
// written at v1 reads back at v2, and an administrator's override needs no lastTransitionTime
// (OLM's CRD does not require one there).
func TestOperatorConditionV1Served(t *testing.T) {
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "condv1")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1",
		"kind":       "OperatorCondition",
		"metadata":   map[string]any{"name": "by-hand", "namespace": ns},
		"spec": map[string]any{
			"deployments": []any{"d"},
			"overrides":   []any{map[string]any{"type": "Upgradeable", "status": "True", "reason": "Admin", "message": "go ahead"}},
		},
	}}
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	got := &operatorsv2.OperatorCondition{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "by-hand"}, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Overrides) != 1 || got.Spec.Overrides[0].Message != "go ahead" || !slices.Equal(got.Spec.Deployments, []string{"d"}) {
		t.Errorf("v2 reads %+v", got.Spec)
	}
}
