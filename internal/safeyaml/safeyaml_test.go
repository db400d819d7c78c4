package safeyaml

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

func TestLimits(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	small := Limits{MaxFileBytes: 300, MaxDocumentBytes: 120, MaxNodes: 50}
	tests := []struct {
		name   string
		limits Limits
		data   string
		line   int    // 0: accepted
		msg    string // a part of the message
	}{
		{"nine-level billion laughs", DefaultLimits, yamltest.Laughs(9), 9, "document contains excessive aliasing: aliases expand to 5540 of its 5592 nodes"},
		{"a hundred levels: sizes saturate instead of overflowing", DefaultLimits, yamltest.Laughs(100), 9, "excessive aliasing"},
		{"four levels: past go-yaml's 99%", DefaultLimits, yamltest.Laughs(4), 9, "excessive aliasing"},
		{"two levels: 729 scalars, under go-yaml's 1,000 nodes", DefaultLimits, yamltest.Laughs(2), 0, ""},
		{"an anchor that contains itself", DefaultLimits, "a: &a [x, *a]\n", 1, "anchor 'a' value contains itself"},
		{"a merge key that contains itself", DefaultLimits, "a: &a\n  b: 1\n  <<: *a\n", 1, "anchor 'a' value contains itself"},
		{"aliases, a few", DefaultLimits, "a: &a {x: 1}\nb: *a\nc: *a\n", 0, ""},
		{"file over the byte limit", small, strings.Repeat("a: 1\n---\n", 40), 0, "file of more than 300 bytes"},
		{"a document over the byte limit", small, "a: 1\n---\nb: " + strings.Repeat("x", 130) + "\n---\nc: 1\n", 2, "YAML document of 138 bytes; at most 120"},
		{"document markers inside a block scalar do not split", small, "a: |\n  ---\n  " + strings.Repeat("x", 130) + "\n", 1, "YAML document of 144 bytes"},
		{"nodes over the limit, as written", small, "[" + strings.Repeat("1,", 49) + "1]", 1, "file of more than 50 YAML nodes"},
		{"nodes over the limit, through aliases", small, "a: &a [1,2,3,4,5,6,7,8,9]\nb: [*a,*a,*a,*a]\n", 2, "more than 50 YAML nodes"},
		{"nodes of every document count", small, strings.Repeat("[1,2,3,4,5,6,7]\n---\n", 6), 11, "more than 50 YAML nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader("f.yaml", tt.limits).Documents([]byte(tt.data))
			if tt.line == 0 && tt.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want a LimitError", err)
			}
			if le.File != "f.yaml" || le.Line != tt.line || !strings.Contains(le.Msg, tt.msg) {
				t.Errorf("got %q (line %d), want f.yaml:%d: ...%s...", err, le.Line, tt.line, tt.msg)
			}
		})
	}
}

// TestAgreesWithGoYAML: what passes the reader, go-yaml v3 decodes without finding
// excessive aliasing; what go-yaml refuses for its aliases, the reader refuses. Around
// go-yaml's thresholds, both ways.
func TestAgreesWithGoYAML(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	for _, data := range aliasCorpus() {
		agree(t, []byte(data))
	}
}

// aliasCorpus are documents with more and fewer aliases around go-yaml's thresholds: 100
// aliased nodes, 1,000 decoded, and 99% up to 400,000.
func aliasCorpus() []string {
	var out []string
	for _, n := range []int{10, 90, 101, 200, 999, 1000, 1001, 5000} {
		for _, k := range []int{1, 2, 9, 50, 100, 1000, 5000} {
			// an anchored list of n scalars, k aliases of it
			var b strings.Builder
			b.WriteString("a: &a [" + strings.Repeat("x,", n-1) + "x]\nb: [")
			b.WriteString(strings.Repeat("*a,", k-1) + "*a]\n")
			out = append(out, b.String())
		}
	}
	for levels := range 7 {
		out = append(out, yamltest.Laughs(levels))
	}
	return out
}

