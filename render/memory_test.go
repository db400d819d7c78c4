package render

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"unsafe"
	"weak"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestBuildsHoldNoPlanningTrees: planning parses every manifest of every app; once it is
// over, the repository's manifest files keep only their documents' identities and lines
// (the builds hold the rendered objects instead), and what the builds still need a tree
// for — marking a resource file, reading a plain folder — reads the file again and gives
// the same objects and sources.
func TestBuildsHoldNoPlanningTrees(t *testing.T) {
	const manifests = `
# a comment before the first document
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: two
`
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: plain, path: plain, namespace: team}
- {name: kust, path: overlay, namespace: team}
`,
		"plain/a.yaml":               manifests,
		"overlay/a.yaml":             manifests,
		"overlay/kustomization.yaml": "namePrefix: x-\nresources:\n- a.yaml\n",
	})
	r, d := discoverIn(t, fsys, root)
	res, err := build(context.Background(), r, d, Options{})
	if err != nil {
		t.Fatal(err)
	}

	checkNoTreesHeld(t, r, "after the builds")

	type row struct {
		App, Name, File string
		Line            int
	}
	var got []row
	for _, a := range res.Apps {
		if a.Err != nil {
			t.Fatalf("%s: %v", a.Name, a.Err)
		}
		for _, o := range a.Objects {
			got = append(got, row{a.Name, o.Name(), o.Source.File, o.Source.Line})
		}
	}
	want := []row{
		{"kust", "x-one", "overlay/a.yaml", 2},
		{"kust", "x-two", "overlay/a.yaml", 10},
		{"plain", "one", "plain/a.yaml", 2},
		{"plain", "two", "plain/a.yaml", 10},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// TestPlanningHoldsNoTrees: while planning runs, the repository keeps of each manifest file
// its documents' identities and lines (and where their markers go), never its trees: on a
// repository of many apps, the trees of all its files were a render's peak. An Argo CD
// Application, decoded from its tree in discovery, is no exception.
func TestPlanningHoldsNoTrees(t *testing.T) {
	fsys, root := memRepo(t, files{
		"argocd/kust.yaml":           "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: kust\nspec:\n  source:\n    path: overlay\n  destination:\n    namespace: team\n",
		"overlay/a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n",
		"overlay/kustomization.yaml": "namePrefix: x-\nresources:\n- a.yaml\n",
	})
	r, d := discoverIn(t, fsys, root)
	if len(d.Apps) != 1 {
		t.Fatalf("found %d apps, want the Application's", len(d.Apps))
	}
	for i := range d.Apps {
		if _, berr := planApp(r, &Options{}, &d.Apps[i]); berr != nil {
			t.Fatal(berr)
		}
	}
	held := checkNoTreesHeld(t, r, "during planning")
	if held < 2 || r.files["overlay/a.yaml"] == nil || r.files["overlay/a.yaml"].val.marks == nil {
		t.Errorf("planning read %d manifest files; the resource file's marks: want them kept", held)
	}
}

// checkNoTreesHeld fails the test for every manifest file the repository holds with its
// trees, or a document of one with its tree; it returns how many files it holds.
func checkNoTreesHeld(t *testing.T, r *repo, when string) int {
	t.Helper()
	held := 0
	for file, e := range r.files {
		if e.val == nil {
			continue
		}
		held++
		if e.val.roots != nil {
			t.Errorf("%s: its trees are held %s", file, when)
		}
		for _, doc := range e.val.Docs {
			if doc.Node != nil {
				t.Errorf("%s:%d: document %s %s holds its tree %s", file, doc.Line, doc.Kind, doc.Name, when)
			}
		}
	}
	return held
}

// TestBuildsHoldOnlyGeneratorsOfKustomizations: planning reads every kustomization whole;
// once it is over, the repository holds of each only its generators (generatorIndex), and
// the builds still trace every generated object to its generator entry, through source
// markers and through kustomize's origin annotations alike.
func TestBuildsHoldOnlyGeneratorsOfKustomizations(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: marked, path: overlay, namespace: team}
- {name: origin, path: plugins, namespace: team}
`,
		"base/kustomization.yaml": `
resources:
- ns.yaml
configMapGenerator:
- name: settings
  literals: [a=b]
- name: set
  literals: [c=d]
secretGenerator:
- name: creds
  literals: [user=x]
`,
		"base/ns.yaml": nsYAML,
		"overlay/kustomization.yaml": `
namePrefix: x-
resources:
- ../base
`,
		// A generator plugin config: kustomize's origin annotations trace this app.
		"plugins/kustomization.yaml": `
resources:
- ../base
generators:
- gens.yaml
`,
		"plugins/gens.yaml": `
apiVersion: builtin
kind: ConfigMapGenerator
metadata:
  name: plugged
literals: [e=f]
`,
	})
	r, d := discoverIn(t, fsys, root)
	res, err := build(context.Background(), r, d, Options{})
	if err != nil {
		t.Fatal(err)
	}

	if len(r.kusts) != 0 {
		t.Errorf("%d kustomizations still held whole after the builds", len(r.kusts))
	}
	got := map[string]*generatorIndex{}
	for dir, e := range r.generators {
		got[dir] = e.val
	}
	want := map[string]*generatorIndex{
		"base": {file: "base/kustomization.yaml", line: 1, fields: map[string]generatorEntries{
			"configMapGenerator": {line: 3, lines: []int{4, 6}, names: []string{"settings", "set"}},
			"secretGenerator":    {line: 8, lines: []int{9}, names: []string{"creds"}},
		}},
		"overlay": {file: "overlay/kustomization.yaml", line: 1},
		"plugins": {file: "plugins/kustomization.yaml", line: 1, fields: map[string]generatorEntries{
			"generators": {line: 3, lines: []int{4}},
		}},
	}
	if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(generatorIndex{}, generatorEntries{})); diff != "" {
		t.Errorf("what the builds hold of the kustomizations (-want +got):\n%s", diff)
	}

	type row struct {
		App, Kind, File string
		Line            int
		GeneratedBy     string
	}
	var sources []row
	for _, a := range res.Apps {
		if a.Err != nil {
			t.Fatalf("%s: %v", a.Name, a.Err)
		}
		for _, o := range a.Objects {
			if o.Source.GeneratedBy != "" {
				sources = append(sources, row{a.Name, o.Kind(), o.Source.File, o.Source.Line, o.Source.GeneratedBy})
			}
		}
	}
	slices.SortFunc(sources, func(a, b row) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	wantSources := []row{
		{"marked", "ConfigMap", "base/kustomization.yaml", 4, "ConfigMapGenerator"},
		{"marked", "ConfigMap", "base/kustomization.yaml", 6, "ConfigMapGenerator"},
		{"marked", "Secret", "base/kustomization.yaml", 9, "SecretGenerator"},
		{"origin", "ConfigMap", "base/kustomization.yaml", 4, "ConfigMapGenerator"},
		{"origin", "ConfigMap", "base/kustomization.yaml", 6, "ConfigMapGenerator"},
		{"origin", "ConfigMap", "plugins/gens.yaml", 1, "ConfigMapGenerator"},
		{"origin", "Secret", "base/kustomization.yaml", 9, "SecretGenerator"},
	}
	if diff := gocmp.Diff(wantSources, sources); diff != "" {
		t.Errorf("generated objects' sources (-want +got):\n%s", diff)
	}
}

