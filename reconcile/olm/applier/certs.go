package applier

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
)

// CertInstall is what InstallCertResources made: for each serving deployment, the CA its
// webhooks and API services trust (PEM) and its olmcahash; whether a certificate was made
// anew (Rotated), and when those made now expire.
type CertInstall struct {
	CAPEMs   map[string][]byte
	CAHashes map[string]string
	Rotated  bool
	Expiry   time.Time
}

// InstallCertResources makes what each deployment serving webhooks or an owned API service
// needs, as OLM's installCertRequirements does: the Service in front of it, a serving
// certificate signed by a CA made for this install (kept in <service>-cert; an existing one
// is reused until it is due for rotation, install.ShouldRotate), the Role and RoleBinding
// that let its service account read it, and its bindings to system:auth-delegator and, in
// kube-system, extension-apiserver-authentication-reader. Secrets and Services are read from
// the API server (the manager caches neither kind).
func (a *Applier) InstallCertResources(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, opts install.CertOptions, now time.Time) (CertInstall, error) {
	out := CertInstall{CAPEMs: map[string][]byte{}, CAHashes: map[string]string{}}
	serving := install.CertDeployments(csv)
	if len(serving) == 0 {
		return out, nil
	}
	ca, err := install.NewCA(now, opts)
	if err != nil {
		return out, err
	}
	specs := map[string]appsv1.DeploymentSpec{}
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		specs[s.Name] = s.Spec
	}
	for _, d := range serving {
		spec := specs[d.Name]
		var selector map[string]string
		if spec.Selector != nil {
			selector = spec.Selector.MatchLabels
		}
		svc := install.CertService(csv, d, selector)
		if err := a.applyService(ctx, svc); err != nil {
			return out, err
		}
		fresh, err := install.NewServingCert(ca, svc.Name, csv.Namespace, now)
		if err != nil {
			return out, err
		}
		caPEM, rotated, err := a.ensureCertSecret(ctx, csv, svc.Name, fresh, opts, now)
		if err != nil {
			return out, err
		}
		if rotated {
			out.Rotated, out.Expiry = true, fresh.Expiry
		}
		rbac := install.CertRBACFor(csv, svc.Name, spec.Template.Spec.ServiceAccountName)
		if err := a.ApplyRole(ctx, rbac.Role); err != nil {
			return out, err
		}
		if err := a.ApplyRoleBinding(ctx, rbac.RoleBinding); err != nil {
			return out, err
		}
		if err := a.ApplyClusterRoleBinding(ctx, rbac.AuthDelegator); err != nil {
			return out, err
		}
		if err := a.ApplyRoleBinding(ctx, rbac.AuthReaderBinding); err != nil {
			return out, err
		}
		out.CAPEMs[d.Name] = caPEM
		out.CAHashes[d.Name] = install.ServingCert{CAPEM: caPEM}.CAHash()
	}
	return out, nil
}

// applyService creates the Service or updates its ports, selector, labels and owners.
func (a *Applier) applyService(ctx context.Context, desired *corev1.Service) error {
	return applyLive(ctx, a, desired, func() *corev1.Service { return &corev1.Service{} }, func(existing, desired *corev1.Service) {
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.OwnerReferences = install.MergeOwners(existing.OwnerReferences, desired.OwnerReferences)
		existing.Spec.Ports = desired.Spec.Ports
		existing.Spec.Selector = desired.Spec.Selector
	})
}

// ensureCertSecret keeps the Service's certificate Secret when it is still good, else writes
// fresh into it. It returns the CA the Secret holds now and whether it was written.
func (a *Applier) ensureCertSecret(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, service string, fresh install.ServingCert, opts install.CertOptions, now time.Time) ([]byte, bool, error) {
	desired := install.CertSecret(csv, service, fresh)
	key := client.ObjectKeyFromObject(desired)
	existing := &corev1.Secret{}
	err := a.APIReader.Get(ctx, key, existing)
	switch {
	case apierrors.IsNotFound(err):
		err = a.Client.Create(ctx, desired)
		if err == nil {
			return fresh.CAPEM, true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, false, fmt.Errorf("create secret %s: %w", key, err)
		}
		if err := a.APIReader.Get(ctx, key, existing); err != nil {
			return nil, false, fmt.Errorf("get secret %s: %w", key, err)
		}
	case err != nil:
		return nil, false, fmt.Errorf("get secret %s: %w", key, err)
	}
	owners := install.MergeOwners(existing.OwnerReferences, desired.OwnerReferences)
	if !install.ShouldRotate(existing, install.HostnamesForService(service, csv.Namespace), now, opts) {
		// Reused. It becomes this CSV's (a CSV replacing another takes it over), so that it
		// outlives the CSV it was made for.
		if !equality.Semantic.DeepEqual(owners, existing.OwnerReferences) {
			existing.OwnerReferences = owners
			if err := a.Client.Update(ctx, existing); err != nil {
				return nil, false, fmt.Errorf("update secret %s: %w", key, err)
			}
		}
		return existing.Data[install.CAPEMKey], false, nil
	}
	existing.Labels = mergeLabels(existing.Labels, desired.Labels)
	existing.Annotations = mergeLabels(existing.Annotations, desired.Annotations)
	existing.OwnerReferences = owners
	existing.Type, existing.Data = desired.Type, desired.Data
	if err := a.Client.Update(ctx, existing); err != nil {
		return nil, false, fmt.Errorf("update secret %s: %w", key, err)
	}
	return fresh.CAPEM, true, nil
}

