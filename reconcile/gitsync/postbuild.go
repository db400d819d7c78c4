package gitsync

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/render"
)

// SubstituteError is a ConfigMap or Secret of spec.postBuild.substituteFrom that could
// not be read. It names the object, never a value.
type SubstituteError struct {
	Kind, Namespace, Name string
	Err                   error
}

func (e *SubstituteError) Error() string {
	return fmt.Sprintf("postBuild.substituteFrom %s %s/%s: %v", e.Kind, e.Namespace, e.Name, e.Err)
}

func (e *SubstituteError) Unwrap() error { return e.Err }

// PostBuildFor turns a Sync's targetNamespace, patches, commonMetadata and postBuild into
// what render adds to every app, reading substituteFrom's ConfigMaps and Secrets with c
// (the Sync's own identity when it names a service account). nil when the Sync sets none.
func PostBuildFor(ctx context.Context, c client.Reader, obj *olmsyncv1alpha1.Sync, strict bool) (*render.PostBuild, error) {
	s := obj.Spec
	if s.TargetNamespace == "" && len(s.Patches) == 0 && s.CommonMetadata == nil && s.PostBuild == nil {
		return nil, nil
	}
	pb := &render.PostBuild{TargetNamespace: s.TargetNamespace, StrictSubstitute: strict}
	for _, p := range s.Patches {
		kp := types.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			kp.Target = &types.Selector{
				ResId:              resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
				AnnotationSelector: t.AnnotationSelector,
				LabelSelector:      t.LabelSelector,
			}
		}
		pb.Patches = append(pb.Patches, kp)
	}
	if m := s.CommonMetadata; m != nil {
		pb.Labels, pb.Annotations = m.Labels, m.Annotations
	}
	if s.PostBuild == nil {
		return pb, nil
	}
	vars := map[string]string{}
	for _, ref := range s.PostBuild.SubstituteFrom {
		data, err := substituteData(ctx, c, obj.Namespace, ref)
		if err != nil {
			return nil, err
		}
		maps.Copy(vars, data)
	}
	maps.Copy(vars, s.PostBuild.Substitute)
	pb.Substitute = vars
	return pb, nil
}

// substituteData reads the variables of one ConfigMap or Secret; an optional one that is
// missing has none.
func substituteData(ctx context.Context, c client.Reader, namespace string, ref olmsyncv1alpha1.SubstituteReference) (map[string]string, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	fail := func(err error) (map[string]string, error) {
		if apierrors.IsNotFound(err) && ref.Optional {
			return nil, nil
		}
		return nil, &SubstituteError{Kind: ref.Kind, Namespace: namespace, Name: ref.Name, Err: err}
	}
	switch ref.Kind {
	case "ConfigMap":
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, cm); err != nil {
			return fail(err)
		}
		return cm.Data, nil
	case "Secret":
		sec := &corev1.Secret{}
		if err := c.Get(ctx, key, sec); err != nil {
			return fail(err)
		}
		out := make(map[string]string, len(sec.Data))
		for k, v := range sec.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, &SubstituteError{Kind: ref.Kind, Namespace: namespace, Name: ref.Name, Err: fmt.Errorf("kind must be ConfigMap or Secret")}
}
