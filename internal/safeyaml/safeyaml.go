package safeyaml

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Limits bound what one file may cost to read.
type Limits struct {
	// MaxFileBytes bounds a file, a request body or a stream as a whole.
	MaxFileBytes int64
	// MaxDocumentBytes bounds one YAML document (the text between two "---" lines) or
	// one JSON value.
	MaxDocumentBytes int64
	// MaxNodes bounds the YAML nodes of a file, every alias counted as the nodes it
	// expands to.
	MaxNodes int64
}

// The default limits. A file is bounded like a file of a Git tree
// (sources.DefaultMaxFileSize); a document like a request to the Kubernetes API server,
// which refuses a body over 3 MiB, so no document over it could be applied anyway. Real
// manifests hold one node per 37 bytes (the shared data's 562 YAML files: 10 MB, 272,659
// nodes), so a full 16 MiB file of them holds under 500,000 nodes; a million parsed
// nodes take about 200 MB.
const (
	DefaultMaxFileBytes     int64 = 16 << 20
	DefaultMaxDocumentBytes int64 = 3 << 20
	DefaultMaxNodes         int64 = 1_000_000
)

// DefaultLimits are the limits every reader of olmsync uses.
var DefaultLimits = Limits{
	MaxFileBytes:     DefaultMaxFileBytes,
	MaxDocumentBytes: DefaultMaxDocumentBytes,
	MaxNodes:         DefaultMaxNodes,
}

// ErrLimit is what every LimitError is, for errors.Is.
var ErrLimit = errors.New("input exceeds a parsing limit")

// LimitError is input refused before it was decoded. Line is 1-based, 0 for the whole
// file; File is "" when the reader was given no name (the caller names it).
type LimitError struct {
	File string
	Line int
	Msg  string
}

