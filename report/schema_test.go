package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xeipuuv/gojsonschema"
)

func writeJSONBytes(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestJSONMatchesItsSchema validates the JSON format against JSONSchema, and checks that
// every key the output holds is declared there: a field added to the types without the
// schema (and docs/ci.md) fails here.
func TestJSONMatchesItsSchema(t *testing.T) {
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(JSONSchema))
	if err != nil {
		t.Fatalf("the schema does not load: %v", err)
	}
	var root map[string]any
	if err := json.Unmarshal(JSONSchema, &root); err != nil {
		t.Fatal(err)
	}
	declared := schemaPaths(root, root, "")
	for name, r := range map[string]*Report{"full": fixtureReport(t), "nobase": noBaseReport(t), "clean": cleanReport(t), "preview": previewReport(t)} {
		t.Run(name, func(t *testing.T) {
			out := writeJSONBytes(t, r)
			res, err := schema.Validate(gojsonschema.NewBytesLoader(out))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors() {
				t.Errorf("schema: %s", e)
			}
			for _, p := range keyPaths(t, out) {
				if !slices.Contains(declared, p) {
					t.Errorf("key %s is not in report.schema.json", p)
				}
			}
		})
	}
}

// TestJSONSchemaRejects makes sure the schema is not so loose that it accepts anything.
func TestJSONSchemaRejects(t *testing.T) {
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(JSONSchema))
	if err != nil {
		t.Fatal(err)
	}
	good := string(writeJSONBytes(t, fixtureReport(t)))
	tests := map[string]string{
		"another kind":     strings.Replace(good, `"kind": "Report"`, `"kind": "Other"`, 1),
		"unknown severity": strings.Replace(good, `"severity": "warning"`, `"severity": "info"`, 1),
		"unknown status":   strings.Replace(good, `"status": "new"`, `"status": "fresh"`, 1),
		"negative line":    strings.Replace(good, `"line": 3`, `"line": -3`, 1),
		"bad expiry":       strings.Replace(good, `"expires": "2027-03-31"`, `"expires": "next year"`, 1),
	}
	for name, doc := range tests {
		if doc == good {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		res, err := schema.Validate(gojsonschema.NewStringLoader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid() {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// schemaPaths lists the property paths a JSON Schema declares, in keyPaths' notation,
// following $ref and array items.
func schemaPaths(root, node map[string]any, path string) []string {
	if ref, ok := node["$ref"].(string); ok {
		def := strings.TrimPrefix(ref, "#/definitions/")
		node = root["definitions"].(map[string]any)[def].(map[string]any)
	}
	var paths []string
	if items, ok := node["items"].(map[string]any); ok {
		paths = append(paths, schemaPaths(root, items, path+"[]")...)
	}
	props, _ := node["properties"].(map[string]any)
	for name, sub := range props {
		p := path + "." + name
		paths = append(paths, p)
		paths = append(paths, schemaPaths(root, sub.(map[string]any), p)...)
	}
	return paths
}

// TestDocsExampleMatchesTheSchema keeps the example in docs/ci.md honest: it must validate
// against the schema and decode into the types with no field left over.
func TestDocsExampleMatchesTheSchema(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "### Example\n\n```json\n")
	example, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatal("docs/ci.md has no JSON example under \"### Example\"")
	}
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(JSONSchema))
	if err != nil {
		t.Fatal(err)
	}
	res, err := schema.Validate(gojsonschema.NewStringLoader(example))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors() {
		t.Errorf("docs/ci.md example: %s", e)
	}
	dec := json.NewDecoder(strings.NewReader(example))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("docs/ci.md example does not decode into Report: %v", err)
	}
	stated := r.Summary
	if err := Complete(&r, stated.FailOn); err != nil {
		t.Fatalf("docs/ci.md example: %v", err)
	}
	if diff := cmp.Diff(stated, r.Summary); diff != "" {
		t.Errorf("docs/ci.md example's summary does not match its lists (-stated +computed):\n%s", diff)
	}
}
