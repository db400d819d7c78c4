package render

import (
	"regexp"
	"strings"
	"testing"
)

// TestSourceMarkersInsteadOfOriginAnnotations: an app whose objects all come from resource
// files or configMap/secret generators is built without kustomize's origin annotations
// (their cost is what issue 18 measured), its resource files handed to kustomize marked;
// an app with a generator plugin keeps origin annotations, for the plugin's objects.
func TestSourceMarkersInsteadOfOriginAnnotations(t *testing.T) {
	repo := files{
		"plugin/kustomization.yaml": "resources:\n- ../base\ngenerators:\n- gen.yaml\n",
		"plugin/gen.yaml":           "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nliterals: [x=y]\n",
	}
	for f, content := range provenanceRepo {
		repo[f] = content
	}
	fsys, root := memRepo(t, repo)
	r, err := newRepo(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		app         string
		needsOrigin bool
		marked      []string
	}{
		{"overlay", false, []string{"base/multi.yaml", "base/catalog.json", "overlay/extra.yaml"}},
		{"plugin", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			p, berr := planApp(r, &Options{}, &App{Name: tt.app, Path: tt.app})
			if berr != nil {
				t.Fatal(berr)
			}
			if p.needsOrigin != tt.needsOrigin {
				t.Errorf("needsOrigin = %v, want %v", p.needsOrigin, tt.needsOrigin)
			}
			root := string(p.overrides[tt.app+"/kustomization.yaml"])
			if got := strings.Contains(root, "originAnnotations"); got != tt.needsOrigin {
				t.Errorf("origin annotations turned on: %v, want %v:\n%s", got, tt.needsOrigin, root)
			}
			b := &builder{r: r, opts: &Options{}}
			overrides, err := b.withSourceMarkers(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.marked {
				if !regexp.MustCompile(regexp.QuoteMeta(sourceMarker+": ") + `['"]?` + regexp.QuoteMeta(f) + `:\d+`).Match(overrides[f]) {
					t.Errorf("%s is not handed to kustomize marked:\n%s", f, overrides[f])
				}
			}
		})
	}
}
