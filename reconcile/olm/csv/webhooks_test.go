package csv_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/certs"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// webhookOperators are the real operators of the shared data that declare webhooks, at the
// bundle each test installs.
var webhookOperators = []struct{ pkg, version string }{
	{"cert-manager", "1.14.2"},
	{"node-healthcheck-operator", "0.12.0"},
	{"self-node-remediation", "0.13.0"},
	{"dbaas-operator", "0.5.0"},
}

// TestRealOperatorsWithWebhooks installs each real operator with webhooks (validating,
// mutating and conversion) from its bundle in a namespace of its own with a global group,
// and checks what OLM makes for them: the Service in front of each serving deployment, its
// serving certificate signed by a CA of the install, the deployment mounting it, the webhook
// configurations (or CRD conversions) trusting that CA with the CSV's rules, policies and
// selectors. While the webhook's deployment is not ready the CSV waits in Installing with
// OLM's message. Deleting the CSV removes the webhook configurations, the cluster-wide RBAC
// and the conversions; the namespaced objects carry the CSV's owner reference for the
// garbage collector (envtest runs none).
func TestRealOperatorsWithWebhooks(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	for _, op := range webhookOperators {
		t.Run(op.pkg, func(t *testing.T) {
			ns := newNamespace(t, env, "wh-"+op.pkg[:4])
			operatorGroup(t, env, ns, "global")
			dir := bundleDir(t, op.pkg, op.version)
			installCRDs(t, env, dir)
			csv := loadCSV(t, dir, ns)
			create(t, env, csv)
			waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
			serving := servingDeployments(csv)
			// Every deployment but the first that serves webhooks becomes ready: the CSV
			// waits for that one, with OLM's words.
			for _, d := range deploymentNames(csv) {
				if d != serving[0] {
					markAvailable(t, env, ns, d)
				}
			}
			want := fmt.Sprintf(`installing: waiting for deployment %s to become ready: deployment "%s" not available: missing condition "Available"`, serving[0], serving[0])
			markObserved(t, env, ns, serving[0])
			waiting := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
			eventually(t, "the message of the webhook deployment", func() error {
				waiting = getCSV(t, env, ns, csv.Name)
				if waiting.Status.Message != want {
					return fmt.Errorf("message %q, want %q", waiting.Status.Message, want)
				}
				return nil
			})
			for _, r := range waiting.Status.RequirementStatus {
				if r.Status != v1alpha1.RequirementStatusReasonPresent {
					t.Errorf("requirement %s %s: %s (%s)", r.Kind, r.Name, r.Status, r.Message)
				}
			}
			markAvailable(t, env, ns, serving[0])
			got := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
			if got.Status.CertsLastUpdated == nil || got.Status.CertsRotateAt == nil {
				t.Errorf("certsLastUpdated %v, certsRotateAt %v: want both set", got.Status.CertsLastUpdated, got.Status.CertsRotateAt)
			} else if d := got.Status.CertsRotateAt.Sub(got.Status.CertsLastUpdated.Time); d < install.DefaultCertValidFor-install.DefaultCertMinFresh-time.Minute || d > install.DefaultCertValidFor {
				t.Errorf("certs rotate %s after they were made, want about 729 days", d)
			}
			for _, d := range serving {
				checkServing(t, env, got, d)
			}
			checkWebhooks(t, env, got)

			deleteAndWait(t, env, got)
			checkCleanedUp(t, env, got)
		})
	}
}

// servingDeployments are the deployments a CSV's webhooks name, in the strategy's order.
func servingDeployments(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	for _, d := range install.CertDeployments(csv) {
		out = append(out, d.Name)
	}
	return out
}

// markObserved writes the status of a Deployment whose controller observed it but whose pods
// are not available yet.
func markObserved(t *testing.T, env *testenv.Env, namespace, name string) {
	t.Helper()
	eventually(t, "deployment "+name+" observed", func() error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
		return env.Client.Status().Update(context.Background(), d)
	})
}

