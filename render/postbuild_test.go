package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// postBuildRepo: one kustomize app with a Deployment (selector and pod template labels),
// a ServiceAccount, a RoleBinding to it in the default namespace and a cluster-scoped
// ClusterRole; and a plain folder app with a ConfigMap.
func postBuildRepo(t *testing.T) (*Result, func(Options) *Result) {
	t.Helper()
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
  - name: web
    path: apps/web
  - name: plain
    path: apps/plain
`,
		"apps/web/kustomization.yaml": `
resources: [app.yaml]
`,
		"apps/web/app.yaml": `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: somewhere
spec:
  replicas: ${REPLICAS:=1}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ${IMAGE}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: web}
subjects:
  - {kind: ServiceAccount, name: web, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: web
  annotations:
    kustomize.toolkit.fluxcd.io/substitute: disabled
rules:
  - {apiGroups: [""], resources: [configmaps], verbs: ["${VERB}"]}
`,
		"apps/plain/cm.yaml": `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  cluster: ${CLUSTER}
`,
	})
	render := func(o Options) *Result { return renderRepo(t, fsys, root, o) }
	return render(Options{}), render
}

func TestPostBuild(t *testing.T) {
	plain, render := postBuildRepo(t)
	if ns := objectNamed(t, appNamed(t, plain, "web"), "Deployment", "web").Manifest.GetNamespace(); ns != "somewhere" {
		t.Fatalf("without a post-build the Deployment's namespace is %q, want the file's", ns)
	}
	res := render(Options{PostBuild: &PostBuild{
		TargetNamespace: "team-a",
		Patches: []types.Patch{{
			Patch:  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: not-used\n  labels:\n    patched: \"yes\"\n",
			Target: &types.Selector{ResId: resIDSelector("Deployment", "web")},
		}},
		Labels:      map[string]string{"owner": "platform"},
		Annotations: map[string]string{"team": "a"},
		Substitute:  map[string]string{"IMAGE": "nginx:1.27", "CLUSTER": "prod", "VERB": "get"},
	}})
	web := appNamed(t, res, "web")
	if web.Err != nil {
		t.Fatal(web.Err)
	}
	dep := objectNamed(t, web, "Deployment", "web")
	if ns := dep.Manifest.GetNamespace(); ns != "team-a" {
		t.Errorf("Deployment namespace = %q, want team-a (targetNamespace overrides the file's)", ns)
	}
	if l := dep.Manifest.GetLabels(); l["owner"] != "platform" || l["patched"] != "yes" {
		t.Errorf("Deployment labels = %v, want owner=platform and patched=yes", l)
	}
	if a := dep.Manifest.GetAnnotations(); a["team"] != "a" || len(a) != 1 {
		t.Errorf("Deployment annotations = %v, want only team=a (the index annotation removed)", a)
	}
	sel, _, _ := unstructured.NestedMap(dep.Manifest.Object, "spec", "selector", "matchLabels")
	if _, ok := sel["owner"]; ok || len(sel) != 1 {
		t.Errorf("selector = %v: common metadata must not touch selectors", sel)
	}
	tmpl, _, _ := unstructured.NestedMap(dep.Manifest.Object, "spec", "template", "metadata", "labels")
	if _, ok := tmpl["owner"]; ok {
		t.Errorf("pod template labels = %v: common metadata must not touch pod templates", tmpl)
	}
	replicas, _, _ := unstructured.NestedInt64(dep.Manifest.Object, "spec", "replicas")
	if replicas != 1 {
		t.Errorf("replicas = %d, want 1 from ${REPLICAS:=1}, as an integer", replicas)
	}
	if !strings.Contains(dep.Manifest.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"].(string), "nginx:1.27") {
		t.Errorf("image not substituted: %v", dep.Manifest.Object)
	}
	if dep.Source.File != "apps/web/app.yaml" || dep.Source.Line != 1 {
		t.Errorf("provenance = %s:%d, want apps/web/app.yaml:1 (kept through the post-build)", dep.Source.File, dep.Source.Line)
	}
	rb := objectNamed(t, web, "RoleBinding", "web")
	subj := rb.Manifest.Object["subjects"].([]any)[0].(map[string]any)
	if subj["namespace"] != "team-a" {
		t.Errorf("RoleBinding subject namespace = %v, want team-a (kustomize moves default-namespace subjects)", subj["namespace"])
	}
	cr := objectNamed(t, web, "ClusterRole", "web")
	if cr.Manifest.GetNamespace() != "" {
		t.Errorf("ClusterRole got namespace %q", cr.Manifest.GetNamespace())
	}
	if cr.EffectiveNamespace != "" {
		t.Errorf("ClusterRole effective namespace %q", cr.EffectiveNamespace)
	}
	verb := cr.Manifest.Object["rules"].([]any)[0].(map[string]any)["verbs"].([]any)[0]
	if verb != "${VERB}" {
		t.Errorf("verb = %v: an object annotated substitute: disabled keeps its ${...}", verb)
	}
	cm := objectNamed(t, appNamed(t, res, "plain"), "ConfigMap", "settings")
	if cm.Manifest.GetNamespace() != "team-a" || nested(cm, "data", "cluster") != "prod" || cm.Manifest.GetLabels()["owner"] != "platform" {
		t.Errorf("plain-folder ConfigMap = %v, want it moved, labelled and substituted too", cm.Manifest.Object)
	}
	if cm.EffectiveNamespace != "team-a" {
		t.Errorf("ConfigMap effective namespace = %q, want team-a", cm.EffectiveNamespace)
	}
}

func TestPostBuildErrors(t *testing.T) {
	_, render := postBuildRepo(t)
	tests := []struct {
		name string
		pb   PostBuild
		want string
	}{
		{"strict substitution of an unset variable", PostBuild{Substitute: map[string]string{}, StrictSubstitute: true}, "variable not set"},
		{"bad variable name", PostBuild{Substitute: map[string]string{"1X": "a"}}, `substitution variable "1X"`},
		{"patch that does not parse", PostBuild{Patches: []types.Patch{{Patch: "{{{"}}}, "unable to parse SM or JSON patch"},
		{"patch from a file", PostBuild{Patches: []types.Patch{{Path: "p.yaml"}}}, "path is not supported"},
		{"a value that is a YAML bomb", PostBuild{Substitute: map[string]string{"IMAGE": bomb(), "CLUSTER": "x", "VERB": "x"}}, "alias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := render(Options{PostBuild: &tt.pb})
			web := appNamed(t, res, "web")
			if web.Err == nil {
				t.Fatalf("no error, want one containing %q", tt.want)
			}
			if !errors.Is(web.Err, ErrPostBuild) || !strings.Contains(web.Err.Error(), tt.want) || !strings.Contains(web.Err.Error(), "apps/web/kustomization.yaml") {
				t.Errorf("error = %v, want ErrPostBuild naming apps/web/kustomization.yaml and saying %q", web.Err, tt.want)
			}
			if len(web.Objects) != 0 {
				t.Errorf("a failed post-build returned %d objects", len(web.Objects))
			}
		})
	}
	// Strict mode with a default: not an error.
	res := render(Options{PostBuild: &PostBuild{Substitute: map[string]string{"IMAGE": "i", "CLUSTER": "c", "VERB": "v"}, StrictSubstitute: true}})
	if err := appNamed(t, res, "web").Err; err != nil {
		t.Errorf("strict mode: ${REPLICAS:=1} has a default, got %v", err)
	}
}

// bomb is a value that, pasted into an object's YAML, is a "billion laughs" on one line:
// nine levels of anchors, each nine aliases of the one before.
func bomb() string {
	parts := []string{"&a0 [x,x,x,x,x,x,x,x,x]"}
	for i := 1; i < 9; i++ {
		parts = append(parts, fmt.Sprintf("&a%d [%s]", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ",")))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func resIDSelector(kind, name string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Kind: kind}, Name: name}
}
