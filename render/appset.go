package render

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/bmatcuk/doublestar/v4"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file expands Argo CD ApplicationSets into the Applications they generate, as
// Argo CD's ApplicationSet controller does, for the generators whose parameters the
// repository holds: list, git (directories and files of this repository), clusters (the
// clusters the repository names: Argo CD cluster Secrets, Application destinations,
// olmsync.yaml), and matrix and merge of those. An ApplicationSet with another
// generator (SCM provider, pull request, cluster decision resource, plugin) is not
// expanded: a warning, and the roots it would deploy stay library roots.

// applicationSet holds the fields of an ApplicationSet olmsync reads.
type applicationSet struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		GoTemplate        bool        `yaml:"goTemplate"`
		GoTemplateOptions []string    `yaml:"goTemplateOptions"`
		Generators        []yaml.Node `yaml:"generators"`
		Template          yaml.Node   `yaml:"template"`
		TemplatePatch     string      `yaml:"templatePatch"`
	} `yaml:"spec"`
}

// appSetParams is one parameter set a generator yields, in both of Argo CD's forms: flat
// keys for fasttemplate ("path.basename", "path[0]"), nested values for goTemplate
// (.path.basename, .path.segments).
type appSetParams struct {
	flat   map[string]string
	nested map[string]any
}

// maxGeneratedApps bounds what one ApplicationSet may generate, so that a list of a
// million elements or a matrix of two large generators is an error, not a hang.
const maxGeneratedApps = 10000

// appSetExpander expands one ApplicationSet.
type appSetExpander struct {
	r        *repo
	scan     *repoScan
	id       RepositoryIdentity
	docs     *entryDocs
	clusters map[string]string
	set      applicationSet
	file     string
	line     int
}

// errNotExpanded says a generator olmsync cannot expand from the repository.
type errNotExpanded struct{ what string }

func (e *errNotExpanded) Error() string { return e.what }

// applicationSetApps turns one ApplicationSet into the apps of the Applications it
// generates. An ApplicationSet of another repository is foreign; one that cannot be
// expanded is a warning (its generator) or a problem (a malformed manifest), and the rest
// of the repository is still read.
func applicationSetApps(r *repo, s *repoScan, d entryDoc, id RepositoryIdentity, docs *entryDocs, clusters map[string]string, problems *diagnostics) (apps []App, foreign []ForeignApplication) {
	if f, ok := foreignApplicationSet(d.file, d.doc, id); ok {
		return nil, []ForeignApplication{f}
	}
	e := &appSetExpander{r: r, scan: s, id: id, docs: docs, clusters: clusters, file: d.file, line: d.doc.Line}
	if err := d.doc.Node.Decode(&e.set); err != nil {
		ye := yamlError(d.file, err)
		problems.add(Diagnostic{Reason: ReasonInvalidApplication, File: d.file, Line: ye.Line, Message: "ApplicationSet: " + ye.Msg})
		return nil, nil
	}
	name := e.set.Metadata.Name
	report := func(reason Reason, format string, args ...any) {
		problems.add(Diagnostic{Reason: reason, File: d.file, Line: d.doc.Line,
			Message: fmt.Sprintf("ApplicationSet %q: ", name) + fmt.Sprintf(format, args...)})
	}
	if len(e.set.Spec.Generators) == 0 {
		report(ReasonInvalidApplication, "has no spec.generators; it generates nothing")
		return nil, nil
	}
	if e.set.Spec.TemplatePatch != "" {
		report(ReasonIgnoredSetting, "templatePatch is not applied; the Applications are generated from spec.template alone")
	}
	var params []appSetParams
	for i := range e.set.Spec.Generators {
		ps, err := e.generate(&e.set.Spec.Generators[i], nil)
		if err != nil {
			var ne *errNotExpanded
			if errors.As(err, &ne) {
				report(ReasonUnsupportedSource, "generators[%d] is not expanded: %s; the kustomization roots it deploys are checked as library roots (list them in %s with their clusters to check them as apps)", i, ne.what, ConfigFileName)
			} else {
				report(ReasonInvalidApplication, "generators[%d]: %v", i, err)
			}
			return nil, nil
		}
		params = append(params, ps...)
		if len(params) > maxGeneratedApps {
			report(ReasonInvalidApplication, "generates more than %d Applications; not expanded", maxGeneratedApps)
			return nil, nil
		}
	}
	if len(params) == 0 {
		report(ReasonIgnoredSetting, "its generators yield no parameters here, so it generates no Application")
	}
	for _, p := range params {
		node, err := e.render(&e.set.Spec.Template, p)
		if err != nil {
			report(ReasonInvalidApplication, "template: %v", err)
			return nil, nil
		}
		doc := manifestDoc{Line: d.doc.Line, APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Node: node}
		doc.Name = scalarAt(node, "metadata", "name")
		generated, more := applicationApps(r, d.file, doc, id, problems)
		for i := range generated {
			a := &generated[i]
			a.Found.Method = MethodApplicationSet
			a.Found.Reason = fmt.Sprintf("Argo CD ApplicationSet %q generates Application %q, which deploys path %q to %s",
				name, doc.Name, a.Path, destinationLabel(a.Cluster, a.Namespace))
			a.ClusterReason = fmt.Sprintf("Argo CD ApplicationSet %q generates Application %q, which deploys it to %s", name, doc.Name, destinationLabel(a.Cluster, ""))
		}
		apps = append(apps, generated...)
		for _, f := range more {
			f.Kind = "ApplicationSet"
			f.Name = name + "/" + f.Name
			foreign = append(foreign, f)
		}
	}
	return apps, foreign
}