// InstallWebhooks makes the CSV's webhooks, as OLM's createOrUpdateWebhook does: for each
// validating or mutating entry, its configuration (created by generateName when no
// configuration of the CSV carries the entry's label, else every one that does rewritten),
// scoped to og's namespaces; for each conversion entry, the webhook written into the
// spec.conversion of every CRD it names. caPEMs are the CAs by deployment
// (InstallCertResources).
func (a *Applier) InstallWebhooks(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup, caPEMs map[string][]byte) error {
	if len(csv.Spec.WebhookDefinitions) == 0 {
		return nil
	}
	if og == nil {
		return fmt.Errorf("error retrieving OperatorGroup info") // OLM's words
	}
	nsSelector, err := install.NamespaceSelector(og)
	if err != nil {
		return err
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		caPEM := caPEMs[w.DeploymentName]
		switch w.Type {
		case v1alpha1.ValidatingAdmissionWebhook:
			desired, err := install.ValidatingWebhookConfiguration(csv, w, nsSelector, caPEM)
			if err != nil {
				return err
			}
			err = applyWebhookConfigs(ctx, a, csv, w, desired, &admissionregistrationv1.ValidatingWebhookConfigurationList{},
				func(l *admissionregistrationv1.ValidatingWebhookConfigurationList) []*admissionregistrationv1.ValidatingWebhookConfiguration {
					return pointers(l.Items)
				},
				func(existing, desired *admissionregistrationv1.ValidatingWebhookConfiguration) {
					existing.Webhooks = desired.Webhooks
				})
			if err != nil {
				return err
			}
		case v1alpha1.MutatingAdmissionWebhook:
			desired, err := install.MutatingWebhookConfiguration(csv, w, nsSelector, caPEM)
			if err != nil {
				return err
			}
			err = applyWebhookConfigs(ctx, a, csv, w, desired, &admissionregistrationv1.MutatingWebhookConfigurationList{},
				func(l *admissionregistrationv1.MutatingWebhookConfigurationList) []*admissionregistrationv1.MutatingWebhookConfiguration {
					return pointers(l.Items)
				},
				func(existing, desired *admissionregistrationv1.MutatingWebhookConfiguration) {
					existing.Webhooks = desired.Webhooks
				})
			if err != nil {
				return err
			}
		case v1alpha1.ConversionWebhook:
			if err := a.installConversion(ctx, csv, w, caPEM); err != nil {
				return err
			}
		}
	}
	return nil
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// applyWebhookConfigs creates desired when the API server has no configuration of the CSV's
// entry, else rewrites the webhooks and labels of each it has (read live: a configuration
// made by generateName moments ago must not be made twice).
func applyWebhookConfigs[T client.Object, L client.ObjectList](ctx context.Context, a *Applier, csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription,
	desired T, list L, items func(L) []T, merge func(existing, desired T)) error {
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	if err := a.APIReader.List(ctx, list, client.MatchingLabels(install.WebhookSelector(csv, w))); err != nil {
		return fmt.Errorf("list %s of csv %s/%s: %w", kind, csv.Namespace, csv.Name, err)
	}
	existing := items(list)
	if len(existing) == 0 {
		if err := a.Client.Create(ctx, desired); err != nil {
			return fmt.Errorf("create %s %s: %w", kind, w.GenerateName, err)
		}
		return nil
	}
	for _, e := range existing {
		err := mergeAndUpdate(ctx, a.Client, e, desired, func(existing, desired T) {
			merge(existing, desired)
			existing.SetLabels(mergeLabels(existing.GetLabels(), desired.GetLabels()))
		})
		if err != nil {
			return fmt.Errorf("update %s %s: %w", kind, e.GetName(), err)
		}
	}
	return nil
}

// installConversion writes the conversion webhook into every CRD the entry names, read from
// the API server whole (the cache holds CRDs without their schemas) and retried on a
// conflict, with OLM's errors.
func (a *Applier) installConversion(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription, caPEM []byte) error {
	desired := install.Conversion(csv, w, caPEM)
	for _, name := range w.ConversionCRDs {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := a.APIReader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return install.ConversionGetError(name, err)
			}
			if err := install.CheckConversionCRD(csv, crd); err != nil {
				return err
			}
			if equality.Semantic.DeepEqual(crd.Spec.Conversion, desired) {
				return nil
			}
			crd.Spec.Conversion = desired.DeepCopy()
			if err := a.Client.Update(ctx, crd); err != nil {
				if apierrors.IsConflict(err) {
					return err
				}
				return install.ConversionUpdateError(err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// StripConversion sets every CRD a conversion entry of the CSV names back to the None
// strategy, as OLM does when a CSV that nothing replaces is deleted: its webhook's Service
// goes with it, and a CRD that still called it could serve none of its resources. A CRD
// that is gone is skipped.
func (a *Applier) StripConversion(ctx context.Context, csv *v1alpha1.ClusterServiceVersion) error {
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.Type != v1alpha1.ConversionWebhook {
			continue
		}
		for _, name := range w.ConversionCRDs {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := a.APIReader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
					return client.IgnoreNotFound(err)
				}
				if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter {
					return nil
				}
				crd.Spec.Conversion.Strategy = apiextensionsv1.NoneConverter
				crd.Spec.Conversion.Webhook = nil
				return a.Client.Update(ctx, crd)
			})
			if err != nil {
				return fmt.Errorf("remove the conversion webhook of crd %s: %w", name, err)
			}
		}
	}
	return nil
}

