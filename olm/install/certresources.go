package install

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/certs"
	"github.com/olmsync/olmsync/olm/groups"
)

// The certificate settings and names of OLM's certificate code
// (pkg/controller/install/certresources.go), verbatim.
const (
	// DefaultCertValidFor is how long a CA and a serving certificate OLM makes are valid:
	// two years.
	DefaultCertValidFor = 730 * 24 * time.Hour
	// DefaultCertMinFresh is how long before expiry a certificate is rotated: one day.
	DefaultCertMinFresh = 24 * time.Hour
	// CAPEMKey is the key of the CA's PEM in a serving certificate's Secret.
	CAPEMKey = "olmCAKey"
	// CAHashAnnotation carries the hex SHA-256 of the CA's PEM, on the Secret and on the pod
	// template of the deployment that mounts it (a new CA rolls the pods).
	CAHashAnnotation = "olmcahash"
	// CertOrganization is the organization of every certificate OLM makes.
	CertOrganization = "Red Hat, Inc."
	// KubeSystemNamespace holds the RoleBinding to extension-apiserver-authentication-reader.
	KubeSystemNamespace = "kube-system"

	// The volumes OLM mounts the serving certificate with: where OLM's aggregated API servers
	// expect it, and where operator-sdk and kubebuilder webhook servers do.
	APIServiceCertVolume    = "apiservice-cert"
	APIServiceCertMountPath = "/apiserver.local.config/certificates"
	WebhookCertVolume       = "webhook-cert"
	WebhookCertMountPath    = "/tmp/k8s-webhook-server/serving-certs"

	// defaultServicePort is the Service port of a webhook or API service without a
	// containerPort.
	defaultServicePort = 443
	// The roles the serving deployment's service account is bound to.
	authDelegatorClusterRole = "system:auth-delegator"
	authReaderRole           = "extension-apiserver-authentication-reader"
)

// CertOptions say how long certificates are valid and when they are rotated; the zero value
// is OLM's (DefaultCertValidFor, DefaultCertMinFresh). A test shortens them to see a rotation.
type CertOptions struct {
	ValidFor time.Duration
	MinFresh time.Duration
}

func (o CertOptions) validFor() time.Duration {
	if o.ValidFor > 0 {
		return o.ValidFor
	}
	return DefaultCertValidFor
}

func (o CertOptions) minFresh() time.Duration {
	if o.MinFresh > 0 {
		return o.MinFresh
	}
	return DefaultCertMinFresh
}

// Expiration is when certificates made at now expire (OLM's CalculateCertExpiration).
func (o CertOptions) Expiration(now time.Time) time.Time { return now.Add(o.validFor()) }

// RotatesAt is when a certificate that expires at expiry is rotated (OLM's
// CalculateCertRotatesAt).
func (o CertOptions) RotatesAt(expiry time.Time) time.Time { return expiry.Add(-o.minFresh()) }

// ServiceName is the name of the Service OLM puts in front of a deployment that serves
// webhooks or an API service.
func ServiceName(deployment string) string { return deployment + "-service" }

// SecretName is the name of the serving certificate's Secret of a Service, and of the Role
// and RoleBinding that let the deployment read it.
func SecretName(service string) string { return service + "-cert" }

// AuthDelegatorBindingName names the ClusterRoleBinding of the deployment's service account
// to system:auth-delegator.
func AuthDelegatorBindingName(service string) string { return service + "-system:auth-delegator" }

// AuthReaderBindingName names the RoleBinding, in kube-system, of the deployment's service
// account to extension-apiserver-authentication-reader.
func AuthReaderBindingName(service string) string { return service + "-auth-reader" }

// HostnamesForService are the names a serving certificate is made for.
func HostnamesForService(service, namespace string) []string {
	return []string{
		fmt.Sprintf("%s.%s", service, namespace),
		fmt.Sprintf("%s.%s.svc", service, namespace),
		fmt.Sprintf("%s.%s.svc.cluster.local", service, namespace),
	}
}

// HasCertResources reports whether the CSV owns API services or declares webhooks: OLM then
// makes certificates for it.
func HasCertResources(csv *v1alpha1.ClusterServiceVersion) bool {
	return len(csv.Spec.APIServiceDefinitions.Owned) > 0 || len(csv.Spec.WebhookDefinitions) > 0
}

// CertDeployment is a deployment of the install strategy that serves webhooks or an API
// service, with the ports of the Service OLM puts in front of it.
type CertDeployment struct {
	Name  string
	Ports []corev1.ServicePort
}

