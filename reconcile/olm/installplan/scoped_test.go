package installplan_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/rbac"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
)

// scopedGroup makes an OperatorGroup "og" of ns targeting ns whose installs run as the
// ServiceAccount sa.
func scopedGroup(t *testing.T, env *testenv.Env, ns, sa string) {
	t.Helper()
	olmtest.Create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}, ServiceAccountName: sa},
	})
}

// grantAll gives the ServiceAccount sa of ns every right in ns, through a Role and a
// RoleBinding (envtest runs no controller-manager: the aggregated admin role has no rules).
func grantAll(t *testing.T, env *testenv.Env, ns, sa string) {
	t.Helper()
	olmtest.Create(t, env, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
	})
	olmtest.Create(t, env, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	})
}

// waitPlan waits until check accepts the plan.
func waitPlan(t *testing.T, env *testenv.Env, ns, name, what string, check func(*v1alpha1.InstallPlan) error) *v1alpha1.InstallPlan {
	t.Helper()
	ip := &v1alpha1.InstallPlan{}
	olmtest.Eventually(t, fmt.Sprintf("installplan %s/%s: %s", ns, name, what), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ip); err != nil {
			return err
		}
		return check(ip)
	})
	return ip
}

// forbiddenCSV is the message of a plan whose ServiceAccount may not create its CSV: the
// executor's wrapping of the API server's refusal, inside OLM's retry message (the preview
// says the same: check/preview TestPreviewScopedInstall).
func forbiddenCSV(ns, sa string) string {
	return fmt.Sprintf(`retrying execution due to error: error creating csv widget.v1.0.0: clusterserviceversions.operators.coreos.com is forbidden: User "system:serviceaccount:%[1]s:%[2]s" cannot create resource "clusterserviceversions" in API group "operators.coreos.com" in the namespace "%[1]s"`, ns, sa)
}

