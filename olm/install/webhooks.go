package install

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The labels OLM puts on the webhook configurations it makes (OLM
// pkg/controller/install/webhook.go), besides the CSV's owner labels and olm.managed.
const (
	// WebhookDescLabel names the webhookdefinitions entry (its generateName).
	WebhookDescLabel = "olm.webhook-description-generate-name"
	// WebhookHashLabel is a hash of the entry: a configuration whose hash differs from the
	// CSV's entry is out of date.
	WebhookHashLabel = "olm.webhook-description-hash"
)

// The messages of OLM's webhook checks, verbatim.
const (
	MessageRepeatedWebhook = "CSV contains repeated WebhookDescription name"

	msgRulesAllGroups          = "webhook rules cannot include all groups"
	msgRulesOLMGroup           = "webhook rules cannot include the OLM group"
	msgRulesWebhookConfigs     = "webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources"
	msgConversionNotSingleton  = "unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces"
	msgConversionNoCRD         = "unable to manager conversion webhook: conversion webhook must have at least one CRD specified" // sic
	msgConversionPreserve      = "crd.Spec.PreserveUnknownFields must be false to let API Server call webhook to do the conversion"
	msgConversionNotOwnedFmt   = "csv %s does not own CRD %s"
	msgConversionGetCRDFmt     = "unable to get CRD %s specified in Conversion Webhook: %v"
	msgConversionUpdateCRDFmt  = "Error updating CRD with Conversion info: %w"
	defaultConversionPath      = "/"
	conversionStrategyWebhook  = apiextensionsv1.WebhookConverter
	admissionRegistrationGroup = admissionregistrationv1.GroupName
)

// ValidateWebhooks is OLM's check of a CSV's webhookdefinitions once its requirements are
// met: no generateName twice ("CSV contains repeated WebhookDescription name"), and no rule
// matching every group, OLM's own group or the webhook configuration kinds (OLM's
// ValidWebhookRules, its messages). A CSV that fails it goes Failed with reason
// InvalidWebhookDescription and this message.
func ValidateWebhooks(csv *v1alpha1.ClusterServiceVersion) error {
	seen := map[string]bool{}
	for _, w := range csv.Spec.WebhookDefinitions {
		if seen[w.GenerateName] {
			return errors.New(MessageRepeatedWebhook)
		}
		seen[w.GenerateName] = true
		if err := validRules(w.Rules); err != nil {
			return err
		}
	}
	return nil
}

func validRules(rules []admissionregistrationv1.RuleWithOperations) error {
	for _, r := range rules {
		switch {
		case slices.Contains(r.APIGroups, "*"):
			return errors.New(msgRulesAllGroups)
		case slices.Contains(r.APIGroups, v1alpha1.GroupName):
			return errors.New(msgRulesOLMGroup)
		case slices.Contains(r.APIGroups, admissionRegistrationGroup) &&
			(slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, "MutatingWebhookConfiguration") ||
				slices.Contains(r.Resources, "ValidatingWebhookConfiguration")):
			return errors.New(msgRulesWebhookConfigs)
		}
	}
	return nil
}

// ConversionProblem is why OLM cannot set up the CSV's conversion webhooks, from the CSV
// alone: a CSV with a conversion webhook must support AllNamespaces and no other install
// mode, each conversion webhook must name a CRD, and the CSV must own every CRD named. OLM
// finds these while it installs; the install then fails (InstallComponentFailed) with this
// message. nil when there is nothing wrong.
func ConversionProblem(csv *v1alpha1.ClusterServiceVersion) error {
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.Type != v1alpha1.ConversionWebhook {
			continue
		}
		if !allNamespacesOnly(csv) {
			return errors.New(msgConversionNotSingleton)
		}
		if len(w.ConversionCRDs) == 0 {
			return errors.New(msgConversionNoCRD)
		}
		for _, name := range w.ConversionCRDs {
			if !ownsCRD(csv, name) {
				return fmt.Errorf(msgConversionNotOwnedFmt, csv.Name, name)
			}
		}
	}
	return nil
}

// allNamespacesOnly is OLM's isSingletonOperator: no install mode other than AllNamespaces is
// supported, and AllNamespaces is not marked unsupported (no install modes at all passes).
func allNamespacesOnly(csv *v1alpha1.ClusterServiceVersion) bool {
	for _, m := range csv.Spec.InstallModes {
		if (m.Type == v1alpha1.InstallModeTypeAllNamespaces) != m.Supported {
			return false
		}
	}
	return true
}

