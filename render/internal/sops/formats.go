package sops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"gopkg.in/ini.v1"
)

// item is one entry of a mapping, in document order: key is a string, or a comment
// standing between entries.
type item struct {
	key   any
	value any
}

// branch is a mapping (sops's TreeBranch); a document is one or more (YAML's documents).
// Leaves are string, int, float64, bool, time.Time, []byte, comment or nil; lists are []any.
type branch []item

// Format is a file format sops reads and writes.
type Format int

// The formats, as sops (and Flux) name them.
const (
	Binary Format = iota
	Dotenv
	INI
	JSON
	YAML
)

func (f Format) String() string {
	return [...]string{"binary", "dotenv", "INI", "JSON", "YAML"}[f]
}

// FormatForPath is the format sops gives a file by its name.
func FormatForPath(p string) Format {
	switch {
	case strings.HasSuffix(p, ".yaml"), strings.HasSuffix(p, ".yml"):
		return YAML
	case strings.HasSuffix(p, ".json"):
		return JSON
	case strings.HasSuffix(p, ".env"):
		return Dotenv
	case strings.HasSuffix(p, ".ini"):
		return INI
	}
	return Binary
}

// maxNodes bounds the values a YAML document expands to through its aliases (a "billion
// laughs" would otherwise be expanded into the tree).
const maxNodes = 1 << 20

func load(data []byte, f Format) ([]branch, error) {
	switch f {
	case YAML:
		return loadYAML(data)
	case Dotenv:
		return loadDotenv(data)
	case INI:
		b, err := loadINI(data)
		if err != nil {
			return nil, fmt.Errorf("Could not unmarshal input data: %w", err)
		}
		return b, nil
	}
	b, err := loadJSON(data)
	if err != nil {
		return nil, fmt.Errorf("Could not unmarshal input data: %w", err)
	}
	return []branch{b}, nil
}

func emit(in []branch, f Format) ([]byte, error) {
	switch f {
	case YAML:
		return emitYAML(in)
	case Dotenv:
		return emitDotenv(in)
	case INI:
		return emitINI(in)
	case JSON:
		out, err := encodeJSON(in[0])
		if err != nil {
			return nil, fmt.Errorf("Error marshaling to json: %w", err)
		}
		var b bytes.Buffer
		if err := json.Indent(&b, out, "", ""); err != nil {
			return nil, fmt.Errorf("Error marshaling to json: %w", err)
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	if len(in) != 1 {
		return nil, errors.New("error emitting binary store: there must be exactly one tree branch")
	}
	for _, it := range in[0] {
		if it.key == "data" {
			switch v := it.value.(type) {
			case string:
				return []byte(v), nil
			case []byte:
				return v, nil
			}
			return nil, errors.New("error emitting binary store: 'data' key in tree does not have a string value")
		}
	}
	return nil, errors.New("error emitting binary store: no binary data found in tree")
}

// YAML, as sops's YAML store reads it: comments become entries of the mapping or list
// they stand in.

func loadYAML(data []byte) ([]branch, error) {
	if len(data) > 0 {
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&map[string]any{}); err != nil {
			return nil, err
		}
	}
	budget := maxNodes
	var out []branch
	d := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := d.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("Error unmarshaling input YAML: %w", err)
		}
		b, err := yamlToBranch(&doc, nil, false, &budget)
		if err != nil {
			return nil, fmt.Errorf("Error unmarshaling input YAML: %w", err)
		}
		out = append(out, b)
	}
}

func yamlComments(text string, inline bool) []comment {
	var out []comment
	for _, line := range strings.Split(text, "\n") {
		if line != "" {
			out = append(out, comment{value: line[1:], inline: inline})
		}
	}
	return out
}

func appendMapComments(b branch, text string, inline bool) branch {
	for _, c := range yamlComments(text, inline) {
		b = append(b, item{key: c})
	}
	return b
}

func appendListComments(l []any, text string, inline bool) []any {
	for _, c := range yamlComments(text, inline) {
		l = append(l, c)
	}
	return l
}