// generate yields the parameter sets of one generator. parent, inside a matrix, are the
// parameters of the first generator, which the second's fields may use.
func (e *appSetExpander) generate(g *yaml.Node, parent *appSetParams) ([]appSetParams, error) {
	if g.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("a generator is a mapping")
	}
	if parent != nil {
		rendered, err := e.render(g, *parent)
		if err != nil {
			return nil, err
		}
		g = rendered
	}
	var kind string
	var body *yaml.Node
	var selector *yaml.Node
	for i := 0; i+1 < len(g.Content); i += 2 {
		switch key := g.Content[i].Value; key {
		case "selector":
			selector = g.Content[i+1]
		default:
			if kind != "" {
				return nil, fmt.Errorf("a generator names one kind; found %s and %s", kind, key)
			}
			kind, body = key, g.Content[i+1]
		}
	}
	var ps []appSetParams
	var err error
	switch kind {
	case "list":
		ps, err = e.list(body)
	case "git":
		ps, err = e.git(body)
	case "clusters":
		ps, err = e.clusterParams(body)
	case "matrix":
		ps, err = e.matrix(body)
	case "merge":
		ps, err = e.merge(body)
	case "":
		return nil, fmt.Errorf("a generator names no kind")
	default:
		return nil, &errNotExpanded{what: fmt.Sprintf("its %s generator takes its parameters from outside the repository", kind)}
	}
	if err != nil || selector == nil {
		return ps, err
	}
	match, err := labelSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	return slices.DeleteFunc(ps, func(p appSetParams) bool { return !match(p.flat) }), nil
}

// list is the list generator: each element is a parameter set.
func (e *appSetExpander) list(body *yaml.Node) ([]appSetParams, error) {
	var l struct {
		Elements     []map[string]any `yaml:"elements"`
		ElementsYaml string           `yaml:"elementsYaml"`
	}
	if err := body.Decode(&l); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	if l.ElementsYaml != "" {
		var more []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &more); err != nil {
			return nil, fmt.Errorf("list.elementsYaml: %w", err)
		}
		l.Elements = append(l.Elements, more...)
	}
	out := make([]appSetParams, 0, len(l.Elements))
	for _, el := range l.Elements {
		out = append(out, paramsOf(el))
	}
	return out, nil
}

// paramsOf makes a parameter set of a mapping: nested as it is, flat with nested keys
// joined by ".".
func paramsOf(m map[string]any) appSetParams {
	p := appSetParams{flat: map[string]string{}, nested: m}
	flattenParams("", m, p.flat)
	return p
}

func flattenParams(prefix string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenParams(key, val, out)
		}
	case nil:
		out[prefix] = ""
	case string:
		out[prefix] = t
	default:
		out[prefix] = fmt.Sprint(t)
	}
}