func (e *LimitError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Reader reads one file (or stream), possibly in parts, against one budget: the bytes
// and nodes of every part count towards the file's limits.
type Reader struct {
	file   string
	limits Limits
	bytes  int64
	nodes  int64
}

// NewReader starts reading file (a name for messages) under limits.
func NewReader(file string, limits Limits) *Reader {
	return &Reader{file: file, limits: limits}
}

func (r *Reader) refuse(line int, format string, args ...any) *LimitError {
	return &LimitError{File: r.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Documents parses data, the next part of the file, into its documents (DocumentNodes;
// an empty document is one with no content) without expanding any alias. A part over a
// limit is a *LimitError; a syntax error is go-yaml's own error, unchanged. Lines are
// data's.
func (r *Reader) Documents(data []byte) ([]*yaml.Node, error) {
	if err := r.checkBytes(data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		n := &yaml.Node{}
		err := dec.Decode(n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		if err := r.count(n); err != nil {
			return nil, err
		}
		docs = append(docs, n)
	}
}

// Check is Documents for a reader that decodes data itself afterwards: only a limit is
// an error. Syntax is left to that decoder, which reports it in its own words (and, in
// a document that does not parse, expands nothing).
func (r *Reader) Check(data []byte) error {
	_, err := r.Documents(data)
	if errors.Is(err, ErrLimit) {
		return err
	}
	return nil
}

// JSONObject reports whether data is one JSON object that a reader may take as the JSON
// a strict YAML-to-JSON conversion would make of it, without parsing it as YAML: valid
// by RFC 7493 (UTF-8, each name once in an object: what YAMLToJSONStrict demands too),
// and no larger than jsonObjectMaxBytes, so that no limit of DefaultLimits could refuse
// it — JSON has no aliases, and its bytes bound its nodes. OLM's catalogs carry their
// bundles' manifests so (olm.bundle.object); read as YAML first, they cost the catalog's
// load several times their decoding.
func JSONObject(data []byte) bool {
	rest := bytes.TrimLeft(data, " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' || int64(len(data)) > jsonObjectMaxBytes {
		return false
	}
	return jsontext.Value(data).IsValid()
}

// jsonObjectMaxBytes is the largest JSON object JSONObject takes: within the document
// limit, and under DefaultMaxNodes as Documents counts them (the document's node, and
// each value and name of the JSON, every one but the last followed by a byte of its own,
// a comma, colon or bracket: n bytes hold at most (n+1)/2 of them).
const jsonObjectMaxBytes = min(DefaultMaxDocumentBytes, 2*(DefaultMaxNodes-2))

// Nodes is how many nodes the reader has counted so far, every alias as the nodes it
// expands to: what a reader that expands aliases (kustomize's kyaml) builds of the file.
func (r *Reader) Nodes() int64 { return r.nodes }

// Check reads data as one whole file under the default limits (see Reader.Check).
func Check(file string, data []byte) error {
	return NewReader(file, DefaultLimits).Check(data)
}

// Documents parses data as one whole file under the default limits (see
// Reader.Documents).
func Documents(file string, data []byte) ([]*yaml.Node, error) {
	return NewReader(file, DefaultLimits).Documents(data)
}

// documentMarker is a line that starts or ends a YAML document. YAML forbids such a line
// inside any content (a scalar, quoted or not, cannot hold one), so splitting on it finds
// the documents without parsing.
var documentMarker = regexp.MustCompile(`(?m)^(?:---|\.\.\.)(?:[ \t\r]|$)`)

// checkBytes bounds the part and the file, and each document of the part, before
// anything parses them: the parse alone costs up to ~170 bytes of memory per byte.
func (r *Reader) checkBytes(data []byte) error {
	r.bytes += int64(len(data))
	if r.bytes > r.limits.MaxFileBytes {
		return r.refuse(0, "file of more than %d bytes; at most %d are read", r.limits.MaxFileBytes, r.limits.MaxFileBytes)
	}
	if int64(len(data)) <= r.limits.MaxDocumentBytes {
		return nil
	}
	start := 0
	for _, m := range documentMarker.FindAllIndex(data, -1) {
		if err := r.checkDocumentBytes(data, start, m[0]); err != nil {
			return err
		}
		start = m[0]
	}
	return r.checkDocumentBytes(data, start, len(data))
}

func (r *Reader) checkDocumentBytes(data []byte, start, end int) error {
	if size := int64(end - start); size > r.limits.MaxDocumentBytes {
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		return r.refuse(line, "YAML document of %d bytes; at most %d are read (the Kubernetes API server refuses a request over 3 MiB)",
			size, r.limits.MaxDocumentBytes)
	}
	return nil
}

// count adds one document's nodes to the file's, as go-yaml v3 counts them when it
// decodes the document into values: every node once, an alias as its target's nodes
// again (those "come from alias expansion"). It refuses, at the line where it happens,
// what go-yaml would refuse ("excessive aliasing", an anchor containing itself) and a
// file over MaxNodes.
func (r *Reader) count(doc *yaml.Node) error {
	c := &counter{r: r, sizes: map[*yaml.Node]int64{}, busy: map[*yaml.Node]bool{}}
	err := c.visit(doc)
	r.nodes += c.decoded
	return err
}

// counter walks one document in go-yaml's decoding order without entering aliases:
// an alias adds its target's expanded size at once (sizes are memoized per anchored
// node, so the walk is linear in the document as written).
type counter struct {
	r                *Reader
	decoded, aliased int64
	sizes            map[*yaml.Node]int64
	busy             map[*yaml.Node]bool
}

// saturated stands for "more than anything checked": sizes are clamped there so that
// a deep bomb (9^100 nodes) does not overflow.
const saturated = int64(1) << 60

func add(a, b int64) int64 { return min(a+b, saturated) }

func (c *counter) visit(n *yaml.Node) error {
	c.decoded++
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil // go-yaml refuses an unknown anchor while parsing
		}
		size, err := c.size(n.Alias)
		if err != nil {
			return err
		}
		c.decoded, c.aliased = add(c.decoded, size), add(c.aliased, size)
	}
	if err := c.check(n); err != nil {
		return err
	}
	if n.Kind == yaml.AliasNode {
		return nil
	}
	for _, child := range n.Content {
		if err := c.visit(child); err != nil {
			return err
		}
	}
	return nil
}

// size is how many nodes decoding n takes, aliases expanded.
func (c *counter) size(n *yaml.Node) (int64, error) {
	if s, ok := c.sizes[n]; ok {
		return s, nil
	}
	if c.busy[n] {
		return 0, c.r.refuse(n.Line, "anchor '%s' value contains itself", n.Anchor)
	}
	c.busy[n] = true
	defer delete(c.busy, n)
	s := int64(1)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		t, err := c.size(n.Alias)
		if err != nil {
			return 0, err
		}
		s = add(s, t)
	}
	for _, child := range n.Content {
		t, err := c.size(child)
		if err != nil {
			return 0, err
		}
		s = add(s, t)
	}
	if n.Anchor != "" {
		c.sizes[n] = s // only anchored nodes are reached twice
	}
	return s, nil
}

// check applies go-yaml v3's aliasing rule (decode.go: the same thresholds and ratio)
// and the file's node limit.
func (c *counter) check(n *yaml.Node) error {
	if total := add(c.r.nodes, c.decoded); total > c.r.limits.MaxNodes {
		return c.r.refuse(n.Line, "file of more than %d YAML nodes (an alias counts as the nodes it expands to); at most %d are read",
			c.r.limits.MaxNodes, c.r.limits.MaxNodes)
	}
	if c.aliased > 100 && c.decoded > 1000 && float64(c.aliased)/float64(c.decoded) > allowedAliasRatio(c.decoded) {
		return c.r.refuse(n.Line, "document contains excessive aliasing: aliases expand to %d of its %d nodes", c.aliased, c.decoded)
	}
	return nil
}

// allowedAliasRatio is go-yaml v3's: up to 400,000 decoded nodes, 99% may come from
// aliases; from 4,000,000 on, 10%; linear in between.
func allowedAliasRatio(decoded int64) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case decoded <= low:
		return 0.99
	case decoded >= high:
		return 0.10
	default:
		return 0.99 - 0.89*(float64(decoded-low)/float64(high-low))
	}
}