func spend(budget *int) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("the document expands to more than %d values", maxNodes)
	}
	return nil
}

func yamlToValue(n *yaml.Node, handled bool, budget *int) (any, error) {
	if err := spend(budget); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.SequenceNode:
		var l []any
		if !handled {
			l = appendListComments(l, n.HeadComment, false)
			l = appendListComments(l, n.LineComment, false)
		}
		for _, e := range n.Content {
			l = appendListComments(l, e.HeadComment, false)
			l = appendListComments(l, e.LineComment, true)
			v, err := yamlToValue(e, true, budget)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			l = appendListComments(l, e.FootComment, false)
		}
		if !handled {
			l = appendListComments(l, n.FootComment, false)
		}
		return l, nil
	case yaml.MappingNode:
		return yamlToBranch(n, branch{}, handled, budget)
	case yaml.ScalarNode:
		var v any
		_ = n.Decode(&v)
		return v, nil
	case yaml.AliasNode:
		return yamlToValue(n.Alias, false, budget)
	}
	return nil, nil
}

func yamlToBranch(n *yaml.Node, b branch, handled bool, budget *int) (branch, error) {
	if err := spend(budget); err != nil {
		return nil, err
	}
	if b == nil {
		b = branch{}
	}
	if !handled {
		b = appendMapComments(b, n.HeadComment, false)
		b = appendMapComments(b, n.LineComment, false)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			var err error
			if b, err = yamlToBranch(c, b, false, budget); err != nil {
				return nil, err
			}
		}
	case yaml.SequenceNode:
		return nil, errors.New("YAML documents that are sequences are not supported")
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			b = appendMapComments(b, k.HeadComment, false)
			b = appendMapComments(b, k.LineComment, false)
			scalar := v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode
			if scalar {
				b = appendMapComments(b, v.HeadComment, false)
				b = appendMapComments(b, v.LineComment, true)
			}
			var key any
			_ = k.Decode(&key)
			val, err := yamlToValue(v, scalar, budget)
			if err != nil {
				return nil, err
			}
			b = append(b, item{key: key, value: val})
			if scalar {
				b = appendMapComments(b, v.FootComment, false)
			}
			b = appendMapComments(b, k.FootComment, false)
		}
	case yaml.ScalarNode:
		if n.ShortTag() != "!!null" {
			return nil, errors.New("YAML documents that are values are not supported")
		}
		return b, nil
	case yaml.AliasNode:
		var err error
		if b, err = yamlToBranch(n.Alias, b, false, budget); err != nil {
			return nil, err
		}
	}
	if !handled {
		b = appendMapComments(b, n.FootComment, false)
	}
	return b, nil
}

func joinComments(cs []string) string { return "#" + strings.Join(cs, "\n#") }

func addHead(n *yaml.Node, cs []string) []string {
	if len(cs) > 0 {
		if n.HeadComment != "" {
			n.HeadComment = joinComments(cs) + "\n" + n.HeadComment
		} else {
			n.HeadComment = joinComments(cs)
		}
	}
	return nil
}

func addTail(field *string, cs []string) []string {
	if len(cs) > 0 {
		if *field != "" {
			*field += "\n" + joinComments(cs)
		} else {
			*field = joinComments(cs)
		}
	}
	return nil
}

func valueToYAML(v any) *yaml.Node {
	switch t := v.(type) {
	case branch:
		n := &yaml.Node{Kind: yaml.MappingNode}
		branchToYAML(t, n)
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		var head, inline []string
		first := true
		for _, e := range t {
			if c, ok := e.(comment); ok {
				if c.inline {
					inline = append(inline, c.value)
				} else {
					head = append(head, c.value)
				}
				continue
			}
			if first {
				head = addHead(n, head)
				first = false
			}
			en := valueToYAML(e)
			head = addHead(en, head)
			inline = addTail(&en.LineComment, inline)
			n.Content = append(n.Content, en)
		}
		if rest := append(head, inline...); len(rest) > 0 {
			if first {
				addHead(n, rest)
			} else {
				addTail(&n.Content[len(n.Content)-1].FootComment, rest)
			}
		}
		return n
	case []byte:
		v = string(t)
	}
	n := &yaml.Node{}
	_ = n.Encode(v)
	return n
}

