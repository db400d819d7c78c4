package csv

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/certs"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
)

// DefaultRetryInterval is how soon a CSV waiting for an APIService to become Available is
// looked at again: nothing the controller watches changes when the API server's availability
// check passes.
const DefaultRetryInterval = 5 * time.Second

func (r *Reconciler) retryInterval() time.Duration {
	if r.Options.RetryInterval > 0 {
		return r.Options.RetryInterval
	}
	return DefaultRetryInterval
}

// installStrategy runs the install strategy of a CSV in InstallReady, in OLM's order: the
// serving certificates and what goes with them, the deployments (mounting them), then the
// webhooks and API services trusting their CAs. A certificate made anew is recorded in the
// CSV's status (certsLastUpdated, certsRotateAt).
func (r *Reconciler) installStrategy(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	now := time.Now()
	certInstall, err := r.applier().InstallCertResources(ctx, obj, r.Options.Certs, now)
	if err != nil {
		return err
	}
	if err := r.applier().InstallDeployments(ctx, obj, s.replacement.Replaces, certInstall.CAHashes); err != nil {
		return err
	}
	if err := r.applier().InstallWebhooks(ctx, obj, s.evaluation.Membership.Group, certInstall.CAPEMs); err != nil {
		return err
	}
	if len(obj.Spec.APIServiceDefinitions.Owned) > 0 {
		annotations, err := r.subscriptionAnnotations(ctx, obj)
		if err != nil {
			return err
		}
		err = r.applier().InstallAPIServices(ctx, obj, certInstall.CAPEMs, annotations, func(u *unstructured.Unstructured) (bool, error) {
			return r.apiServiceAdoptable(ctx, obj, u)
		})
		if err != nil {
			return err
		}
	}
	if certInstall.Rotated {
		updated := metav1.NewTime(now)
		rotateAt := metav1.NewTime(r.Options.Certs.RotatesAt(certInstall.Expiry))
		obj.Status.CertsLastUpdated, obj.Status.CertsRotateAt = &updated, &rotateAt
	}
	return nil
}

// subscriptionAnnotations are the spec.config annotations of the Subscription that installed
// the CSV (the one whose installedCSV names it), which OLM puts on the APIServices it makes.
func (r *Reconciler) subscriptionAnnotations(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (map[string]string, error) {
	var subs v1alpha1.SubscriptionList
	if err := r.Client.List(ctx, &subs, client.InNamespace(obj.Namespace)); err != nil {
		return nil, fmt.Errorf("failed to list subscription namespace=%s - %w", obj.Namespace, err)
	}
	for _, sub := range subs.Items {
		if sub.Status.InstalledCSV == obj.Name && sub.Spec.Config != nil {
			return sub.Spec.Config.Annotations, nil
		}
	}
	return nil, nil
}

// apiServiceAdoptable reads what install.APIServiceAdoptable needs about an existing
// APIService: the CSV this one replaces and the CSV the APIService's labels name.
func (r *Reconciler) apiServiceAdoptable(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, u *unstructured.Unstructured) (bool, error) {
	get := func(name string) (*v1alpha1.ClusterServiceVersion, error) {
		if name == "" {
			return nil, nil
		}
		c := &v1alpha1.ClusterServiceVersion{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, c)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get csv %s/%s: %w", obj.Namespace, name, err)
		}
		return c, nil
	}
	replaced, err := get(obj.Spec.Replaces)
	if err != nil {
		return false, err
	}
	labels := u.GetLabels()
	owner, err := get(labels["olm.owner"])
	if err != nil {
		return false, err
	}
	return install.APIServiceAdoptable(labels, obj, replaced, owner), nil
}

// apiServiceConflict reports whether an owned APIService exists that the CSV may not adopt
// (OLM's apiServiceOwnerConflicts, checked in Pending).
func (r *Reconciler) apiServiceConflict(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (bool, error) {
	for _, d := range obj.Spec.APIServiceDefinitions.Owned {
		u, err := r.getAPIService(ctx, d.APIServiceName())
		if err != nil {
			return false, err
		}
		if u == nil {
			continue
		}
		ok, err := r.apiServiceAdoptable(ctx, obj, u)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
	}
	return false, nil
}

// getAPIService reads an APIService from the API server; nil when there is none.
func (r *Reconciler) getAPIService(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(install.APIServiceGVK)
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get apiservice %s: %w", name, err)
	}
	return u, nil
}