func agree(t *testing.T, data []byte) {
	t.Helper()
	_, err := Documents("f.yaml", data)
	if errors.Is(err, ErrLimit) {
		if strings.Contains(err.Error(), "excessive aliasing") || strings.Contains(err.Error(), "contains itself") {
			var v any
			if yerr := yaml.Unmarshal(data, &v); yerr == nil {
				t.Errorf("refused %.60q (%v), go-yaml decodes it", data, err)
			}
		}
		return
	}
	if err != nil {
		return // syntax
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var v any
		yerr := dec.Decode(&v)
		if yerr == nil {
			continue
		}
		if msg := yerr.Error(); strings.Contains(msg, "excessive aliasing") || strings.Contains(msg, "contains itself") {
			t.Errorf("accepted %.60q, go-yaml refuses it: %v", data, yerr)
		}
		return
	}
}

// TestRealDataPasses reads every YAML file of the shared data (real manifests, bundles,
// package manifests): none is refused. (The file-based catalog is JSON, read value by value:
// olm/catalog's tests read it through the same limits.)
func TestRealDataPasses(t *testing.T) {
	root := shareddata.Path(t, "data")
	var files, docs int
	var bytes, nodes int64
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !shareddata.HasExt(".yaml", ".yml")(p) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		r := NewReader(p, DefaultLimits)
		parsed, err := r.Documents(data)
		if errors.Is(err, ErrLimit) {
			t.Errorf("real file refused: %v", err)
		}
		docs += len(parsed)
		bytes, nodes = bytes+r.bytes, nodes+r.nodes
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d files of the shared data; want the real manifests, bundles and catalogs", files)
	}
	t.Logf("%d files, %d documents, %d bytes, %d nodes (%.1f bytes a node)", files, docs, bytes, nodes, float64(bytes)/float64(nodes))
}

// TestJSONObject: JSON objects are taken as they are, anything YAMLToJSONStrict would
// refuse or read differently is not: YAML, a name given twice, invalid UTF-8, an array,
// and an object over jsonObjectMaxBytes.
func TestJSONObject(t *testing.T) {
	padded := func(n int) []byte { // a JSON object of n bytes
		return []byte(`{"a":"` + strings.Repeat("x", n-8) + `"}`)
	}
	for name, tt := range map[string]struct {
		data []byte
		want bool
	}{
		"object":                   {[]byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"}}`), true},
		"object after whitespace":  {[]byte(" \n\t{\"a\": [1, 2.5, null, true]}\n"), true},
		"at the bound":             {padded(int(jsonObjectMaxBytes)), true},
		"over the bound":           {padded(int(jsonObjectMaxBytes) + 1), false},
		"YAML":                     {[]byte("a: 1\n"), false},
		"flow YAML":                {[]byte("{a: 1}"), false},
		"a name twice":             {[]byte(`{"a":1,"b":{"c":1,"c":2}}`), false},
		"invalid UTF-8":            {[]byte("{\"a\":\"\xff\"}"), false},
		"an array":                 {[]byte(`[{"a":1}]`), false},
		"two objects":              {[]byte(`{"a":1}{"a":2}`), false},
		"unterminated":             {[]byte(`{"a":`), false},
		"empty":                    {nil, false},
		"comment after the object": {[]byte("{\"a\":1} # c"), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := JSONObject(tt.data); got != tt.want {
				t.Errorf("JSONObject(%.60q) = %v, want %v", tt.data, got, tt.want)
			}
		})
	}
}

// TestJSONObjectBoundKeepsTheNodeLimit: the densest JSON object JSONObject takes (an
// array of zeros filling jsonObjectMaxBytes) has no more nodes, as Documents counts them
// (the document's node, and each JSON value and name), than DefaultMaxNodes.
func TestJSONObjectBoundKeepsTheNodeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":[0`)
	for int64(b.Len()+len(",0]}")) <= jsonObjectMaxBytes {
		b.WriteString(",0")
	}
	b.WriteString("]}")
	data := []byte(b.String())
	if !JSONObject(data) {
		t.Fatalf("JSONObject refuses the densest object of %d bytes (bound %d)", len(data), jsonObjectMaxBytes)
	}
	nodes := int64(1) // the document
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if k := tok.Kind(); k != ']' && k != '}' {
			nodes++
		}
	}
	if nodes > DefaultMaxNodes {
		t.Errorf("%d bytes hold %d nodes, over DefaultMaxNodes (%d)", len(data), nodes, DefaultMaxNodes)
	}
}