func ownsCRD(csv *v1alpha1.ClusterServiceVersion, name string) bool {
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		if d.Name == name {
			return true
		}
	}
	return false
}

// WebhookHash is OLM's olm.webhook-description-hash of a webhookdefinitions entry: base62 of
// the SHA-224 of its JSON (as encoding/json's Encoder writes it, newline included).
func WebhookHash(w v1alpha1.WebhookDescription) (string, error) {
	raw, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("hash webhook description %s: %w", w.GenerateName, err)
	}
	sum := sha256.Sum224(append(raw, '\n'))
	return new(big.Int).SetBytes(sum[:]).Text(62), nil
}

// WebhookSelector are the labels that select the configurations of one entry of a CSV
// (owner labels and olm.webhook-description-generate-name), whatever their hash.
func WebhookSelector(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription) map[string]string {
	l := OwnerSelector(csv)
	l[WebhookDescLabel] = w.GenerateName
	return l
}

// WebhookLabels are the labels of a configuration OLM makes for an entry: the CSV's owner
// labels, olm.managed, the entry's generateName and hash.
func WebhookLabels(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription) (map[string]string, error) {
	hash, err := WebhookHash(w)
	if err != nil {
		return nil, err
	}
	l := OwnerLabels(csv)
	l[WebhookDescLabel] = w.GenerateName
	l[WebhookHashLabel] = hash
	return l, nil
}

// WebhookServiceName is the Service a webhook configuration names: the deployment's name with
// its dots made dashes, and -service (OLM's WebhookDescription.DomainName).
func WebhookServiceName(w v1alpha1.WebhookDescription) string {
	return strings.ReplaceAll(w.DeploymentName, ".", "-") + "-service"
}

// NamespaceSelector is the namespaceSelector of the admission webhooks of a CSV in og, as OLM
// scopes them (OperatorGroup.NamespaceLabelSelector): with targetNamespaces, the namespaces
// labelled olm.operatorgroup.uid/<og uid>; else the group's selector; a global group, every
// namespace (nil).
func NamespaceSelector(og *operatorsv1.OperatorGroup) (*metav1.LabelSelector, error) {
	if len(og.Spec.TargetNamespaces) == 0 {
		if og.Spec.Selector != nil {
			return og.Spec.Selector.DeepCopy(), nil
		}
		return nil, nil
	}
	if og.UID == "" {
		return nil, fmt.Errorf("operatorgroup %s/%s has no uid to select its namespaces by", og.Namespace, og.Name)
	}
	return &metav1.LabelSelector{MatchLabels: map[string]string{operatorsv1.OperatorGroupLabelPrefix + string(og.UID): ""}}, nil
}

func webhookClientConfig(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription, caPEM []byte) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Name:      WebhookServiceName(w),
			Namespace: csv.Namespace,
			Path:      w.WebhookPath,
			Port:      ptr.To(containerPort(w.ContainerPort)),
		},
		CABundle: caPEM,
	}
}

// ValidatingWebhookConfiguration is the configuration OLM makes for a validating entry: named
// by generateName <generateName>-, one webhook named generateName with the entry's rules,
// failure and match policies, object selector, side effects, timeout and admission review
// versions, the group's namespace selector, calling the Service at the entry's path and port
// with caBundle.
func ValidatingWebhookConfiguration(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription, nsSelector *metav1.LabelSelector, caPEM []byte) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	labels, err := WebhookLabels(csv, w)
	if err != nil {
		return nil, err
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: w.GenerateName + "-", Labels: labels},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    w.GenerateName,
			Rules:                   w.Rules,
			FailurePolicy:           w.FailurePolicy,
			MatchPolicy:             w.MatchPolicy,
			NamespaceSelector:       nsSelector,
			ObjectSelector:          w.ObjectSelector,
			SideEffects:             w.SideEffects,
			TimeoutSeconds:          w.TimeoutSeconds,
			AdmissionReviewVersions: w.AdmissionReviewVersions,
			ClientConfig:            webhookClientConfig(csv, w, caPEM),
		}},
	}, nil
}

