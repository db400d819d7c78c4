package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// TestPRModeReusesAndReportsTheSame (issue 18): on every example, a pull request that
// changes one file, checked as `check --base` does — the base and the head through one
// render cache and one findings cache, so that the head's unchanged apps are taken from the
// base's builds unplanned — gives the same report, field by field, as the two revisions
// checked with no cache at all.
func TestPRModeReusesAndReportsTheSame(t *testing.T) {
	for _, example := range []string{"local", "gitops", "gitops-violations"} {
		t.Run(example, func(t *testing.T) {
			baseDir := filepath.Join("..", "examples", example)
			headDir := t.TempDir()
			if err := os.CopyFS(headDir, os.DirFS(baseDir)); err != nil {
				t.Fatal(err)
			}
			changed := changeOneManifest(t, headDir)
			base, head := openTree(t, baseDir), openTree(t, headDir)

			cache := render.NewCache()
			shared := Options{Render: render.Options{Cache: cache}, PolicyCache: policy.NewFindingsCache()}
			baseRes := run(t, base, shared) // the base first, as check --base does
			withCaches := prReport(t, run(t, head, shared), baseRes)
			if cache.Reused.Load() == 0 {
				t.Errorf("no app of the head was taken from the base's builds (%s changed)", changed)
			}
			fresh := prReport(t, run(t, head, Options{}), run(t, base, Options{}))
			if diff := cmp.Diff(fresh, withCaches); diff != "" {
				t.Errorf("report with the caches differs from one without (-fresh +cached):\n%s", diff)
			}
			if len(fresh.Apps) == 0 {
				t.Fatal("no apps: the comparison saw nothing")
			}
		})
	}
}

func prReport(t *testing.T, head, base *Result) *report.Report {
	t.Helper()
	r, err := Report(head, base, ReportOptions{Tool: report.Tool{Name: "olmsync", Version: "v0.0.1"}, ListObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func openTree(t *testing.T, dir string) *sources.Tree {
	t.Helper()
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// changeOneManifest appends a ConfigMap to the first manifest (in walk order) of a
// kustomization's resources folder, and returns its path.
func changeOneManifest(t *testing.T, root string) string {
	t.Helper()
	var target string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || target != "" || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasSuffix(name, ".yaml") && name != "kustomization.yaml" && name != "olmsync.yaml" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "kind: Subscription") {
				target = p
			}
		}
		return nil
	})
	if err != nil || target == "" {
		t.Fatalf("no Subscription manifest to change under %s (%v)", root, err)
	}
	f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added-by-the-pr\ndata: {k: v}\n"); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, target)
	return rel
}
