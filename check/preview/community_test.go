package preview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/report"
)

// communityRepo is a repository subscribing to the first n packages of the real community
// catalog, each on its default channel in a namespace of its own with a single-namespace
// OperatorGroup, all in one cluster-scope app (one file each for namespaces, groups and
// Subscriptions).
func communityRepo(tb testing.TB, c *catalog.Catalog, n int) files {
	tb.Helper()
	var nss, ogs, subs []string
	for i, p := range c.Packages {
		if i == n {
			break
		}
		ns := fmt.Sprintf("op-%03d", i)
		nss = append(nss, namespace(ns))
		ogs = append(ogs, group(ns, ns, ns))
		subs = append(subs, sub(ns, p.Name, p.Name, p.DefaultChannel, "community-operators", "Automatic"))
	}
	return files{
		"olmsync.yaml":                     "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespaces.yaml":    docs(nss...),
		"cluster-scope/groups.yaml":        docs(ogs...),
		"cluster-scope/subscriptions.yaml": docs(subs...),
	}
}

func communityCatalog(tb testing.TB) (CatalogSpec, *catalog.Catalog) {
	tb.Helper()
	dir := shareddata.Path(tb, "data/catalogs/community-operators")
	c, err := catalog.LoadPath(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return CatalogSpec{Name: "community-operators", Source: dir}, c
}

// TestPreviewCommunityCatalog previews a Subscription to every package of the real
// community catalog (333 packages), each on its default channel in its own namespace:
// the resolver's figures for the same question (TestResolveEveryCommunityPackage: 133
// resolve, 200 fail) come out here too, each failure is an OLM001 at its document's line,
// and each resolved CSV either succeeds or fails for its install modes (a single-namespace
// group), an OLM002 at its line.
func TestPreviewCommunityCatalog(t *testing.T) {
	spec, c := communityCatalog(t)
	res, rep := checkWith(t, writeTree(t, communityRepo(t, c, len(c.Packages))), Options{Catalogs: []CatalogSpec{spec}})
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	if len(rep.Subscriptions) != len(c.Packages) || len(c.Packages) != 333 {
		t.Fatalf("%d Subscriptions previewed, %d packages", len(rep.Subscriptions), len(c.Packages))
	}
	statuses, phases := map[string]int{}, map[string]int{}
	lines := map[string]int{}
	for i, s := range rep.Subscriptions {
		statuses[s.Resolution.Status]++
		if s.Outcome != nil {
			phases[s.Outcome.Phase+"/"+s.Outcome.Reason]++
		}
		if want := 1 + 12*i; s.Line != want || s.File != "cluster-scope/subscriptions.yaml" {
			t.Errorf("%s at %s:%d, want line %d", s.ID(), s.File, s.Line, want)
		}
		lines[s.ID()] = s.Line
	}
	if statuses["Resolved"] != 133 || statuses["Failed"] != 200 {
		t.Errorf("resolution statuses %v, want 133 Resolved and 200 Failed", statuses)
	}
	rules := map[string]int{}
	for _, v := range rep.Violations {
		if !strings.HasPrefix(v.Rule, "OLM") {
			continue
		}
		rules[v.Rule]++
		if id := v.Object.Namespace + "/" + v.Object.Name; lines[id] != v.Line {
			t.Errorf("%s on %s at line %d, its Subscription is at %d", v.Rule, id, v.Line, lines[id])
		}
	}
	failedCSVs := 0
	for k, n := range phases {
		if strings.HasPrefix(k, "Failed/") {
			failedCSVs += n
		}
	}
	if rules["OLM001"] != 200 || rules["OLM002"] != failedCSVs || phases["Succeeded/InstallSucceeded"]+failedCSVs != 133 {
		t.Errorf("rules %v, outcomes %v", rules, phases)
	}
	t.Logf("333 packages: %v; outcomes %v; violations %v", statuses, phases, rules)
	if rep.Summary.Result != report.ResultFailed {
		t.Errorf("result %s", rep.Summary.Result)
	}
}

// BenchmarkPreview checks a repository of 300 Subscriptions to the real community
// catalog (300 namespaces, 300 OperatorGroups) with and without the preview:
//
//   - check: render and the placement rules only;
//   - check+preview: the same with the preview, the catalog already read (a Stage reused,
//     as for the base and head of a pull request);
//   - check+preview+catalog: a new Stage each time, reading the 9 MB catalog too — what
//     one `olmsync check --catalog` costs.
func BenchmarkPreview(b *testing.B) {
	spec, c := communityCatalog(b)
	tree := writeTree(b, communityRepo(b, c, 300))
	ctx := context.Background()
	run := func(b *testing.B, stages func() []check.Stage) {
		for b.Loop() {
			res, err := check.Run(ctx, tree, check.Options{Stages: stages()})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Problems) != 0 {
				b.Fatal(res.Problems)
			}
		}
	}
	b.Run("check", func(b *testing.B) { run(b, func() []check.Stage { return nil }) })
	stage := New(Options{Catalogs: []CatalogSpec{spec}})
	b.Run("check+preview", func(b *testing.B) { run(b, func() []check.Stage { return []check.Stage{stage} }) })
	b.Run("check+preview+catalog", func(b *testing.B) {
		run(b, func() []check.Stage { return []check.Stage{New(Options{Catalogs: []CatalogSpec{spec}})} })
	})
}
