package render

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomizeState guards kustomize's process-wide state. Ordinary builds share it; a build
// that changes it (a custom openapi schema) or whose log output must be attributed (vars)
// holds it alone.
var kustomizeState sync.RWMutex

// parseSchema makes kyaml parse its built-in OpenAPI schema now. kyaml parses it lazily, on
// the first lookup that needs more than its precomputed table, and writes the global schema
// without a lock: two builds running at once would race on that first parse. Callers hold
// kustomizeState for writing.
func parseSchema() {
	openapi.SchemaForResourceType(yaml.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"})
}

// builder renders planned apps.
type builder struct {
	r    *repo
	opts *Options
}

// buildCached is buildApp through the Cache: an app whose inputs were built before is
// taken from it (kustomize's messages about it were reported with that build).
func (b *builder) buildCached(p *plan) ([]*Object, []Diagnostic, error) {
	key := b.cacheKey(p)
	if objs, ok := b.opts.Cache.get(key); ok {
		return objs, nil, nil
	}
	objs, lines, err := b.buildApp(p)
	if err == nil && len(lines) == 0 && key != "" {
		b.opts.Cache.put(key, objs)
		b.remember(p, key)
	}
	return objs, lines, err
}

// buildApp renders one planned app. lines are kustomize's messages, attributed to the app.
func (b *builder) buildApp(p *plan) (objs []*Object, lines []Diagnostic, err error) {
	if p.kustFile == "" {
		objs, err := b.readPlainFolder(p)
		return objs, nil, err
	}
	m, output, err := b.runKustomize(p)
	for _, line := range output {
		lines = append(lines, Diagnostic{Reason: ReasonKustomizeOutput, File: p.kustFile,
			Apps: []string{p.app.ID()}, Message: line})
	}
	if err != nil {
		return nil, lines, &BuildError{App: p.app.ID(), File: p.kustFile,
			Err: &kustomizeError{msg: b.relativize(err.Error())}}
	}
	objs, err = b.objects(p, m)
	if err != nil {
		return nil, lines, &BuildError{App: p.app.ID(), File: p.kustFile, Err: err}
	}
	return objs, lines, nil
}

// runKustomize runs kustomize under kustomizeState: shared for ordinary builds, alone for
// exclusive ones, whose stray output it returns. A panic in kustomize fails this app only.
func (b *builder) runKustomize(p *plan) (m resmap.ResMap, output []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	if !p.exclusive {
		kustomizeState.RLock()
		defer kustomizeState.RUnlock()
		m, err = b.kustomize(p)
		return m, nil, err
	}
	kustomizeState.Lock()
	defer kustomizeState.Unlock()
	if p.openAPI {
		// A custom schema would otherwise stay for every later build; the built-in one is
		// parsed again before shared builds may read it.
		defer func() {
			openapi.ResetOpenAPI()
			parseSchema()
		}()
	}
	output = stray.collect(func() { m, err = b.kustomize(p) })
	return m, output, err
}

// kustomize runs krusty on the app's folder, through the overlay filesystem.
func (b *builder) kustomize(p *plan) (resmap.ResMap, error) {
	overrides, err := b.withSourceMarkers(p)
	if err != nil {
		return nil, err
	}
	fs := newOverlayFS(b.r, overrides, b.opts.AllowRemoteBases)
	k := krusty.MakeKustomizer(&krusty.Options{
		// Unspecified sorts as the kustomize CLI does (legacy order unless the
		// kustomization sets sortOptions) without the CLI's conflicting-flag warning.
		Reorder:          krusty.ReorderOptionUnspecified,
		LoadRestrictions: types.LoadRestrictionsRootOnly,
		PluginConfig:     pluginConfig(b.opts),
	})
	return k.Run(fs, b.r.abs(p.app.Path))
}

// pluginConfig turns the Options into kustomize's plugin settings. Which plugin classes may
// run is enforced by the plan; kustomize only needs to know whether any may.
func pluginConfig(o *Options) *types.PluginConfig {
	pc := types.DisabledPluginConfig()
	if o.EnableExecPlugins || o.EnableContainerPlugins {
		pc = types.MakePluginConfig(types.PluginRestrictionsNone, types.BploUseStaticallyLinked)
		pc.FnpLoadingOptions.EnableExec = o.EnableExecPlugins
	}
	pc.HelmConfig = types.HelmConfig{Enabled: o.EnableHelm, Command: o.HelmCommand}
	return pc
}

// relativize makes the repository's absolute paths in kustomize's messages relative.
func (b *builder) relativize(msg string) string { return b.r.relativize(msg) }

// objects turns kustomize's output into Objects with their sources, removing the origin
// annotations olmsync asked for.
func (b *builder) objects(p *plan, m resmap.ResMap) ([]*Object, error) {
	objs := make([]*Object, 0, m.Size())
	for _, res := range m.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return nil, fmt.Errorf("read origin of %s: %w", res.CurId(), err)
		}
		src, marked, err := takeMarker(res)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", res.CurId(), err)
		case marked:
		case origin == nil && !p.needsOrigin:
			src = b.generatedSource(p, res)
		default:
			src = b.source(p, origin, res)
		}
		if !p.keepOrigin {
			if err := res.SetOrigin(nil); err != nil {
				return nil, fmt.Errorf("remove origin annotation of %s: %w", res.CurId(), err)
			}
		}
		u, err := toUnstructured(&res.RNode)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", res.CurId(), err)
		}
		objs = append(objs, &Object{Manifest: u, App: p.app.Name, Source: src})
	}
	return objs, nil
}