// CertDeployments are the deployments of the strategy that serve a webhook or an owned API
// service, in the strategy's order. The Service ports come from the API services first, then
// the webhooks (OLM's order), each port once: named by the containerPort (443 when unset),
// targeting the containerPort or the webhook's targetPort.
func CertDeployments(csv *v1alpha1.ClusterServiceVersion) []CertDeployment {
	ports := map[string][]corev1.ServicePort{}
	add := func(deployment string, p corev1.ServicePort) {
		for _, have := range ports[deployment] {
			if have == p {
				return
			}
		}
		ports[deployment] = append(ports[deployment], p)
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Owned {
		port := containerPort(d.ContainerPort)
		add(d.DeploymentName, corev1.ServicePort{Name: strconv.Itoa(int(port)), Port: port, TargetPort: intstr.FromInt32(port)})
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		port := containerPort(w.ContainerPort)
		target := intstr.FromInt32(port)
		if w.TargetPort != nil {
			target = *w.TargetPort
		}
		add(w.DeploymentName, corev1.ServicePort{Name: strconv.Itoa(int(port)), Port: port, TargetPort: target})
	}
	var out []CertDeployment
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if p, ok := ports[s.Name]; ok {
			out = append(out, CertDeployment{Name: s.Name, Ports: p})
		}
	}
	return out
}

func containerPort(p int32) int32 {
	if p > 0 {
		return p
	}
	return defaultServicePort
}

// CertService is the Service in front of a serving deployment: its ports, selecting the
// deployment's pods by the deployment's matchLabels, olm.managed, owned by the CSV.
func CertService(csv *v1alpha1.ClusterServiceVersion, d CertDeployment, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            ServiceName(d.Name),
			Namespace:       csv.Namespace,
			Labels:          managedLabels(),
			OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
		},
		Spec: corev1.ServiceSpec{Ports: d.Ports, Selector: maps.Clone(selector)},
	}
}

// ServingCert is a CA and the serving certificate it signed, PEM-encoded.
type ServingCert struct {
	CertPEM, KeyPEM, CAPEM []byte
	// Expiry is when both expire.
	Expiry time.Time
}

// CAHash is the olmcahash of the CA.
func (c ServingCert) CAHash() string { return certs.PEMSHA256(c.CAPEM) }

// NewCA makes the CA of one install (OLM makes one per install of a CSV, and serving
// certificates for each of its deployments with it).
func NewCA(now time.Time, opts CertOptions) (*certs.KeyPair, error) {
	ca, err := certs.NewCA(now, opts.Expiration(now), CertOrganization)
	if err != nil {
		return nil, fmt.Errorf("generate CA: %w", err)
	}
	return ca, nil
}

// NewServingCert signs a serving certificate for a Service's hostnames with ca, valid as
// long as ca.
func NewServingCert(ca *certs.KeyPair, service, namespace string, now time.Time) (ServingCert, error) {
	hosts := HostnamesForService(service, namespace)
	pair, err := certs.NewServing(ca, now, ca.Cert.NotAfter, CertOrganization, hosts)
	if err != nil {
		return ServingCert{}, fmt.Errorf("could not generate signed certs for hosts %v: %w", hosts, err)
	}
	certPEM, keyPEM, err := pair.PEM()
	if err != nil {
		return ServingCert{}, err
	}
	caPEM, _, err := ca.PEM()
	if err != nil {
		return ServingCert{}, err
	}
	return ServingCert{CertPEM: certPEM, KeyPEM: keyPEM, CAPEM: caPEM, Expiry: ca.Cert.NotAfter}, nil
}

// CertSecret is the Secret of a Service's serving certificate, as OLM writes it: type
// kubernetes.io/tls with tls.crt, tls.key and the CA under olmCAKey, annotated with the CA's
// olmcahash, olm.managed, owned by the CSV.
func CertSecret(csv *v1alpha1.ClusterServiceVersion, service string, c ServingCert) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            SecretName(service),
			Namespace:       csv.Namespace,
			Labels:          managedLabels(),
			Annotations:     map[string]string{CAHashAnnotation: c.CAHash()},
			OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
		},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       c.CertPEM,
			corev1.TLSPrivateKeyKey: c.KeyPEM,
			CAPEMKey:                c.CAPEM,
		},
	}
}

// ShouldRotate reports whether the serving certificate in a Secret must be made anew (OLM's
// shouldRotateCerts): the CA or the certificate is missing or does not parse, is not yet or
// no longer valid, is within its rotation window (opts), or the certificate is not valid for
// every host under the CA.
func ShouldRotate(secret *corev1.Secret, hosts []string, now time.Time, opts CertOptions) bool {
	caPEM, ok := secret.Data[CAPEMKey]
	if !ok {
		return true
	}
	certPEM, ok := secret.Data[corev1.TLSCertKey]
	if !ok {
		return true
	}
	ca, err := certs.ParsePEM(caPEM)
	if err != nil {
		return true
	}
	cert, err := certs.ParsePEM(certPEM)
	if err != nil {
		return true
	}
	if !certs.Active(ca, now) || now.After(opts.RotatesAt(ca.NotAfter)) ||
		!certs.Active(cert, now) || now.After(opts.RotatesAt(cert.NotAfter)) {
		return true
	}
	for _, host := range hosts {
		if certs.Verify(ca, cert, host, now) != nil {
			return true
		}
	}
	return false
}

