package installplan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/pullsecret"
)

// lookupsState sums up a plan's bundle lookups: Failed when one failed, Pending when one
// is still unpacking, Unpacked when all are in the plan (or there are none).
func lookupsState(lookups []v1alpha1.BundleLookup) LookupState {
	state := LookupUnpacked
	for i := range lookups {
		switch StateOf(&lookups[i]) {
		case LookupFailed:
			return LookupFailed
		case LookupPending:
			state = LookupPending
		}
	}
	return state
}

// unpack takes every pending bundle lookup of the plan a step further (UpdateLookup):
// pulls start in the background and wake the plan when they end; a bundle unpacked and
// checked against its catalog has its steps appended to the plan, each naming the image by
// digest. It returns where the lookups stand.
func (r *Reconciler) unpack(ctx context.Context, obj *v1alpha1.InstallPlan) (LookupState, error) {
	if r.Unpacker == nil {
		return LookupPending, errors.New("the plan has bundle lookups, and no unpacker is set up")
	}
	var groups operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &groups, client.InNamespace(obj.Namespace)); err != nil {
		return LookupPending, err
	}
	timeout, err := UnpackTimeout(groups.Items, r.unpackTimeout())
	if err != nil {
		// OLM does not unpack in such a namespace either; say why on the plan.
		obj.Status.Message = err.Error()
		return LookupPending, nil
	}
	if obj.Status.Message != "" && len(obj.Status.Plan) == 0 {
		obj.Status.Message = ""
	}
	now := metav1.Now()
	for i := range obj.Status.BundleLookups {
		l := &obj.Status.BundleLookups[i]
		if StateOf(l) != LookupPending {
			continue
		}
		a := r.attempt(ctx, obj, l)
		if UpdateLookup(l, a, now, timeout) == LookupFailed {
			log.FromContext(ctx).Info("bundle unpacking failed", "bundle", l.Identifier, "image", l.Path)
		}
	}
	return lookupsState(obj.Status.BundleLookups), nil
}

// attempt asks the unpacker for a lookup's image, pulled with its catalog's credentials,
// and appends the bundle's steps to the plan once it is unpacked and is the bundle the
// catalog says it is.
func (r *Reconciler) attempt(ctx context.Context, obj *v1alpha1.InstallPlan, l *v1alpha1.BundleLookup) Attempt {
	if l.CatalogSourceRef == nil {
		return Attempt{Done: true, Permanent: true, Err: errors.New("the bundle lookup names no catalog source")}
	}
	key := types.NamespacedName{Namespace: l.CatalogSourceRef.Namespace, Name: l.CatalogSourceRef.Name}
	cs := &v1alpha1.CatalogSource{}
	if err := r.Client.Get(ctx, key, cs); err != nil {
		if apierrors.IsNotFound(err) {
			return Attempt{CatalogSourceMissing: true}
		}
		return Attempt{Done: true, Err: err}
	}
	creds, err := pullsecret.ForCatalogSource(ctx, r.APIReader, cs, r.Unpacker.Images.Keychain)
	if err != nil {
		return Attempt{Done: true, Err: err}
	}
	res := r.Unpacker.Get(l.Path, key, creds, client.ObjectKeyFromObject(obj))
	switch {
	case !res.Done:
		return Attempt{Err: res.Err}
	case res.Err != nil:
		return Attempt{Done: true, Err: res.Err, Permanent: IsPermanentUnpackError(res.Err)}
	}
	if problems := r.matchCatalog(key, l, res.Bundle); len(problems) > 0 {
		err := &catalog.BundleError{Ref: l.Path, Digest: res.Bundle.Source.Digest, Problems: problems}
		return Attempt{Done: true, Err: errors.New(creds.Redact(err.Error())), Permanent: true}
	}
	digestRef, err := catalog.DigestReference(l.Path, res.Bundle.Source.Digest)
	if err != nil {
		return Attempt{Done: true, Err: err, Permanent: true}
	}
	ref := resolve.LookupReference(*l, digestRef)
	steps, err := resolve.UnpackedSteps(obj.Namespace, ref, res.Bundle.Bundle)
	if err != nil {
		return Attempt{Done: true, Err: err, Permanent: true}
	}
	// OLM appends an unpacked bundle's steps after the plan's, in the order they were made.
	obj.Status.Plan = append(obj.Status.Plan, resolve.Referenced(steps, ref)...)
	if !slices.Contains(obj.Status.CatalogSources, key.Name) {
		obj.Status.CatalogSources = append(obj.Status.CatalogSources, key.Name)
	}
	return Attempt{Done: true}
}