func branchToYAML(b branch, m *yaml.Node) {
	var head, inline []string
	first := true
	for _, it := range b {
		if c, ok := it.key.(comment); ok {
			if c.inline {
				inline = append(inline, c.value)
			} else {
				head = append(head, c.value)
			}
			continue
		}
		if first {
			head = addHead(m, head)
			first = false
		}
		k := &yaml.Node{}
		_ = k.Encode(it.key)
		head = addHead(k, head)
		v := valueToYAML(it.value)
		inline = addTail(&v.LineComment, inline)
		m.Content = append(m.Content, k, v)
	}
	if rest := append(head, inline...); len(rest) > 0 {
		if first {
			addHead(m, rest)
		} else {
			addTail(&m.Content[len(m.Content)-2].FootComment, rest)
		}
	}
}

func emitYAML(in []branch) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(4)
	for _, br := range in {
		m := &yaml.Node{Kind: yaml.MappingNode}
		branchToYAML(br, m)
		if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m}}); err != nil {
			return nil, fmt.Errorf("Error marshaling to YAML: %w", err)
		}
	}
	if err := e.Close(); err != nil {
		return nil, fmt.Errorf("Error marshaling to YAML: %w", err)
	}
	return b.Bytes(), nil
}

// JSON, as sops's JSON store reads it: objects keep their order, integral numbers are
// ints. Binary files are JSON documents too ({"data": …, "sops": …}).

func loadJSON(data []byte) (branch, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("SOPS only supports JSON files with a top-level object (starting with '{')")
	}
	return jsonObject(dec, 0)
}

// maxDepth bounds the nesting of a JSON document (encoding/json's own bound is 10000).
const maxDepth = 10000

func jsonValue(dec *json.Decoder, t json.Token, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("exceeded max depth")
	}
	switch d := t.(type) {
	case json.Delim:
		if d == '{' {
			return jsonObject(dec, depth+1)
		}
		if d == '[' {
			l := []any{}
			for {
				t, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if t == json.Delim(']') {
					return l, nil
				}
				v, err := jsonValue(dec, t, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
		}
		return nil, fmt.Errorf("unexpected %s", d)
	case json.Number:
		if i, err := d.Int64(); err == nil {
			return int(i), nil
		}
		return d.Float64()
	}
	return t, nil
}

func jsonObject(dec *json.Decoder, depth int) (branch, error) {
	b := branch{}
	for {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if t == json.Delim('}') {
			return b, nil
		}
		k, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("Expected JSON object key, got a %T instead", t)
		}
		vt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := jsonValue(dec, vt, depth)
		if err != nil {
			return nil, err
		}
		b = append(b, item{key: k, value: v})
	}
}

