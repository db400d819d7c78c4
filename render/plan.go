package render

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// plan is what olmsync learns about an app before kustomize runs: every kustomization and
// manifest its build will read, checked for what is off (remote bases, plugins, Helm) and
// for paths out of the repository. kustomize is only run on a plan that passed, so "off"
// never depends on kustomize's own checks, and a missing base or malformed manifest is
// reported with its file and line.
type plan struct {
	app *App
	// kustFile is the app's kustomization file; "" for a folder of plain manifests. The
	// plan holds no kustomization itself: planning reads them whole, the build only
	// their generators (repo.generatorsAt).
	kustFile string
	// files are the manifest files of a plain folder.
	files []string
	// overrides replace files for kustomize (repository-relative path → content): the
	// app's kustomization with origin annotations turned on, generators left out.
	overrides map[string][]byte
	// warnings are kustomize's deprecations and the generators left out.
	warnings []Diagnostic
	// deprecated: some kustomization uses a field kustomize warns about on stderr.
	deprecated bool
	// exclusive: the build touches kustomize's process-wide state (vars log through the
	// standard logger, openapi replaces the global schema) and must run alone.
	exclusive bool
	// openAPI: the build sets a custom OpenAPI schema, to be reset afterwards.
	openAPI bool
	// keepOrigin: the app asked for origin annotations itself; they stay in the output.
	keepOrigin bool
	// resourceFiles are the manifest files the include graph lists as resources (or
	// bases), each once: kustomize reads them marked with their objects' sources
	// (source.go) unless needsOrigin.
	resourceFiles []string
	// needsOrigin: some object may come from where a marker cannot go — a generator or
	// transformer plugin, a Helm chart, a remote base — so kustomize's own origin
	// annotations are turned on, at their price (see source.go).
	needsOrigin bool
	// folders are the kustomization folders of the app's include graph (the app's own
	// and every one it includes, transitively): with everything below them, its inputs.
	folders map[string]bool
	// nodes is how many YAML nodes the build reads, aliases expanded, and where the most
	// of them are (heaviest): what the node budget counts (Options.NodeBudget).
	nodes         int64
	heaviest      string
	heaviestNodes int64
}

// read counts a manifest file the build reads towards its nodes.
func (p *plan) read(mf *manifestFile) {
	p.nodes += mf.Nodes
	if p.heaviest == "" || mf.Nodes > p.heaviestNodes {
		p.heaviest, p.heaviestNodes = mf.File, mf.Nodes
	}
}

// locatedError is an error at a place in a repository file.
type locatedError struct {
	file string
	line int
	err  error
}

func (e *locatedError) Error() string { return fmt.Sprintf("%s:%d: %v", e.file, e.line, e.err) }
func (e *locatedError) Unwrap() error { return e.err }

// planner walks one app's kustomization tree.
type planner struct {
	r    *repo
	opts *Options
	p    *plan
	// kust is the app's kustomization; nil for a folder of plain manifests.
	kust    *kustomization
	visited map[string]bool
	// dropGenerators are, per kustomization file, the generators entries to leave out.
	dropGenerators map[string][]int
}

// planApp checks the app and everything its build will read. A failure is a BuildError
// naming the file and line at fault.
func planApp(r *repo, opts *Options, app *App) (*plan, *BuildError) {
	pl := &planner{r: r, opts: opts, p: &plan{app: app, overrides: map[string][]byte{}},
		visited: map[string]bool{}, dropGenerators: map[string][]int{}}
	if err := pl.run(); err != nil {
		return nil, pl.buildError(err)
	}
	pl.p.folders = pl.visited
	return pl.p, nil
}

func (pl *planner) run() error {
	app := pl.p.app
	if !pl.r.isDir(app.Path) {
		return &locatedError{file: app.Found.File, line: app.Found.Line,
			err: fmt.Errorf("app path %q: %w", app.Path, pl.r.whyMissing(app.Path))}
	}
	k, err := pl.r.kustomizationAt(app.Path)
	if err != nil {
		return err
	}
	if k == nil && app.autodetect {
		if k, err = pl.generatedKustomization(); err != nil {
			return err
		}
	}
	if k == nil {
		return pl.planPlainFolder()
	}
	pl.kust, pl.p.kustFile = k, k.File
	if err := pl.walk(k); err != nil {
		return err
	}
	return pl.writeOverrides()
}