// checkServing checks what OLM makes for a deployment that serves webhooks.
func checkServing(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion, deployment string) {
	t.Helper()
	ctx := context.Background()
	ns := csv.Namespace
	service := deployment + "-service"
	svc := &corev1.Service{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: service}, svc); err != nil {
		t.Fatalf("service of %s: %v", deployment, err)
	}
	var wantPorts []corev1.ServicePort
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.DeploymentName != deployment {
			continue
		}
		p := corev1.ServicePort{Name: fmt.Sprint(w.ContainerPort), Port: w.ContainerPort, TargetPort: *w.TargetPort, Protocol: corev1.ProtocolTCP}
		if !slices.Contains(wantPorts, p) {
			wantPorts = append(wantPorts, p)
		}
	}
	if diff := cmp.Diff(wantPorts, svc.Spec.Ports); diff != "" {
		t.Errorf("service %s ports (-want +got):\n%s", service, diff)
	}
	if svc.Labels["olm.managed"] != "true" || !ownedBy(svc.OwnerReferences, csv) {
		t.Errorf("service %s labels %v owners %+v", service, svc.Labels, svc.OwnerReferences)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: service + "-cert"}, secret); err != nil {
		t.Fatalf("secret of %s: %v", deployment, err)
	}
	if secret.Type != corev1.SecretTypeTLS || secret.Annotations["olmcahash"] != certs.PEMSHA256(secret.Data["olmCAKey"]) || !ownedBy(secret.OwnerReferences, csv) {
		t.Errorf("secret %s: type %s, annotations %v, owners %+v", secret.Name, secret.Type, secret.Annotations, secret.OwnerReferences)
	}
	verifyServing(t, secret.Data["olmCAKey"], secret, service+"."+ns+".svc")
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: deployment}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Annotations["olmcahash"]; got != secret.Annotations["olmcahash"] {
		t.Errorf("deployment %s olmcahash %q, want the secret's %q", deployment, got, secret.Annotations["olmcahash"])
	}
	mounts := map[string]string{}
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["webhook-cert"] != "/tmp/k8s-webhook-server/serving-certs" || mounts["apiservice-cert"] != "/apiserver.local.config/certificates" {
		t.Errorf("deployment %s mounts %v", deployment, mounts)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if (v.Name == "webhook-cert" || v.Name == "apiservice-cert") && v.Secret.SecretName != secret.Name {
			t.Errorf("volume %s mounts secret %s", v.Name, v.Secret.SecretName)
		}
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	role := &rbacv1.RoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret.Name}, role); err != nil || role.Subjects[0].Name != sa {
		t.Errorf("rolebinding %s: %v %+v", secret.Name, err, role.Subjects)
	}
	crb := &rbacv1.ClusterRoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: service + "-system:auth-delegator"}, crb); err != nil || crb.RoleRef.Name != "system:auth-delegator" {
		t.Errorf("auth delegator binding: %v %+v", err, crb.RoleRef)
	}
	reader := &rbacv1.RoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: service + "-auth-reader"}, reader); err != nil || reader.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Errorf("auth reader binding: %v %+v", err, reader.RoleRef)
	}
}

// verifyServing checks that the serving certificate of secret is valid for host under caPEM.
func verifyServing(t *testing.T, caPEM []byte, secret *corev1.Secret, host string) {
	t.Helper()
	ca, err := certs.ParsePEM(caPEM)
	if err != nil {
		t.Fatalf("ca bundle: %v", err)
	}
	cert, err := certs.ParsePEM(secret.Data["tls.crt"])
	if err != nil {
		t.Fatalf("serving cert: %v", err)
	}
	if err := certs.Verify(ca, cert, host, time.Now()); err != nil {
		t.Errorf("the serving certificate of %s does not verify under the CA bundle for %s: %v", secret.Name, host, err)
	}
	if cert.Subject.Organization[0] != "Red Hat, Inc." || !strings.HasPrefix(ca.Subject.CommonName, "olm-selfsigned-") || cert.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("certificate subject %v, CA %v", cert.Subject, ca.Subject)
	}
}

func ownedBy(refs []metav1.OwnerReference, csv *v1alpha1.ClusterServiceVersion) bool {
	for _, r := range refs {
		if r.Kind == "ClusterServiceVersion" && r.UID == csv.UID {
			return true
		}
	}
	return false
}

