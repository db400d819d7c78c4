package sources

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
)

// The renderer hands a tree's FS to kustomize. Build real kustomizations
// through both kinds of tree: bases reached with "..", a base reached through
// a symlinked directory, generators reading files — and one whose resource is
// a symlink out of the repository, which must fail naming it.
func TestKustomizeBuildsFromTree(t *testing.T) {
	repo := newRepo(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- ns.yaml\n",
		"base/ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
		"apps/a/kustomization.yaml": "resources:\n- ../../base\n- ../../shared\n" +
			"configMapGenerator:\n- name: settings\n  files:\n  - settings.properties\n",
		"apps/a/settings.properties":   "level=debug\n",
		"shared":                       "-> base2",
		"base2/kustomization.yaml":     "resources:\n- sa.yaml\n",
		"base2/sa.yaml":                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: bot\n  namespace: team-a\n",
		"apps/evil/kustomization.yaml": "resources:\n- passwd.yaml\n",
		"apps/evil/passwd.yaml":        "-> ../../../outside/passwd.yaml",
	})
	writeFiles(t, repo+"/../outside", map[string]string{"passwd.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n"})
	work, err := OpenWorkTree(repo, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := OpenRevision(repo, "HEAD", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for kind, tree := range map[string]*Tree{"worktree": work, "revision": rev} {
		t.Run(kind, func(t *testing.T) {
			k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
			resources, err := k.Run(tree.FS, tree.Abs("apps/a"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range resources.Resources() {
				got = append(got, r.GetKind()+"/"+r.GetName())
			}
			want := "Namespace/team-a ServiceAccount/bot ConfigMap/settings-"
			if joined := strings.Join(got, " "); !strings.HasPrefix(joined, want) {
				t.Errorf("built %q, want %q…", joined, want)
			}

			_, err = k.Run(tree.FS, tree.Abs("apps/evil"))
			if err == nil || strings.Contains(err.Error(), "stolen") {
				t.Fatalf("building through a symlink out of the repository = %v", err)
			}
			// kustomize keeps the typed error in its chain, so the renderer can
			// tell an escape from a broken kustomization.
			var escape *PathEscapeError
			if !errors.As(err, &escape) || escape.Path != "apps/evil/passwd.yaml" {
				t.Errorf("kustomize's error %q does not carry the *PathEscapeError for apps/evil/passwd.yaml", err)
			}
		})
	}
}