func (pl *planner) buildError(err error) *BuildError {
	be := &BuildError{App: pl.p.app.ID(), Err: err}
	var ye *YAMLError
	var le *locatedError
	var fe *fileError
	switch {
	case errors.As(err, &le):
		be.File, be.Line, be.Err = le.file, le.line, le.err
	case errors.As(err, &ye):
		be.File, be.Line = ye.File, ye.Line
	case errors.As(err, &fe):
		be.File = fe.file
	case pl.kust != nil:
		be.File = pl.kust.File
	default:
		be.File = pl.p.app.Path
	}
	return be
}

// planPlainFolder lists the manifest files of a folder without a kustomization and reads
// each, so malformed YAML is reported before anything is built.
func (pl *planner) planPlainFolder() error {
	app := pl.p.app
	if pl.r.isFile(path.Join(app.Path, "Chart.yaml")) {
		return &locatedError{file: path.Join(app.Path, "Chart.yaml"), line: 1,
			err: fmt.Errorf("folder %q is a Helm chart; olmsync renders kustomizations and plain manifests: %w", app.Path, ErrHelmDisabled)}
	}
	files, err := pl.manifestFiles(app.Path, app.Recurse)
	if err != nil {
		return err
	}
	for _, f := range files {
		mf, err := pl.r.manifestsIn(f)
		if err != nil {
			return err
		}
		if app.Lenient && !allObjects(mf) {
			pl.p.warnings = append(pl.p.warnings, Diagnostic{Reason: ReasonNotManifest, File: f, Apps: []string{app.ID()},
				Message: "holds YAML that is not a Kubernetes object (apiVersion, kind and metadata.name); not read as a manifest"})
			continue
		}
		pl.p.files = append(pl.p.files, f)
		pl.p.read(mf)
	}
	return nil
}

// generatedKustomization is the kustomization Flux generates for a folder that has none
// (kustomize create --autodetect --recursive): every file of Kubernetes objects in it and
// below it, and every folder below that holds a kustomization, which is built as such and
// not descended into. Files that hold something else are left out with a warning, and so
// are hidden folders and Helm charts. The kustomization lives only in the app's overlay.
func (pl *planner) generatedKustomization() (*kustomization, error) {
	dir := pl.p.app.Path
	var resources []string
	var visit func(sub string) error
	visit = func(sub string) error {
		names, err := pl.r.fsys.ReadDir(pl.r.abs(sub))
		if err != nil {
			return fmt.Errorf("read folder %s: %w", sub, err)
		}
		slices.Sort(names)
		for _, name := range names {
			rel := path.Join(sub, name)
			switch {
			case strings.HasPrefix(name, "."):
			case pl.r.isDir(rel):
				if pl.r.isFile(path.Join(rel, "Chart.yaml")) {
					continue
				}
				k, err := pl.r.kustomizationAt(rel)
				switch {
				case err != nil:
					return err
				case k != nil:
					resources = append(resources, relativeTo(dir, rel))
				default:
					if err := visit(rel); err != nil {
						return err
					}
				}
			case !isManifestName(name) || rel == ConfigFileName:
			default:
				mf, err := pl.r.manifestsIn(rel)
				if err != nil {
					return err
				}
				if len(mf.Docs) == 0 {
					continue
				}
				if !allObjects(mf) {
					pl.p.warnings = append(pl.p.warnings, Diagnostic{Reason: ReasonNotManifest, File: rel, Apps: []string{pl.p.app.ID()},
						Message: "holds YAML that is not a Kubernetes object (apiVersion, kind and metadata.name); Flux leaves it out of the kustomization it generates, and so does olmsync"})
					continue
				}
				resources = append(resources, relativeTo(dir, rel))
			}
		}
		return nil
	}
	if err := visit(dir); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:")
	if len(resources) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, r := range resources {
		fmt.Fprintf(&b, "- %q\n", r)
	}
	return pl.r.parseKustomization(dir, path.Join(dir, generatedKustomizationName), []byte(b.String()))
}

// generatedKustomizationName is the name of the kustomization generated for a Flux folder.
const generatedKustomizationName = "kustomization.yaml"

// relativeTo is target's path from folder base (target is below base).
func relativeTo(base, target string) string {
	if base == "." {
		return target
	}
	return strings.TrimPrefix(target, base+"/")
}

