package install

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// webhookCSV is strategyCSV with a validating and a mutating webhook and an owned API
// service, all served by etcd-operator.
func webhookCSV() *v1alpha1.ClusterServiceVersion {
	c := strategyCSV()
	c.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{
		{
			GenerateName: "vetcd.kb.io", Type: v1alpha1.ValidatingAdmissionWebhook, DeploymentName: "etcd-operator",
			ContainerPort: 443, TargetPort: ptr.To(intstr.FromString("https")), WebhookPath: ptr.To("/validate"),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"etcd.database.coreos.com"}, APIVersions: []string{"v1beta2"}, Resources: []string{"etcdclusters"}},
			}},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			SideEffects:    ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](7),
			AdmissionReviewVersions: []string{"v1"},
		},
		{
			GenerateName: "metcd.kb.io", Type: v1alpha1.MutatingAdmissionWebhook, DeploymentName: "etcd-operator",
			ContainerPort: 443, TargetPort: ptr.To(intstr.FromString("https")),
			ReinvocationPolicy: ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			SideEffects:        ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		},
	}
	c.Spec.APIServiceDefinitions.Owned = []v1alpha1.APIServiceDescription{{Name: "widgets", Group: "etcd.example.com", Version: "v1", Kind: "Widget", DeploymentName: "etcd-operator"}}
	return c
}

// TestWebhookHash: OLM's olm.webhook-description-hash is base62(SHA-224) of the entry's JSON
// with encoding/json's newline; the literal was computed with another implementation (Python).
func TestWebhookHash(t *testing.T) {
	w := v1alpha1.WebhookDescription{
		GenerateName: "vetcd.kb.io", Type: v1alpha1.ValidatingAdmissionWebhook, DeploymentName: "etcd-operator",
		ContainerPort: 443, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
	}
	got, err := WebhookHash(w)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2MPuvoV12ZPXH9LE6OkihoAwIoEiKevLuvCfKW"; got != want {
		t.Errorf("WebhookHash = %s, want %s", got, want)
	}
}

func TestWebhookConfigurations(t *testing.T) {
	c := webhookCSV()
	ca := []byte("ca")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"olm.operatorgroup.uid/u1": ""}}
	v, err := ValidatingWebhookConfiguration(c, c.Spec.WebhookDefinitions[0], sel, ca)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := WebhookHash(c.Spec.WebhookDefinitions[0])
	wantLabels := map[string]string{
		"olm.owner": "etcd.v0.9.4", "olm.owner.namespace": "operators", "olm.owner.kind": "ClusterServiceVersion", "olm.managed": "true",
		"olm.webhook-description-generate-name": "vetcd.kb.io", "olm.webhook-description-hash": hash,
	}
	if diff := cmp.Diff(wantLabels, v.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	w := c.Spec.WebhookDefinitions[0]
	want := admissionregistrationv1.ValidatingWebhook{
		Name: "vetcd.kb.io", Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, NamespaceSelector: sel,
		ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: []string{"v1"},
		ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: "operators", Name: "etcd-operator-service", Path: ptr.To("/validate"), Port: ptr.To[int32](443)},
			CABundle: ca,
		},
	}
	if v.GenerateName != "vetcd.kb.io-" || len(v.Webhooks) != 1 {
		t.Fatalf("configuration %s with %d webhooks", v.GenerateName, len(v.Webhooks))
	}
	if diff := cmp.Diff(want, v.Webhooks[0]); diff != "" {
		t.Errorf("validating webhook (-want +got):\n%s", diff)
	}
	m, err := MutatingWebhookConfiguration(c, c.Spec.WebhookDefinitions[1], nil, ca)
	if err != nil {
		t.Fatal(err)
	}
	if h := m.Webhooks[0]; m.GenerateName != "metcd.kb.io-" || *h.ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy ||
		h.NamespaceSelector != nil || h.ClientConfig.Service.Path != nil {
		t.Errorf("mutating configuration %s %+v", m.GenerateName, h)
	}
	// OLM names the Service of a webhook after the deployment with its dots made dashes.
	if got := WebhookServiceName(v1alpha1.WebhookDescription{DeploymentName: "a.b.c"}); got != "a-b-c-service" {
		t.Errorf("WebhookServiceName = %s", got)
	}
}