// matchCatalog checks the unpacked bundle against the catalog's bundle of the lookup: the
// one the registry holds, or, when the catalog no longer lists it, at least its name.
func (r *Reconciler) matchCatalog(source types.NamespacedName, l *v1alpha1.BundleLookup, u *catalog.UnpackedBundle) catalog.Problems {
	if r.Catalogs != nil {
		if e, ok := r.Catalogs.Get(source); ok && e.Content != nil {
			for _, p := range e.Content.Packages {
				if b := p.Bundle(l.Identifier); b != nil {
					return u.MatchCatalog(p, b)
				}
			}
		}
	}
	return u.MatchCatalog(nil, &catalog.Bundle{Name: l.Identifier, Package: u.Annotations.Package})
}

// replacesOf is the replaces of a bundle a plan installs from a catalog: its CSV's, or,
// for a bundle known only by image, the entry's in the first channel of its package that
// lists it.
func replacesOf(reg *catalogsource.Registry, from types.NamespacedName, b *catalog.Bundle) string {
	if b.CSV != nil {
		return b.CSV.Spec.Replaces
	}
	if e, ok := reg.Get(from); ok && e.Content != nil {
		if p := e.Content.Package(b.Package); p != nil {
			for _, ch := range p.Channels {
				if entry := ch.Entry(b.Name); entry != nil {
					return entry.Replaces
				}
			}
		}
	}
	return ""
}

// referencedImages makes the objects of steps that name an unpacked bundle image, once
// per image for one reconcile.
type referencedImages struct {
	r     *Reconciler
	plan  types.NamespacedName
	steps map[string][]v1alpha1.Step
}

// resolve returns the step with its object as manifest: the step itself when it holds its
// object, else the object made again from the image it names. ready is false while the
// image is being pulled again (the cache no longer holds it).
func (ri *referencedImages) resolve(ctx context.Context, s v1alpha1.Step) (v1alpha1.Step, bool, error) {
	ref, ok := resolve.ParseBundleImageReference(s.Resource.Manifest)
	if !ok {
		return s, true, nil
	}
	steps, ok := ri.steps[ref.Image]
	if !ok {
		if ri.r.Unpacker == nil {
			return s, false, errors.New("the plan has steps from bundle images, and no unpacker is set up")
		}
		source := types.NamespacedName{Namespace: ref.CatalogSourceNamespace, Name: ref.CatalogSourceName}
		var creds *pullsecret.Credentials
		cs := &v1alpha1.CatalogSource{}
		if err := ri.r.Client.Get(ctx, source, cs); err == nil {
			if creds, err = pullsecret.ForCatalogSource(ctx, ri.r.APIReader, cs, ri.r.Unpacker.Images.Keychain); err != nil {
				return s, false, err
			}
		}
		res := ri.r.Unpacker.Get(ref.Image, source, creds, ri.plan)
		switch {
		case !res.Done:
			return s, false, nil
		case res.Err != nil && IsPermanentUnpackError(res.Err):
			return s, false, &StepError{Kind: s.Resource.Kind, Name: s.Resource.Name, Err: res.Err}
		case res.Err != nil:
			return s, false, nil
		}
		var err error
		if steps, err = resolve.UnpackedSteps(ri.plan.Namespace, ref, res.Bundle.Bundle); err != nil {
			return s, false, &StepError{Kind: s.Resource.Kind, Name: s.Resource.Name, Err: err}
		}
		if ri.steps == nil {
			ri.steps = map[string][]v1alpha1.Step{}
		}
		ri.steps[ref.Image] = steps
	}
	manifest, ok := resolve.StepManifest(steps, s)
	if !ok {
		return s, false, &StepError{Kind: s.Resource.Kind, Name: s.Resource.Name,
			Err: fmt.Errorf("bundle image %s has no %s %s", ref.Image, s.Resource.Kind, s.Resource.Name)}
	}
	s.Resource.Manifest = manifest
	return s, true, nil
}