// TestScopedInstall: in a namespace whose OperatorGroup names a ServiceAccount, the plan
// records the account in status.attenuatedServiceAccountRef and executes its steps with the
// account's rights: with none, the API server refuses the first step (the CSV), the plan
// stays Installing with OLM's retry message holding the refusal — past the retry timeout,
// a refusal for lack of rights is never final — and nothing of the plan is written. Once a
// Role and RoleBinding give the account the rights, the plan completes and the CSV is there.
func TestScopedInstall(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	const retryTimeout = time.Second
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg, InstallPlanRetryTimeout: retryTimeout, RetryInterval: time.Second})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "scoped")
	group := ns + ".example.com"
	olmtest.Create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"}})
	scopedGroup(t, env, ns, "installer")
	configMapCatalog(t, env, ns, group)

	olmtest.Create(t, env, installPlan(ns, "install-widget", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	want := forbiddenCSV(ns, "installer")
	ip := waitPlan(t, env, ns, "install-widget", "refused for lack of rights", func(ip *v1alpha1.InstallPlan) error {
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseInstalling || ip.Status.Message != want || ip.Status.StartTime == nil {
			return fmt.Errorf("phase %q, message %q", ip.Status.Phase, ip.Status.Message)
		}
		return nil
	})
	if ref := ip.Status.AttenuatedServiceAccountRef; ref == nil || ref.Namespace != ns || ref.Name != "installer" || ref.Kind != "ServiceAccount" || ref.UID == "" {
		t.Errorf("attenuatedServiceAccountRef %+v: want the ServiceAccount %s/installer", ref, ns)
	}
	// Past the retry timeout the refusal is still retried, not Failed: the rights may come.
	time.Sleep(time.Until(ip.Status.StartTime.Add(retryTimeout + 2*time.Second)))
	ip = waitPlan(t, env, ns, "install-widget", "still retrying after the timeout", func(ip *v1alpha1.InstallPlan) error {
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseInstalling || ip.Status.Message != want {
			return fmt.Errorf("phase %q, message %q", ip.Status.Phase, ip.Status.Message)
		}
		return nil
	})
	if c := findCondition(ip, v1alpha1.InstallPlanInstalled); c != nil && c.Status == corev1.ConditionTrue {
		t.Errorf("Installed condition %+v", c)
	}
	var csvs v1alpha1.ClusterServiceVersionList
	if err := env.Client.List(ctx, &csvs, client.InNamespace(ns)); err != nil || len(csvs.Items) != 0 {
		t.Errorf("csvs %d (%v): want none", len(csvs.Items), err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget-operator"}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("serviceaccount widget-operator of the plan: %v, want not found", err)
	}
	var roles rbacv1.RoleList
	if err := env.Client.List(ctx, &roles, client.InNamespace(ns), client.MatchingLabels{"olm.managed": "true"}); err != nil || len(roles.Items) != 0 {
		t.Errorf("roles of the plan %d (%v): want none", len(roles.Items), err)
	}
	// The CSV step comes before the CRD step: the refusal stopped the plan before it.
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "widgets." + group}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
		t.Errorf("crd widgets.%s: %v, want not found", group, err)
	}

	grantAll(t, env, ns, "installer")
	ip = waitPlanPhase(t, env, ns, "install-widget", v1alpha1.InstallPlanPhaseComplete)
	if ip.Status.Message != "" {
		t.Errorf("message %q of the complete plan", ip.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.0.0"}, &v1alpha1.ClusterServiceVersion{}); err != nil {
		t.Errorf("csv: %v", err)
	}
}

// TestScopedInstallEscalation: an account that may write everything the plan holds but does
// not hold the rights the CSV's permissions grant is refused the operator's Role by RBAC's
// escalation check; the plan stays Installing with OLM's retry message around the API
// server's words, which are the preview's (rbac.Policy.FirstRefused, given the cluster's RBAC
// and the plan's own steps), byte for byte. Once the account holds those rights, the plan
// completes.
func TestScopedInstallEscalation(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg, RetryInterval: time.Second})
	ns := olmtest.NewNamespace(t, env, "escalation")
	group := ns + ".example.com"
	olmtest.Create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"}})
	olmtest.Create(t, env, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"},
		// Every verb on RBAC but escalate and bind, which would let it write any Role.
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"*"}, Resources: []string{"*"}, APIGroups: []string{"", "apps", "operators.coreos.com"}},
			{
				Verbs:     []string{"create", "get", "list", "watch", "update", "patch", "delete"},
				Resources: []string{"*"}, APIGroups: []string{"rbac.authorization.k8s.io"},
			},
		},
	})
	olmtest.Create(t, env, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "installer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "installer"}},
	})
	scopedGroup(t, env, ns, "installer")
	configMapCatalog(t, env, ns, group)

	olmtest.Create(t, env, installPlan(ns, "install-widget", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	ip := waitPlan(t, env, ns, "install-widget", "refused by the escalation check", func(ip *v1alpha1.InstallPlan) error {
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseInstalling || !strings.Contains(ip.Status.Message, "is attempting to grant RBAC permissions not currently held") {
			return fmt.Errorf("phase %q, message %q", ip.Status.Phase, ip.Status.Message)
		}
		return nil
	})
	if !strings.Contains(ip.Status.Message, fmt.Sprintf(`{APIGroups:["%s"], Resources:["widgets"], Verbs:["*"]}`, group)) {
		t.Errorf("message %q does not name the rule not held", ip.Status.Message)
	}
	refusal := olmtest.ClusterRBAC(t, env).FirstRefused(rbac.ServiceAccount(ns, "installer"), ns, ip.Status.Plan, func(s v1alpha1.Step) bool {
		return s.Status == v1alpha1.StepStatusPresent || s.Status == v1alpha1.StepStatusCreated
	})
	if refusal == nil {
		t.Fatal("the preview's core refuses no step")
	}
	if got := "retrying execution due to error: " + refusal.Err.Error(); got != ip.Status.Message {
		t.Errorf("the preview's core says\n%s\nthe controller's plan\n%s", got, ip.Status.Message)
	}

	olmtest.Create(t, env, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{group}, Resources: []string{"widgets"}}},
	})
	olmtest.Create(t, env, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "widgets"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "installer"}},
	})
	waitPlanPhase(t, env, ns, "install-widget", v1alpha1.InstallPlanPhaseComplete)
}

