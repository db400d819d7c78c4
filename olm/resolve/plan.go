package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// Plan is what the InstallPlan OLM creates for a resolution holds.
type Plan struct {
	// CSVNames is spec.clusterServiceVersionNames: the CSV of every bundle the plan installs.
	CSVNames []string
	// Approval is spec.approval: Manual when any Subscription of the namespace is Manual (OLM
	// makes every plan of such a namespace Manual), else Automatic.
	Approval v1alpha1.Approval
	// Steps is status.plan, in OLM's order: every CSV, then every CRD, then the rest.
	Steps []v1alpha1.Step
	// BundleLookups are the bundles the catalog knows only by image: their steps are made
	// (with BundleSteps) once the image is unpacked, and appended after Steps.
	BundleLookups []v1alpha1.BundleLookup
	// CatalogSources is status.catalogSources: the catalogs the steps and lookups come from.
	CatalogSources []string
}

// BundleSecretKind is the kind OLM gives a Secret shipped in a bundle, to tell it from the
// pull secrets an InstallPlan also lists.
const BundleSecretKind = "BundleSecret"

// NewPlan turns a resolution into the content of its InstallPlan. It returns nil when
// there is nothing to install.
func NewPlan(res *Result) (*Plan, error) {
	if len(res.Bundles) == 0 {
		return nil, nil
	}
	p := &Plan{Approval: v1alpha1.ApprovalAutomatic}
	for _, s := range res.Subscriptions {
		if s.Approval == v1alpha1.ApprovalManual {
			p.Approval = v1alpha1.ApprovalManual
		}
	}
	generated := map[string]*v1alpha1.Subscription{}
	for i := range res.Generated {
		generated[res.Generated[i].Spec.StartingCSV] = &res.Generated[i]
	}
	var steps []v1alpha1.Step
	sources := map[string]bool{}
	for _, b := range res.Bundles {
		sources[b.Source.Name] = true
		if b.Content != nil && b.Content.CSV != nil {
			bs, err := BundleSteps(res.Namespace, b)
			if err != nil {
				return nil, err
			}
			steps = append(steps, bs...)
		} else {
			lookup, err := NewBundleLookup(b)
			if err != nil {
				return nil, err
			}
			p.BundleLookups = append(p.BundleLookups, lookup)
		}
		if b.Subscription == "" {
			if sub := generated[b.Name]; sub != nil {
				step, err := newStep(b.Name, b.Source, sub, sub.Name)
				if err != nil {
					return nil, err
				}
				steps = append(steps, step)
			}
		}
	}
	p.Steps = OrderSteps(steps)
	for _, s := range p.Steps {
		if s.Resource.Kind == v1alpha1.ClusterServiceVersionKind {
			p.CSVNames = append(p.CSVNames, s.Resource.Name)
		}
	}
	for _, l := range p.BundleLookups {
		p.CSVNames = append(p.CSVNames, l.Identifier)
	}
	for name := range sources {
		p.CatalogSources = append(p.CatalogSources, name)
	}
	slices.Sort(p.CatalogSources)
	return p, nil
}

// NewBundleLookup is the bundle lookup of a bundle the catalog knows only by image, with the
// conditions OLM gives a new one.
func NewBundleLookup(b Bundle) (v1alpha1.BundleLookup, error) {
	props := ""
	if b.Content != nil {
		var err error
		if props, err = PropertiesAnnotationValue(b.Content.Properties); err != nil {
			return v1alpha1.BundleLookup{}, err
		}
	}
	image := ""
	if b.Content != nil {
		image = b.Content.Image
	}
	return v1alpha1.BundleLookup{
		Path: image, Identifier: b.Name, Replaces: b.Replaces,
		CatalogSourceRef: &corev1.ObjectReference{Namespace: b.Source.Namespace, Name: b.Source.Name},
		Conditions: []v1alpha1.BundleLookupCondition{
			{Type: v1alpha1.BundleLookupNotPersisted, Status: corev1.ConditionTrue, Reason: v1alpha1.BundleLookupReasonNotUnpacked, Message: v1alpha1.BundleLookupMessageNotUnpacked},
			{Type: v1alpha1.BundleLookupPending, Status: corev1.ConditionTrue, Reason: v1alpha1.BundleLookupReasonJobNotStarted, Message: v1alpha1.BundleLookupMessageJobNotStarted},
		},
		Properties: props,
	}, nil
}