// certFacts reads what the phase machine judges of a CSV's webhooks and API services, where
// OLM reads it: the CA each serving deployment must mount (nil map and f.ExpectedErr when
// one is missing), whether the webhooks and API services are installed, and, for a
// Succeeded or Failed CSV, whether the API services' resources are whole and a certificate
// is due for rotation. It returns the CA hashes the deployments are checked with.
func (r *Reconciler) certFacts(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, f *phase.Facts, s *state) (map[string]string, error) {
	p := obj.Status.Phase
	if p == v1alpha1.CSVPhaseSucceeded || p == v1alpha1.CSVPhaseFailed {
		issue, unadoptable, err := r.checkAPIServiceResources(ctx, obj)
		if err != nil {
			return nil, err
		}
		f.CertResourcesErr, f.CertResourcesUnadoptable = issue, unadoptable
		if f.RotateCerts, s.rotateAt, err = r.shouldRotate(ctx, obj); err != nil {
			return nil, err
		}
	}
	hashes, expectedErr, err := r.expectedCAHashes(ctx, obj)
	if err != nil {
		return nil, err
	}
	f.ExpectedErr = expectedErr
	missing, apiErr, err := r.apiServicesMissing(ctx, obj)
	if err != nil {
		return nil, err
	}
	f.APIServicesMissing, f.APIServicesErr = missing, apiErr
	// OLM's check of the webhooks deletes first the configurations of entries the CSV no
	// longer declares (areWebhooksAvailable calls cleanUpRemovedWebhooks); its error is the
	// check's.
	if err := r.applier().DeleteRemovedWebhooks(ctx, obj); err != nil {
		f.WebhooksErr = err
		return hashes, nil
	}
	f.WebhooksMissing, f.WebhooksErr, err = r.webhooksMissing(ctx, obj)
	if err != nil {
		return nil, err
	}
	return hashes, nil
}

// expectedCAHashes is OLM's updateDeploymentSpecsWithAPIServiceData: the CA each serving
// deployment mounts, read where OLM reads it (the APIService's caBundle, the webhook
// configuration's or the conversion CRD's), and whether its Secret is there. expected is
// OLM's error when one cannot be found; err a failed read.
func (r *Reconciler) expectedCAHashes(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (hashes map[string]string, expected, err error) {
	deployments := map[string]bool{}
	for _, d := range obj.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[d.Name] = true
	}
	hashes = map[string]string{}
	for _, d := range obj.Spec.APIServiceDefinitions.Owned {
		u, err := r.getAPIService(ctx, d.APIServiceName())
		if err != nil {
			return nil, nil, err
		}
		var ca []byte
		if u == nil {
			return nil, fmt.Errorf("could not retrieve caBundle for owned APIServices %s: %w", d.APIServiceName(),
				fmt.Errorf("could not retrieve generated APIService: %w", apierrors.NewNotFound(apiServiceResource, d.APIServiceName()))), nil
		}
		if ca, err = install.APIServiceCABundle(u); err != nil {
			return nil, fmt.Errorf("could not retrieve caBundle for owned APIServices %s: %w", d.APIServiceName(), err), nil
		}
		if !deployments[d.DeploymentName] {
			return nil, fmt.Errorf("strategyDetailsDeployment is missing deployment %s for owned APIServices %s", d.DeploymentName, d.APIServiceName()), nil
		}
		if expected, err := r.secretExists(ctx, obj, d.DeploymentName); expected != nil || err != nil {
			return nil, expected, err
		}
		hashes[d.DeploymentName] = certs.PEMSHA256(ca)
	}
	for _, w := range obj.Spec.WebhookDefinitions {
		ca, found, err := r.webhookCABundle(ctx, obj, w)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			return nil, fmt.Errorf("could not retrieve caBundle for WebhookDescription %s: %w", w.GenerateName, errors.New("unable to find CA")), nil
		}
		if !deployments[w.DeploymentName] {
			return nil, fmt.Errorf("strategyDetailsDeployment is missing deployment %s for WebhookDescription %s", w.DeploymentName, w.GenerateName), nil
		}
		if expected, err := r.secretExists(ctx, obj, w.DeploymentName); expected != nil || err != nil {
			return nil, expected, err
		}
		hashes[w.DeploymentName] = certs.PEMSHA256(ca)
	}
	return hashes, nil, nil
}

var apiServiceResource = schemaResource("apiservice")

// schemaResource is the group and resource a lister of OLM names in its not-found errors
// (the kind in lower case: `apiservice.apiregistration.k8s.io "v1.x" not found`); the
// service account, which OLM reads from the API server, as the API server names it.
func schemaResource(resource string) schema.GroupResource {
	switch resource {
	case "apiservice":
		return schema.GroupResource{Group: install.APIServiceGVK.Group, Resource: resource}
	case "deployment":
		return schema.GroupResource{Group: appsv1.GroupName, Resource: resource}
	case "role", "rolebinding", "clusterrolebinding":
		return schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}
	case "serviceaccount":
		return schema.GroupResource{Resource: "serviceaccounts"}
	}
	return schema.GroupResource{Resource: resource}
}