func TestNamespaceSelector(t *testing.T) {
	og := func(targets []string, sel *metav1.LabelSelector) *operatorsv1.OperatorGroup {
		g := &operatorsv1.OperatorGroup{}
		g.UID = "1234"
		g.Spec.TargetNamespaces, g.Spec.Selector = targets, sel
		return g
	}
	byLabel := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	for _, tt := range []struct {
		name string
		og   *operatorsv1.OperatorGroup
		want *metav1.LabelSelector
	}{
		{"targetNamespaces: the group's namespace label", og([]string{"a", "b"}, byLabel), &metav1.LabelSelector{MatchLabels: map[string]string{"olm.operatorgroup.uid/1234": ""}}},
		{"a selector: the selector", og(nil, byLabel), byLabel},
		{"global: every namespace", og(nil, nil), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NamespaceSelector(tt.og)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateWebhooks(t *testing.T) {
	rule := func(groups, resources []string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{APIGroups: groups, Resources: resources}}}
	}
	for _, tt := range []struct {
		name     string
		webhooks []v1alpha1.WebhookDescription
		want     string
	}{
		{"valid", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"x.io"}, []string{"*"})}, {GenerateName: "b"}}, ""},
		{"repeated", []v1alpha1.WebhookDescription{{GenerateName: "a"}, {GenerateName: "a"}}, "CSV contains repeated WebhookDescription name"},
		{"all groups", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"*"}, nil)}}, "webhook rules cannot include all groups"},
		{"OLM's group", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"operators.coreos.com"}, nil)}}, "webhook rules cannot include the OLM group"},
		{"webhook configurations", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"admissionregistration.k8s.io"}, []string{"ValidatingWebhookConfiguration"})}},
			"webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources"},
		{"every admission resource", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"admissionregistration.k8s.io"}, []string{"*"})}},
			"webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources"},
		{"other admission resources", []v1alpha1.WebhookDescription{{GenerateName: "a", Rules: rule([]string{"admissionregistration.k8s.io"}, []string{"validatingadmissionpolicies"})}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := strategyCSV()
			c.Spec.WebhookDefinitions = tt.webhooks
			got := ""
			if err := ValidateWebhooks(c); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("ValidateWebhooks = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConversion(t *testing.T) {
	conv := v1alpha1.WebhookDescription{GenerateName: "c", Type: v1alpha1.ConversionWebhook, DeploymentName: "etcd-operator", ContainerPort: 443,
		ConversionCRDs: []string{"etcdclusters.etcd.database.coreos.com"}, AdmissionReviewVersions: []string{"v1", "v1beta1"}}
	csv := func(modes []v1alpha1.InstallMode, w v1alpha1.WebhookDescription) *v1alpha1.ClusterServiceVersion {
		c := strategyCSV()
		c.Spec.InstallModes = modes
		c.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com"}}
		c.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{w}
		return c
	}
	all := []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: false}, {Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true}}
	noCRD := conv
	noCRD.ConversionCRDs = nil
	notOwned := conv
	notOwned.ConversionCRDs = []string{"other.example.com"}
	for _, tt := range []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		want string
	}{
		{"AllNamespaces only", csv(all, conv), ""},
		{"no install modes", csv(nil, conv), ""},
		{"OwnNamespace too", csv([]v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true}, {Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true}}, conv),
			"unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces"},
		{"AllNamespaces unsupported", csv([]v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: false}}, conv),
			"unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces"},
		{"no CRD", csv(all, noCRD), "unable to manager conversion webhook: conversion webhook must have at least one CRD specified"},
		{"a CRD it does not own", csv(all, notOwned), "csv etcd.v0.9.4 does not own CRD other.example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := ConversionProblem(tt.csv); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("ConversionProblem = %q, want %q", got, tt.want)
			}
		})
	}
	c := csv(all, conv)
	got := Conversion(c, conv, []byte("ca"))
	want := &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service:  &apiextensionsv1.ServiceReference{Namespace: "operators", Name: "etcd-operator-service", Path: ptr.To("/"), Port: ptr.To[int32](443)},
				CABundle: []byte("ca"),
			},
			ConversionReviewVersions: []string{"v1", "v1beta1"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Conversion (-want +got):\n%s", diff)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "etcdclusters.etcd.database.coreos.com"
	crd.Spec.PreserveUnknownFields = true
	if err := CheckConversionCRD(c, crd); err == nil || err.Error() != "crd.Spec.PreserveUnknownFields must be false to let API Server call webhook to do the conversion" {
		t.Errorf("CheckConversionCRD = %v", err)
	}
	crd.Spec.Conversion = got
	if !ConversionInstalled(crd) {
		t.Error("ConversionInstalled: false for the conversion written")
	}
}

