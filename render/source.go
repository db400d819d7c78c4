package render

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Where a rendered object comes from (its Source: file and line) is found in one of two
// ways.
//
// The fast one, used whenever it is enough: every manifest file the app's include graph
// lists as a resource is handed to kustomize with each object marked — a field
// sourceMarker in its metadata holding "file:line" — and the marker, which kustomize's
// transformers carry along like any field they do not know, is read back and removed from
// the output. Objects without a marker were made by a configMapGenerator or
// secretGenerator, and are traced to the generator entry whose name theirs contains. The
// marker was an annotation until 2026-11-28: kustomize reads and rewrites an object's
// annotations in many transformers and three times more at the end of every build, and
// the annotation every object then had made a check of the 300-app benchmark repository
// 9 % slower in wall time (1.61 s of CPU against 1.87) than a field kustomize never reads.
// The other is kustomize's own origin annotations (buildMetadata: [originAnnotations]),
// for apps where objects can come from where no marker can go: generator and transformer
// plugins, Helm charts, remote bases. It is what kustomize offers, but it costs: with
// origin tracking on, every transformer of every kustomization records itself on every
// object it passes over (kustomize re-reads and re-writes a YAML list in an annotation per
// object per transformer), which made a third of a whole check's CPU on the 300-app
// benchmark repository (issue 18).

// sourceMarker is the metadata field marking an object with its document: "file:line",
// repository-relative. Kubernetes has no such field, and a name with a slash is none it
// will ever have.
const sourceMarker = "render.olmsync.dev/source"

// withSourceMarkers is what kustomize reads in place of the repository's files for the
// app: the plan's overrides and, unless the app needs origin annotations, its resource
// files marked. Marking waits for the build, so an app the render cache answers costs
// none of it; a file is marked once per render, whichever apps share it.
func (b *builder) withSourceMarkers(p *plan) (map[string][]byte, error) {
	if p.needsOrigin || len(p.resourceFiles) == 0 {
		return p.overrides, nil
	}
	out := make(map[string][]byte, len(p.overrides)+len(p.resourceFiles))
	maps.Copy(out, p.overrides)
	for _, file := range p.resourceFiles {
		if _, overridden := out[file]; overridden {
			continue
		}
		marked, err := b.r.markedManifest(file, b.opts.markByTree)
		if err != nil {
			return nil, err
		}
		out[file] = marked
	}
	return out, nil
}

// markedManifest is a resource file's content with every object (each document, each item
// of a List) annotated with sourceMarker. A file whose documents cannot be marked (not
// objects, anchors kustomize would expand) is handed over as written: its objects are then
// traced as kustomize's origin would, by matching documents.
func (r *repo) markedManifest(file string, byTree bool) ([]byte, error) {
	return loadOnce(r, r.marked, file, func() ([]byte, error) { return r.markManifest(file, byTree) })
}

// markManifest marks a file in its text where textMarks found how, else through its trees.
func (r *repo) markManifest(file string, byTree bool) ([]byte, error) {
	raw, err := r.readFile(file)
	if err != nil {
		return nil, err
	}
	if mf, err := r.manifestsIn(file); err == nil && mf.marks != nil && !byTree {
		return insertMarks(raw, file, mf.marks), nil
	}
	mf, err := r.trees(file)
	if err != nil {
		return nil, err
	}
	if marked, ok := markTrees(mf.roots, file); ok {
		return marked, nil
	}
	return raw, nil // unmarkable: kustomize reads the file as written
}

