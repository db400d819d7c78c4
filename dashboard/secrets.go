package dashboard

import (
	"bytes"
	"errors"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/reconcile/diff"
)

// Mask stands for every value the file view hides, as in the diffs.
const Mask = diff.Mask

// shownFile says whether the file view shows a file of a repository: manifests only
// (YAML and JSON), as violations and rendered objects point at; a secretGenerator's
// sources (.env files, certificates, keys) are never shown.
func shownFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// errUnmaskable: a file that may hold a Secret's values could not be read as YAML, so
// they cannot be found to mask them.
var errUnmaskable = errors.New("it may hold a Secret's values and is not valid YAML, so they cannot be masked")

// maskFile hides, in a YAML or JSON file, every value a Secret could hold: in each
// document of kind Secret, the values of data and stringData (their keys stay), and in
// each kustomization, the literals of its secretGenerators. Lines stay where they are,
// so that a violation's line still points at its line.
func maskFile(file string, data []byte) ([]byte, error) {
	docs, err := safeyaml.Documents(file, data)
	if err != nil {
		if bytes.Contains(data, []byte("Secret")) || bytes.Contains(data, []byte("secretGenerator")) {
			return nil, errUnmaskable
		}
		return data, nil
	}
	m := &masker{lines: strings.Split(string(data), "\n")}
	for _, doc := range docs {
		root := doc
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = root.Content[0]
		}
		if root.Kind != yaml.MappingNode {
			continue
		}
		kind := value(root, "kind")
		if kind != nil && kind.Kind == yaml.ScalarNode && kind.Value == "Secret" {
			for _, field := range []string{"data", "stringData"} {
				m.maskEntries(root, field)
			}
		}
		if kind != nil && kind.Kind == yaml.ScalarNode && kind.Value == "SecretGenerator" {
			m.maskEntries(root, "literals")
		}
		if gens := value(root, "secretGenerator"); gens != nil && gens.Kind == yaml.SequenceNode {
			for _, g := range gens.Content {
				if g.Kind == yaml.MappingNode {
					m.maskEntries(g, "literals")
				}
			}
		}
	}
	if m.masked == 0 {
		return data, nil
	}
	return []byte(strings.Join(m.lines, "\n")), nil
}

// value is the value of key in a mapping; nil when it has none.
func value(mapping *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		if k := mapping.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return mapping.Content[i+1]
		}
	}
	return nil
}

type masker struct {
	lines  []string
	masked int
}

// maskEntries masks the entries of field in mapping: the value of each key of a block
// mapping, each item of a block sequence (a generator's literals), and anything else
// (a flow collection, a scalar, an alias) as a whole.
func (m *masker) maskEntries(mapping *yaml.Node, field string) {
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		key, v := mapping.Content[i], mapping.Content[i+1]
		if key.Kind != yaml.ScalarNode || key.Value != field {
			continue
		}
		switch {
		case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0:
			for j := 0; j+1 < len(v.Content); j += 2 {
				m.mask(v.Content[j], v.Content[j+1])
			}
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0:
			for _, item := range v.Content {
				m.mask(nil, item)
			}
		default:
			m.mask(key, v)
		}
	}
}

// mask hides a value: its first line from where it starts, and the lines after it that
// are indented deeper than its key (or than itself, for a sequence item without one) —
// the rest of a block scalar or a multi-line flow collection. An alias's anchored value
// is masked too.
func (m *masker) mask(key, v *yaml.Node) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		m.mask(nil, v.Alias)
	}
	line := v.Line - 1
	if line < 0 || line >= len(m.lines) {
		return
	}
	indent := v.Column - 1
	if key != nil {
		indent = key.Column - 1
	}
	col := min(max(v.Column-1, 0), len(m.lines[line]))
	m.lines[line] = m.lines[line][:col] + Mask
	m.masked++
	for l := line + 1; l < len(m.lines); l++ {
		text := m.lines[l]
		trimmed := strings.TrimLeft(text, " \t")
		if trimmed == "" {
			continue
		}
		lead := len(text) - len(trimmed)
		if lead <= indent {
			return
		}
		m.lines[l] = text[:lead] + Mask
	}
}