// TestScopedInstallServiceAccountMissing: an OperatorGroup that manages the namespace but
// whose ServiceAccount does not exist stops the plan before anything runs: Installed False,
// InstallCheckFailed, OLM's message (pkg/lib/scoped/querier.go:89). Once the account exists
// the condition is cleared as OLM clears it (reason Unknown, no message) and the plan goes on
// with the account's rights.
func TestScopedInstallServiceAccountMissing(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg, RetryInterval: time.Second})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "scoped-missing")
	group := ns + ".example.com"
	olmtest.OwnGroup(t, env, ns)
	og := &operatorsv1.OperatorGroup{}
	olmtest.Eventually(t, "the group manages its namespace", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "og"}, og); err != nil {
			return err
		}
		if len(og.Status.Namespaces) == 0 {
			return fmt.Errorf("status %+v", og.Status)
		}
		return nil
	})
	og.Spec.ServiceAccountName = "installer"
	if err := env.Client.Update(ctx, og); err != nil {
		t.Fatal(err)
	}
	configMapCatalog(t, env, ns, group)

	olmtest.Create(t, env, installPlan(ns, "install-widget", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	want := fmt.Sprintf("please make sure the service account exists. sa=installer operatorgroup=%s/og", ns)
	waitPlan(t, env, ns, "install-widget", "InstallCheckFailed", func(ip *v1alpha1.InstallPlan) error {
		c := findCondition(ip, v1alpha1.InstallPlanInstalled)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.InstallPlanReasonInstallCheckFailed || c.Message != want {
			return fmt.Errorf("Installed condition %+v", c)
		}
		if ip.Status.AttenuatedServiceAccountRef != nil {
			return fmt.Errorf("attenuatedServiceAccountRef %+v", ip.Status.AttenuatedServiceAccountRef)
		}
		return nil
	})
	var csvs v1alpha1.ClusterServiceVersionList
	if err := env.Client.List(ctx, &csvs, client.InNamespace(ns)); err != nil || len(csvs.Items) != 0 {
		t.Errorf("csvs %d (%v): want none", len(csvs.Items), err)
	}

	olmtest.Create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"}})
	waitPlan(t, env, ns, "install-widget", "the check cleared, the account's rights refused", func(ip *v1alpha1.InstallPlan) error {
		c := findCondition(ip, v1alpha1.InstallPlanInstalled)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != "Unknown" || c.Message != "" {
			return fmt.Errorf("Installed condition %+v", c)
		}
		if ip.Status.Message != forbiddenCSV(ns, "installer") {
			return fmt.Errorf("message %q", ip.Status.Message)
		}
		return nil
	})
}

// TestInstallWithoutManagingGroup: a plan of a namespace no OperatorGroup manages is not
// executed: InstallCheckFailed with OLM's message (pkg/lib/scoped/querier.go:59).
func TestInstallWithoutManagingGroup(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg, RetryInterval: time.Second})
	ns := olmtest.NewNamespace(t, env, "no-group")
	configMapCatalog(t, env, ns, ns+".example.com")
	olmtest.Create(t, env, installPlan(ns, "install-widget", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	waitPlan(t, env, ns, "install-widget", "InstallCheckFailed", func(ip *v1alpha1.InstallPlan) error {
		c := findCondition(ip, v1alpha1.InstallPlanInstalled)
		if c == nil || c.Reason != v1alpha1.InstallPlanReasonInstallCheckFailed || c.Message != "no operator group found that is managing this namespace" {
			return fmt.Errorf("Installed condition %+v", c)
		}
		return nil
	})
}
