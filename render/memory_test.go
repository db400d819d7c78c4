package render

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	r, err := newRepo(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := discover(context.Background(), r, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := build(context.Background(), r, d, Options{})
	if err != nil {
		t.Fatal(err)
	}

	for file, e := range r.files {
		if e.val == nil {
			continue
		}
		if e.val.roots != nil {
			t.Errorf("%s: its trees are still held after the builds", file)
		}
		for _, doc := range e.val.Docs {
			if doc.Node != nil {
				t.Errorf("%s:%d: document %s %s still holds its tree", file, doc.Line, doc.Kind, doc.Name)
			}
		}
	}

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
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