// TestFileContentGoesWithItsLastBuild: when planning ends, the repository keeps the
// content of the files a build still reads — the resource files it marks, a plain
// folder's files — and lets go of the rest (a file only discovery read) and of the walk's
// listing; each file's content, marked copy and documents' identities go with the last
// build that reads it. With the render cache, every file's content and the listing stay:
// its digests read them all.
func TestFileContentGoesWithItsLastBuild(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	fsys, root := memRepo(t, files{
		"base/a.yaml":     cm,
		"one/b.yaml":      cm,
		"plain/c.yaml":    cm,
		"argocd/app.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app\n",
	})
	one := &plan{kustFile: "one/kustomization.yaml", resourceFiles: []string{"base/a.yaml", "one/b.yaml"}}
	two := &plan{kustFile: "two/kustomization.yaml", resourceFiles: []string{"base/a.yaml"}}
	origin := &plan{kustFile: "three/kustomization.yaml", resourceFiles: []string{"base/a.yaml"}, needsOrigin: true}
	plain := &plan{files: []string{"plain/c.yaml"}}
	all := []string{"argocd/app.yaml", "base/a.yaml", "one/b.yaml", "plain/c.yaml"}

	for _, keepContent := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepContent=%t", keepContent), func(t *testing.T) {
			r, err := newRepo(fsys, root)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				if _, err := r.readFile(f); err != nil {
					t.Fatal(err)
				}
			}
			r.noteWalk([]string{".", "argocd", "base", "one", "plain"}, all)
			held := func() (raw, marked, identities []string) {
				return slices.Sorted(maps.Keys(r.raw)), slices.Sorted(maps.Keys(r.marked)), slices.Sorted(maps.Keys(r.files))
			}
			content := func(files ...string) []string {
				if keepContent {
					return all
				}
				return files
			}
			r.releaseTrees([]*plan{one, nil, two, origin, plain}, keepContent)
			if listed := r.listed != nil && r.walked != nil; listed != keepContent {
				t.Errorf("the walk's listing held %t after planning, want %t", listed, keepContent)
			}
			for _, f := range []string{"base/a.yaml", "one/b.yaml"} {
				if _, err := r.markedManifest(f, false); err != nil {
					t.Fatal(err)
				}
			}
			for _, step := range []struct {
				built          *plan
				raw, marked    []string
				afterwardsHeld string
			}{
				{nil, content("base/a.yaml", "one/b.yaml", "plain/c.yaml"), []string{"base/a.yaml", "one/b.yaml"}, "when planning ends"},
				{one, content("base/a.yaml", "plain/c.yaml"), []string{"base/a.yaml"}, "after the first build marking base/a.yaml"},
				{origin, content("base/a.yaml", "plain/c.yaml"), []string{"base/a.yaml"}, "after a build that marks nothing"},
				{two, content("plain/c.yaml"), nil, "after the last build marking base/a.yaml"},
				{plain, content(), nil, "after the plain folder's build"},
			} {
				if step.built != nil {
					r.built(step.built)
				}
				raw, marked, identities := held()
				if diff := gocmp.Diff(step.raw, raw, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("content held %s (-want +got):\n%s", step.afterwardsHeld, diff)
				}
				if diff := gocmp.Diff(step.marked, marked, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("marked files held %s (-want +got):\n%s", step.afterwardsHeld, diff)
				}
				// Marking read the identities of the files it marked.
				if diff := gocmp.Diff(step.marked, identities, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("documents' identities held %s (-want +got):\n%s", step.afterwardsHeld, diff)
				}
			}
		})
	}
}

