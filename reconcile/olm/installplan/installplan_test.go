package installplan_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestInstallFromConfigMapCatalog: a hand-made InstallPlan naming a CSV of a ConfigMap catalog
// is planned from the catalog (CSV, CRD, then the RBAC), executed step by step (every step
// Created), and the CSV it installed reaches Succeeded once its Deployment is Available.
func TestInstallFromConfigMapCatalog(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "cm-install")
	group := ns + ".example.com"
	olmtest.OwnGroup(t, env, ns)
	cs := configMapCatalog(t, env, ns, group)
	if cs.Status.ConfigMapResource == nil || cs.Status.ConfigMapResource.Name != "widgets" || cs.Status.GRPCConnectionState.LastConnectTime.IsZero() {
		t.Errorf("status %+v: want the configmap reference and lastConnect", cs.Status)
	}
	if e, ok := reg.Get(types.NamespacedName{Namespace: ns, Name: "widgets"}); !ok || e.Content.Package("widget") == nil {
		t.Fatalf("the registry does not hold the widget package: %+v", e)
	}

	olmtest.Create(t, env, installPlan(ns, "install-widget", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	ip := waitPlanPhase(t, env, ns, "install-widget", v1alpha1.InstallPlanPhaseComplete)
	var kinds []string
	for _, s := range ip.Status.Plan {
		kinds = append(kinds, s.Resource.Kind)
		switch s.Resource.Kind {
		case "ServiceAccount", "Role", "RoleBinding":
			// The CSV controller makes the same objects once the CSV exists (docs/olm.md):
			// whichever writes first, the step is Created or Present.
			if s.Status != v1alpha1.StepStatusCreated && s.Status != v1alpha1.StepStatusPresent {
				t.Errorf("step %s %s: %s, want Created or Present", s.Resource.Kind, s.Resource.Name, s.Status)
			}
		default:
			if s.Status != v1alpha1.StepStatusCreated {
				t.Errorf("step %s %s: %s, want Created", s.Resource.Kind, s.Resource.Name, s.Status)
			}
		}
		if s.Resource.CatalogSource != "widgets" || s.Resource.CatalogSourceNamespace != ns {
			t.Errorf("step %s from %s/%s", s.Resource.Name, s.Resource.CatalogSourceNamespace, s.Resource.CatalogSource)
		}
	}
	if got, want := strings.Join(kinds, ","), "ClusterServiceVersion,CustomResourceDefinition,ServiceAccount,Role,RoleBinding"; got != want {
		t.Errorf("steps %s, want %s", got, want)
	}
	if c := findCondition(ip, v1alpha1.InstallPlanInstalled); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Installed condition %+v", c)
	}

	csv := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.0.0"}, csv); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "widgets." + group}, crd); err != nil {
		t.Fatal(err)
	}
	key, value := installplan.InstalledAlongside(ns, csv.Name)
	if crd.Annotations[key] != value {
		t.Errorf("crd annotations %v: want %s=%s", crd.Annotations, key, value)
	}
	// OLM's plan execution labels every object it writes olm.managed=true: CRDs in
	// pkg/controller/operators/catalog/step.go:139 and :245, the CSV, ServiceAccounts, Roles,
	// RoleBindings and the other kinds in operator.go ExecutePlan (:2561 ... :2885).
	for _, s := range ip.Status.Plan {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: s.Resource.Group, Version: s.Resource.Version, Kind: s.Resource.Kind})
		key := client.ObjectKey{Namespace: ns, Name: s.Resource.Name}
		if s.Resource.Kind == "CustomResourceDefinition" {
			key.Namespace = ""
		}
		if err := env.Client.Get(ctx, key, u); err != nil {
			t.Errorf("step %s %s: %v", s.Resource.Kind, s.Resource.Name, err)
			continue
		}
		if got := u.GetLabels()["olm.managed"]; got != "true" {
			t.Errorf("%s %s: label olm.managed=%q, want \"true\" (labels %v)", s.Resource.Kind, s.Resource.Name, got, u.GetLabels())
		}
	}
	// The CSV's permissions; the OperatorCondition's Role (olm.managed only) is not one.
	var roles rbacv1.RoleList
	if err := env.Client.List(ctx, &roles, client.InNamespace(ns), client.MatchingLabels{"olm.owner.kind": "ClusterServiceVersion"}); err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != 1 || len(roles.Items[0].OwnerReferences) != 1 || roles.Items[0].OwnerReferences[0].UID != csv.UID {
		t.Fatalf("roles %+v: want one, owned by the csv's uid", roles.Items)
	}

	markAvailable(t, env, ns, "widget-operator")
	waitCSVPhase(t, env, ns, "widget.v1.0.0", v1alpha1.CSVPhaseSucceeded)
}