// allObjects reports whether every document of a file is a Kubernetes object.
func allObjects(mf *manifestFile) bool {
	for _, d := range mf.Docs {
		if d.APIVersion == "" || d.Kind == "" || d.Name == "" {
			return false
		}
	}
	return true
}

// manifestFiles are the .yaml, .yml and .json files of a folder (and its sub-folders when
// recurse), in lexical order. olmsync.yaml at the root is config, not a manifest.
func (pl *planner) manifestFiles(dir string, recurse bool) ([]string, error) {
	names, err := pl.r.fsys.ReadDir(pl.r.abs(dir))
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", dir, err)
	}
	slices.Sort(names)
	var files []string
	for _, name := range names {
		rel := path.Join(dir, name)
		switch {
		case pl.r.isDir(rel):
			// The repository read as one directory app leaves hidden folders (.github) out,
			// and Helm charts: their templates are Helm's to render.
			hidden := pl.p.app.Lenient && strings.HasPrefix(name, ".")
			if recurse && pl.p.app.Lenient && pl.r.isFile(path.Join(rel, "Chart.yaml")) {
				pl.p.warnings = append(pl.p.warnings, Diagnostic{Reason: ReasonNotManifest, File: path.Join(rel, "Chart.yaml"), Apps: []string{pl.p.app.ID()},
					Message: fmt.Sprintf("folder %s is a Helm chart: its templates are not manifests, and olmsync does not render Helm charts; not read", rel)})
				continue
			}
			if recurse && name != ".git" && !hidden {
				sub, err := pl.manifestFiles(rel, true)
				if err != nil {
					return nil, err
				}
				files = append(files, sub...)
			}
		case rel == ConfigFileName:
		case isManifestName(name):
			files = append(files, rel)
		}
		if len(files) > MaxManifestFiles {
			return nil, fmt.Errorf("folder %s holds more than %d manifest files; an app reads at most %d: %w", dir, MaxManifestFiles, MaxManifestFiles, ErrTooManyFiles)
		}
	}
	return files, nil
}

// walk checks one kustomization and, through its references, every kustomization below.
func (pl *planner) walk(k *kustomization) error {
	if pl.visited[k.Dir] {
		return nil
	}
	pl.visited[k.Dir] = true
	pl.noteDeprecations(k)
	if len(k.Legacy.Vars) > 0 {
		pl.p.exclusive = true
	}
	if len(k.K.OpenAPI) > 0 {
		pl.p.exclusive, pl.p.openAPI = true, true
	}
	if len(k.K.HelmCharts) > 0 || len(k.K.HelmChartInflationGenerator) > 0 {
		pl.p.needsOrigin = true
		if !pl.opts.EnableHelm {
			field := "helmCharts"
			if len(k.K.HelmCharts) == 0 {
				field = "helmChartInflationGenerator"
			}
			return &locatedError{file: k.File, line: seqItemLine(k.Node, field, 0),
				err: fmt.Errorf("%s: %w (%s)", field, ErrHelmDisabled, pl.switches().Helm)}
		}
	}
	if err := pl.checkRemoteFiles(k); err != nil {
		return err
	}
	if err := pl.checkParsedInputs(k); err != nil {
		return err
	}
	if err := pl.decryptSources(k); err != nil {
		return err
	}
	for _, field := range []string{"resources", "bases", "components"} {
		for i, ref := range kustList(k, field) {
			if err := pl.reference(k, field, i, ref); err != nil {
				return err
			}
		}
	}
	if len(k.K.Generators) > 0 || len(k.K.Transformers) > 0 {
		pl.p.needsOrigin = true
	}
	for _, field := range []string{"generators", "transformers", "validators"} {
		for i, entry := range kustList(k, field) {
			if err := pl.pluginEntry(k, field, i, entry); err != nil {
				return err
			}
		}
	}
	return nil
}

func kustList(k *kustomization, field string) []string {
	switch field {
	case "resources":
		return k.K.Resources
	case "bases":
		return k.Legacy.Bases
	case "components":
		return k.K.Components
	case "generators":
		return k.K.Generators
	case "transformers":
		return k.K.Transformers
	case "validators":
		return k.K.Validators
	}
	return nil
}