func (r *Reconciler) secretExists(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, deployment string) (expected, err error) {
	name := install.SecretName(install.ServiceName(deployment))
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, &corev1.Secret{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("unable to get secret %s", name), nil
	case err != nil:
		return nil, fmt.Errorf("get secret %s/%s: %w", obj.Namespace, name, err)
	}
	return nil, nil
}

// webhookCABundle is OLM's getWebhookCABundle: the caBundle of the first configuration of the
// entry (whatever its hash), or of the first conversion CRD that carries one.
func (r *Reconciler) webhookCABundle(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription) ([]byte, bool, error) {
	selector := client.MatchingLabels(install.WebhookSelector(obj, w))
	switch w.Type {
	case v1alpha1.MutatingAdmissionWebhook:
		var list admissionregistrationv1.MutatingWebhookConfigurationList
		if err := r.APIReader.List(ctx, &list, selector); err != nil {
			return nil, false, fmt.Errorf("could not retrieve generated MutatingWebhookConfiguration: %w", err)
		}
		if len(list.Items) > 0 && len(list.Items[0].Webhooks) > 0 {
			return list.Items[0].Webhooks[0].ClientConfig.CABundle, true, nil
		}
	case v1alpha1.ValidatingAdmissionWebhook:
		var list admissionregistrationv1.ValidatingWebhookConfigurationList
		if err := r.APIReader.List(ctx, &list, selector); err != nil {
			return nil, false, fmt.Errorf("could not retrieve generated ValidatingWebhookConfiguration: %w", err)
		}
		if len(list.Items) > 0 && len(list.Items[0].Webhooks) > 0 {
			return list.Items[0].Webhooks[0].ClientConfig.CABundle, true, nil
		}
	case v1alpha1.ConversionWebhook:
		for _, name := range w.ConversionCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil { // live, as OLM reads it: the conversion was written moments ago
				continue
			}
			if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil && c.Webhook.ClientConfig.CABundle != nil {
				return c.Webhook.ClientConfig.CABundle, true, nil
			}
		}
	}
	return nil, false, nil
}