// checkWebhooks checks the webhook configurations and conversions of a Succeeded CSV.
func checkWebhooks(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion) {
	t.Helper()
	ctx := context.Background()
	ns := csv.Namespace
	secretOf := func(deployment string) *corev1.Secret {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: deployment + "-service-cert"}, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		host := w.DeploymentName + "-service." + ns + ".svc"
		labels := client.MatchingLabels{"olm.owner": csv.Name, "olm.owner.namespace": ns, "olm.owner.kind": "ClusterServiceVersion", "olm.webhook-description-generate-name": w.GenerateName}
		switch w.Type {
		case v1alpha1.ValidatingAdmissionWebhook, v1alpha1.MutatingAdmissionWebhook:
			var got admissionregistrationv1.WebhookClientConfig
			var name string
			var rules []admissionregistrationv1.RuleWithOperations
			var failure *admissionregistrationv1.FailurePolicyType
			var side *admissionregistrationv1.SideEffectClass
			var timeout *int32
			var reviews []string
			var nsSel *metav1.LabelSelector
			var cfgLabels map[string]string
			var cfgName string
			if w.Type == v1alpha1.ValidatingAdmissionWebhook {
				var list admissionregistrationv1.ValidatingWebhookConfigurationList
				if err := env.Client.List(ctx, &list, labels); err != nil || len(list.Items) != 1 {
					t.Fatalf("validating configurations of %s: %v %d", w.GenerateName, err, len(list.Items))
				}
				h := list.Items[0].Webhooks[0]
				got, name, rules, failure, side, timeout, reviews, nsSel = h.ClientConfig, h.Name, h.Rules, h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.NamespaceSelector
				cfgLabels, cfgName = list.Items[0].Labels, list.Items[0].Name
			} else {
				var list admissionregistrationv1.MutatingWebhookConfigurationList
				if err := env.Client.List(ctx, &list, labels); err != nil || len(list.Items) != 1 {
					t.Fatalf("mutating configurations of %s: %v %d", w.GenerateName, err, len(list.Items))
				}
				h := list.Items[0].Webhooks[0]
				got, name, rules, failure, side, timeout, reviews, nsSel = h.ClientConfig, h.Name, h.Rules, h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.NamespaceSelector
				cfgLabels, cfgName = list.Items[0].Labels, list.Items[0].Name
			}
			if !strings.HasPrefix(cfgName, w.GenerateName+"-") || name != w.GenerateName {
				t.Errorf("configuration %s, webhook %s: want generateName %s-", cfgName, name, w.GenerateName)
			}
			if cfgLabels["olm.managed"] != "true" || cfgLabels["olm.webhook-description-hash"] == "" {
				t.Errorf("configuration %s labels %v", cfgName, cfgLabels)
			}
			wantRules := slices.Clone(w.Rules)
			for i := range wantRules {
				if wantRules[i].Scope == nil {
					wantRules[i].Scope = ptr.To(admissionregistrationv1.AllScopes) // the API server's default
				}
			}
			if diff := cmp.Diff(wantRules, rules); diff != "" {
				t.Errorf("%s rules (-csv +configuration):\n%s", w.GenerateName, diff)
			}
			if *failure != *w.FailurePolicy || *side != *w.SideEffects || !slices.Equal(reviews, w.AdmissionReviewVersions) ||
				(w.TimeoutSeconds != nil && *timeout != *w.TimeoutSeconds) {
				t.Errorf("%s: failurePolicy %s sideEffects %s timeout %v reviews %v, want the CSV's", w.GenerateName, *failure, *side, timeout, reviews)
			}
			if nsSel == nil || len(nsSel.MatchLabels)+len(nsSel.MatchExpressions) != 0 {
				t.Errorf("%s namespaceSelector %+v, want every namespace (a global group)", w.GenerateName, nsSel)
			}
			if got.Service == nil || got.Service.Name != w.DeploymentName+"-service" || got.Service.Namespace != ns || *got.Service.Port != w.ContainerPort ||
				*got.Service.Path != *w.WebhookPath {
				t.Errorf("%s client config %+v", w.GenerateName, got.Service)
			}
			verifyServing(t, got.CABundle, secretOf(w.DeploymentName), host)
		case v1alpha1.ConversionWebhook:
			for _, name := range w.ConversionCRDs {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
					t.Fatal(err)
				}
				c := crd.Spec.Conversion
				if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig.Service.Name != w.DeploymentName+"-service" ||
					*c.Webhook.ClientConfig.Service.Path != *w.WebhookPath || !slices.Equal(c.Webhook.ConversionReviewVersions, w.AdmissionReviewVersions) {
					t.Fatalf("crd %s conversion %+v", name, c)
				}
				verifyServing(t, c.Webhook.ClientConfig.CABundle, secretOf(w.DeploymentName), host)
			}
		}
	}
}