// TestManualApproval: a Manual plan stops in RequiresApproval and creates nothing until it is
// approved.
func TestManualApproval(t *testing.T) {
	env := testenv.Get(t)
	olmtest.StartManager(t, env, olm.Options{})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "manual")
	group := ns + ".example.com"
	olmtest.OwnGroup(t, env, ns)
	configMapCatalog(t, env, ns, group)

	olmtest.Create(t, env, installPlan(ns, "install-manual", v1alpha1.ApprovalManual, "widget.v1.0.0"))
	ip := waitPlanPhase(t, env, ns, "install-manual", v1alpha1.InstallPlanPhaseRequiresApproval)
	if len(ip.Status.Plan) == 0 {
		t.Fatal("a plan waiting for approval shows no steps")
	}
	for _, s := range ip.Status.Plan {
		if s.Status != v1alpha1.StepStatusUnknown {
			t.Errorf("step %s is %s before approval", s.Resource.Name, s.Status)
		}
	}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.0.0"}, &v1alpha1.ClusterServiceVersion{})
	if err == nil {
		t.Fatal("the csv exists before the plan was approved")
	}

	ip.Spec.Approved = true
	if err := env.Client.Update(ctx, ip); err != nil {
		t.Fatal(err)
	}
	waitPlanPhase(t, env, ns, "install-manual", v1alpha1.InstallPlanPhaseComplete)
}

// TestPlanFromResolution: the API the Subscription controller uses — resolve over the
// registry's catalogs, installplan.New and Create — gives a plan the controller installs.
func TestPlanFromResolution(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "resolved")
	olmtest.OwnGroup(t, env, ns)
	configMapCatalog(t, env, ns, ns+".example.com")

	sub := v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget", UID: "sub-uid"}}
	sub.Spec = v1alpha1.SubscriptionSpec{Package: "widget", Channel: "alpha", CatalogSource: "widgets", CatalogSourceNamespace: ns}
	r, _ := reg.Resolver()
	res := r.Resolve(resolve.Namespace{Name: ns, Subscriptions: []v1alpha1.Subscription{sub}})
	plan, err := resolve.NewPlan(res)
	if err != nil || plan == nil {
		t.Fatalf("plan: %v (%+v)", err, res)
	}
	ip := installplan.New(ns, 1, plan, []*v1alpha1.Subscription{&sub})
	if err := installplan.Create(ctx, env.Client, ip); err != nil {
		t.Fatal(err)
	}
	done := waitPlanPhase(t, env, ns, ip.Name, v1alpha1.InstallPlanPhaseComplete)
	if len(done.OwnerReferences) != 1 || done.OwnerReferences[0].Kind != v1alpha1.SubscriptionKind {
		t.Errorf("owner references %+v", done.OwnerReferences)
	}
	if fmt.Sprint(done.Spec.ClusterServiceVersionNames) != "[widget.v1.0.0]" {
		t.Errorf("csv names %v", done.Spec.ClusterServiceVersionNames)
	}
}