// webhooksMissing is OLM's areWebhooksAvailable: every validating and mutating entry has a
// configuration of the CSV with the entry's current hash, every conversion entry's CRDs carry
// a conversion webhook with a caBundle. notReady is OLM's error for a conversion CRD that is
// missing or does not carry it yet.
func (r *Reconciler) webhooksMissing(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (missing bool, notReady, err error) {
	for _, w := range obj.Spec.WebhookDefinitions {
		hash, err := install.WebhookHash(w)
		if err != nil {
			return false, nil, err
		}
		selector := install.WebhookSelector(obj, w)
		selector[install.WebhookHashLabel] = hash
		count := 0
		switch w.Type {
		case v1alpha1.ValidatingAdmissionWebhook:
			var list admissionregistrationv1.ValidatingWebhookConfigurationList
			if err := r.APIReader.List(ctx, &list, client.MatchingLabels(selector)); err != nil {
				return false, nil, fmt.Errorf("list validatingwebhookconfigurations: %w", err)
			}
			count = len(list.Items)
		case v1alpha1.MutatingAdmissionWebhook:
			var list admissionregistrationv1.MutatingWebhookConfigurationList
			if err := r.APIReader.List(ctx, &list, client.MatchingLabels(selector)); err != nil {
				return false, nil, fmt.Errorf("list mutatingwebhookconfigurations: %w", err)
			}
			count = len(list.Items)
		case v1alpha1.ConversionWebhook:
			for _, name := range w.ConversionCRDs {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil { // live, as OLM reads it: the conversion was written moments ago
					return false, err, nil
				}
				if !install.ConversionInstalled(crd) {
					return false, install.ErrConversionNotReady, nil
				}
				count++
			}
		}
		if count == 0 {
			return true, nil, nil
		}
	}
	return false, nil, nil
}

// apiServicesMissing is OLM's areAPIServicesAvailable: every owned APIService exists, is
// Available and its kind is served (discovery).
func (r *Reconciler) apiServicesMissing(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (missing bool, failed, err error) {
	for _, d := range obj.Spec.APIServiceDefinitions.Owned {
		u, err := r.getAPIService(ctx, d.APIServiceName())
		if err != nil {
			return false, nil, err
		}
		if u == nil || !install.APIServiceAvailable(u) {
			return true, nil, nil
		}
		gvk := metav1.GroupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind}
		if !r.served([]metav1.GroupVersionKind{gvk})[gvk] {
			return true, nil, nil
		}
	}
	return false, nil, nil
}

// shouldRotate is OLM's ShouldRotateCerts: a serving deployment's Secret is missing, or its
// certificate is invalid or due (install.ShouldRotate). It also says when the first
// certificate becomes due (zero when none will), so that the CSV is looked at again then:
// OLM notices at its next resync.
func (r *Reconciler) shouldRotate(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (bool, time.Time, error) {
	now := time.Now()
	var next time.Time
	for _, d := range install.CertDeployments(obj) {
		service := install.ServiceName(d.Name)
		secret := &corev1.Secret{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: install.SecretName(service)}, secret)
		switch {
		case apierrors.IsNotFound(err):
			return true, time.Time{}, nil
		case err != nil:
			return false, time.Time{}, fmt.Errorf("get secret %s/%s: %w", obj.Namespace, install.SecretName(service), err)
		}
		if install.ShouldRotate(secret, install.HostnamesForService(service, obj.Namespace), now, r.Options.Certs) {
			return true, time.Time{}, nil
		}
		if at := install.RotationTime(secret, r.Options.Certs); !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return false, next, nil
}

// checkAPIServiceResources is OLM's check of what it made for each owned API service: the
// APIService (adoptable by the CSV, naming the Service), the Service, the Secret (its CA hash
// that of the APIService's caBundle), the deployment (mounting that CA), its service account,
// and the RBAC of its certificate. It returns the problems (OLM's words), and whether one is
// an APIService of another owner, which a reinstall does not fix.
func (r *Reconciler) checkAPIServiceResources(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) (issue error, unadoptable bool, err error) {
	var errs []error
	notFound := func(resource, name string) error {
		return apierrors.NewNotFound(schemaResource(resource), name)
	}
	for _, d := range obj.Spec.APIServiceDefinitions.Owned {
		u, err := r.getAPIService(ctx, d.APIServiceName())
		if err != nil {
			return nil, false, err
		}
		if u == nil {
			errs = append(errs, notFound("apiservice", d.APIServiceName()))
			continue
		}
		ok, err := r.apiServiceAdoptable(ctx, obj, u)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s is unadoptable", d.APIServiceName()))
			return kerrors.NewAggregate(errs), true, nil
		}
		serviceName := install.ServiceName(d.DeploymentName)
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: serviceName}, &corev1.Service{}); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, false, err
			}
			errs = append(errs, notFound("service", serviceName))
			continue
		}
		if ns, name := install.APIServiceService(u); name != serviceName || ns != obj.Namespace {
			errs = append(errs, errors.New("found APIService and service reference mismatch"))
			continue
		}
		caBundle, _ := install.APIServiceCABundle(u)
		if _, err := certs.ParsePEM(caBundle); err != nil {
			errs = append(errs, err)
			continue
		}
		secretName := install.SecretName(serviceName)
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: secretName}, secret); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, false, err
			}
			errs = append(errs, notFound("secret", secretName))
			continue
		}
		if _, err := certs.ParsePEM(secret.Data[corev1.TLSCertKey]); err != nil {
			errs = append(errs, err)
			continue
		}
		caHash := certs.PEMSHA256(caBundle)
		if secret.Annotations[install.CAHashAnnotation] != caHash {
			errs = append(errs, fmt.Errorf("secret %s CA cert hash does not match expected", secretName))
			continue
		}
		deployment := &appsv1.Deployment{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: d.DeploymentName}, deployment); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, false, err
			}
			errs = append(errs, notFound("deployment", d.DeploymentName))
			continue
		}
		if deployment.Spec.Template.Annotations[install.CAHashAnnotation] != caHash {
			errs = append(errs, fmt.Errorf("deployment %s CA cert hash does not match expected", d.DeploymentName))
			continue
		}
		rbac := install.CertRBACFor(obj, serviceName, deployment.Spec.Template.Spec.ServiceAccountName)
		for _, c := range []struct {
			resource string
			key      client.ObjectKey
			obj      client.Object
		}{
			{"serviceaccount", client.ObjectKey{Namespace: obj.Namespace, Name: rbac.ServiceAccountName}, &corev1.ServiceAccount{}},
			{"role", client.ObjectKeyFromObject(rbac.Role), &rbacv1.Role{}},
			{"rolebinding", client.ObjectKeyFromObject(rbac.RoleBinding), &rbacv1.RoleBinding{}},
			{"clusterrolebinding", client.ObjectKeyFromObject(rbac.AuthDelegator), &rbacv1.ClusterRoleBinding{}},
			{"rolebinding", client.ObjectKeyFromObject(rbac.AuthReaderBinding), &rbacv1.RoleBinding{}},
		} {
			if err := r.APIReader.Get(ctx, c.key, c.obj); err != nil {
				if !apierrors.IsNotFound(err) {
					return nil, false, err
				}
				errs = append(errs, notFound(c.resource, c.key.Name))
			}
		}
	}
	return kerrors.NewAggregate(errs), false, nil
}