// toUnstructured decodes a YAML node straight into the JSON-shaped map unstructured
// objects hold, as kubectl turns YAML into JSON: integers (and integral floats) as int64,
// timestamps and other scalars as the strings written, mapping keys as strings. Going
// through kyaml's MarshalJSON instead costs a YAML encode, a parse and a JSON round trip
// per object, and turns timestamps into RFC 3339.
func toUnstructured(rn *yaml.RNode) (*unstructured.Unstructured, error) {
	v, err := jsonValue(rn.YNode())
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a manifest must be a mapping, not %T", v)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// jsonValue converts a YAML node to the value encoding/json would decode from its JSON.
func jsonValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return jsonValue(n.Content[0])
	case yaml.AliasNode:
		return jsonValue(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := jsonValue(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		return out, mergeMapping(out, n)
	case yaml.ScalarNode:
		return jsonScalar(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// mergeMapping adds the keys of mapping n to out. Keys set in n win over keys merged in
// with "<<", whatever their order.
func mergeMapping(out map[string]any, n *yaml.Node) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		val, err := jsonValue(v)
		if err != nil {
			return err
		}
		out[intern(k.Value)] = val
	}
	for _, m := range merges {
		if m.Kind == yaml.AliasNode {
			m = m.Alias
		}
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			if src.Kind == yaml.AliasNode {
				src = src.Alias
			}
			merged := map[string]any{}
			if err := mergeMapping(merged, src); err != nil {
				return err
			}
			for k, v := range merged {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	return nil
}

// maxInterned is the longest string value intern shares. Keys are always shared: a
// repository's objects use few. Short values repeat too (apiVersions, kinds, "TCP",
// "Always", label values), long ones rarely, and interning one nothing shares costs more
// than it saves.
const maxInterned = 32

// intern returns the one copy of s every rendered object shares. The rendered objects are
// what a check holds longest, and each of their keys and values was a string of its own,
// allocated by the YAML parser of the app's build: on the 300-app benchmark repository
// (5,000 objects) sharing them takes the objects from 13.0 to 11.9 MB (issue 18).
// unique's table holds its copies weakly: a string no object uses any more is freed.
func intern(s string) string { return unique.Make(s).Value() }

func jsonScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i, nil
		}
		var f float64 // beyond int64: encoding/json would give a float
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s cannot be written as JSON", n.Line, n.Value)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return f, nil
	}
	if len(n.Value) <= maxInterned {
		return intern(n.Value), nil
	}
	return n.Value, nil // strings, timestamps, binary: as written
}

// source finds an object's file and line from kustomize's origin annotation.
func (b *builder) source(p *plan, origin *resource.Origin, res *resource.Resource) Source {
	if origin == nil {
		return Source{File: p.kustFile}
	}
	if origin.Repo != "" {
		return Source{File: origin.Path, Repo: origin.Repo, Ref: origin.Ref}
	}
	if origin.ConfiguredIn != "" {
		file := path.Join(p.app.Path, origin.ConfiguredIn)
		by := origin.ConfiguredBy
		return Source{File: file, GeneratedBy: by.Kind, Line: b.generatorLine(file, by, res.GetName())}
	}
	file := path.Join(p.app.Path, origin.Path)
	return Source{File: file, Line: b.documentLine(file, res.GetApiVersion(), res.GetKind(), res.GetName(), res.GetNamespace())}
}

// documentLine finds the document of file an object came from and returns its first line.
func (b *builder) documentLine(file, apiVersion, kind, name, namespace string) int {
	mf, err := b.r.manifestsIn(file)
	if err != nil {
		return 0
	}
	return matchDoc(mf.Docs, apiVersion, kind, name, namespace)
}

// matchDoc picks the document an object was rendered from. kustomize keeps kind and
// group, but prefixes, suffixes, hashes and namespaces change names, so a document whose
// name is the object's name wins, then the longest name the object's name contains, then
// the same namespace; a document of the same kind is the last resort.
func matchDoc(docs []manifestDoc, apiVersion, kind, name, namespace string) int {
	group := groupOf(apiVersion)
	best, bestScore := 0, -1
	for _, d := range docs {
		if d.Kind != kind || groupOf(d.APIVersion) != group {
			continue
		}
		score := 0
		switch {
		case d.Name == name:
			score = 1 << 20
		case d.Name != "" && strings.Contains(name, d.Name):
			score = 1<<10 + len(d.Name)
		}
		score *= 2
		if d.Namespace == namespace {
			score++
		}
		if score > bestScore {
			best, bestScore = d.Line, score
		}
	}
	if bestScore < 0 && len(docs) == 1 {
		return docs[0].Line
	}
	return best
}

// generatorLine points a generated object at its generator: the configMapGenerator or
// secretGenerator entry of the kustomization whose name the object's name contains, or
// the plugin config's document.
func (b *builder) generatorLine(file string, by yaml.ResourceIdentifier, name string) int {
	base := path.Base(file)
	isKustomization := false
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		isKustomization = isKustomization || base == n
	}
	if !isKustomization {
		return b.documentLine(file, by.APIVersion, by.Kind, by.Name, by.Namespace)
	}
	g, err := b.r.generatorsAt(path.Dir(file))
	if err != nil || g == nil {
		return 0
	}
	field, _ := generatorField(by.Kind)
	best, _ := matchGenerator(g.fields[field].names, name)
	if field == "" {
		field = "generators"
	}
	if best < 0 {
		return g.fields[field].line
	}
	return g.entryLine(field, best)
}

// readPlainFolder reads a folder without a kustomization as Argo CD does: every document of
// every manifest file, as written.
func (b *builder) readPlainFolder(p *plan) ([]*Object, error) {
	var objs []*Object
	for _, file := range p.files {
		mf, err := b.r.trees(file)
		if err != nil {
			return nil, &BuildError{App: p.app.ID(), File: file, Err: err}
		}
		for _, d := range mf.Docs {
			fail := func(err error) error {
				return &BuildError{App: p.app.ID(), File: file, Line: d.Line, Err: err}
			}
			if d.APIVersion == "" || d.Kind == "" || d.Name == "" {
				return nil, fail(fmt.Errorf("document is not a Kubernetes object (apiVersion, kind and metadata.name are required): %w", ErrInvalidManifest))
			}
			u, err := toUnstructured(yaml.NewRNode(d.Node))
			if err != nil {
				return nil, fail(fmt.Errorf("encode %s %s: %w", d.Kind, d.Name, err))
			}
			objs = append(objs, &Object{Manifest: u, App: p.app.Name, Source: Source{File: file, Line: d.Line}})
		}
	}
	return objs, nil
}
