package render

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/api/operators"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// realManifest is one file of ../shared/data/manifests laid out where the operate-first
// repository kept it, with the namespace its kustomization gave it there when the
// manifest has none.
type realManifest struct {
	data, repoPath, namespace string
}

var operateFirstLayout = []realManifest{
	{"subscriptions/of-cert-manager.yaml", "cluster-scope/base/operators.coreos.com/subscriptions/cert-manager/subscription.yaml", ""},
	{"subscriptions/of-strimzi.yaml", "cluster-scope/base/operators.coreos.com/subscriptions/strimzi/subscription.yaml", "opf-kafka"},
	{"subscriptions/of-opendatahub-operator.yaml", "cluster-scope/base/operators.coreos.com/subscriptions/opendatahub-operator/subscription.yaml", ""},
	{"operatorgroups/of-global-operators.yaml", "cluster-scope/base/operators.coreos.com/operatorgroups/global-operators/operatorgroup.yaml", "openshift-operators"},
	{"operatorgroups/of-opf-kafka.yaml", "cluster-scope/base/operators.coreos.com/operatorgroups/opf-kafka/operatorgroup.yaml", "opf-kafka"},
	{"operatorgroups/of-rapidast-null-spec.yaml", "cluster-scope/base/operators.coreos.com/operatorgroups/rapidast/operatorgroup.yaml", ""},
	{"catalogsources/of-operatorhubio-catalog.yaml", "cluster-scope/base/operators.coreos.com/catalogsources/operatorhubio-catalog/catalogsource.yaml", ""},
}

// nvidia is kept in the osc-cl2 overlay itself, as in operate-first.
var nvidia = realManifest{"subscriptions/of-nvidia-gpu-operator.yaml",
	"cluster-scope/overlays/prod/osc/osc-cl2/operators.coreos.com/subscriptions/nvidia-gpu-operator/subscription.yaml", ""}

// TestRealOperateFirstManifests lays real manifests of the operate-first GitOps repository
// out as a small repository of the same shape (bases per object, one cluster-scope overlay
// per cluster, Argo CD Applications) and renders it.
func TestRealOperateFirstManifests(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests")
	repo := files{}
	var cl1Resources []string
	for _, m := range operateFirstLayout {
		repo[m.repoPath] = readShared(t, dir, m.data)
		base := path.Dir(m.repoPath)
		k := "resources:\n- " + path.Base(m.repoPath) + "\n"
		if m.namespace != "" {
			k = "namespace: " + m.namespace + "\n" + k
		}
		repo[base+"/kustomization.yaml"] = k
		cl1Resources = append(cl1Resources, "../../../../"+strings.TrimPrefix(base, "cluster-scope/"))
	}
	repo["cluster-scope/overlays/prod/emea/cl1/kustomization.yaml"] = "resources:\n- " + strings.Join(cl1Resources, "\n- ") + "\n"
	repo[nvidia.repoPath] = readShared(t, dir, nvidia.data)
	repo["cluster-scope/overlays/prod/osc/osc-cl2/kustomization.yaml"] =
		"resources:\n- ../../../../base/operators.coreos.com/operatorgroups/global-operators\n- " +
			strings.TrimPrefix(nvidia.repoPath, "cluster-scope/overlays/prod/osc/osc-cl2/") + "\n"
	repo["argocd/cl1.yaml"] = argoApp("cluster-resources-cl1", "cluster-scope/overlays/prod/emea/cl1", "cl1", "")
	repo["argocd/osc-cl2.yaml"] = argoApp("cluster-resources-osc-cl2", "cluster-scope/overlays/prod/osc/osc-cl2", "osc-cl2", "")

	fsys, root := diskRepo(t, repo)
	res := renderRepo(t, fsys, root, Options{})
	if res.Method != MethodArgoCD || len(res.Clusters) != 2 || len(res.Problems) != 0 {
		t.Fatalf("method %s, %d clusters, problems %v", res.Method, len(res.Clusters), res.Problems)
	}
	want := map[string][]realManifest{
		"cl1":     operateFirstLayout,
		"osc-cl2": {operateFirstLayout[3], nvidia},
	}
	for _, c := range res.Clusters {
		if len(c.Apps) != 1 || !c.Apps[0].ClusterScope || c.Apps[0].Err != nil {
			t.Fatalf("cluster %s: apps %v", c.Name, c.Apps)
		}
		objs := c.Objects()
		if len(objs) != len(want[c.Name]) {
			t.Errorf("cluster %s: %d objects, want %d", c.Name, len(objs), len(want[c.Name]))
		}
		for _, m := range want[c.Name] {
			o := objectFrom(objs, m.repoPath)
			if o == nil {
				t.Errorf("cluster %s: nothing rendered from %s", c.Name, m.repoPath)
				continue
			}
			if line := firstKeyLine(t, repo[m.repoPath]); o.Source.Line != line {
				t.Errorf("%s: line %d, want %d (the document's first key, past the header comments)", m.repoPath, o.Source.Line, line)
			}
			if m.namespace != "" && o.Namespace() != m.namespace {
				t.Errorf("%s: namespace %q, want %q from its kustomization", m.repoPath, o.Namespace(), m.namespace)
			}
			if o.Scope != ScopeNamespaced {
				t.Errorf("%s: scope %s", m.repoPath, o.Scope)
			}
			data, err := o.Manifest.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			d, err := operators.Decode(data)
			if err != nil || len(d.UnknownFields) > 0 {
				t.Errorf("%s: rendered object does not decode strictly: %v %v", m.repoPath, err, d)
			}
		}
	}
}

func readShared(t *testing.T, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func objectFrom(objs []*Object, file string) *Object {
	i := slices.IndexFunc(objs, func(o *Object) bool { return o.Source.File == file })
	if i < 0 {
		return nil
	}
	return objs[i]
}

// firstKeyLine is the 1-based line of the first line that starts a top-level key.
func firstKeyLine(t *testing.T, content string) int {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader([]byte(content)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, " ") {
			return n
		}
	}
	t.Fatalf("no key in %q", content)
	return 0
}