// MutatingWebhookConfiguration is ValidatingWebhookConfiguration for a mutating entry, with
// its reinvocation policy.
func MutatingWebhookConfiguration(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription, nsSelector *metav1.LabelSelector, caPEM []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	labels, err := WebhookLabels(csv, w)
	if err != nil {
		return nil, err
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: w.GenerateName + "-", Labels: labels},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    w.GenerateName,
			Rules:                   w.Rules,
			FailurePolicy:           w.FailurePolicy,
			MatchPolicy:             w.MatchPolicy,
			NamespaceSelector:       nsSelector,
			ObjectSelector:          w.ObjectSelector,
			SideEffects:             w.SideEffects,
			TimeoutSeconds:          w.TimeoutSeconds,
			AdmissionReviewVersions: w.AdmissionReviewVersions,
			ClientConfig:            webhookClientConfig(csv, w, caPEM),
			ReinvocationPolicy:      w.ReinvocationPolicy,
		}},
	}, nil
}

// Conversion is the spec.conversion OLM writes into a CRD a conversion entry names: strategy
// Webhook, calling the Service at the entry's path ("/" when unset) and port with caBundle,
// the entry's admission review versions as conversion review versions.
func Conversion(csv *v1alpha1.ClusterServiceVersion, w v1alpha1.WebhookDescription, caPEM []byte) *apiextensionsv1.CustomResourceConversion {
	path := defaultConversionPath
	if w.WebhookPath != nil {
		path = *w.WebhookPath
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: conversionStrategyWebhook,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service: &apiextensionsv1.ServiceReference{
					Namespace: csv.Namespace,
					Name:      WebhookServiceName(w),
					Path:      &path,
					Port:      ptr.To(containerPort(w.ContainerPort)),
				},
				CABundle: caPEM,
			},
			ConversionReviewVersions: slices.Clone(w.AdmissionReviewVersions),
		},
	}
}

// CheckConversionCRD is OLM's check of a CRD before it writes a conversion webhook into it:
// the CSV owns it and it does not preserve unknown fields.
func CheckConversionCRD(csv *v1alpha1.ClusterServiceVersion, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !ownsCRD(csv, crd.Name) {
		return fmt.Errorf(msgConversionNotOwnedFmt, csv.Name, crd.Name)
	}
	if crd.Spec.PreserveUnknownFields {
		return errors.New(msgConversionPreserve)
	}
	return nil
}

// ConversionGetError is OLM's error for a conversion CRD it cannot read.
func ConversionGetError(name string, err error) error {
	return fmt.Errorf(msgConversionGetCRDFmt, name, err)
}

// ConversionUpdateError is OLM's error for a CRD it cannot write the conversion into.
func ConversionUpdateError(err error) error {
	return fmt.Errorf(msgConversionUpdateCRDFmt, err)
}

// ConversionInstalled reports whether a CRD carries a conversion webhook with a caBundle (OLM's
// check of a conversion entry).
func ConversionInstalled(crd *apiextensionsv1.CustomResourceDefinition) bool {
	c := crd.Spec.Conversion
	return c != nil && c.Strategy == conversionStrategyWebhook && c.Webhook != nil && c.Webhook.ClientConfig != nil &&
		c.Webhook.ClientConfig.CABundle != nil
}

// ErrConversionNotReady is OLM's error for a conversion entry whose CRD does not carry it yet.
var ErrConversionNotReady = errors.New("conversionWebhook not ready")

// LabelsNameOwner reports whether a configuration's labels name csv and an entry it declares.
func LabelsNameOwner(labels map[string]string, csv *v1alpha1.ClusterServiceVersion) bool {
	for k, v := range OwnerSelector(csv) {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// RemovedWebhooks returns the names of the configurations among existing (name → labels) that
// carry csv's owner labels but name an entry the CSV no longer declares; an error for one
// without the entry label (OLM's cleanUpRemovedWebhooks).
func RemovedWebhooks(csv *v1alpha1.ClusterServiceVersion, kind string, existing map[string]map[string]string) ([]string, error) {
	declared := map[string]bool{}
	for _, w := range csv.Spec.WebhookDefinitions {
		declared[w.GenerateName] = true
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		labels := existing[name]
		if !LabelsNameOwner(labels, csv) {
			continue
		}
		gen, ok := labels[WebhookDescLabel]
		if !ok {
			return nil, fmt.Errorf("%s %s does not have WebhookDesc key", lowerFirst(kind), name)
		}
		if !declared[gen] {
			out = append(out, name)
		}
	}
	return out, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
