package check

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// TestPRModeOnGitOpsCatalog (issue 32): the last 25 merges of redhat-cop/gitops-catalog
// that touch an OLM object, each checked as `check --base <first parent> --ref <merge>`
// does (Change: the head opened and found while the base is checked, then checked through
// the base's render cache and findings cache) give the same report, field by field, as the
// two revisions checked one at a time with no cache. Under -race every fifth merge.
func TestPRModeOnGitOpsCatalog(t *testing.T) {
	dir := shareddata.Corpus(t, t.TempDir(), shareddata.GitOpsCatalog)
	merges := shareddata.OLMMerges(t, dir, 25)
	if raceEnabled {
		var some []string
		for i := 0; i < len(merges); i += 5 {
			some = append(some, merges[i])
		}
		merges = some
	}
	open := func(t *testing.T, rev string) *sources.Tree {
		t.Helper()
		tree, err := sources.OpenRevision(dir, rev, sources.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	for _, m := range merges {
		t.Run(m[:8], func(t *testing.T) {
			cache := render.NewCache()
			shared := Options{Render: render.Options{Cache: cache}, PolicyCache: policy.NewFindingsCache()}
			headRes, baseRes, err := Change(context.Background(), Source{Location: dir, Ref: m}, m+"^1", shared, noStages)
			if err != nil {
				t.Fatal(err)
			}
			withCaches := prReport(t, headRes, baseRes)
			fresh := prReport(t, run(t, open(t, m), Options{}), run(t, open(t, m+"^1"), Options{}))
			if diff := cmp.Diff(fresh, withCaches); diff != "" {
				t.Errorf("report with the caches differs from one without (-fresh +cached):\n%s", diff)
			}
			if len(fresh.Apps) < 100 {
				t.Errorf("%d apps: the comparison saw too little of the repository", len(fresh.Apps))
			}
			t.Logf("%d apps, %d of the head's builds taken from the base's", len(fresh.Apps), cache.Reused.Load())
		})
	}
}

func noStages(*Result) []Stage { return nil }