// TestCRDUpdateRefused: a plan whose CRD drops a version the cluster's CRD serves fails with
// InstallComponentFailed and crdupgrade's message; the CRD is left as it was.
//
// As OLM, the plan is first retried within its retry timeout, status.message saying
// "retrying execution due to error: ...", and fails once the timeout is past.
func TestCRDUpdateRefused(t *testing.T) {
	env := testenv.Get(t)
	olmtest.StartManager(t, env, olm.Options{InstallPlanRetryTimeout: 4 * time.Second, RetryInterval: time.Second})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "crd-refused")
	group := ns + ".example.com"
	olmtest.OwnGroup(t, env, ns)
	// The cluster serves v1alpha1 and v1; the catalog's CRD only v1.
	existing, err := decodeCRD(widgetCRD(group, "v1alpha1", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	olmtest.Create(t, env, existing)
	configMapCatalog(t, env, ns, group)

	olmtest.Create(t, env, installPlan(ns, "install-refused", v1alpha1.ApprovalAutomatic, "widget.v1.0.0"))
	want := fmt.Sprintf(`refusing to update "widgets.%s": new CRD removes version v1alpha1 that the existing CRD serves`, group)
	retrying := &v1alpha1.InstallPlan{}
	olmtest.Eventually(t, "the plan retried with OLM's message", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "install-refused"}, retrying); err != nil {
			return err
		}
		if retrying.Status.Phase != v1alpha1.InstallPlanPhaseInstalling || !strings.HasPrefix(retrying.Status.Message, "retrying execution due to error: ") ||
			!strings.Contains(retrying.Status.Message, want) {
			return fmt.Errorf("phase %q, message %q", retrying.Status.Phase, retrying.Status.Message)
		}
		return nil
	})
	ip := waitPlanPhase(t, env, ns, "install-refused", v1alpha1.InstallPlanPhaseFailed)
	if !strings.Contains(ip.Status.Message, want) || strings.HasPrefix(ip.Status.Message, "retrying") {
		t.Errorf("message of the failed plan %q, want the error", ip.Status.Message)
	}
	c := findCondition(ip, v1alpha1.InstallPlanInstalled)
	if c == nil || c.Reason != v1alpha1.InstallPlanReasonComponentFailed || !strings.Contains(c.Message, want) {
		t.Errorf("Installed condition %+v: want InstallComponentFailed with %q", c, want)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "widgets." + group}, crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 2 {
		t.Errorf("the crd was changed: %d versions", len(crd.Spec.Versions))
	}
}

// TestRestartMidInstall: a manager stops with a plan half executed — the CSV Created, the CRD
// created but its step not recorded (the manager stopped between the two) — and the next one
// finishes it: the CRD's step becomes Present, nothing fails, and the CSV installs.
func TestRestartMidInstall(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "restart")
	group := ns + ".example.com"
	reg := catalogsource.NewRegistry("", resolve.Options{})
	first := olmtest.StartManager(t, env, olm.Options{Catalogs: reg})
	olmtest.OwnGroup(t, env, ns)
	configMapCatalog(t, env, ns, group)
	// Plan without installing: a Manual plan waits with its steps written.
	olmtest.Create(t, env, installPlan(ns, "install-restart", v1alpha1.ApprovalManual, "widget.v1.0.0"))
	waitPlanPhase(t, env, ns, "install-restart", v1alpha1.InstallPlanPhaseRequiresApproval)
	first.Stop(t)
	// Read it again: the stopped manager may have written its status after the phase (the
	// service-account query's Installed condition, cleared once the group manages ns).
	ip := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "install-restart"}, ip); err != nil {
		t.Fatal(err)
	}

	// What the stopped manager left: the CSV created and recorded, the CRD created only.
	for i, s := range ip.Status.Plan {
		switch s.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			csv := &v1alpha1.ClusterServiceVersion{}
			if err := decodeInto(s.Resource.Manifest, csv); err != nil {
				t.Fatal(err)
			}
			csv.Namespace = ns
			olmtest.Create(t, env, csv)
			ip.Status.Plan[i].Status = v1alpha1.StepStatusCreated
		case "CustomResourceDefinition":
			crd, err := decodeCRD(s.Resource.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			olmtest.Create(t, env, crd)
		}
	}
	ip.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
	if err := env.Client.Status().Update(ctx, ip); err != nil {
		t.Fatal(err)
	}
	ip.Spec.Approved = true
	if err := env.Client.Update(ctx, ip); err != nil {
		t.Fatal(err)
	}

	olmtest.StartManager(t, env, olm.Options{Catalogs: reg})
	done := waitPlanPhase(t, env, ns, "install-restart", v1alpha1.InstallPlanPhaseComplete)
	for _, s := range done.Status.Plan {
		switch s.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			if s.Status != v1alpha1.StepStatusCreated {
				t.Errorf("csv step %s, want it kept Created", s.Status)
			}
		case "CustomResourceDefinition":
			if s.Status != v1alpha1.StepStatusPresent {
				t.Errorf("crd step %s, want Present", s.Status)
			}
		default:
			// The CSV controller may have written the CSV's RBAC first: the same objects.
			if s.Status != v1alpha1.StepStatusCreated && s.Status != v1alpha1.StepStatusPresent {
				t.Errorf("step %s %s: %s", s.Resource.Kind, s.Resource.Name, s.Status)
			}
		}
	}
	// The CSV's permissions; the OperatorCondition's Role (olm.managed only) is not one.
	var roles rbacv1.RoleList
	if err := env.Client.List(ctx, &roles, client.InNamespace(ns), client.MatchingLabels{"olm.owner.kind": "ClusterServiceVersion"}); err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != 1 {
		t.Errorf("%d roles: the plan and the csv controller wrote different ones", len(roles.Items))
	}
	markAvailable(t, env, ns, "widget-operator")
	waitCSVPhase(t, env, ns, "widget.v1.0.0", v1alpha1.CSVPhaseSucceeded)
}