// checkCleanedUp checks that a deleted CSV took its webhook configurations, cluster-wide RBAC
// and conversions with it.
func checkCleanedUp(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion) {
	t.Helper()
	ctx := context.Background()
	owner := client.MatchingLabels{"olm.owner": csv.Name, "olm.owner.namespace": csv.Namespace}
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	var crbs rbacv1.ClusterRoleBindingList
	var readers rbacv1.RoleBindingList
	for _, l := range []client.ObjectList{&validating, &mutating, &crbs} {
		if err := env.Client.List(ctx, l, owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.List(ctx, &readers, owner, client.InNamespace("kube-system")); err != nil {
		t.Fatal(err)
	}
	if n := len(validating.Items) + len(mutating.Items) + len(crbs.Items) + len(readers.Items); n != 0 {
		t.Errorf("%d validating, %d mutating configurations, %d clusterrolebindings and %d kube-system rolebindings left",
			len(validating.Items), len(mutating.Items), len(crbs.Items), len(readers.Items))
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		for _, name := range w.ConversionCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				t.Fatal(err)
			}
			if c := crd.Spec.Conversion; c != nil && c.Strategy != apiextensionsv1.NoneConverter {
				t.Errorf("crd %s keeps conversion %+v", name, c)
			}
		}
	}
	for _, d := range servingDeployments(csv) {
		for _, obj := range []client.Object{&corev1.Service{}, &corev1.Secret{}} {
			name := d + "-service"
			if _, ok := obj.(*corev1.Secret); ok {
				name += "-cert"
			}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: name}, obj); err != nil {
				t.Fatal(err)
			}
			if !ownedBy(obj.GetOwnerReferences(), csv) {
				t.Errorf("%T %s owners %+v: want the deleted CSV, for the garbage collector", obj, name, obj.GetOwnerReferences())
			}
		}
	}
}

// refusedPrefix marks the objects the test webhook refuses.
const refusedPrefix = "refused-"

// refuse is the test webhook's decision: it refuses objects named refused-*.
func refuse(r *admissionv1.AdmissionRequest) string {
	if strings.HasPrefix(r.Name, refusedPrefix) {
		return "the test webhook refuses " + r.Name
	}
	return ""
}

