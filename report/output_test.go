package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOutputs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []string
		file   string
		want   []Output
		err    string
	}{
		{"one to standard output", []string{"text"}, "", []Output{{Format: FormatText}}, ""},
		{"--output-file takes the one without a file", []string{"github", "sarif=a.sarif"}, "r.md",
			[]Output{{Format: FormatGitHub, Path: "r.md"}, {Format: FormatSARIF, Path: "a.sarif"}}, ""},
		{"a file name as the format", []string{"report.sarif"}, "", nil, "-o FORMAT=report.sarif"},
		{"every problem at once", []string{"github", "text", "json=x", "sarif=x"}, "", nil,
			"FORMAT=FILE\n-o json=x and -o sarif=x write to the same file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOutputs(tt.values, tt.file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithoutObjects(t *testing.T) {
	r := &Report{Objects: []Object{{File: "a.yaml"}}, Summary: Summary{Objects: 1, Apps: 2}}
	c := WithoutObjects(r)
	if c.Objects != nil || c.Summary.Objects != 0 || c.Summary.Apps != 2 {
		t.Errorf("copy: objects %v, summary %+v", c.Objects, c.Summary)
	}
	if len(r.Objects) != 1 || r.Summary.Objects != 1 {
		t.Errorf("the report itself changed: objects %v, summary %+v", r.Objects, r.Summary)
	}
}
