package safeyaml

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// maxSeed keeps the fuzzer's inputs small enough for many executions a second.
const maxSeed = 32 << 10

// FuzzDocuments: the reader never panics; a refusal names a line inside the input; and it
// agrees with go-yaml v3 on aliases — what it accepts go-yaml decodes without "excessive
// aliasing" (and, under the node limit, without using much memory), what go-yaml refuses
// for its aliases it refuses. Seeded with the shared data's YAML files.
func FuzzDocuments(f *testing.F) {
	seeds := 0
	for _, file := range shareddata.Files(f, "data", shareddata.HasExt(".yaml", ".yml"), 0) {
		// Every seed runs before fuzzing starts, and `make fuzz` gives a target seconds.
		if len(file.Data) <= maxSeed && seeds < 60 {
			f.Add(file.Data)
			seeds++
		}
	}
	for _, seed := range []string{yamltest.Laughs(3), yamltest.Laughs(9), yamltest.SelfAnchor,
		"a: &a [x, *a]\n", "a: &a {b: 1}\n<<: *a\n", "--- |\n  ---\n...\n---\nx: 1\n", "[" + strings.Repeat("*a,", 3) + "]"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Small limits, so that the fuzzer meets them often.
		limits := Limits{MaxFileBytes: 64 << 10, MaxDocumentBytes: 16 << 10, MaxNodes: 20_000}
		_, err := NewReader("f.yaml", limits).Documents(data)
		var le *LimitError
		if errors.As(err, &le) {
			if le.File != "f.yaml" || le.Line < 0 || le.Line > yamltest.MaxLines(data) {
				t.Fatalf("refusal %v names a place outside the input", err)
			}
			return
		}
		agree(t, data)
	})
}

// FuzzJSONObject: what JSONObject takes is within DefaultLimits (Check passes), and where
// the strict YAML-to-JSON conversion reads it at all, it reads the same JSON value.
func FuzzJSONObject(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, `{"a":[1,2.5,-0,1e3,null,true,"x"]}`, `{"a":{"b":"\u00e9\n"}}`,
		`{"<<":{"a":1}}`, `{"a":"yes","b":"0x1F","c":"~"}`, `{"a":1,"a":2}`, `{"a":"` + "\xff" + `"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !JSONObject(data) {
			return
		}
		if err := Check("f.json", data); err != nil {
			t.Fatalf("JSONObject takes %q, which the limits refuse: %v", data, err)
		}
		converted, err := sigsyaml.YAMLToJSONStrict(data)
		if err != nil {
			return // a number YAML cannot hold (1e400), nesting past its depth
		}
		var want, got any
		if err := json.Unmarshal(converted, &want); err != nil {
			t.Fatalf("the conversion of %q: %v", data, err)
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("JSONObject takes %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("JSONObject takes %q as it is, the YAML reading makes %s", data, converted)
		}
	})
}