func encodeJSON(v any) ([]byte, error) {
	switch t := v.(type) {
	case branch:
		var b bytes.Buffer
		b.WriteByte('{')
		n := 0
		for _, it := range t {
			k, ok := it.key.(string)
			if !ok {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			kb, _ := json.Marshal(k)
			vb, err := encodeJSON(it.value)
			if err != nil {
				return nil, err
			}
			b.Write(kb)
			b.WriteString(": ")
			b.Write(vb)
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		n := 0
		for _, e := range t {
			if _, ok := e.(comment); ok {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			vb, err := encodeJSON(e)
			if err != nil {
				return nil, err
			}
			b.Write(vb)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case comment:
		return json.Marshal(t.value)
	}
	return json.Marshal(v)
}

// dotenv, as sops's dotenv store reads it: KEY=value lines, \n escaped, # comments.

func loadDotenv(data []byte) ([]branch, error) {
	b := branch{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			b = append(b, item{key: comment{value: string(line[1:])}})
			continue
		}
		k, v, ok := bytes.Cut(line, []byte("="))
		if !ok {
			// sops quotes the line, which may be a secret.
			return nil, errors.New("invalid dotenv input line: a line has no '='")
		}
		b = append(b, item{key: string(k), value: strings.ReplaceAll(string(v), `\n`, "\n")})
	}
	return []branch{b}, nil
}

func complexValue(v any) bool {
	switch v.(type) {
	case branch, []any:
		return true
	}
	return false
}

// scalarString is how sops's flat stores write a value that is not a string.
func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	case float64:
		s := strconv.FormatFloat(t, 'G', -1, 64)
		if !strings.ContainsAny(s, ".E") {
			s = strconv.FormatFloat(t, 'f', 1, 64)
		}
		return s
	case bool:
		return strconv.FormatBool(t)
	case time.Time:
		return t.Format(time.RFC3339)
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v)
}

func emitDotenv(in []branch) ([]byte, error) {
	var b bytes.Buffer
	for _, it := range in[0] {
		if complexValue(it.value) {
			return nil, fmt.Errorf("cannot use complex value in dotenv file; offending key %v", it.key)
		}
		if c, ok := it.key.(comment); ok {
			fmt.Fprintf(&b, "#%s\n", c.value)
			continue
		}
		v := scalarString(it.value)
		if _, ok := it.value.(string); ok {
			v = strings.ReplaceAll(v, "\n", `\n`)
		}
		fmt.Fprintf(&b, "%v=%s\n", it.key, v)
	}
	return b.Bytes(), nil
}

// INI, as sops's INI store reads it (with go-ini): each section a mapping.

func stripComment(c string) string {
	switch {
	case strings.HasPrefix(c, ";"):
		return strings.TrimLeft(c, "; ")
	case strings.HasPrefix(c, "#"):
		return strings.TrimLeft(c, "# ")
	}
	return c
}

func loadINI(data []byte) ([]branch, error) {
	f, err := ini.LoadSources(ini.LoadOptions{AllowNonUniqueSections: true}, data)
	if err != nil {
		return nil, err
	}
	b := branch{}
	for _, s := range f.Sections() {
		items := branch{}
		if s.Comment != "" {
			items = append(items, item{key: comment{value: stripComment(s.Comment)}})
		}
		for _, k := range s.Keys() {
			items = append(items, item{key: k.Name(), value: k.Value()})
			if k.Comment != "" {
				items = append(items, item{key: comment{value: stripComment(k.Comment)}})
			}
		}
		b = append(b, item{key: s.Name(), value: items})
	}
	return []branch{b}, nil
}

func emitINI(in []branch) ([]byte, error) {
	f := ini.Empty(ini.LoadOptions{AllowNonUniqueSections: true})
	f.DeleteSection(ini.DefaultSection)
	for _, br := range in {
		for _, it := range br {
			name, ok := it.key.(string)
			if !ok {
				continue
			}
			s, err := f.NewSection(name)
			if err != nil {
				return nil, fmt.Errorf("Error marshaling to INI: Error encoding section %s: %w", name, err)
			}
			items, ok := it.value.(branch)
			if !ok {
				return nil, errors.New("Error marshaling to INI: Error encoding section: Section values should always be TreeBranches")
			}
			first := 0
			if len(items) > 0 {
				if c, ok := items[0].key.(comment); ok {
					s.Comment = c.value
					first = 1
				}
			}
			var last *ini.Key
			for _, kv := range items[first:] {
				if c, ok := kv.key.(comment); ok {
					if last != nil {
						last.Comment = c.value
					}
					continue
				}
				if last, err = s.NewKey(fmt.Sprint(kv.key), scalarString(kv.value)); err != nil {
					return nil, fmt.Errorf("Error marshaling to INI: Error encoding key: %w", err)
				}
			}
		}
	}
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("Error marshaling to INI: %w", err)
	}
	return b.Bytes(), nil
}
