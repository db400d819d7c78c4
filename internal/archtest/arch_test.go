package archtest

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/olmsync/olmsync"

// rules says which import paths (prefixes) a package under a folder must never reach, directly
// or through other packages.
var rules = []struct {
	from      string
	forbidden []string
	why       string
}{
	{"olm", []string{module + "/check", module + "/reconcile", module + "/cmd", "sigs.k8s.io/controller-runtime", "k8s.io/client-go"},
		"the OLM core is pure: the preview and the controllers both call it"},
	{"check", []string{module + "/reconcile", module + "/cmd"}, "the offline check never imports the controllers"},
	{"render", []string{module + "/check", module + "/reconcile", module + "/cmd"}, "render is below check"},
	{"policy", []string{module + "/check", module + "/reconcile", module + "/cmd"}, "policy is below check"},
	{"sources", []string{module + "/check", module + "/reconcile", module + "/cmd"}, "sources is below check"},
	{"reconcile", []string{module + "/cmd", module + "/dashboard"},
		"cmd wires the controllers and adds their dashboard to the manager; the controllers do not know their UI"},
}

// moduleRoot is the repository's top, two folders up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// graph maps each package of the module (non-test files) to its imports.
type graph struct {
	root    string
	imports map[string][]string
}

func (g *graph) load(t *testing.T, path string) []string {
	t.Helper()
	if imps, ok := g.imports[path]; ok {
		return imps
	}
	g.imports[path] = nil
	if !strings.HasPrefix(path, module+"/") {
		return nil
	}
	dir := filepath.Join(g.root, strings.TrimPrefix(path, module+"/"))
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		t.Fatalf("%s: %v", dir, err)
	}
	g.imports[path] = pkg.Imports
	return pkg.Imports
}

// reaches returns the first import chain from path to a package with one of the prefixes.
func (g *graph) reaches(t *testing.T, path string, prefixes []string) []string {
	seen := map[string]bool{}
	var walk func(p string, chain []string) []string
	walk = func(p string, chain []string) []string {
		if seen[p] {
			return nil
		}
		seen[p] = true
		for _, imp := range g.load(t, p) {
			next := append(slices.Clone(chain), imp)
			for _, f := range prefixes {
				if imp == f || strings.HasPrefix(imp, f+"/") {
					return next
				}
			}
			if c := walk(imp, next); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(path, []string{path})
}

func TestImportsRunOneWay(t *testing.T) {
	root := moduleRoot(t)
	g := &graph{root: root, imports: map[string][]string{}}
	checked := 0
	for _, r := range rules {
		err := filepath.WalkDir(filepath.Join(root, r.from), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			path := module + "/" + filepath.ToSlash(rel)
			if len(g.load(t, path)) == 0 {
				return nil
			}
			checked++
			if chain := g.reaches(t, path, r.forbidden); chain != nil {
				t.Errorf("%s must not import %s (%s): %s", path, chain[len(chain)-1], r.why, strings.Join(chain, " → "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: the walk did not find the module's packages", checked)
	}
}

// TestRuleCatchesAWrongArrow proves the walk sees a transitive import: reconcile/olm reaches
// controller-runtime, so the olm rule, were it applied to reconcile/olm, would fail.
func TestRuleCatchesAWrongArrow(t *testing.T) {
	g := &graph{root: moduleRoot(t), imports: map[string][]string{}}
	if g.reaches(t, module+"/reconcile/olm", []string{"sigs.k8s.io/controller-runtime"}) == nil {
		t.Fatal("reconcile/olm does not reach controller-runtime: the import walk is broken")
	}
	if g.reaches(t, module+"/check/preview", []string{module + "/olm/resolve"}) == nil {
		t.Fatal("check/preview does not reach olm/resolve: the import walk is broken")
	}
}