func TestRemovedWebhooks(t *testing.T) {
	c := webhookCSV()
	owner := func(gen string) map[string]string {
		l := OwnerSelector(c)
		if gen != "" {
			l[WebhookDescLabel] = gen
		}
		return l
	}
	got, err := RemovedWebhooks(c, "ValidatingWebhookConfiguration", map[string]map[string]string{
		"vetcd.kb.io-abc": owner("vetcd.kb.io"),
		"old.kb.io-def":   owner("old.kb.io"),
		"another":         {"olm.owner": "other", "olm.webhook-description-generate-name": "old.kb.io"},
	})
	if err != nil || len(got) != 1 || got[0] != "old.kb.io-def" {
		t.Errorf("RemovedWebhooks = %v, %v; want old.kb.io-def", got, err)
	}
	_, err = RemovedWebhooks(c, "ValidatingWebhookConfiguration", map[string]map[string]string{"x": owner("")})
	if err == nil || err.Error() != "validatingWebhookConfiguration x does not have WebhookDesc key" {
		t.Errorf("RemovedWebhooks without the entry label: %v", err)
	}
}

// TestCertNamesAndSettings holds OLM's names, settings and annotations of its certificate
// code (pkg/controller/install/certresources.go).
func TestCertNamesAndSettings(t *testing.T) {
	for got, want := range map[string]string{
		ServiceName("d"):                      "d-service",
		SecretName("d-service"):               "d-service-cert",
		AuthDelegatorBindingName("d-service"): "d-service-system:auth-delegator",
		AuthReaderBindingName("d-service"):    "d-service-auth-reader",
		CAPEMKey:                              "olmCAKey",
		CAHashAnnotation:                      "olmcahash",
		CertOrganization:                      "Red Hat, Inc.",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if got := strings.Join(HostnamesForService("s", "n"), " "); got != "s.n s.n.svc s.n.svc.cluster.local" {
		t.Errorf("hostnames of service s in n: %q", got)
	}
	if DefaultCertValidFor != 730*24*time.Hour || DefaultCertMinFresh != 24*time.Hour {
		t.Errorf("validity %s, rotated %s before expiry", DefaultCertValidFor, DefaultCertMinFresh)
	}
	var o CertOptions
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := o.RotatesAt(o.Expiration(start)); !got.Equal(time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("certificates made %s rotate at %s", start, got)
	}
}

func TestCertDeployments(t *testing.T) {
	c := webhookCSV()
	c.Spec.APIServiceDefinitions.Owned[0].ContainerPort = 0
	got := CertDeployments(c)
	want := []CertDeployment{{Name: "etcd-operator", Ports: []corev1.ServicePort{
		{Name: "443", Port: 443, TargetPort: intstr.FromInt32(443)},
		{Name: "443", Port: 443, TargetPort: intstr.FromString("https")},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CertDeployments (-want +got):\n%s", diff)
	}
	if len(CertDeployments(strategyCSV())) != 0 || HasCertResources(strategyCSV()) || !HasCertResources(c) {
		t.Error("a CSV without webhooks or API services has cert deployments")
	}
}

func TestMountCert(t *testing.T) {
	spec := appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "webhook-cert"}},
		Containers: []corev1.Container{
			{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: "/tmp/k8s-webhook-server/serving-certs"}}},
			{Name: "b"},
		},
	}}}
	MountCert(&spec, "d-service-cert", "h1")
	pod := spec.Template.Spec
	if pod.ServiceAccountName != "default" || spec.Template.Annotations["olmcahash"] != "h1" {
		t.Errorf("service account %q, annotations %v", pod.ServiceAccountName, spec.Template.Annotations)
	}
	if len(pod.Volumes) != 2 || pod.Volumes[0].Secret.SecretName != "d-service-cert" || pod.Volumes[0].Secret.Items[0].Path != "tls.crt" ||
		pod.Volumes[1].Name != "apiservice-cert" || pod.Volumes[1].Secret.Items[0].Path != "apiserver.crt" {
		t.Errorf("volumes %+v", pod.Volumes)
	}
	// The container's own mount at OLM's webhook path is replaced; the other is added.
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: "webhook-cert", MountPath: "/tmp/k8s-webhook-server/serving-certs"}, {Name: "apiservice-cert", MountPath: "/apiserver.local.config/certificates"}},
		pod.Containers[0].VolumeMounts); diff != "" {
		t.Errorf("container a mounts (-want +got):\n%s", diff)
	}
	if len(pod.Containers[1].VolumeMounts) != 2 {
		t.Errorf("container b mounts %+v", pod.Containers[1].VolumeMounts)
	}
}

