package catalog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func reportFixture() *Catalog {
	good := pkgWith("good", "stable", channel("good", "stable", entry("good.v1.0.0"), entry("good.v1.1.0").replaces("good.v1.0.0").skips("good.v0.9.0")))
	bad := pkgWith("bad", "stable", channel("bad", "stable", entry("bad.v1.0.0"), entry("bad.v2.0.0")))
	c := catalogOf(good, bad)
	c.Problems = Problems{{Severity: SeverityWarning, Code: CodeUnknownField, Origin: Origin{File: "good/csv.yaml", Line: 1}, Package: "good", Bundle: "good.v1.0.0", Message: `unknown field "spec.x"`}}
	return c
}

func TestNewReport(t *testing.T) {
	r := NewReport(reportFixture())
	got := []any{r.Packages, r.Channels, r.Bundles, r.Valid, r.Errors, r.Warnings, r.Infos, r.DefectivePackages}
	want := []any{2, 2, 4, false, 1, 1, 1, []string{"bad"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("packages, channels, bundles, valid, errors, warnings, infos, defective (-want +got):\n%s", diff)
	}
	if ok := NewReport(catalogOf(pkgWith("good", "stable", channel("good", "stable", entry("good.v1.0.0"))))); !ok.Valid || ok.Problems == nil {
		t.Errorf("a valid catalog: valid %v, problems %v (want an empty list, not null)", ok.Valid, ok.Problems)
	}
}

func TestWriteReport(t *testing.T) {
	r := NewReport(reportFixture())
	tests := []struct {
		name    string
		verbose bool
		want    string
	}{
		{"text", false, `catalog.json (fbc): 2 packages, 2 channels, 4 bundles
error: catalog.json:2: package "bad", channel "stable": multiple channel heads found in graph: bad.v1.0.0, bad.v2.0.0
warning: good/csv.yaml:1: package "good", bundle "good.v1.0.0": unknown field "spec.x"
invalid: 1 errors in 1 of 2 packages (1 packages have none), 1 warnings, 1 notes (-v shows them)
`},
		{"verbose", true, `catalog.json (fbc): 2 packages, 2 channels, 4 bundles
error: catalog.json:2: package "bad", channel "stable": multiple channel heads found in graph: bad.v1.0.0, bad.v2.0.0
warning: good/csv.yaml:1: package "good", bundle "good.v1.0.0": unknown field "spec.x"
info: catalog.json:2: package "good", channel "stable", bundle "good.v1.1.0": skips "good.v0.9.0", which is not a bundle of the package
invalid: 1 errors in 1 of 2 packages (1 packages have none), 1 warnings
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteReport(&out, r, ReportText, tt.verbose); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var out bytes.Buffer
	if err := WriteReport(&out, r, ReportJSON, false); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Valid    bool
		Problems []struct{ Severity, Code, Package string }
	}
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Valid || len(back.Problems) != 3 || back.Problems[0].Severity != "error" || back.Problems[0].Code != "MultipleHeads" {
		t.Errorf("JSON report = %+v", back)
	}
	if err := WriteReport(&out, r, "xml", false); err == nil {
		t.Error("an unknown format was accepted")
	}
}
