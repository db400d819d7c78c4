package render

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	yamlv2 "sigs.k8s.io/yaml/goyaml.v2"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// YAMLError is a YAML file that could not be read: its syntax is broken, a key is given
// twice, or a value has the wrong type. Line is 1-based; 0 when the parser did not say.
type YAMLError struct {
	File string
	Line int
	Msg  string
	// limit: the file was refused before it was decoded, for its size, its node count
	// or its aliases (ErrInputLimit), not for its syntax.
	limit bool
}

func (e *YAMLError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Is makes errors.Is(err, ErrMalformedYAML) true for a YAMLError about the file's
// content, errors.Is(err, ErrInputLimit) for one refused by a limit.
func (e *YAMLError) Is(target error) bool {
	if e.limit {
		return target == ErrInputLimit
	}
	return target == ErrMalformedYAML
}

// limitError is a file the bounded decoder refused, as a YAMLError naming file and line.
func limitError(err error) (*YAMLError, bool) {
	var le *safeyaml.LimitError
	if !errors.As(err, &le) {
		return nil, false
	}
	return &YAMLError{File: le.File, Line: le.Line, Msg: le.Msg, limit: true}, true
}

// yamlLineRE finds the line yaml.v3 puts in its messages ("yaml: line 5: ...",
// "line 5: cannot unmarshal ...").
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into a YAMLError naming file and line. yaml.v3 reports
// several type errors at once, one per line; the first one gives the line.
func yamlError(file string, err error) *YAMLError {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		ye := yamlError(file, errors.New(strings.TrimSpace(te.Errors[0])))
		if len(te.Errors) > 1 {
			ye.Msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
		return ye
	}
	msg := strings.TrimSpace(err.Error())
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &YAMLError{File: file, Line: line, Msg: m[2]}
	}
	return &YAMLError{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// syntaxError is yamlError for a syntax error of data. yaml.v3 puts, for a parser error
// (as opposed to a scanner error), the 0-based line where the enclosing block starts in
// its message; yaml.v2 puts the 0-based line of the problem itself. For those errors the
// line comes from yaml.v2, made 1-based and kept within the file.
func syntaxError(file string, data []byte, err error) *YAMLError {
	ye := yamlError(file, err)
	if !yamlParserErrors[ye.Msg] {
		return ye // scanner errors: yaml.v3's line is the problem's, 1-based
	}
	ye.Line++ // at least the enclosing block's first line
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err2 := dec.Decode(&v)
		if err2 == nil {
			continue
		}
		if m := yamlLineRE.FindStringSubmatch(strings.TrimSpace(err2.Error())); m != nil && m[2] == ye.Msg {
			line, _ := strconv.Atoi(m[1])
			ye.Line = min(line+1, lastContentLine(data))
		}
		return ye
	}
}

// yamlParserErrors are the messages of libyaml's parser (not its scanner).
var yamlParserErrors = map[string]bool{
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
}

// lastContentLine is the 1-based number of the last line that is not blank.
func lastContentLine(data []byte) int {
	lines := bytes.Split(bytes.TrimRight(data, " \t\r\n"), []byte("\n"))
	return len(lines)
}

// yamlDoc is one non-empty document of a YAML stream: its content node (a mapping for
// every Kubernetes manifest) and the line that content starts on, past any leading
// comments and "---".
type yamlDoc struct {
	Node *yaml.Node
	Line int
}

// decodeDocs reads every document of a YAML (or JSON) stream through the bounded decoder
// (internal/safeyaml): a file over its limits, or whose aliases expand too far, is a
// YAMLError (ErrInputLimit) naming file and line, and nothing else ever parses it, since
// every file an app's build reads is planned through here first. Empty documents (only
// comments, or nothing between two "---") are skipped, as kubectl and kustomize skip them.
// A duplicate key anywhere in a document is an error naming its line.
func decodeDocs(file string, data []byte) ([]yamlDoc, error) {
	docs, _, err := decodeCounted(file, data)
	return docs, err
}

// decodeCounted is decodeDocs that also says how many nodes the file expands to, every
// alias counted as the nodes it stands for: what kustomize builds of it (Options.NodeBudget).
func decodeCounted(file string, data []byte) ([]yamlDoc, int64, error) {
	r := safeyaml.NewReader(file, safeyaml.DefaultLimits)
	nodes, err := r.Documents(data)
	if err != nil {
		if le, ok := limitError(err); ok {
			return nil, 0, le
		}
		return nil, 0, syntaxError(file, data, err)
	}
	docs, err := keptDocs(file, nodes)
	return docs, r.Nodes(), err
}

// keptDocs are the documents of a file worth reading, each checked for duplicate keys.
func keptDocs(file string, nodes []*yaml.Node) ([]yamlDoc, error) {
	var docs []yamlDoc
	for _, n := range nodes {
		if len(n.Content) == 0 {
			continue
		}
		content := n.Content[0]
		if content.Kind == yaml.ScalarNode && content.Tag == "!!null" {
			continue
		}
		if err := checkDuplicateKeys(file, content); err != nil {
			return nil, err
		}
		docs = append(docs, yamlDoc{Node: content, Line: content.Line})
	}
	return docs, nil
}

// checkDuplicateKeys reports the first mapping key given twice. yaml.v3 only notices
// duplicates while decoding into Go values; kustomize and the API server refuse them.
func checkDuplicateKeys(file string, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Tag != "!!merge" {
				if first, dup := seen[k.Value]; dup {
					return &YAMLError{File: file, Line: k.Line,
						Msg: fmt.Sprintf("mapping key %q already defined at line %d", k.Value, first)}
				}
				seen[k.Value] = k.Line
			}
			if err := checkDuplicateKeys(file, n.Content[i+1]); err != nil {
				return err
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkDuplicateKeys(file, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapValue returns the value node of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mapKey returns the key node of key in a mapping node, or nil.
func mapKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// scalarAt follows keys through nested mappings and returns the scalar found there.
func scalarAt(n *yaml.Node, keys ...string) string {
	for _, k := range keys {
		n = mapValue(n, k)
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// seqItemLine returns the line of item i of the sequence under key, else the key's line,
// else the mapping's own line: the closest place a reader can be pointed at.
func seqItemLine(n *yaml.Node, key string, i int) int {
	if v := mapValue(n, key); v != nil && v.Kind == yaml.SequenceNode && i < len(v.Content) {
		return v.Content[i].Line
	}
	if k := mapKey(n, key); k != nil {
		return k.Line
	}
	if n != nil {
		return n.Line
	}
	return 0
}

// checkKnownFields walks a mapping node against the yaml tags of a Go struct type and
// reports the first key the type has no field for, with its line. yaml.v3 can do this
// only through a Decoder, which loses the per-item lines we need for later messages.
func checkKnownFields(file string, n *yaml.Node, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil // a scalar in place of a struct is a type error node.Decode reports
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				return &YAMLError{File: file, Line: k.Line, Msg: fmt.Sprintf("unknown field %q in %s (known fields: %s)",
					k.Value, where, strings.Join(sortedKeys(fields), ", "))}
			}
			if err := checkKnownFields(file, n.Content[i+1], ft, joinWhere(where, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range n.Content {
			if err := checkKnownFields(file, item, t.Elem(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func joinWhere(where, key string) string {
	if where == "" || where == "the config" {
		return key
	}
	return where + "." + key
}

// yamlFields maps each yaml key of a struct to its field type.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