// gitGenerator holds the git generator's fields.
type gitGenerator struct {
	RepoURL     string `yaml:"repoURL"`
	Revision    string `yaml:"revision"`
	Directories []struct {
		Path    string `yaml:"path"`
		Exclude bool   `yaml:"exclude"`
	} `yaml:"directories"`
	Files []struct {
		Path    string `yaml:"path"`
		Exclude bool   `yaml:"exclude"`
	} `yaml:"files"`
	PathParamPrefix string            `yaml:"pathParamPrefix"`
	Values          map[string]string `yaml:"values"`
}

// git is the git generator, over this repository's folders or files.
func (e *appSetExpander) git(body *yaml.Node) ([]appSetParams, error) {
	var g gitGenerator
	if err := body.Decode(&g); err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	if len(e.id.URLs) > 0 && !matchesRepoURL(g.RepoURL, e.id.URLs) {
		return nil, &errNotExpanded{what: fmt.Sprintf("its git generator reads repository %s, not this one", g.RepoURL)}
	}
	var out []appSetParams
	switch {
	case len(g.Directories) > 0:
		for _, dir := range e.scan.dirs {
			top := path.Join(e.id.Path, dir) // the generator's paths start at the repository's top
			if dir == "." || inHiddenFolder(dir+"/x") {
				continue
			}
			included := false
			for _, d := range g.Directories {
				if ok, _ := path.Match(d.Path, top); ok {
					if d.Exclude {
						included = false
						break
					}
					included = true
				}
			}
			if included {
				out = append(out, withValues(pathParams(g.PathParamPrefix, top, ""), g.Values))
			}
		}
	case len(g.Files) > 0:
		for _, file := range e.scan.files {
			top := path.Join(e.id.Path, file)
			included := false
			for _, f := range g.Files {
				if ok, _ := doublestar.Match(f.Path, top); ok {
					if f.Exclude {
						included = false
						break
					}
					included = true
				}
			}
			if !included {
				continue
			}
			ps, err := e.fileParams(file, top, g)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
	default:
		return nil, fmt.Errorf("git: neither directories nor files")
	}
	return out, nil
}

// fileParams are the parameter sets of one file the git files generator reads: its
// content (a mapping, or a list of them) and its path.
func (e *appSetExpander) fileParams(file, top string, g gitGenerator) ([]appSetParams, error) {
	data, err := e.r.readFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := decodeDocs(file, data)
	if err != nil {
		return nil, err
	}
	var out []appSetParams
	for _, d := range docs {
		var v any
		if err := d.Node.Decode(&v); err != nil {
			return nil, yamlError(file, err)
		}
		var items []map[string]any
		switch t := v.(type) {
		case map[string]any:
			items = []map[string]any{t}
		case []any:
			for _, it := range t {
				if m, ok := it.(map[string]any); ok {
					items = append(items, m)
				}
			}
		default:
			return nil, &YAMLError{File: file, Line: d.Line, Msg: "the git files generator reads a mapping or a list of mappings"}
		}
		for _, it := range items {
			p := paramsOf(it)
			pp := pathParams(g.PathParamPrefix, path.Dir(top), path.Base(top))
			maps.Copy(p.flat, pp.flat)
			maps.Copy(p.nested, pp.nested)
			out = append(out, withValues(p, g.Values))
		}
	}
	return out, nil
}

// pathParams are the git generator's path parameters of a folder (and of a file in it).
func pathParams(prefix, dir, filename string) appSetParams {
	segs := strings.Split(dir, "/")
	base := path.Base(dir)
	flat := map[string]string{"path": dir, "path.basename": base, "path.basenameNormalized": normalizeName(base)}
	nested := map[string]any{"path": dir, "basename": base, "basenameNormalized": normalizeName(base)}
	anySegs := make([]any, len(segs))
	for i, s := range segs {
		flat["path["+strconv.Itoa(i)+"]"] = s
		anySegs[i] = s
	}
	nested["segments"] = anySegs
	if filename != "" {
		flat["path.filename"] = filename
		flat["path.filenameNormalized"] = normalizeName(filename)
		nested["filename"] = filename
		nested["filenameNormalized"] = normalizeName(filename)
	}
	p := appSetParams{flat: map[string]string{}, nested: map[string]any{}}
	if prefix == "" {
		p.flat = flat
		p.nested["path"] = nested
		return p
	}
	for k, v := range flat {
		p.flat[prefix+"."+k] = v
	}
	p.nested[prefix] = map[string]any{"path": nested}
	return p
}

// normalizeName is Argo CD's basenameNormalized: a name any Kubernetes object may carry.
var notNameChars = regexp.MustCompile(`[^a-zA-Z0-9-.]+`)

func normalizeName(s string) string {
	return notNameChars.ReplaceAllString(s, "-")
}

func withValues(p appSetParams, values map[string]string) appSetParams {
	if len(values) == 0 {
		return p
	}
	nested := map[string]any{}
	for k, v := range values {
		p.flat["values."+k] = v
		nested[k] = v
	}
	p.nested["values"] = nested
	return p
}

// clusterParams is the clusters generator, over the clusters the repository names: Argo
// CD's cluster Secrets (with their labels) and every other cluster it names by name
// (without labels, so only an empty selector takes them).
func (e *appSetExpander) clusterParams(body *yaml.Node) ([]appSetParams, error) {
	var c struct {
		Selector yaml.Node         `yaml:"selector"`
		Values   map[string]string `yaml:"values"`
	}
	if body != nil && body.Kind == yaml.MappingNode {
		if err := body.Decode(&c); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	match := func(map[string]string) bool { return true }
	if c.Selector.Kind != 0 {
		m, err := labelSelector(&c.Selector)
		if err != nil {
			return nil, fmt.Errorf("clusters.selector: %w", err)
		}
		match = m
	}
	secrets := map[string]bool{}
	var out []appSetParams
	add := func(name, server string, labels, annotations map[string]string) {
		if !match(labels) {
			return
		}
		p := appSetParams{
			flat: map[string]string{"name": name, "nameNormalized": normalizeName(name), "server": server},
			nested: map[string]any{"name": name, "nameNormalized": normalizeName(name), "server": server,
				"metadata": map[string]any{"labels": stringsToAny(labels), "annotations": stringsToAny(annotations)}},
		}
		for k, v := range labels {
			p.flat["metadata.labels."+k] = v
		}
		for k, v := range annotations {
			p.flat["metadata.annotations."+k] = v
		}
		out = append(out, withValues(p, c.Values))
	}
	for _, s := range e.docs.clusterSecrets {
		secrets[s.name] = true
		add(s.name, s.server, s.labels, s.annotations)
	}
	for _, name := range clusterNames(e.clusters) {
		if secrets[name] {
			continue
		}
		server := ""
		if name == argoInClusterName {
			server = argoInClusterServer
		}
		add(name, server, map[string]string{}, map[string]string{})
	}
	if len(out) == 0 {
		return nil, &errNotExpanded{what: fmt.Sprintf("its clusters generator selects none of the clusters the repository names (Argo CD cluster Secrets, Application destinations, %s discovery.clusters)", ConfigFileName)}
	}
	return out, nil
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// matrix combines two generators: every parameter set of the first with every set of the
// second, whose fields may use the first's parameters.
func (e *appSetExpander) matrix(body *yaml.Node) ([]appSetParams, error) {
	var m struct {
		Generators []yaml.Node `yaml:"generators"`
	}
	if err := body.Decode(&m); err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("matrix: takes two generators, has %d", len(m.Generators))
	}
	first, err := e.generate(&m.Generators[0], nil)
	if err != nil {
		return nil, err
	}
	var out []appSetParams
	for _, p1 := range first {
		second, err := e.generate(&m.Generators[1], &p1)
		if err != nil {
			return nil, err
		}
		for _, p2 := range second {
			p := appSetParams{flat: maps.Clone(p1.flat), nested: maps.Clone(p1.nested)}
			maps.Copy(p.flat, p2.flat)
			maps.Copy(p.nested, p2.nested)
			out = append(out, p)
			if len(out) > maxGeneratedApps {
				return nil, fmt.Errorf("matrix: more than %d parameter sets", maxGeneratedApps)
			}
		}
	}
	return out, nil
}

// merge overlays the parameter sets of later generators on those of the first that have
// the same values for every merge key.
func (e *appSetExpander) merge(body *yaml.Node) ([]appSetParams, error) {
	var m struct {
		MergeKeys  []string    `yaml:"mergeKeys"`
		Generators []yaml.Node `yaml:"generators"`
	}
	if err := body.Decode(&m); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if len(m.Generators) < 2 || len(m.MergeKeys) == 0 {
		return nil, fmt.Errorf("merge: takes mergeKeys and at least two generators")
	}
	base, err := e.generate(&m.Generators[0], nil)
	if err != nil {
		return nil, err
	}
	key := func(p appSetParams) string {
		var b strings.Builder
		for _, k := range m.MergeKeys {
			b.WriteString(p.flat[k] + "\x00")
		}
		return b.String()
	}
	for i := 1; i < len(m.Generators); i++ {
		more, err := e.generate(&m.Generators[i], nil)
		if err != nil {
			return nil, err
		}
		byKey := map[string]appSetParams{}
		for _, p := range more {
			byKey[key(p)] = p
		}
		for j := range base {
			if p, ok := byKey[key(base[j])]; ok {
				maps.Copy(base[j].flat, p.flat)
				maps.Copy(base[j].nested, p.nested)
			}
		}
	}
	return base, nil
}

// labelSelector reads a Kubernetes label selector (matchLabels, matchExpressions with In,
// NotIn, Exists, DoesNotExist) into a predicate over labels.
func labelSelector(n *yaml.Node) (func(map[string]string) bool, error) {
	var sel struct {
		MatchLabels      map[string]string `yaml:"matchLabels"`
		MatchExpressions []struct {
			Key      string   `yaml:"key"`
			Operator string   `yaml:"operator"`
			Values   []string `yaml:"values"`
		} `yaml:"matchExpressions"`
	}
	if err := n.Decode(&sel); err != nil {
		return nil, err
	}
	for _, ex := range sel.MatchExpressions {
		switch ex.Operator {
		case "In", "NotIn", "Exists", "DoesNotExist":
		default:
			return nil, fmt.Errorf("operator %q", ex.Operator)
		}
	}
	return func(labels map[string]string) bool {
		for k, v := range sel.MatchLabels {
			if got, ok := labels[k]; !ok || got != v {
				return false
			}
		}
		for _, ex := range sel.MatchExpressions {
			v, ok := labels[ex.Key]
			switch ex.Operator {
			case "In":
				if !ok || !slices.Contains(ex.Values, v) {
					return false
				}
			case "NotIn":
				if ok && slices.Contains(ex.Values, v) {
					return false
				}
			case "Exists":
				if !ok {
					return false
				}
			case "DoesNotExist":
				if ok {
					return false
				}
			}
		}
		return true
	}, nil
}

// fastTag is a fasttemplate tag of Argo CD's default templating: {{ key }}.
var fastTag = regexp.MustCompile(`{{\s*([^{}]*?)\s*}}`)

// render returns a copy of the node with every string templated with the parameters:
// fasttemplate tags (an unknown one is left as written, as Argo CD does) or, with
// goTemplate, Go templates with Sprig's functions.
func (e *appSetExpander) render(n *yaml.Node, p appSetParams) (*yaml.Node, error) {
	out := copyNode(n)
	var err error
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if err != nil {
			return
		}
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "{{") {
			if e.set.Spec.GoTemplate {
				n.Value, err = e.goTemplate(n.Value, p.nested)
			} else {
				n.Value = fastTag.ReplaceAllStringFunc(n.Value, func(tag string) string {
					key := fastTag.FindStringSubmatch(tag)[1]
					if v, ok := p.flat[key]; ok {
						return v
					}
					return tag
				})
			}
			n.Tag = "!!str"
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(out)
	return out, err
}

// goFuncs are Sprig's functions without those that read the environment or the network,
// as Argo CD gives them.
var goFuncs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	f["normalize"] = normalizeName
	return f
}()

func (e *appSetExpander) goTemplate(text string, data map[string]any) (string, error) {
	t := template.New("").Funcs(goFuncs)
	for _, opt := range e.set.Spec.GoTemplateOptions {
		switch opt {
		case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
			t = t.Option(opt)
		default:
			return "", fmt.Errorf("goTemplateOptions: %q is not a template option", opt)
		}
	}
	t, err := t.Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&limitedWriter{w: &b, left: 1 << 20}, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// limitedWriter stops a template that writes more than a field can hold.
type limitedWriter struct {
	w    *strings.Builder
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, fmt.Errorf("a templated field longer than 1 MiB")
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// copyNode copies a YAML tree.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = copyNode(child)
	}
	return &c
}