// markTrees marks each object of a file's documents (markObjects), changing them, and
// writes them out; false when a document cannot be marked or written.
func markTrees(roots []*yaml.Node, file string) ([]byte, bool) {
	var b strings.Builder
	for i, root := range roots {
		rn := yaml.NewRNode(root)
		if !markObjects(rn.YNode(), file) {
			return nil, false
		}
		s, err := rn.String()
		if err != nil {
			return nil, false
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(s)
	}
	return []byte(b.String()), true
}

// markSpot is where the source marker of one document goes in its file's text: a line of
// its own, inserted at offset at (the start of line before, 1-based) and indented by indent
// spaces, so that it is the first field of the document's metadata; line is the document's
// line, what the marker holds.
type markSpot struct{ at, before, indent, line int }

// textMarks finds where each object's marker can be written into the file's text as it
// is. Planning has just parsed the file; marking it through its tree meant parsing it a
// second time (the repository keeps no trees, see repo.manifestsIn) and writing it out,
// about a sixth of a check's CPU on a repository of an app per folder, and writing it out
// can change a folded scalar (hasFolded). It returns nil unless every document is an
// object (or a List of objects) in block style, without aliases, whose metadata is a block
// mapping that starts on a line of its own and has no marker yet, and the file's lines are
// counted as YAML counts them (no line break but "\n" and "\r\n"). The text with the
// marker lines inserted then parses to the trees markObjects would make (FuzzTextMarks).
func textMarks(raw []byte, roots []*yaml.Node) []markSpot {
	if len(roots) == 0 || !plainLineBreaks(raw) {
		return nil
	}
	t := &textMarker{raw: raw, lines: lineStarts(raw)}
	for _, n := range roots {
		if n.Style&yaml.FlowStyle != 0 || hasAlias(n) || !t.mark(n) {
			return nil
		}
	}
	return t.spots
}

// textMarker finds the markSpots of a file's objects, in the order of their lines.
type textMarker struct {
	raw   []byte
	lines []int // where each line starts
	spots []markSpot
}

// mark finds where the marker of object n (or of each item of a List) goes, as markObjects
// would mark it; false when it cannot go in the text.
func (t *textMarker) mark(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
		return false
	}
	if items := mapValue(n, "items"); items != nil && items.Kind == yaml.SequenceNode && strings.HasSuffix(scalarAt(n, "kind"), "List") {
		if items.Style&yaml.FlowStyle != 0 {
			return false
		}
		for _, it := range items.Content {
			if !t.mark(it) {
				return false
			}
		}
		return true
	}
	key, meta := mapKey(n, "metadata"), mapValue(n, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode || meta.Style&yaml.FlowStyle != 0 || len(meta.Content) < 2 || mapValue(meta, sourceMarker) != nil {
		return false
	}
	first := meta.Content[0]
	if first.Kind != yaml.ScalarNode || first.Line <= key.Line || first.Line > len(t.lines) || len(t.spots) > 0 && first.Line <= t.spots[len(t.spots)-1].before {
		return false
	}
	// The first field's line must start with exactly its indentation: not "? key", not a
	// line yaml.v3 counted differently.
	indent, at := first.Column-1, t.lines[first.Line-1]
	text := t.raw[at:]
	if indent < 0 || len(text) <= indent || len(bytes.TrimLeft(text[:indent], " ")) != 0 || strings.ContainsRune(" \t?-#\r\n", rune(text[indent])) {
		return false
	}
	t.spots = append(t.spots, markSpot{at: at, before: first.Line, indent: indent, line: n.Line})
	return true
}

// plainLineBreaks reports whether raw breaks lines only with "\n" (and "\r\n"): yaml.v3
// also breaks them at a lone "\r", NEL, LS and PS, which textMarks does not count.
func plainLineBreaks(raw []byte) bool {
	for i, c := range raw {
		if c == '\r' && (i+1 == len(raw) || raw[i+1] != '\n') {
			return false
		}
	}
	return !bytes.Contains(raw, []byte("\u0085")) && !bytes.Contains(raw, []byte("\u2028")) && !bytes.Contains(raw, []byte("\u2029"))
}

// lineStarts is the offset of each line of raw.
func lineStarts(raw []byte) []int {
	starts := []int{0}
	for i, c := range raw {
		if c == '\n' && i+1 < len(raw) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// insertMarks writes raw with each spot's marker line inserted (spots in the order of
// their lines).
func insertMarks(raw []byte, file string, spots []markSpot) []byte {
	out := make([]byte, 0, len(raw)+len(spots)*(len(sourceMarker)+len(file)+16))
	copied := 0
	for _, s := range spots {
		at := s.at
		out = append(out, raw[copied:at]...)
		out = append(out, strings.Repeat(" ", s.indent)...)
		out = append(out, sourceMarker+": "...)
		out = strconv.AppendQuote(out, file+":"+strconv.Itoa(s.line))
		out = append(out, '\n')
		copied = at
	}
	return append(out, raw[copied:]...)
}

// markObjects marks the object n (or each item of a List) with its line. It reports false
// for what it cannot mark: a document that is no mapping, or one using YAML aliases.
func markObjects(n *yaml.Node, file string) bool {
	if n.Kind != yaml.MappingNode || hasAlias(n) {
		return false
	}
	if items := mapValue(n, "items"); items != nil && items.Kind == yaml.SequenceNode && strings.HasSuffix(scalarAt(n, "kind"), "List") {
		for _, it := range items.Content {
			if !markObjects(it, file) {
				return false
			}
		}
		return true
	}
	rn := yaml.NewRNode(n)
	return rn.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata"), yaml.SetField(sourceMarker, yaml.NewStringRNode(file+":"+strconv.Itoa(n.Line)))) == nil
}

// hasFolded reports a folded block scalar (">") in n. Written out again from its tree, a
// folded scalar with blank lines can come back with another value — a Tekton Task's script
// in gitops-catalog rendered with one more line break than kustomize renders it — so a file
// holding one that cannot be marked in its text is not marked at all (planner.reference).
func hasFolded(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode && n.Style&yaml.FoldedStyle != 0 {
		return true
	}
	return slices.ContainsFunc(n.Content, hasFolded)
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	return slices.ContainsFunc(n.Content, hasAlias)
}

// takeMarker reads and removes an object's sourceMarker, in one walk of its metadata
// (Clear gives back what it removed).
func takeMarker(res *resource.Resource) (Source, bool, error) {
	field, err := res.Pipe(yaml.Lookup("metadata"), yaml.Clear(sourceMarker))
	if err != nil || field == nil {
		return Source{}, false, nil //nolint:nilerr // no metadata mapping: no marker
	}
	v := yaml.GetValue(field)
	i := strings.LastIndexByte(v, ':')
	line, err := strconv.Atoi(v[i+1:])
	if i < 0 || err != nil {
		return Source{}, false, fmt.Errorf("malformed %s %q", sourceMarker, v)
	}
	// One copy of the file's name for all its objects: a slice of the marker would keep
	// each object's copy of the marker.
	return Source{File: intern(v[:i]), Line: line}, true, nil
}

// generatedSource traces an object without a marker, in an app built without origin
// annotations, to the configMapGenerator or secretGenerator of the include graph whose
// entry's name the object's name contains (the longest such name); failing that, to the
// app's kustomization.
func (b *builder) generatedSource(p *plan, res *resource.Resource) Source {
	generatedBy := res.GetKind() + "Generator"
	field, ok := generatorField(generatedBy)
	if !ok {
		return Source{File: p.kustFile}
	}
	best := Source{File: p.kustFile}
	bestLen := -1
	for _, dir := range slices.Sorted(maps.Keys(p.folders)) {
		g, err := b.r.generatorsAt(dir)
		if err != nil || g == nil {
			continue
		}
		if i, n := matchGenerator(g.fields[field].names, res.GetName()); i >= 0 && n > bestLen {
			best = Source{File: path.Clean(g.file), GeneratedBy: generatedBy, Line: g.entryLine(field, i)}
			bestLen = n
		}
	}
	return best
}

// generatorField is the kustomization field of a built-in generator kind
// (ConfigMapGenerator, SecretGenerator).
func generatorField(kind string) (string, bool) {
	switch kind {
	case "ConfigMapGenerator":
		return "configMapGenerator", true
	case "SecretGenerator":
		return "secretGenerator", true
	}
	return "", false
}

// matchGenerator finds the generator entry, of a configMapGenerator's or secretGenerator's
// names, whose name the object's name contains, the longest such name: its index and the
// name's length, or -1.
func matchGenerator(names []string, name string) (index, length int) {
	index, length = -1, -1
	for i, n := range names {
		if n != "" && strings.Contains(name, n) && len(n) > length {
			index, length = i, len(n)
		}
	}
	return index, length
}
