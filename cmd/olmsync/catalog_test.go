package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/olmsync/olmsync/internal/shareddata"
)

func TestCatalogValidateExitCodes(t *testing.T) {
	etcd := shareddata.Path(t, "data/catalogs/community-operators-bundles/package-manifests/etcd")
	community := shareddata.Path(t, "data/catalogs/community-operators/catalog.json")
	tests := []struct {
		name     string
		args     []string
		wantCode int // -1: no error
		wantOut  string
	}{
		{"valid package manifest", []string{"catalog", "validate", etcd}, -1, "valid: 0 warnings"},
		{"real catalog with defects", []string{"catalog", "validate", community}, exitFindings, "invalid: "},
		{"missing source", []string{"catalog", "validate", filepath.Join(t.TempDir(), "nope.json")}, exitUsage, "no such file or directory"},
		{"no argument", []string{"catalog", "validate"}, exitUsage, "accepts 1 arg"},
		{"unknown output", []string{"catalog", "validate", etcd, "-o", "xml"}, exitUsage, `unknown report format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			switch {
			case tt.wantCode < 0 && err != nil:
				t.Fatalf("error %v\n%s", err, out)
			case tt.wantCode >= 0 && (err == nil || exitCode(err) != tt.wantCode):
				t.Fatalf("error %v (exit %d), want exit %d\n%s", err, exitCode(err), tt.wantCode, out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output does not contain %q:\n%s", tt.wantOut, out)
			}
		})
	}
}

func TestCatalogValidateJSON(t *testing.T) {
	community := shareddata.Path(t, "data/catalogs/community-operators/catalog.json")
	out, err := run(t, "catalog", "validate", community, "-o", "json")
	if exitCode(err) != exitFindings {
		t.Fatalf("error %v", err)
	}
	var report struct {
		Packages          int
		Valid             bool
		DefectivePackages []string
		Problems          []struct{ Severity, Code, Package, Channel, Bundle string }
	}
	// The findings error is printed after the JSON document.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&report); err != nil {
		t.Fatalf("output is not a JSON report: %v", err)
	}
	if report.Packages != 333 || report.Valid || len(report.DefectivePackages) == 0 || len(report.Problems) == 0 {
		t.Errorf("report: %d packages, valid %v, %d defective, %d problems", report.Packages, report.Valid, len(report.DefectivePackages), len(report.Problems))
	}
}

func TestCatalogGraph(t *testing.T) {
	etcd := shareddata.Path(t, "data/catalogs/community-operators-bundles/package-manifests/etcd")
	tests := []struct {
		args     []string
		wantCode int
		want     []string
	}{
		{[]string{"--package", "etcd", "--channel", "singlenamespace-alpha"}, -1, []string{
			"channel singlenamespace-alpha (default)", "  etcdoperator.v0.9.4 (0.9.4) [head]\n    replaces etcdoperator.v0.9.2\n"}},
		{[]string{"--package", "etcd", "-o", "dot"}, -1, []string{`digraph "etcd" {`, `"clusterwide-alpha/etcdoperator.v0.9.4-clusterwide" -> "clusterwide-alpha/etcdoperator.v0.9.2-clusterwide"`}},
		{[]string{"--package", "etcd", "-o", "mermaid"}, -1, []string{"flowchart TD", "-->|replaces|"}},
		{[]string{"--package", "etcd", "-o", "json"}, -1, []string{`"heads": [`, `"kind": "replaces"`}},
		{[]string{"--package", "nope"}, exitUsage, []string{`package "nope": not found`}},
		{nil, exitUsage, []string{`required flag(s) "package" not set`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := run(t, append([]string{"catalog", "graph", etcd}, tt.args...)...)
			if tt.wantCode < 0 && err != nil || tt.wantCode >= 0 && exitCode(err) != tt.wantCode {
				t.Fatalf("error %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not contain %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestCatalogRenderBundles(t *testing.T) {
	bundles := shareddata.Path(t, "data/catalogs/community-operators-bundles/operators")
	out, err := run(t, "catalog", "render", bundles)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct{ Schema string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not one JSON object: %v: %.80s", err, sc.Text())
		}
		counts[m.Schema]++
	}
	// The 11 packages, 34 channels and 68 bundles the sample catalog of these bundles has.
	if counts["olm.package"] != 11 || counts["olm.channel"] != 34 || counts["olm.bundle"] != 68 {
		t.Errorf("rendered %v", counts)
	}
	if !strings.Contains(out, `"type":"olm.bundle.object"`) {
		t.Error("bundles without an image were rendered without their objects")
	}
}

// TestCatalogImage validates a catalog image served by a registry on loopback.
func TestCatalogImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/olm/catalog:v1"
	img, err := crane.Image(map[string][]byte{
		"configs/a/catalog.json": []byte(`{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.0.0"}]}
{"schema":"olm.bundle","name":"a.v1.0.0","package":"a","image":"quay.io/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, v1.Config{Labels: map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"}}); err != nil {
		t.Fatal(err)
	}
	if err := crane.Push(img, ref); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for i, want := range []string{"): 1 packages", ", from cache): 1 packages"} {
		out, err := run(t, "catalog", "validate", ref, "--cache-dir", cache, "--insecure")
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if !strings.Contains(out, want) || !strings.Contains(out, "sha256:") {
			t.Errorf("run %d: output does not contain %q and the digest:\n%s", i, want, out)
		}
	}
}

// TestCatalogValidateNamesTheCause: the catalog — a dangling range operator in a
// skipRange, and an entry replacing a bundle the package does not have — is invalid, and
// the replaces is reported as such, before OLM's "multiple channel heads", without -v.
func TestCatalogValidateNamesTheCause(t *testing.T) {
	dir := t.TempDir()
	bundle := func(v string) string {
		return `{"schema":"olm.bundle","name":"a.v` + v + `","package":"a","image":"quay.io/a:` + v + `","properties":[{"type":"olm.package","value":{"packageName":"a","version":"` + v + `"}}]}` + "\n"
	}
	catalog := `{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.0.0"},{"name":"a.v1.1.0","replaces":"a.v1.0.0","skipRange":">=1.0.0 <"},{"name":"a.v1.2.0","replaces":"a.v1.1.1"}]}
` + bundle("1.0.0") + bundle("1.1.0") + bundle("1.2.0")
	file := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(file, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "catalog", "validate", file)
	wantExit(t, err, exitFindings)
	var errs []string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "error: ") {
			errs = append(errs, strings.TrimPrefix(line, "error: "+file+":2: "))
		}
	}
	want := []string{
		`package "a", channel "stable", bundle "a.v1.2.0": replaces "a.v1.1.1", which is in no bundle of the package, so its chain does not join the channel's: the channel has more than one head`,
		`package "a", channel "stable": multiple channel heads found in graph: a.v1.1.0, a.v1.2.0`,
		`package "a", channel "stable", bundle "a.v1.1.0": invalid skipRange ">=1.0.0 <": "<" is not a comparison: OLM's parser (blang/semver) would drop it without a word and read the range as ">=1.0.0"`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s\n%s", diff, out)
	}
}
