// Command chartdocs writes the values table of a Helm chart's README.md from its
// values.yaml, as helm-docs does: every value carries a `# -- description` comment right
// above it, and the table — key, type, default, description — replaces what is between the
// README's `<!-- values:begin -->` and `<!-- values:end -->` lines. It runs in `make
// generate`, so `make verify` fails when the README is stale; a value without a description
// fails it too.
//
//	go run ./hack/chartdocs charts/olmsync
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

const (
	begin = "<!-- values:begin -->"
	end   = "<!-- values:end -->"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: chartdocs <chart folder>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "chartdocs:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return err
	}
	rows, err := Rows(values)
	if err != nil {
		return fmt.Errorf("values.yaml: %w", err)
	}
	readme := filepath.Join(dir, "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	updated, err := Splice(old, Table(rows))
	if err != nil {
		return fmt.Errorf("README.md: %w", err)
	}
	if bytes.Equal(old, updated) {
		return nil
	}
	return os.WriteFile(readme, updated, 0o644)
}

// Row is one documented value.
type Row struct {
	Key, Type, Default, Description string
	Line                            int
}

// Rows lists the documented values of a values.yaml in file order. A key whose comment
// starts with "# --" is a row (a map with one is documented whole); a map without one is
// descended into; anything else without one is an error naming its line.
func Rows(data []byte) ([]Row, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	var rows []Row
	var errs []error
	walk(doc.Content[0], "", &rows, &errs)
	return rows, errors.Join(errs...)
}

func walk(n *yaml.Node, prefix string, rows *[]Row, errs *[]error) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		desc, ok := description(k.HeadComment)
		switch {
		case ok:
			def, err := defaultOf(v)
			if err != nil {
				*errs = append(*errs, fmt.Errorf("line %d: %s: %w", k.Line, key, err))
				continue
			}
			*rows = append(*rows, Row{Key: key, Type: typeOf(v), Default: def, Description: desc, Line: k.Line})
		case v.Kind == yaml.MappingNode && len(v.Content) > 0:
			walk(v, key+".", rows, errs)
		default:
			*errs = append(*errs, fmt.Errorf("line %d: %s has no `# --` description", k.Line, key))
		}
	}
}

// description is the text of a "# -- ..." comment and the comment lines after it.
func description(comment string) (string, bool) {
	var out []string
	found := false
	for line := range strings.SplitSeq(comment, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if rest, ok := strings.CutPrefix(line, "--"); ok {
			found, out = true, []string{strings.TrimSpace(rest)}
			continue
		}
		if found && line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, " "), found
}

func typeOf(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	switch v.Tag {
	case "!!bool":
		return "bool"
	case "!!int":
		return "int"
	case "!!float":
		return "float"
	}
	return "string"
}

func defaultOf(v *yaml.Node) (string, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return "", err
	}
	data, err := json.Marshal(x)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Table is the Markdown table of the rows.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", r.Key, r.Type, cell(r.Default), cell(r.Description))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Splice puts the table between the README's markers.
func Splice(readme []byte, table string) ([]byte, error) {
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %s … %s lines to put the values table between", begin, end)
	}
	return []byte(s[:i+len(begin)] + "\n" + table + s[j:]), nil
}