// RotationTime is when the certificate in a Secret becomes due for rotation (the earlier of
// its CA's and its own rotation time); the zero time when either does not parse.
func RotationTime(secret *corev1.Secret, opts CertOptions) time.Time {
	ca, err := certs.ParsePEM(secret.Data[CAPEMKey])
	if err != nil {
		return time.Time{}
	}
	cert, err := certs.ParsePEM(secret.Data[corev1.TLSCertKey])
	if err != nil {
		return time.Time{}
	}
	at := opts.RotatesAt(ca.NotAfter)
	if c := opts.RotatesAt(cert.NotAfter); c.Before(at) {
		at = c
	}
	return at
}

// CertRBAC is the RBAC OLM makes for a serving deployment's service account: a Role and a
// RoleBinding that let it get its certificate's Secret, a ClusterRoleBinding to
// system:auth-delegator and, in kube-system, a RoleBinding to
// extension-apiserver-authentication-reader (an aggregated API server needs both).
type CertRBAC struct {
	Role               *rbacv1.Role
	RoleBinding        *rbacv1.RoleBinding
	AuthDelegator      *rbacv1.ClusterRoleBinding
	AuthReaderBinding  *rbacv1.RoleBinding
	ServiceAccountName string
}

// CertRBACFor is the CertRBAC of a deployment whose pods run as serviceAccount ("default"
// when empty). The Role and RoleBinding carry olm.managed and the CSV's owner reference, the
// ClusterRoleBinding olm.managed and the CSV's owner labels, as OLM writes them. The
// kube-system RoleBinding carries the owner labels too, which OLM leaves off: without them
// nothing could find it to delete it with the CSV (docs/olm.md).
func CertRBACFor(csv *v1alpha1.ClusterServiceVersion, service, serviceAccount string) CertRBAC {
	if serviceAccount == "" {
		serviceAccount = "default"
	}
	secret := SecretName(service)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: csv.Namespace}}
	return CertRBAC{
		ServiceAccountName: serviceAccount,
		Role: &rbacv1.Role{
			TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{
				Name: secret, Namespace: csv.Namespace, Labels: managedLabels(),
				OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
			},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}}},
		},
		RoleBinding: &rbacv1.RoleBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{
				Name: secret, Namespace: csv.Namespace, Labels: managedLabels(),
				OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
			},
			Subjects: subject,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secret},
		},
		AuthDelegator: &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: AuthDelegatorBindingName(service), Labels: OwnerLabels(csv)},
			Subjects:   subject,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: authDelegatorClusterRole},
		},
		AuthReaderBinding: &rbacv1.RoleBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{
				Name: AuthReaderBindingName(service), Namespace: KubeSystemNamespace, Labels: OwnerLabels(csv),
			},
			Subjects: subject,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: authReaderRole},
		},
	}
}

func managedLabels() map[string]string {
	return map[string]string{groups.ManagedLabel: groups.ManagedLabelValue}
}

// MountCert changes a deployment spec as OLM does for a serving deployment: the service
// account "default" when none is named; the Secret mounted twice, as apiserver.crt and
// apiserver.key at /apiserver.local.config/certificates and as tls.crt and tls.key at
// /tmp/k8s-webhook-server/serving-certs, in every container (replacing a volume of the same
// name, and a mount of the same name or path); and the CA's olmcahash on the pod template,
// so that a new CA rolls the pods.
func MountCert(spec *appsv1.DeploymentSpec, secretName, caHash string) {
	if spec.Template.Spec.ServiceAccountName == "" {
		spec.Template.Spec.ServiceAccountName = "default"
	}
	mount(spec, corev1.Volume{
		Name: APIServiceCertVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secretName,
			Items:      []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: "apiserver.crt"}, {Key: corev1.TLSPrivateKeyKey, Path: "apiserver.key"}},
		}},
	}, APIServiceCertMountPath)
	mount(spec, corev1.Volume{
		Name: WebhookCertVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secretName,
			Items:      []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}, {Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}},
		}},
	}, WebhookCertMountPath)
	if spec.Template.Annotations == nil {
		spec.Template.Annotations = map[string]string{}
	}
	spec.Template.Annotations[CAHashAnnotation] = caHash
}

func mount(spec *appsv1.DeploymentSpec, volume corev1.Volume, path string) {
	pod := &spec.Template.Spec
	replaced := false
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == volume.Name {
			pod.Volumes[i] = volume
			replaced = true
			break
		}
	}
	if !replaced {
		pod.Volumes = append(pod.Volumes, volume)
	}
	m := corev1.VolumeMount{Name: volume.Name, MountPath: path}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		found := false
		for j := range c.VolumeMounts {
			if c.VolumeMounts[j].Name == m.Name {
				found = true
				break
			}
			if c.VolumeMounts[j].MountPath == m.MountPath {
				c.VolumeMounts[j] = m
				found = true
				break
			}
		}
		if !found {
			c.VolumeMounts = append(c.VolumeMounts, m)
		}
	}
}