// TestCatalogImage: a grpc CatalogSource with an image served by an in-process OCI registry
// becomes READY with the image's packages in the registry; a new push under the same tag is
// picked up on the next poll; when the registry goes away the source turns TRANSIENT_FAILURE,
// says why, and the last good content is still served.
func TestCatalogImage(t *testing.T) {
	env := testenv.Get(t)
	images := olmtest.ServeRegistry(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg, CatalogImages: images.ImageOptions(catalog.ImageOptions{})})
	ns := olmtest.NewNamespace(t, env, "image")
	ref, first := images.PushCatalog(t, "catalogs/widgets:latest", fbcPackage("widget"))

	cs := &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Spec: v1alpha1.CatalogSourceSpec{
			SourceType: v1alpha1.SourceTypeGrpc, Image: ref,
			UpdateStrategy: &v1alpha1.UpdateStrategy{RegistryPoll: &v1alpha1.RegistryPoll{Interval: "1s"}},
		},
	}
	olmtest.Create(t, env, cs)
	ready := waitConnection(t, env, ns, "widgets", v1alpha1.ConnectionStateReady)
	if ready.Status.LatestImageRegistryPoll == nil {
		t.Error("no latestImageRegistryPoll")
	}
	key := types.NamespacedName{Namespace: ns, Name: "widgets"}
	if e, _ := reg.Get(key); e.Revision != first || e.Content.Package("widget") == nil {
		t.Fatalf("registry entry %+v: want digest %s with package widget", e, first)
	}

	_, second := images.PushCatalog(t, "catalogs/widgets:latest", fbcPackage("widget")+fbcPackage("gadget"))
	olmtest.Eventually(t, "the new digest loaded", func() error {
		if e, _ := reg.Get(key); e.Revision != second || e.Content.Package("gadget") == nil {
			return fmt.Errorf("revision %s", e.Revision)
		}
		return nil
	})

	images.Close()
	broken := waitConnection(t, env, ns, "widgets", v1alpha1.ConnectionStateTransientFailure)
	if broken.Status.Reason != v1alpha1.CatalogSourceRegistryServerError || !strings.Contains(broken.Status.Message, ref) {
		t.Errorf("status reason %q message %q", broken.Status.Reason, broken.Status.Message)
	}
	c := apimeta.FindStatusCondition(broken.Status.Conditions, catalogsource.ConditionReady)
	if c == nil || c.Reason != catalogsource.ReasonServingStale {
		t.Errorf("Ready condition %+v: want %s", c, catalogsource.ReasonServingStale)
	}
	if e, _ := reg.Get(key); e.Content == nil || e.Content.Package("gadget") == nil || e.Err == nil {
		t.Errorf("registry entry %+v: want the last good content and the error", e)
	}
	if cats := reg.Catalogs(); len(cats) == 0 {
		t.Error("the broken catalog is not served")
	}
}

// TestCatalogSourceSpecInvalid: a source olmsync cannot serve stalls with SpecInvalidError.
func TestCatalogSourceSpecInvalid(t *testing.T) {
	env := testenv.Get(t)
	olmtest.StartManager(t, env, olm.Options{})
	ns := olmtest.NewNamespace(t, env, "invalid")
	olmtest.Create(t, env, &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "address"},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Address: "registry.olm:50051"},
	})
	olmtest.Eventually(t, "SpecInvalidError", func() error {
		cs := &v1alpha1.CatalogSource{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "address"}, cs); err != nil {
			return err
		}
		if cs.Status.Reason != v1alpha1.CatalogSourceSpecInvalidError || !apimeta.IsStatusConditionTrue(cs.Status.Conditions, catalogsource.ConditionStalled) {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})
}