func TestShouldRotate(t *testing.T) {
	start := time.Now().Truncate(time.Second)
	opts := CertOptions{ValidFor: time.Hour, MinFresh: 10 * time.Minute}
	ca, err := NewCA(start, opts)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewServingCert(ca, "d-service", "ns", start)
	if err != nil {
		t.Fatal(err)
	}
	secret := CertSecret(strategyCSV(), "d-service", sc)
	hosts := HostnamesForService("d-service", "ns")
	if secret.Type != corev1.SecretTypeTLS || secret.Name != "d-service-cert" || secret.Annotations["olmcahash"] != sc.CAHash() || secret.Labels["olm.managed"] != "true" {
		t.Errorf("secret %+v", secret.ObjectMeta)
	}
	if got, want := RotationTime(secret, opts), start.Add(50*time.Minute); !got.Equal(want) {
		t.Errorf("RotationTime = %s, want %s (ten minutes before the hour it is valid)", got, want)
	}
	for _, tt := range []struct {
		name  string
		at    time.Time
		hosts []string
		edit  func(*corev1.Secret)
		want  bool
	}{
		{name: "fresh", at: start.Add(time.Minute), hosts: hosts},
		{name: "in the rotation window", at: start.Add(51 * time.Minute), hosts: hosts, want: true},
		{name: "expired", at: start.Add(2 * time.Hour), hosts: hosts, want: true},
		{name: "another service's names", at: start.Add(time.Minute), hosts: HostnamesForService("e-service", "ns"), want: true},
		{name: "no CA", at: start.Add(time.Minute), hosts: hosts, edit: func(s *corev1.Secret) { delete(s.Data, "olmCAKey") }, want: true},
		{name: "no certificate", at: start.Add(time.Minute), hosts: hosts, edit: func(s *corev1.Secret) { delete(s.Data, "tls.crt") }, want: true},
		{name: "a CA that does not parse", at: start.Add(time.Minute), hosts: hosts, edit: func(s *corev1.Secret) { s.Data["olmCAKey"] = []byte("x") }, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := secret.DeepCopy()
			if tt.edit != nil {
				tt.edit(s)
			}
			if got := ShouldRotate(s, tt.hosts, tt.at, opts); got != tt.want {
				t.Errorf("ShouldRotate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeploymentsMountTheirCertificate(t *testing.T) {
	c := webhookCSV()
	plain, err := Deployments(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{"etcd-operator": "h1"}
	mounted, err := Deployments(c, hashes)
	if err != nil {
		t.Fatal(err)
	}
	d := mounted[0]
	if d.Spec.Template.Annotations["olmcahash"] != "h1" || len(d.Spec.Template.Spec.Volumes) != 2 ||
		d.Labels[DeploymentSpecHashLabel] == plain[0].Labels[DeploymentSpecHashLabel] {
		t.Errorf("deployment %+v", d.ObjectMeta)
	}
	available := func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}
	}
	available(&d)
	if err := Check(c, []appsv1.Deployment{d}, hashes); err != nil {
		t.Errorf("Check of the deployment as written: %v", err)
	}
	// A new CA means a new deployment: the spec hash differs.
	if err := Check(c, []appsv1.Deployment{d}, map[string]string{"etcd-operator": "h2"}); err == nil || err.Reason != ReasonDeploymentUpdated {
		t.Errorf("Check with another CA: %v, want DeploymentUpdated", err)
	}
}

func TestCertRBAC(t *testing.T) {
	r := CertRBACFor(strategyCSV(), "d-service", "")
	if r.ServiceAccountName != "default" || r.Role.Name != "d-service-cert" || r.Role.Rules[0].ResourceNames[0] != "d-service-cert" ||
		r.RoleBinding.RoleRef.Name != "d-service-cert" || r.AuthDelegator.Name != "d-service-system:auth-delegator" ||
		r.AuthDelegator.RoleRef.Name != "system:auth-delegator" || r.AuthDelegator.Labels["olm.owner"] != "etcd.v0.9.4" ||
		r.AuthReaderBinding.Namespace != "kube-system" || r.AuthReaderBinding.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Errorf("cert RBAC %+v", r)
	}
}

func TestAPIService(t *testing.T) {
	c := webhookCSV()
	d := c.Spec.APIServiceDefinitions.Owned[0]
	u := APIService(c, d, nil, map[string]string{"from": "subscription"}, []byte("ca"))
	if u.GetName() != "v1.etcd.example.com" || u.GetLabels()["olm.owner"] != c.Name || u.GetLabels()["olm.managed"] != "true" || u.GetAnnotations()["from"] != "subscription" {
		t.Errorf("apiservice %s labels %v annotations %v", u.GetName(), u.GetLabels(), u.GetAnnotations())
	}
	spec := u.Object["spec"].(map[string]any)
	if spec["groupPriorityMinimum"] != int64(2000) || spec["versionPriority"] != int64(15) || spec["caBundle"] != base64.StdEncoding.EncodeToString([]byte("ca")) {
		t.Errorf("spec %v", spec)
	}
	if ns, name := APIServiceService(u); ns != "operators" || name != "etcd-operator-service" {
		t.Errorf("service %s/%s", ns, name)
	}
	if ca, err := APIServiceCABundle(u); err != nil || string(ca) != "ca" {
		t.Errorf("caBundle %q %v", ca, err)
	}
	previous := c.DeepCopy()
	previous.Name = "etcd.v0.9.2"
	c.Spec.Replaces = previous.Name
	other := c.DeepCopy()
	other.Name = "other.v1"
	for _, tt := range []struct {
		name            string
		labels          map[string]string
		replaced, owner *v1alpha1.ClusterServiceVersion
		ownerPhase      v1alpha1.ClusterServiceVersionPhase
		want            bool
	}{
		{name: "no owner labels", labels: map[string]string{}, want: false},
		{name: "its own", labels: OwnerSelector(c), want: true},
		{name: "the CSV it replaces", labels: OwnerSelector(previous), replaced: previous, want: true},
		{name: "the CSV it replaces, gone", labels: OwnerSelector(previous), want: false},
		{name: "another CSV", labels: OwnerSelector(other), owner: other, ownerPhase: v1alpha1.CSVPhaseSucceeded, want: false},
		{name: "another CSV being replaced", labels: OwnerSelector(other), owner: other, ownerPhase: v1alpha1.CSVPhaseReplacing, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.owner != nil {
				tt.owner.Status.Phase = tt.ownerPhase
			}
			if got := APIServiceAdoptable(tt.labels, c, tt.replaced, tt.owner); got != tt.want {
				t.Errorf("APIServiceAdoptable = %v, want %v", got, tt.want)
			}
		})
	}
}