// OrderSteps puts steps in the order OLM applies them: every CSV first, then every CRD,
// then everything else, keeping the order within each group.
func OrderSteps(steps []v1alpha1.Step) []v1alpha1.Step {
	rank := func(s v1alpha1.Step) int {
		switch s.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			return 0
		case "CustomResourceDefinition":
			return 1
		}
		return 2
	}
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(a, b v1alpha1.Step) int { return rank(a) - rank(b) })
	return out
}

// BundleSteps are the steps that install one bundle whose content (CSV and objects) is
// known — from the catalog, or from its unpacked image: the CSV, in the namespace, with
// spec.replaces set to b.Replaces and the bundle's properties in the PropertiesAnnotation;
// every other object of the bundle (a Secret as kind BundleSecret); then, per service
// account of the install strategy, the ServiceAccount (not the "default" one), Roles and
// RoleBindings for its permissions and ClusterRoles and ClusterRoleBindings for its
// clusterPermissions. The steps are in bundle order; NewPlan orders the whole plan.
func BundleSteps(namespace string, b Bundle) ([]v1alpha1.Step, error) {
	if b.Content == nil || b.Content.CSV == nil {
		return nil, fmt.Errorf("bundle %s: no ClusterServiceVersion to make steps from", b.Name)
	}
	csv := b.Content.CSV.DeepCopy()
	if csv.APIVersion == "" {
		csv.APIVersion = v1alpha1.SchemeGroupVersion.String()
	}
	csv.Kind = v1alpha1.ClusterServiceVersionKind
	csv.Namespace = namespace
	csv.Spec.Replaces = b.Replaces
	anno, err := PropertiesAnnotationValue(b.Content.Properties)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations[PropertiesAnnotation] = anno

	step, err := newStep(csv.Name, b.Source, csv, csv.Name)
	if err != nil {
		return nil, err
	}
	steps := []v1alpha1.Step{step}
	for _, o := range b.Content.Objects {
		if o.Kind == v1alpha1.ClusterServiceVersionKind {
			continue
		}
		step, err := objectStep(csv.Name, b.Source, o)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		steps = append(steps, step)
	}
	for _, obj := range rbacObjects(csv) {
		step, err := newStep(csv.Name, b.Source, obj.object, obj.name)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// objectStep is the step of one bundle manifest, taken as it is.
func objectStep(resolving string, source CatalogKey, o catalog.Object) (v1alpha1.Step, error) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return v1alpha1.Step{}, fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
	}
	kind := o.Kind
	if kind == "Secret" && gv.Group == "" {
		kind = BundleSecretKind
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, o.JSON); err != nil {
		return v1alpha1.Step{}, fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
	}
	return v1alpha1.Step{
		Resolving: resolving,
		Resource: v1alpha1.StepResource{
			CatalogSource: source.Name, CatalogSourceNamespace: source.Namespace,
			Group: gv.Group, Version: gv.Version, Kind: kind, Name: o.Name, Manifest: compact.String(),
		},
		Status: v1alpha1.StepStatusUnknown,
	}, nil
}

// newStep is the step creating obj (a typed object with its TypeMeta set).
func newStep(resolving string, source CatalogKey, obj any, name string) (v1alpha1.Step, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return v1alpha1.Step{}, fmt.Errorf("encode step for %s: %w", name, err)
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		return v1alpha1.Step{}, fmt.Errorf("encode step for %s: %w", name, err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return v1alpha1.Step{}, fmt.Errorf("encode step for %s: %w", name, err)
	}
	return v1alpha1.Step{
		Resolving: resolving,
		Resource: v1alpha1.StepResource{
			CatalogSource: source.Name, CatalogSourceNamespace: source.Namespace,
			Group: gv.Group, Version: gv.Version, Kind: tm.Kind, Name: name, Manifest: string(data),
		},
		Status: v1alpha1.StepStatusUnknown,
	}, nil
}