// TestWebhookCalledThroughOLMsChain: cert-manager's validating webhook, configured by the
// CSV controller, is served by a server the test runs on loopback behind the Service OLM
// made (an EndpointSlice to 127.0.0.1) with the certificate of the Secret OLM made. The API
// server calls it through the TLS chain olmsync generated: an Issuer the webhook accepts is
// created, one it refuses is refused with the webhook's words. Then, with certificates valid
// for a short time, the certificate is rotated before expiry (a new CA in the Secret, the
// deployment and the webhook configurations), and the webhook keeps serving through the new
// chain.
func TestWebhookCalledThroughOLMsChain(t *testing.T) {
	env := testenv.Get(t)
	// Certificates valid for 40 s are rotated 30 s before they expire: 10 s after they are made.
	startManager(t, env, olm.Options{Certs: install.CertOptions{ValidFor: 40 * time.Second, MinFresh: 30 * time.Second}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, env, "wh-chain")
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	operatorGroup(t, env, ns, "global")
	dir := bundleDir(t, "cert-manager", "1.14.2")
	installCRDs(t, env, dir)
	csv := loadCSV(t, dir, ns)
	create(t, env, csv)
	first := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	t.Cleanup(func() { deleteAndWait(t, env, first) })
	endpoint := olmtest.ServeBehindService(t, env, ns, "cert-manager-webhook-service", "cert-manager-webhook-service-cert", olmtest.AdmissionHandler(refuse))
	firstCA := webhookCA(t, env, first)

	admits := func(round string) {
		t.Helper()
		before := endpoint.Requests.Load()
		eventually(t, "an accepted issuer created through the webhook ("+round+")", func() error {
			return env.Client.Create(ctx, issuer(ns, "accepted-"+round))
		})
		err := env.Client.Create(ctx, issuer(ns, refusedPrefix+round))
		want := `admission webhook "validate.webhooks.cert-manager.io" denied the request: the test webhook refuses ` + refusedPrefix + round
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("creating a refused issuer: %v, want %q", err, want)
		}
		if endpoint.Requests.Load() < before+2 {
			t.Errorf("the webhook served %d requests, want the API server's calls for both issuers", endpoint.Requests.Load()-before)
		}
	}
	admits("1")

	eventually(t, "a rotated certificate", func() error {
		c := getCSV(t, env, ns, csv.Name)
		if c.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("csv %s", c.Status.Phase)
		}
		if c.Status.CertsLastUpdated.Equal(first.Status.CertsLastUpdated) {
			return errors.New("certsLastUpdated unchanged")
		}
		if bytes.Equal(webhookCA(t, env, c), firstCA) {
			return errors.New("the webhook configuration still trusts the first CA")
		}
		return nil
	})
	rotated := getCSV(t, env, ns, csv.Name)
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cert-manager-webhook-service-cert"}, secret); err != nil {
		t.Fatal(err)
	}
	verifyServing(t, webhookCA(t, env, rotated), secret, "cert-manager-webhook-service."+ns+".svc")
	admits("2")
}

// webhookCA is the caBundle of the CSV's validating webhook configuration.
func webhookCA(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion) []byte {
	t.Helper()
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := env.Client.List(context.Background(), &list, client.MatchingLabels{"olm.owner": csv.Name, "olm.owner.namespace": csv.Namespace}); err != nil || len(list.Items) != 1 {
		t.Fatalf("validating configurations: %v, %d", err, len(list.Items))
	}
	return list.Items[0].Webhooks[0].ClientConfig.CABundle
}

func issuer(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"selfSigned": map[string]any{}},
	}}
	return u
}

// widgetGroup is the API group the test's aggregated API server serves.
const widgetGroup, widgetVersion = "widgets.olmsync.test", "v1alpha1"

// widgetCSV owns an API service of widgetGroup served by its deployment widget-server.
func widgetCSV(ns string) *v1alpha1.ClusterServiceVersion {
	labels := map[string]string{"app": "widget-server"}
	c := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets.v1.0.0"}}
	c.Spec.DisplayName = "Widgets"
	c.Spec.InstallModes = []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true}}
	c.Spec.InstallStrategy.StrategyName = v1alpha1.InstallStrategyNameDeployment
	c.Spec.InstallStrategy.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{{
		ServiceAccountName: "widget-server",
		Rules:              []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}}
	c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs = []v1alpha1.StrategyDeploymentSpec{{
		Name: "widget-server",
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{ServiceAccountName: "widget-server", Containers: []corev1.Container{{Name: "server", Image: "example.com/widget-server:1"}}},
			},
		},
	}}
	c.Spec.APIServiceDefinitions.Owned = []v1alpha1.APIServiceDescription{{
		Name: "widgets", Group: widgetGroup, Version: widgetVersion, Kind: "Widget", DisplayName: "Widget",
		DeploymentName: "widget-server", ContainerPort: 5443,
	}}
	return c
}

// widgetDiscovery serves the discovery of widgetGroup as an aggregated API server does.
func widgetDiscovery() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gv := widgetGroup + "/" + widgetVersion
		var body any
		switch r.URL.Path {
		case "/apis/" + gv:
			body = &metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: gv,
				APIResources: []metav1.APIResource{{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", Verbs: metav1.Verbs{"get", "list"}}},
			}
		case "/apis":
			body = &metav1.APIGroupList{
				TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
				Groups: []metav1.APIGroup{{
					Name:             widgetGroup,
					Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: gv, Version: widgetVersion}},
					PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: gv, Version: widgetVersion},
				}},
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	})
}

