package render

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/fluxcd/pkg/envsubst"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// PostBuild is what a Sync adds on top of every app it deploys, after the app's own
// kustomize build and before the policy sees the objects, the way a Flux Kustomization's
// targetNamespace, patches, commonMetadata and postBuild do. The zero value changes
// nothing. The offline `olmsync check` of a repository has no Sync and never sets it.
type PostBuild struct {
	// TargetNamespace moves every namespaced object into this namespace, with kustomize's
	// namespace transformer (as `namespace:` in a kustomization would).
	TargetNamespace string
	// Patches are kustomize patches (strategic merge or JSON 6902, each with an optional
	// target selector) applied to the app's objects.
	Patches []types.Patch
	// Labels and Annotations are set on every object's metadata; unlike kustomize's
	// commonLabels they touch no selector and no pod template (Flux's commonMetadata).
	Labels, Annotations map[string]string
	// Substitute maps variable names to values replaced in every object's YAML, ${var},
	// ${var:=default} and the other forms of Flux's envsubst. nil means no substitution.
	Substitute map[string]string
	// StrictSubstitute makes a ${var} with no value and no default an error instead of
	// an empty string (Flux's StrictPostBuildSubstitutions).
	StrictSubstitute bool
}

// SubstituteAnnotation, set to SubstituteDisabled on an object, leaves it out of the
// variable substitution (Flux's annotation, so the same manifests work in both).
const (
	SubstituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"
	SubstituteDisabled   = "disabled"
)

// indexAnnotation carries each object's position through the second kustomize run.
const indexAnnotation = "internal.olmsync.dev/post-build-index"

// varName is what Flux accepts as a variable's name.
var varName = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// ErrPostBuild marks a failure of the Sync's post-build step.
var ErrPostBuild = errors.New("post-build failed")

func (pb *PostBuild) transforms() bool {
	return pb != nil && (pb.TargetNamespace != "" || len(pb.Patches) > 0 || len(pb.Labels) > 0 || len(pb.Annotations) > 0)
}

// Validate says what is wrong with the settings themselves, before any app is built.
func (pb *PostBuild) Validate() error {
	if pb == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(pb.Substitute)) {
		if !varName.MatchString(name) {
			return fmt.Errorf("%w: substitution variable %q: a name is a letter or underscore followed by letters, digits and underscores", ErrPostBuild, name)
		}
	}
	for i, p := range pb.Patches {
		if p.Path != "" {
			return fmt.Errorf("%w: patches[%d]: path is not supported, write the patch inline", ErrPostBuild, i)
		}
		if p.Patch == "" {
			return fmt.Errorf("%w: patches[%d]: patch is empty", ErrPostBuild, i)
		}
	}
	return nil
}

