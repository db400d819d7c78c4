package crdupgrade

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Reason says which rule an update breaks.
type Reason string

const (
	// ReasonServedVersionRemoved: the new CRD drops a version the current CRD serves. The seeds
	// require a served version to be set to served: false first and removed only in a later
	// upgrade; OLM's code has no such check, so the message is olmsync's.
	ReasonServedVersionRemoved Reason = "ServedVersionRemoved"
	// ReasonStoredVersionRemoved: the new CRD drops a version listed in the current CRD's
	// status.storedVersions (OLM's "risk of data loss").
	ReasonStoredVersionRemoved Reason = "StoredVersionRemoved"
	// ReasonInvalidCustomResource: an existing custom resource does not validate against the
	// new schema of its version (OLM's "updated validation is too restrictive").
	ReasonInvalidCustomResource Reason = "InvalidCustomResource"
)

// Error is why a CRD may not be updated. Its message is OLM's where OLM has one, so an
// InstallPlan that fails on it reads as OLM's would.
type Error struct {
	// CRD is the CRD's name.
	CRD    string
	Reason Reason
	// Version is the version removed (ReasonServedVersionRemoved, ReasonStoredVersionRemoved)
	// or the version of the invalid custom resource.
	Version string
	// Object is the invalid custom resource: "namespace/name", or "name" when cluster-scoped.
	Object string
	// Group and Kind are the invalid custom resource's group and kind.
	Group, Kind string
	// Details are the validation errors of the invalid custom resource.
	Details field.ErrorList
}

func (e *Error) Error() string {
	switch e.Reason {
	case ReasonStoredVersionRemoved:
		return fmt.Sprintf("risk of data loss updating %q: new CRD removes version %s that is listed as a stored version on the existing CRD", e.CRD, e.Version)
	case ReasonServedVersionRemoved:
		return fmt.Sprintf("refusing to update %q: new CRD removes version %s that the existing CRD serves (set served: false on it first, and remove it in a later upgrade)", e.CRD, e.Version)
	default:
		return fmt.Sprintf("error validating existing CRs against new CRD's schema for %q: %s", e.CRD, e.validationMessage())
	}
}

// validationMessage is the inner text OLM writes for an invalid custom resource; gvk prints
// as "group/version, Kind=Kind", as apimachinery's GroupVersionKind does.
func (e *Error) validationMessage() string {
	return fmt.Sprintf("error validating %s/%s, Kind=%s %q: updated validation is too restrictive: %v",
		e.Group, e.Version, e.Kind, e.Object, e.Details.ToAggregate())
}

// Result is what an allowed update still has to say.
type Result struct {
	// Warnings are validation failures OLM tolerates because the new CRD converts through a
	// webhook: the update goes ahead, and OLM emits each as a Warning event (reason
	// CRDValidation) on the InstallPlan.
	Warnings []string
}

// Check says whether updated may replace existing, given the custom resources that exist.
// crs may hold custom resources of any version of the CRD; each is validated against the
// new schema of its own version when that version is served both before and after the
// update (OLM lists the custom resources once per such version; callers reading a cluster
// should do the same). The checks run in this order and the first failure is returned, as
// an *Error: a served version removed, an existing custom resource the new schema refuses
// (tolerated, as a warning, when the new CRD uses a Webhook conversion), a stored version
// removed. A custom resource that is not of the CRD's group and kind is a caller error.
func Check(existing, updated *apiextensionsv1.CustomResourceDefinition, crs []unstructured.Unstructured) (Result, error) {
	if existing == nil || updated == nil {
		return Result{}, errors.New("check CRD upgrade: both the existing and the new CRD are needed")
	}
	if existing.Name != updated.Name {
		return Result{}, fmt.Errorf("check CRD upgrade: existing CRD %q and new CRD %q are different CRDs", existing.Name, updated.Name)
	}
	if err := checkServedVersions(existing, updated); err != nil {
		return Result{}, err
	}
	var res Result
	if err := checkCustomResources(existing, updated, crs); err != nil {
		var invalid *Error
		if !errors.As(err, &invalid) || !usesWebhookConversion(updated) {
			return Result{}, err
		}
		res.Warnings = append(res.Warnings, err.Error())
	}
	if err := checkStoredVersions(existing, updated); err != nil {
		return Result{}, err
	}
	return res, nil
}

// checkServedVersions: every version the existing CRD serves is still a version of the new
// CRD (served or not: setting served: false is the way to retire one).
func checkServedVersions(existing, updated *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range existing.Spec.Versions {
		if v.Served && !hasVersion(updated, v.Name) {
			return &Error{CRD: existing.Name, Reason: ReasonServedVersionRemoved, Version: v.Name}
		}
	}
	return nil
}

// checkStoredVersions is OLM's SafeStorageVersionUpgrade: every version in the existing
// CRD's status.storedVersions is still a version of the new CRD.
func checkStoredVersions(existing, updated *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range existing.Status.StoredVersions {
		if !hasVersion(updated, v) {
			return &Error{CRD: existing.Name, Reason: ReasonStoredVersionRemoved, Version: v}
		}
	}
	return nil
}

// checkCustomResources validates every custom resource whose version the existing CRD
// serves and the new CRD still serves against the new CRD's schema for that version, in the
// new CRD's version order and then the order given, and returns the first failure.
func checkCustomResources(existing, updated *apiextensionsv1.CustomResourceDefinition, crs []unstructured.Unstructured) error {
	for i := range crs {
		gvk := crs[i].GroupVersionKind()
		if gvk.Group != updated.Spec.Group || gvk.Kind != updated.Spec.Names.Kind {
			return fmt.Errorf("check CRD upgrade of %q: custom resource %q is a %s, not a %s.%s", updated.Name, objectName(&crs[i]), gvk, updated.Spec.Names.Kind, updated.Spec.Group)
		}
	}
	for _, v := range updated.Spec.Versions {
		if !v.Served || !served(existing, v.Name) {
			continue
		}
		validator, err := newValidator(v.Schema)
		if err != nil {
			return fmt.Errorf("error validating existing CRs against new CRD's schema for %q: error creating validator for schema version %s: %w", updated.Name, v.Name, err)
		}
		if validator == nil {
			continue
		}
		for i := range crs {
			if crs[i].GroupVersionKind().Version != v.Name {
				continue
			}
			if errs := validation.ValidateCustomResource(field.NewPath(""), crs[i].UnstructuredContent(), validator); len(errs) > 0 {
				return &Error{
					CRD: updated.Name, Reason: ReasonInvalidCustomResource, Version: v.Name,
					Object: objectName(&crs[i]), Group: updated.Spec.Group, Kind: updated.Spec.Names.Kind, Details: errs,
				}
			}
		}
	}
	return nil
}

// newValidator builds the apiextensions-apiserver validator of a version's schema; nil when
// the version has none (nothing to validate against).
func newValidator(v *apiextensionsv1.CustomResourceValidation) (validation.SchemaValidator, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, internal, nil); err != nil {
		return nil, err
	}
	validator, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	return validator, err
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

func hasVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) bool {
	return slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == name })
}

func served(crd *apiextensionsv1.CustomResourceDefinition, name string) bool {
	return slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == name && v.Served })
}

func usesWebhookConversion(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
}