// TestOwnedAPIService: a CSV that owns an API service gets OLM's APIService for it (priorities,
// owner labels, the Service in front of its deployment, a caBundle that verifies the serving
// certificate) and waits in Installing ("apiServices not installed") until the API server's
// availability check passes: the test serves the API on this host behind the Service, and the
// aggregator reaches it through the TLS chain olmsync made. Then the CSV succeeds, its kind
// served by discovery. Deleting the CSV deletes the APIService.
func TestOwnedAPIService(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{RetryInterval: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, env, "apisvc")
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	operatorGroup(t, env, ns, "global")
	csv := widgetCSV(ns)
	create(t, env, csv)
	t.Cleanup(func() { deleteAndWait(t, env, csv) })
	waiting := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	eventually(t, "installing: apiServices not installed", func() error {
		waiting = getCSV(t, env, ns, csv.Name)
		if waiting.Status.Message != "apiServices not installed" {
			return fmt.Errorf("message %q", waiting.Status.Message)
		}
		return nil
	})
	name := widgetVersion + "." + widgetGroup
	apiService := &unstructured.Unstructured{}
	apiService.SetGroupVersionKind(install.APIServiceGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, apiService); err != nil {
		t.Fatal(err)
	}
	spec, _ := apiService.Object["spec"].(map[string]any)
	want := map[string]any{
		"group": widgetGroup, "version": widgetVersion, "groupPriorityMinimum": int64(2000), "versionPriority": int64(15),
		"service": map[string]any{"namespace": ns, "name": "widget-server-service", "port": int64(5443)},
	}
	for k, v := range want {
		if diff := cmp.Diff(v, spec[k]); diff != "" {
			t.Errorf("apiservice spec.%s (-want +got):\n%s", k, diff)
		}
	}
	if l := apiService.GetLabels(); l["olm.owner"] != csv.Name || l["olm.owner.namespace"] != ns || l["olm.managed"] != "true" {
		t.Errorf("apiservice labels %v", l)
	}
	caBundle, err := install.APIServiceCABundle(apiService)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget-server-service-cert"}, secret); err != nil {
		t.Fatal(err)
	}
	verifyServing(t, caBundle, secret, "widget-server-service."+ns+".svc")

	endpoint := olmtest.ServeBehindService(t, env, ns, "widget-server-service", "widget-server-service-cert", widgetDiscovery())
	got := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	if endpoint.Requests.Load() == 0 {
		t.Error("the API server never called the API service")
	}
	found := false
	for _, r := range got.Status.RequirementStatus {
		if r.Kind == "APIService" && r.Name == name {
			found = r.Status == "DeploymentFound"
		}
	}
	if !found {
		t.Errorf("requirement status %+v: want the APIService with DeploymentFound", got.Status.RequirementStatus)
	}

	deleteAndWait(t, env, got)
	err = env.Client.Get(ctx, client.ObjectKey{Name: name}, apiService)
	if !apierrors.IsNotFound(err) {
		t.Errorf("the apiservice after the csv's deletion: %v", err)
	}
	checkCleanedUp(t, env, got)
}

// hookCSV is a CSV of an operator serving a validating webhook (failure policy Ignore) from
// its deployment hook-server, replacing replaces.
func hookCSV(ns, name, replaces string) *v1alpha1.ClusterServiceVersion {
	c := widgetCSV(ns)
	c.Name, c.Spec.Replaces = name, replaces
	c.Spec.APIServiceDefinitions.Owned = nil
	d := &c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0]
	d.Name = "hook-server"
	d.Spec.Template.Spec.Containers[0].Image = "example.com/hook-server:" + name
	c.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{{
		GenerateName: "vhooks.olmsync.test", Type: v1alpha1.ValidatingAdmissionWebhook, DeploymentName: "hook-server",
		ContainerPort: 443, FailurePolicy: ptr.To(admissionregistrationv1.Ignore), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}, WebhookPath: ptr.To("/validate"),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"hooks.olmsync.test"}, APIVersions: []string{"v1"}, Resources: []string{"hooks"}},
		}},
	}}
	return c
}