// TestBuildsDropEachPlan: the builds let go of each app's plan (its overrides, its lists
// of files and folders) once the app is built; what planning said about the app is still
// reported.
func TestBuildsDropEachPlan(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: one, path: one, namespace: team}
- {name: two, path: two, namespace: team}
- {name: plain, path: plain, namespace: team}
`,
		"one/kustomization.yaml": "commonLabels: {a: b}\nresources:\n- ns.yaml\n",
		"one/ns.yaml":            nsYAML,
		"two/kustomization.yaml": "resources:\n- ns.yaml\n",
		"two/ns.yaml":            nsYAML,
		"plain/ns.yaml":          nsYAML,
	})
	r, d := discoverIn(t, fsys, root)
	opts := Options{}.withDefaults()
	b := &builder{r: r, opts: &opts}
	apps := make([]*AppResult, len(d.Apps))
	plans := make([]*plan, len(d.Apps))
	var planned []weak.Pointer[plan]
	for i := range d.Apps {
		apps[i] = &AppResult{App: d.Apps[i]}
		p, berr := planApp(r, &opts, &apps[i].App)
		if berr != nil {
			t.Fatal(berr)
		}
		plans[i] = p
		planned = append(planned, weak.Make(p))
	}
	r.releaseTrees(plans, false)
	warnings := b.buildAll(context.Background(), apps, plans, make([]*planEntry, len(apps)))

	runtime.GC()
	for i, w := range planned {
		if w.Value() != nil {
			t.Errorf("the plan of app %s is still held after its build", apps[i].Name)
		}
	}
	runtime.KeepAlive(plans) // as build holds it, until the builds are over
	var reasons []string
	for i, a := range apps {
		if a.Err != nil || len(a.Objects) != 1 {
			t.Errorf("app %s: %d objects, error %v", a.Name, len(a.Objects), a.Err)
		}
		for _, w := range warnings[i] {
			reasons = append(reasons, fmt.Sprintf("%s %s %s", a.Name, w.Reason, w.File))
		}
	}
	if diff := gocmp.Diff([]string{"one " + string(ReasonDeprecated) + " one/kustomization.yaml"}, reasons); diff != "" {
		t.Errorf("what planning said (-want +got):\n%s", diff)
	}
}

// TestObjectsOfAFileShareItsName: the objects rendered from one file hold one copy of its
// name, not each its own (a slice of its source marker, which would keep the marker).
func TestObjectsOfAFileShareItsName(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: a, path: a, namespace: a}
- {name: b, path: b, namespace: b}
`,
		"base/kustomization.yaml": "resources:\n- cms.yaml\n",
		"base/cms.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
		"a/kustomization.yaml":    "namePrefix: a-\nresources:\n- ../base\n",
		"b/kustomization.yaml":    "namePrefix: b-\nresources:\n- ../base\n",
	})
	res := renderRepo(t, fsys, root, Options{})
	var names []*byte
	for _, a := range res.Apps {
		for _, o := range a.Objects {
			if o.Source.File != "base/cms.yaml" {
				t.Fatalf("%s %s: source %+v", a.Name, o.Name(), o.Source)
			}
			names = append(names, unsafe.StringData(o.Source.File))
		}
	}
	if len(names) != 4 {
		t.Fatalf("%d objects rendered, want 4", len(names))
	}
	for i, p := range names[1:] {
		if p != names[0] {
			t.Errorf("object %d holds a copy of its file's name of its own", i+1)
		}
	}
}