// DeleteRemovedWebhooks deletes the webhook configurations that carry the CSV's owner labels
// but belong to an entry it no longer declares (OLM's cleanUpRemovedWebhooks).
func (a *Applier) DeleteRemovedWebhooks(ctx context.Context, csv *v1alpha1.ClusterServiceVersion) error {
	owner := client.MatchingLabels(install.OwnerSelector(csv))
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := a.APIReader.List(ctx, &validating, owner); err != nil {
		return fmt.Errorf("list validatingwebhookconfigurations of csv %s/%s: %w", csv.Namespace, csv.Name, err)
	}
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	if err := a.APIReader.List(ctx, &mutating, owner); err != nil {
		return fmt.Errorf("list mutatingwebhookconfigurations of csv %s/%s: %w", csv.Namespace, csv.Name, err)
	}
	for _, set := range []struct {
		kind    string
		labels  map[string]map[string]string
		objects map[string]client.Object
	}{
		{kind: "ValidatingWebhookConfiguration", labels: labelsByName(pointers(validating.Items)), objects: byName(pointers(validating.Items))},
		{kind: "MutatingWebhookConfiguration", labels: labelsByName(pointers(mutating.Items)), objects: byName(pointers(mutating.Items))},
	} {
		removed, err := install.RemovedWebhooks(csv, set.kind, set.labels)
		if err != nil {
			return err
		}
		for _, name := range removed {
			if err := a.Client.Delete(ctx, set.objects[name]); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete %s %s: %w", set.kind, name, err)
			}
		}
	}
	return nil
}

func labelsByName[T client.Object](objs []T) map[string]map[string]string {
	out := make(map[string]map[string]string, len(objs))
	for _, o := range objs {
		out[o.GetName()] = o.GetLabels()
	}
	return out
}

func byName[T client.Object](objs []T) map[string]client.Object {
	out := make(map[string]client.Object, len(objs))
	for _, o := range objs {
		out[o.GetName()] = o
	}
	return out
}

// InstallAPIServices makes the APIService of each API service the CSV owns, as OLM's
// createOrUpdateAPIService does (install.APIService); an existing one the CSV may not adopt
// is an error (adoptable answers). annotations are those of the Subscription's spec.config,
// put on an APIService that is new.
func (a *Applier) InstallAPIServices(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, caPEMs map[string][]byte, annotations map[string]string,
	adoptable func(*unstructured.Unstructured) (bool, error)) error {
	for _, d := range csv.Spec.APIServiceDefinitions.Owned {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(install.APIServiceGVK)
		err := a.APIReader.Get(ctx, client.ObjectKey{Name: d.APIServiceName()}, existing)
		switch {
		case apierrors.IsNotFound(err):
			u := install.APIService(csv, d, nil, annotations, caPEMs[d.DeploymentName])
			if err := a.Client.Create(ctx, u); err != nil {
				return fmt.Errorf("create apiservice %s: %w", d.APIServiceName(), err)
			}
			continue
		case err != nil:
			return fmt.Errorf("get apiservice %s: %w", d.APIServiceName(), err)
		}
		ok, err := adoptable(existing)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("pre-existing APIService %s is not adoptable", d.APIServiceName()) // OLM's words
		}
		u := install.APIService(csv, d, existing, nil, caPEMs[d.DeploymentName])
		if equality.Semantic.DeepEqual(existing.Object, u.Object) {
			continue
		}
		if err := a.Client.Update(ctx, u); err != nil {
			return fmt.Errorf("update apiservice %s: %w", d.APIServiceName(), err)
		}
	}
	return nil
}

// applyLive is apply for kinds the manager does not cache: the existing object is read from
// the API server.
func applyLive[T client.Object](ctx context.Context, a *Applier, desired T, newObj func() T, merge func(existing, desired T)) error {
	key := client.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	existing := newObj()
	err := a.APIReader.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		err = a.Client.Create(ctx, desired.DeepCopyObject().(T))
		if err == nil || !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("create %s %s: %w", kind, key, err)
			}
			return nil
		}
		err = a.APIReader.Get(ctx, key, existing)
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	if err := mergeAndUpdate(ctx, a.Client, existing, desired, merge); err != nil {
		return fmt.Errorf("update %s %s: %w", kind, key, err)
	}
	return nil
}