// reference checks one entry of resources, bases or components: remote, out of the
// repository, a manifest file, a folder with a kustomization, or missing.
func (pl *planner) reference(k *kustomization, field string, i int, ref string) error {
	at := func(err error) error {
		return &locatedError{file: k.File, line: seqItemLine(k.Node, field, i), err: err}
	}
	if isRemoteBase(ref) || isRemoteFile(ref) {
		if pl.opts.AllowRemoteBases {
			pl.p.needsOrigin = true
			return nil
		}
		return at(fmt.Errorf("%s entry %q is remote: %w (%s)", field, ref, ErrRemoteDisabled, pl.switches().RemoteBases))
	}
	p, ok := join(k.Dir, ref)
	if !ok || !pl.r.inside(p) {
		return at(fmt.Errorf("%s entry %q: %w", field, ref, ErrOutsideRepository))
	}
	switch {
	case field != "components" && pl.r.isFile(p):
		mf, err := pl.r.manifestsIn(p)
		if err != nil {
			return err
		}
		if !slices.Contains(pl.p.resourceFiles, p) {
			pl.p.resourceFiles = append(pl.p.resourceFiles, p)
			pl.p.read(mf)
		}
		if (mf.marks == nil || pl.opts.markByTree) && mf.folded {
			// Marked through its tree, the file would be written out again, and a folded
			// scalar can come back with another value: kustomize reads it as written, and
			// its origin annotations trace the app's objects.
			pl.p.needsOrigin = true
		}
		return nil
	case pl.r.isDir(p):
		child, err := pl.r.kustomizationAt(p)
		if err != nil {
			return err
		}
		if child == nil {
			return at(fmt.Errorf("%s entry %q: folder %s has no kustomization: %w", field, ref, p, ErrNotFound))
		}
		return pl.walk(child)
	default:
		return at(fmt.Errorf("%s entry %q: %s %w", field, ref, p, pl.r.whyMissing(p)))
	}
}

// checkRemoteFiles refuses the file references kustomize would fetch over HTTP.
func (pl *planner) checkRemoteFiles(k *kustomization) error {
	if pl.opts.AllowRemoteBases {
		return nil
	}
	for field, refs := range fileReferences(k) {
		for i, ref := range refs {
			if isRemoteFile(ref) {
				return &locatedError{file: k.File, line: seqItemLine(k.Node, field, i),
					err: fmt.Errorf("%s entry %q is remote: %w (%s)", field, ref, ErrRemoteDisabled, pl.switches().RemoteBases)}
			}
		}
	}
	return nil
}

// checkParsedInputs passes what kustomize parses as YAML besides resources — patch,
// replacement, configuration, CRD and OpenAPI files, and inline patches — through the
// bounded decoder (and Helm values files, which kustomize merges with kyaml when Helm is
// on), so that kustomize (whose kyaml expands anchors without a bound) never
// reads a file the planner has not bounded. Only the limits are checked here; what the
// files mean is kustomize's to judge.
func (pl *planner) checkParsedInputs(k *kustomization) error {
	refs := fileReferences(k)
	for _, field := range []string{"patchesStrategicMerge", "patches", "patchesJson6902", "replacements", "configurations", "crds", "openapi", "helmCharts"} {
		for _, ref := range refs[field] {
			p, ok := join(k.Dir, ref)
			if ref == "" || !ok || !pl.r.isFile(p) {
				continue // inline, remote, missing or out of the repository: judged elsewhere
			}
			data, err := pl.r.readFile(p)
			if err != nil {
				return err
			}
			if err := safeyaml.Check(p, data); err != nil {
				le, _ := limitError(err)
				return le
			}
		}
	}
	for field, inline := range inlineDocuments(k) {
		for i, text := range inline {
			if err := safeyaml.Check("", []byte(text)); err != nil {
				le, _ := limitError(err)
				return &locatedError{file: k.File, line: seqItemLine(k.Node, field, i),
					err: fmt.Errorf("inline %s entry: %s: %w", field, le.Msg, ErrInputLimit)}
			}
		}
	}
	return nil
}

// inlineDocuments are the YAML documents a kustomization holds as strings, by field and
// entry ("" where the entry is a file).
func inlineDocuments(kust *kustomization) map[string][]string {
	out := map[string][]string{}
	for _, p := range kust.Legacy.PatchesStrategicMerge {
		out["patchesStrategicMerge"] = append(out["patchesStrategicMerge"], string(p))
	}
	for _, p := range kust.K.Patches {
		out["patches"] = append(out["patches"], p.Patch)
	}
	for _, p := range kust.Legacy.PatchesJson6902 {
		out["patchesJson6902"] = append(out["patchesJson6902"], p.Patch)
	}
	return out
}