// TestUpgradeKeepsTheCertificate: an operator serving a webhook is upgraded by a CSV that
// replaces it. The new CSV reuses the serving certificate (not due: the same CA in its
// Secret, its webhook configuration and the deployment) and owns it from then on, so it
// outlives the old CSV; the old CSV's webhook configuration goes with it, the new one's
// stays, and the cluster-wide bindings, relabelled for the new CSV, stay too.
func TestUpgradeKeepsTheCertificate(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, env, "hook-upgrade")
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	operatorGroup(t, env, ns, "global")
	v1 := hookCSV(ns, "hooks.v1.0.0", "")
	create(t, env, v1)
	old := waitPhase(t, env, ns, v1.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	secretKey := client.ObjectKey{Namespace: ns, Name: "hook-server-service-cert"}
	before := &corev1.Secret{}
	if err := env.Client.Get(ctx, secretKey, before); err != nil {
		t.Fatal(err)
	}

	v2 := hookCSV(ns, "hooks.v1.1.0", v1.Name)
	create(t, env, v2)
	upgraded := waitPhase(t, env, ns, v2.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	eventually(t, "the old csv deleted", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), &v1alpha1.ClusterServiceVersion{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return errors.New("still there")
	})
	t.Cleanup(func() { deleteAndWait(t, env, upgraded) })
	after := &corev1.Secret{}
	if err := env.Client.Get(ctx, secretKey, after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after.Data["olmCAKey"], before.Data["olmCAKey"]) || after.Annotations["olmcahash"] != before.Annotations["olmcahash"] {
		t.Error("the upgrade made a new CA: the certificate was not due")
	}
	if !ownedBy(after.OwnerReferences, upgraded) || ownedBy(after.OwnerReferences, old) {
		t.Errorf("secret owners %+v, want the new csv alone", after.OwnerReferences)
	}
	if ca := webhookCA(t, env, upgraded); !bytes.Equal(ca, before.Data["olmCAKey"]) {
		t.Error("the new csv's webhook configuration does not trust the CA of the secret")
	}
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := env.Client.List(ctx, &list, client.MatchingLabels{"olm.owner": old.Name, "olm.owner.namespace": ns}); err != nil || len(list.Items) != 0 {
		t.Errorf("webhook configurations of the old csv: %d (%v)", len(list.Items), err)
	}
	crb := &rbacv1.ClusterRoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "hook-server-service-system:auth-delegator"}, crb); err != nil || crb.Labels["olm.owner"] != upgraded.Name {
		t.Errorf("auth delegator binding: %v, labels %v", err, crb.Labels)
	}
	reader := &rbacv1.RoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "hook-server-service-auth-reader"}, reader); err != nil || reader.Labels["olm.owner"] != upgraded.Name {
		t.Errorf("auth reader binding: %v, labels %v", err, reader.Labels)
	}
}

// TestWebhookScopedToTheGroup: the admission webhook of an operator installed for its own
// namespace is scoped as OLM scopes it: its namespaceSelector selects the label
// olm.operatorgroup.uid/<group uid>, which the OperatorGroup controller puts on the group's
// target namespaces (and only on them).
func TestWebhookScopedToTheGroup(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, env, "hook-scoped")
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	og := operatorGroup(t, env, ns, "own", ns)
	csv := hookCSV(ns, "hooks.v1.0.0", "")
	csv.Spec.InstallModes = []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true}}
	create(t, env, csv)
	got := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	t.Cleanup(func() { deleteAndWait(t, env, got) })
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := env.Client.List(ctx, &list, client.MatchingLabels{"olm.owner": csv.Name, "olm.owner.namespace": ns}); err != nil || len(list.Items) != 1 {
		t.Fatalf("validating configurations: %v, %d", err, len(list.Items))
	}
	key := "olm.operatorgroup.uid/" + string(og.UID)
	want := &metav1.LabelSelector{MatchLabels: map[string]string{key: ""}}
	if diff := cmp.Diff(want, list.Items[0].Webhooks[0].NamespaceSelector); diff != "" {
		t.Errorf("namespaceSelector (-want +got):\n%s", diff)
	}
	eventually(t, "the target namespace labelled for the group", func() error {
		n := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
			return err
		}
		if _, ok := n.Labels[key]; !ok {
			return fmt.Errorf("labels %v", n.Labels)
		}
		return nil
	})
}
