package crdupgrade

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// scheme knows every apiextensions version with its defaults and its conversions to and
// from the internal version, so a v1beta1 CRD becomes the v1 CRD the API server would store.
var (
	scheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		install.Install(s)
		return s
	}()
	codecs = serializer.NewCodecFactory(scheme)
)

// Decode reads a CustomResourceDefinition manifest (YAML or JSON) of apiextensions.k8s.io/v1
// or v1beta1 and returns it as v1, defaulted and converted as the API server does. Bundles
// still carry v1beta1 CRDs, which API servers since Kubernetes 1.22 no longer accept.
// The manifest passes the bounded reader (internal/safeyaml) first.
func Decode(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	if err := safeyaml.Check("", data); err != nil {
		return nil, fmt.Errorf("decode CustomResourceDefinition: %w", err)
	}
	// Decoding into the internal version applies the defaults of the version written
	// (v1beta1's top-level version and validation become per-version fields); converting
	// the internal object gives v1.
	obj, gvk, err := codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode CustomResourceDefinition: %w", err)
	}
	internal, ok := obj.(*apiextensions.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("decode CustomResourceDefinition: the manifest is a %s", gvk)
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("decode CustomResourceDefinition %s: %w", internal.Name, err)
	}
	out.APIVersion, out.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	return out, nil
}