func fbcPackage(name string) string {
	return fmt.Sprintf(`{"schema":"olm.package","name":%[1]q,"defaultChannel":"stable"}
{"schema":"olm.channel","package":%[1]q,"name":"stable","entries":[{"name":"%[1]s.v1.0.0"}]}
{"schema":"olm.bundle","name":"%[1]s.v1.0.0","package":%[1]q,"image":"example.com/%[1]s-bundle:1","properties":[{"type":"olm.package","value":{"packageName":%[1]q,"version":"1.0.0"}}]}
`, name)
}

func findCondition(ip *v1alpha1.InstallPlan, t v1alpha1.InstallPlanConditionType) *v1alpha1.InstallPlanCondition {
	for i := range ip.Status.Conditions {
		if ip.Status.Conditions[i].Type == t {
			return &ip.Status.Conditions[i]
		}
	}
	return nil
}

// TestDetectOLM: an OLM's own CRDs and its olm-operator Deployment are found, so --olm=auto
// does not start the embedded controllers beside it.
func TestDetectOLM(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	before, err := olm.DetectOLM(ctx, env.Client)
	if err != nil || len(before) != 0 {
		t.Fatalf("DetectOLM on a cluster without OLM = %v, %v", before, err)
	}
	crd, err := decodeCRD(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: olmconfigs.operators.coreos.com}
spec:
  group: operators.coreos.com
  names: {kind: OLMConfig, listKind: OLMConfigList, plural: olmconfigs, singular: olmconfig}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	if err != nil {
		t.Fatal(err)
	}
	olmtest.Create(t, env, crd)
	ns := olmtest.NewNamespace(t, env, "olm")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "olm-operator"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "olm-operator"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "olm-operator"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "olm", Image: "quay.io/operator-framework/olm"}}},
			},
		},
	}
	olmtest.Create(t, env, d)
	found, err := olm.DetectOLM(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	want := "CustomResourceDefinition olmconfigs.operators.coreos.com,Deployment " + ns + "/olm-operator"
	if strings.Join(found, ",") != want {
		t.Errorf("DetectOLM = %v, want %s", found, want)
	}
	if start, err := olm.Decide(olm.ModeAuto, found); start || !errors.Is(err, olm.ErrOLMPresent) {
		t.Errorf("Decide(auto) = %v, %v", start, err)
	}
}

// TestHandWrittenPlanGetsAStatus: a plan written by hand whose CSV no catalog holds yet says
// so in its status (phase Planning, Resolved False with the missing CSV named). The CRD
// requires status.catalogSources, which such a plan has none of: a status written without it
// was refused by the API server, and the plan showed nothing at all, forever.
func TestHandWrittenPlanGetsAStatus(t *testing.T) {
	env := testenv.Get(t)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	olmtest.StartManager(t, env, olm.Options{Catalogs: reg})
	ns := olmtest.NewNamespace(t, env, "hand-written")
	olmtest.OwnGroup(t, env, ns)
	olmtest.Create(t, env, installPlan(ns, "by-hand", v1alpha1.ApprovalAutomatic, "nowhere.v1.0.0"))
	ip := waitPlanPhase(t, env, ns, "by-hand", v1alpha1.InstallPlanPhasePlanning)
	c := findCondition(ip, v1alpha1.InstallPlanResolved)
	if c == nil || c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "nowhere.v1.0.0") {
		t.Errorf("Resolved condition %+v, want False naming nowhere.v1.0.0", c)
	}
	if ip.Status.CatalogSources == nil {
		t.Errorf("status.catalogSources is null; the CRD requires it")
	}
}