// fileReferences are the file paths of a kustomization that kustomize loads as files,
// by field. For generator sources only the file part of "key=file" matters.
func fileReferences(kust *kustomization) map[string][]string {
	k := &kust.K
	refs := map[string][]string{
		"crds":           k.Crds,
		"configurations": k.Configurations,
	}
	for _, p := range kust.Legacy.PatchesStrategicMerge {
		refs["patchesStrategicMerge"] = append(refs["patchesStrategicMerge"], string(p))
	}
	for _, p := range k.Patches {
		refs["patches"] = append(refs["patches"], p.Path)
	}
	for _, p := range kust.Legacy.PatchesJson6902 {
		refs["patchesJson6902"] = append(refs["patchesJson6902"], p.Path)
	}
	for _, r := range k.Replacements {
		refs["replacements"] = append(refs["replacements"], r.Path)
	}
	kv := func(field string, src types.KvPairSources) {
		for _, f := range slices.Concat(src.FileSources, src.EnvSources, []string{src.EnvSource}) {
			_, file, found := strings.Cut(f, "=")
			if !found {
				file = f
			}
			refs[field] = append(refs[field], file)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		kv("configMapGenerator", g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv("secretGenerator", g.KvPairSources)
	}
	if p := k.OpenAPI["path"]; p != "" {
		refs["openapi"] = []string{p}
	}
	for _, h := range k.HelmCharts {
		refs["helmCharts"] = append(refs["helmCharts"], slices.Concat([]string{h.ValuesFile}, h.AdditionalValuesFiles)...)
	}
	return refs
}

// deprecatedFields maps each deprecated kustomization field to kustomize's own warning,
// taken from kustomize (Kustomization.CheckDeprecatedFields) so the text is exactly what
// kustomize prints.
var deprecatedFields = func() map[string]string {
	only := map[string]types.Kustomization{
		"bases":                 {Bases: []string{}},
		"commonLabels":          {CommonLabels: map[string]string{}},
		"imageTags":             {ImageTags: []types.Image{}},
		"patchesJson6902":       {PatchesJson6902: []types.Patch{}},
		"patchesStrategicMerge": {PatchesStrategicMerge: []types.PatchStrategicMerge{}},
		"vars":                  {Vars: []types.Var{}},
	}
	out := map[string]string{}
	for field, k := range only {
		if msgs := *k.CheckDeprecatedFields(); len(msgs) == 1 {
			out[field] = msgs[0]
		}
	}
	return out
}()

// kustomizeDeprecationLines are the lines kustomize prints to stderr for deprecated fields;
// olmsync reports them per file instead.
var kustomizeDeprecationLines = func() map[string]bool {
	out := map[string]bool{}
	for _, msg := range deprecatedFields {
		out[msg] = true
	}
	return out
}()

// usedDeprecatedFields lists the deprecated fields k uses, the way kustomize decides it
// (the field decoded to a non-nil value).
func usedDeprecatedFields(k *legacyFields) []string {
	var used []string
	for field, set := range map[string]bool{
		"bases":                 k.Bases != nil,
		"commonLabels":          k.CommonLabels != nil,
		"imageTags":             k.ImageTags != nil,
		"patchesJson6902":       k.PatchesJson6902 != nil,
		"patchesStrategicMerge": k.PatchesStrategicMerge != nil,
		"vars":                  k.Vars != nil,
	} {
		if set {
			used = append(used, field)
		}
	}
	slices.Sort(used)
	return used
}

func (pl *planner) noteDeprecations(k *kustomization) {
	for _, field := range usedDeprecatedFields(&k.Legacy) {
		pl.p.deprecated = true
		pl.p.warnings = append(pl.p.warnings, Diagnostic{
			Reason: ReasonDeprecated, File: k.File, Line: lineOf(mapKey(k.Node, field)),
			Apps:    []string{pl.p.app.ID()},
			Message: strings.TrimPrefix(deprecatedFields[field], "# Warning: "),
			Hint:    deprecationHints[field],
		})
	}
}

// pluginClass is what running a generator, transformer or validator takes.
type pluginClass int

const (
	pluginBuiltin   pluginClass = iota // compiled into kustomize
	pluginHelm                         // HelmChartInflationGenerator: runs helm
	pluginExec                         // exec KRM function, legacy exec or Go plugin
	pluginContainer                    // container KRM function
)

// need says what a plugin of the class takes, and how to turn it on.
func (c pluginClass) need(s Switches) string {
	switch c {
	case pluginHelm:
		return "Helm (" + s.Helm + ")"
	case pluginExec:
		return "an exec plugin (" + s.ExecPlugins + ")"
	case pluginContainer:
		return "a container plugin (" + s.ContainerPlugins + ")"
	}
	return "nothing"
}

// switches are the words for turning on what the options leave off.
func (pl *planner) switches() Switches { return pl.opts.Switches.orDefault() }

// disabled is the error of a plugin of this class that is off.
func (c pluginClass) disabled() error {
	if c == pluginHelm {
		return ErrHelmDisabled
	}
	return ErrPluginDisabled
}

func (pl *planner) allowed(c pluginClass) bool {
	switch c {
	case pluginHelm:
		return pl.opts.EnableHelm
	case pluginExec:
		return pl.opts.EnableExecPlugins
	case pluginContainer:
		return pl.opts.EnableContainerPlugins
	}
	return true
}

// classifyPlugin tells what a plugin config needs, the way kustomize's plugin loader
// decides: apiVersion "builtin" is compiled in; a config.kubernetes.io/function
// annotation names a container or exec function; anything else is a legacy plugin
// (an executable or Go plugin in the plugin home).
func classifyPlugin(d manifestDoc) pluginClass {
	if d.APIVersion == "builtin" {
		if d.Kind == "HelmChartInflationGenerator" {
			return pluginHelm
		}
		return pluginBuiltin
	}
	spec, err := runtimeutil.GetFunctionSpec(yaml.NewRNode(d.Node))
	if err == nil && spec != nil && spec.Container.Image != "" {
		return pluginContainer
	}
	return pluginExec
}

// pluginEntry checks one entry of generators, transformers or validators. A generator
// whose plugin is off is left out (ksops and sops generate Secrets, which no placement
// rule needs), so the rest of the app is still rendered and checked, and the app is
// marked incomplete (ReasonPluginSkipped): its objects lack what the generator makes,
// which must neither pass a check nor let a reconciler prune what it made before. A
// transformer or validator whose plugin is off is an error, since leaving it out would
// change the other objects (see skippable).
func (pl *planner) pluginEntry(k *kustomization, field string, i int, entry string) error {
	line := seqItemLine(k.Node, field, i)
	at := func(err error) error { return &locatedError{file: k.File, line: line, err: err} }
	docs, file, err := pl.pluginConfigs(k, field, i, entry)
	if err != nil {
		return err
	}
	var keep, skipped []manifestDoc
	for _, d := range docs {
		class := classifyPlugin(d)
		if pl.allowed(class) {
			keep = append(keep, d)
			continue
		}
		what := fmt.Sprintf("%s %s %q (%s)", strings.TrimSuffix(field, "s"), d.Kind, d.Name, d.APIVersion)
		if !skippable(field, file, class) {
			return at(&hintedError{err: fmt.Errorf("%s needs %s: %w", what, class.need(pl.switches()), class.disabled()), hint: knownPluginHint(d)})
		}
		skipped = append(skipped, d)
		docLine := d.Line
		if file == k.File {
			docLine = line
		}
		pl.p.warnings = append(pl.p.warnings, Diagnostic{
			Reason: ReasonPluginSkipped, File: file, Line: docLine, Apps: []string{pl.p.app.ID()},
			Message: fmt.Sprintf("%s needs %s, which is off; skipped, so what it generates is not rendered or checked and the app is incomplete: it is not applied or pruned", what, class.need(pl.switches())),
			Hint:    knownPluginHint(d),
		})
	}
	if len(skipped) == 0 {
		return nil
	}
	if len(keep) == 0 || file == k.File {
		// an inline entry, or a file of nothing but skipped generators: drop the entry
		pl.dropGenerators[k.File] = append(pl.dropGenerators[k.File], i)
		if len(keep) > 0 {
			return at(fmt.Errorf("inline generators entry mixes plugins that are on and off; split it: %w", ErrPluginDisabled))
		}
		return nil
	}
	out, err := encodeDocs(keep)
	if err != nil {
		return at(err)
	}
	pl.p.overrides[file] = out
	return nil
}

// skippable says whether a plugin that is off may be left out rather than fail the app:
// only a generator, written inline or in a file, and not a Helm chart (a chart renders
// workloads, OLM objects among them, which the rules must see).
func skippable(field, file string, class pluginClass) bool {
	return field == "generators" && file != "" && class != pluginHelm
}

// pluginConfigs reads the plugin configs of one generators/transformers/validators entry:
// inline YAML, a file, or a folder whose kustomization lists config files. file is where
// they are written ("" for a folder, k.File for inline configs).
func (pl *planner) pluginConfigs(k *kustomization, field string, i int, entry string) ([]manifestDoc, string, error) {
	at := func(err error) error {
		return &locatedError{file: k.File, line: seqItemLine(k.Node, field, i), err: err}
	}
	inline, err := decodeDocs(k.File, []byte(entry))
	var ye *YAMLError
	if errors.As(err, &ye) && ye.limit {
		return nil, "", at(fmt.Errorf("inline %s entry: %s: %w", field, ye.Msg, ErrInputLimit))
	}
	if err == nil && len(inline) > 0 && inline[0].Node.Kind == yaml.MappingNode {
		var docs []manifestDoc
		for _, d := range inline {
			docs = append(docs, indexDoc(d.Node)...)
		}
		return docs, k.File, nil
	}
	if isRemoteBase(entry) || isRemoteFile(entry) {
		if pl.opts.AllowRemoteBases {
			return nil, "", nil
		}
		return nil, "", at(fmt.Errorf("%s entry %q is remote: %w", field, entry, ErrRemoteDisabled))
	}
	p, ok := join(k.Dir, entry)
	switch {
	case !ok:
		return nil, "", at(fmt.Errorf("%s entry %q: %w", field, entry, ErrOutsideRepository))
	case pl.r.isFile(p):
		mf, err := pl.r.trees(p) // a plugin's config: its trees are read
		if err != nil {
			return nil, "", err
		}
		return mf.Docs, p, nil
	case pl.r.isDir(p):
		child, err := pl.r.kustomizationAt(p)
		if err != nil {
			return nil, "", err
		}
		if child == nil {
			return nil, "", at(fmt.Errorf("%s entry %q: folder %s has no kustomization: %w", field, entry, p, ErrNotFound))
		}
		if err := pl.walk(child); err != nil {
			return nil, "", err
		}
		docs, err := pl.configsBelow(child, map[string]bool{})
		return docs, "", err
	default:
		return nil, "", at(fmt.Errorf("%s entry %q: %s %w", field, entry, p, pl.r.whyMissing(p)))
	}
}

// configsBelow collects the documents of the manifest files a kustomization (and the
// kustomizations it uses) lists as resources: the plugin configs of a config folder.
func (pl *planner) configsBelow(k *kustomization, seen map[string]bool) ([]manifestDoc, error) {
	if seen[k.Dir] {
		return nil, nil
	}
	seen[k.Dir] = true
	var docs []manifestDoc
	for _, ref := range slices.Concat(k.K.Resources, k.Legacy.Bases) {
		p, ok := join(k.Dir, ref)
		if !ok {
			continue
		}
		if pl.r.isFile(p) {
			mf, err := pl.r.trees(p)
			if err != nil {
				return nil, err
			}
			docs = append(docs, mf.Docs...)
		} else if child, err := pl.r.kustomizationAt(p); err == nil && child != nil {
			more, err := pl.configsBelow(child, seen)
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
		}
	}
	return docs, nil
}

// writeOverrides prepares the kustomization files kustomize will read in place of the
// user's: the app's own with origin annotations on (and the Application's namePrefix,
// nameSuffix and namespace), and any with generators left out.
func (pl *planner) writeOverrides() error {
	root := pl.kust
	files := map[string]*kustomization{root.File: root}
	for file := range pl.dropGenerators {
		k, err := pl.r.kustomizationAt(path.Dir(file))
		if err != nil || k == nil {
			return fmt.Errorf("re-read %s: %w", file, err)
		}
		files[file] = k
	}
	for file, k := range files {
		rn, err := yaml.Parse(string(k.Raw))
		if err != nil {
			return &locatedError{file: file, line: 1, err: fmt.Errorf("%w: %w", ErrMalformedYAML, err)}
		}
		if drop := pl.dropGenerators[file]; len(drop) > 0 {
			if err := dropSequenceItems(rn, "generators", drop); err != nil {
				return &locatedError{file: file, line: 1, err: err}
			}
		}
		if file == root.File {
			if pl.p.needsOrigin {
				if pl.p.keepOrigin, err = turnOnOriginAnnotations(rn); err != nil {
					return &locatedError{file: file, line: 1, err: err}
				}
			} else {
				pl.p.keepOrigin = asksForOrigin(rn)
			}
			if err := applyOverrides(rn, pl.p.app.overrides); err != nil {
				return &locatedError{file: file, line: 1, err: err}
			}
		}
		s, err := rn.String()
		if err != nil {
			return err
		}
		pl.p.overrides[file] = []byte(s)
	}
	return nil
}

// asksForOrigin reports whether a kustomization's buildMetadata holds originAnnotations.
func asksForOrigin(rn *yaml.RNode) bool {
	bm := rn.Field("buildMetadata")
	if bm == nil || bm.Value == nil {
		return false
	}
	for _, item := range bm.Value.Content() {
		if item.Value == types.OriginAnnotations {
			return true
		}
	}
	return false
}

// turnOnOriginAnnotations adds originAnnotations to buildMetadata, so kustomize records
// each object's source file. It reports whether the user had asked for them already.
func turnOnOriginAnnotations(rn *yaml.RNode) (bool, error) {
	bm, err := rn.Pipe(yaml.LookupCreate(yaml.SequenceNode, "buildMetadata"))
	if err != nil {
		return false, fmt.Errorf("buildMetadata: %w", err)
	}
	for _, item := range bm.Content() {
		if item.Value == types.OriginAnnotations {
			return true, nil
		}
	}
	return false, bm.PipeE(yaml.Append(yaml.NewScalarRNode(types.OriginAnnotations).YNode()))
}

// applyOverrides sets what an Argo CD Application's spec.source.kustomize sets, as Argo CD
// does with `kustomize edit set`.
func applyOverrides(rn *yaml.RNode, o kustomizeOverrides) error {
	for field, value := range map[string]string{"namePrefix": o.NamePrefix, "nameSuffix": o.NameSuffix, "namespace": o.Namespace} {
		if value == "" {
			continue
		}
		if err := rn.PipeE(yaml.SetField(field, yaml.NewStringRNode(value))); err != nil {
			return fmt.Errorf("set %s: %w", field, err)
		}
	}
	return nil
}

func dropSequenceItems(rn *yaml.RNode, field string, drop []int) error {
	seq, err := rn.Pipe(yaml.Lookup(field))
	if err != nil || seq == nil {
		return fmt.Errorf("%s: not found", field)
	}
	n := seq.YNode()
	var kept []*yaml.Node
	for i, item := range n.Content {
		if !slices.Contains(drop, i) {
			kept = append(kept, item)
		}
	}
	if len(kept) == 0 {
		return rn.PipeE(yaml.Clear(field))
	}
	n.Content = kept
	return nil
}

// encodeDocs writes documents back as one multi-document YAML stream.
func encodeDocs(docs []manifestDoc) ([]byte, error) {
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		s, err := yaml.NewRNode(d.Node).String()
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	return []byte(b.String()), nil
}

// scpUserRE matches the "user@" that makes kustomize read "git@host:org/repo" as a
// repository (kustomize's internal/git extractUsername).
var scpUserRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemoteBase reports whether kustomize would clone ref as a git repository: a URL
// scheme, a "git::" prefix, an scp-like "user@host:path", or a github.com path. Mirrors
// kustomize's own parser, erring on the side of "remote".
func isRemoteBase(ref string) bool {
	l := strings.ToLower(strings.TrimSpace(ref))
	return strings.Contains(l, "://") ||
		strings.HasPrefix(l, "git::") ||
		strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:") ||
		scpUserRE.MatchString(strings.TrimSpace(ref))
}

// isRemoteFile reports whether kustomize would fetch ref over HTTP.
func isRemoteFile(ref string) bool {
	u, err := url.Parse(strings.TrimSpace(ref))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// reads are the repository files the app's build reads through the repository's caches:
// the resource files it marks (unless kustomize's origin annotations trace the objects
// instead), or the files of a plain folder.
func (p *plan) reads() []string {
	switch {
	case p.kustFile == "":
		return p.files
	case p.needsOrigin:
		return nil
	}
	return p.resourceFiles
}

// file is what an error about the app as a whole names: its kustomization, else its folder.
func (p *plan) file() string {
	if p.kustFile != "" {
		return p.kustFile
	}
	return p.app.Path
}