// apply runs the post-build on one app's objects, in place.
func (pb *PostBuild) apply(objs []*Object) error {
	if pb == nil {
		return nil
	}
	if err := pb.Validate(); err != nil {
		return err
	}
	if pb.transforms() && len(objs) > 0 {
		if err := pb.kustomize(objs); err != nil {
			return err
		}
	}
	if pb.Substitute != nil {
		for _, o := range objs {
			if err := pb.substitute(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// kustomize runs kustomize a second time over the built objects, in memory, with a
// kustomization holding the namespace, patches and metadata transformers, as Flux's
// kustomize-controller adds them to the kustomization it builds.
func (pb *PostBuild) kustomize(objs []*Object) error {
	var in bytes.Buffer
	for i, o := range objs {
		m := o.Manifest.DeepCopy()
		ann := m.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[indexAnnotation] = strconv.Itoa(i)
		m.SetAnnotations(ann)
		b, err := yaml.Marshal(m.Object)
		if err != nil {
			return fmt.Errorf("%w: encode %s: %w", ErrPostBuild, describeObject(o), err)
		}
		in.WriteString("---\n")
		in.Write(b)
	}
	k := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"objects.yaml"},
		Namespace: pb.TargetNamespace,
		Patches:   pb.Patches,
	}
	if len(pb.Labels) > 0 {
		k.Transformers = append(k.Transformers, metadataTransformer("LabelTransformer", "labels", pb.Labels))
	}
	if len(pb.Annotations) > 0 {
		k.Transformers = append(k.Transformers, metadataTransformer("AnnotationsTransformer", "annotations", pb.Annotations))
	}
	kb, err := yaml.Marshal(k)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPostBuild, err)
	}
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/post-build/objects.yaml", in.Bytes()); err != nil {
		return err
	}
	if err := fs.WriteFile("/post-build/kustomization.yaml", kb); err != nil {
		return err
	}
	kz := krusty.MakeKustomizer(&krusty.Options{
		Reorder:          krusty.ReorderOptionNone,
		LoadRestrictions: types.LoadRestrictionsRootOnly,
		PluginConfig:     types.DisabledPluginConfig(),
	})
	m, err := kz.Run(fs, "/post-build")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPostBuild, err)
	}
	seen := make([]bool, len(objs))
	for _, res := range m.Resources() {
		u, err := toUnstructured(&res.RNode)
		if err != nil {
			return fmt.Errorf("%w: decode %s: %w", ErrPostBuild, res.CurId(), err)
		}
		ann := u.GetAnnotations()
		i, err := strconv.Atoi(ann[indexAnnotation])
		if err != nil || i < 0 || i >= len(objs) || seen[i] {
			return fmt.Errorf("%w: kustomize returned an object olmsync did not give it (%s %s)", ErrPostBuild, u.GetKind(), u.GetName())
		}
		seen[i] = true
		delete(ann, indexAnnotation)
		if len(ann) == 0 {
			ann = nil
		}
		u.SetAnnotations(ann)
		objs[i].Manifest = u
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("%w: kustomize dropped %s", ErrPostBuild, describeObject(objs[i]))
		}
	}
	return nil
}

// metadataTransformer is an inline builtin transformer that sets fields under metadata
// only (create: true), so selectors and pod templates stay as written.
func metadataTransformer(kind, field string, values map[string]string) string {
	cfg := map[string]any{
		"apiVersion": "builtin",
		"kind":       kind,
		"metadata":   map[string]any{"name": "olmsync-common-metadata"},
		field:        values,
		"fieldSpecs": []map[string]any{{"path": "metadata/" + field, "create": true}},
	}
	b, _ := yaml.Marshal(cfg)
	return string(b)
}

// substitute replaces the variables in one object's YAML, unless the object opts out.
func (pb *PostBuild) substitute(o *Object) error {
	if o.Manifest.GetAnnotations()[SubstituteAnnotation] == SubstituteDisabled {
		return nil
	}
	b, err := yaml.Marshal(o.Manifest.Object)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %w", ErrPostBuild, describeObject(o), err)
	}
	// Unset variables are empty, as with Flux's default; in strict mode they are an error
	// (the mapping says the variable does not exist), unless the reference has a default.
	text, err := envsubst.Eval(string(b), func(name string) (string, bool) {
		v, ok := pb.Substitute[name]
		return v, ok || !pb.StrictSubstitute
	})
	if err != nil {
		return fmt.Errorf("%w: substitute variables in %s: %w", ErrPostBuild, describeObject(o), err)
	}
	// A value can bring YAML structure of its own (anchors included): the result passes
	// the same limits as a file of the repository.
	if err := safeyaml.Check(o.Source.File, []byte(text)); err != nil {
		return fmt.Errorf("%w: %s after substitution: %w", ErrPostBuild, describeObject(o), err)
	}
	rn, err := kyaml.Parse(text)
	if err != nil {
		return fmt.Errorf("%w: %s is not valid YAML after substitution: %w", ErrPostBuild, describeObject(o), err)
	}
	u, err := toUnstructured(rn)
	if err != nil {
		return fmt.Errorf("%w: %s after substitution: %w", ErrPostBuild, describeObject(o), err)
	}
	o.Manifest = u
	return nil
}

// describeObject names an object and where it was written.
func describeObject(o *Object) string {
	return fmt.Sprintf("%s %s (%s:%d)", o.Manifest.GetKind(), o.Manifest.GetName(), o.Source.File, o.Source.Line)
}