// TestUnsupportedKindFailsThePlan: a bundle object of a kind OLM does not install (a
// Deployment: a CSV's strategy holds those) makes its step UnsupportedResource and the plan
// Failed with OLM's "the InstallPlan contains invalid data" once the retry timeout is past;
// nothing of that kind is created.
func TestUnsupportedKindFailsThePlan(t *testing.T) {
	env := testenv.Get(t)
	olmtest.StartManager(t, env, olm.Options{InstallPlanRetryTimeout: 2 * time.Second, RetryInterval: time.Second})
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "unsupported-kind")
	olmtest.OwnGroup(t, env, ns)
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"stray"},"spec":{"selector":{"matchLabels":{"app":"stray"}},` +
		`"template":{"metadata":{"labels":{"app":"stray"}},"spec":{"containers":[{"name":"c","image":"example.com/stray:1"}]}}}}`
	plan := installPlan(ns, "with-deployment", v1alpha1.ApprovalAutomatic, "stray.v1.0.0")
	// Made as a Subscription makes its plans (owned by it, steps written right after), so the
	// controller waits for the steps instead of planning the plan from a catalog. No garbage
	// collector runs here to remove it for its owner's absence.
	plan.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind,
		Name: "stray", UID: "00000000-0000-0000-0000-000000000001"}}
	olmtest.Create(t, env, plan)
	plan.Status = v1alpha1.InstallPlanStatus{
		Phase: v1alpha1.InstallPlanPhaseInstalling, CatalogSources: []string{},
		Plan: []v1alpha1.Step{{Resolving: "stray.v1.0.0", Status: v1alpha1.StepStatusUnknown,
			Resource: v1alpha1.StepResource{Kind: "Deployment", Name: "stray", Group: "apps", Version: "v1", Manifest: deployment}}},
	}
	if err := env.Client.Status().Update(ctx, plan); err != nil {
		t.Fatal(err)
	}
	ip := waitPlanPhase(t, env, ns, "with-deployment", v1alpha1.InstallPlanPhaseFailed)
	if ip.Status.Message != "the InstallPlan contains invalid data" || ip.Status.Plan[0].Status != v1alpha1.StepStatusUnsupportedResource {
		t.Errorf("message %q, step %s; want OLM's invalid-data error and UnsupportedResource", ip.Status.Message, ip.Status.Plan[0].Status)
	}
	if c := findCondition(ip, v1alpha1.InstallPlanInstalled); c == nil || c.Reason != v1alpha1.InstallPlanReasonComponentFailed {
		t.Errorf("Installed condition %+v, want InstallComponentFailed", c)
	}
	var list appsv1.DeploymentList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("a Deployment of an unsupported step was created: %s", list.Items[0].Name)
	}
}

// TestInvalidStepSaidOnce: a step the API server refuses as invalid (a ConfigMap named
// Bad_Name) fails the plan with OLM's words for the step said once — "error updating
// configmap: Bad_Name: ConfigMap "Bad_Name" is invalid: …" — in status.message and the
// Installed condition (issue 31: the prefix came twice).
func TestInvalidStepSaidOnce(t *testing.T) {
	env := testenv.Get(t)
	olmtest.StartManager(t, env, olm.Options{InstallPlanRetryTimeout: 2 * time.Second, RetryInterval: time.Second})
	ns := olmtest.NewNamespace(t, env, "bad-step")
	olmtest.OwnGroup(t, env, ns)
	const csvName, group = "widget.v1.0.0", "badstep.example.com"
	plan := installPlan(ns, "bad-configmap", v1alpha1.ApprovalAutomatic, csvName)
	// Owned by a Subscription, as TestUnsupportedKindFailsThePlan's: the controller waits for
	// the steps.
	plan.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind,
		Name: "widget", UID: "00000000-0000-0000-0000-000000000002"}}
	olmtest.Create(t, env, plan)
	plan.Status = v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseInstalling, CatalogSources: []string{}, Plan: []v1alpha1.Step{
		planStep(t, csvName, "CustomResourceDefinition", "apiextensions.k8s.io", "v1", "widgets."+group, widgetCRD(group, "v1")),
		planStep(t, csvName, v1alpha1.ClusterServiceVersionKind, v1alpha1.GroupName, "v1alpha1", csvName, widgetCSV(group, "v1")),
		planStep(t, csvName, "ConfigMap", "", "v1", "Bad_Name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\ndata: {a: b}\n"),
	}}
	if err := env.Client.Status().Update(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	ip := waitPlanPhase(t, env, ns, "bad-configmap", v1alpha1.InstallPlanPhaseFailed)
	const prefix = `error updating configmap: Bad_Name: ConfigMap "Bad_Name" is invalid: `
	c := findCondition(ip, v1alpha1.InstallPlanInstalled)
	for what, msg := range map[string]string{"status.message": ip.Status.Message, "the Installed condition": c.Message} {
		if !strings.HasPrefix(msg, prefix) || strings.Count(msg, "error updating configmap") != 1 {
			t.Errorf("%s %q, want OLM's %q once", what, msg, prefix)
		}
	}
}
