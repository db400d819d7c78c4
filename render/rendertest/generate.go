package rendertest

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Shape sizes a generated repository.
type Shape struct {
	// Clusters is the number of clusters; each has one cluster-scope app.
	Clusters int
	// AppsPerCluster is the number of individual apps per cluster.
	AppsPerCluster int
}

// Benchmark is the shape of the benchmark: 300 apps and 5,000 objects.
var Benchmark = Shape{Clusters: 25, AppsPerCluster: 11}

// Objects per app of the generated repository: a cluster-scope app renders a shared base of
// 16 objects (8 Namespaces, 4 OperatorGroups, 4 Subscriptions) and 8 of its own (4
// Namespaces, 4 OperatorGroups); an individual app renders a shared base of 14 (4
// Deployments, 4 Services, 5 ConfigMaps, a Subscription), one ConfigMap of its overlay
// and one generated ConfigMap, under a name prefix and a namespace, with a patch.
const (
	ClusterScopeObjects = 24
	AppObjects          = 16
)

// Apps is the number of apps of the shape.
func (s Shape) Apps() int { return s.Clusters * (1 + s.AppsPerCluster) }

// Objects is the number of objects the shape renders to.
func (s Shape) Objects() int {
	return s.Clusters * (ClusterScopeObjects + s.AppsPerCluster*AppObjects)
}

// Files returns the generated repository: repository-relative path → content.
func (s Shape) Files() map[string]string {
	repo := map[string]string{}
	var base []string
	for i := range 8 {
		base = append(base, Namespace(fmt.Sprintf("shared-%d", i)))
	}
	for i := range 4 {
		ns := fmt.Sprintf("shared-%d", i)
		base = append(base, OperatorGroup(fmt.Sprintf("og-%d", i), ns), Subscription(fmt.Sprintf("op-%d", i), ns))
	}
	repo["cluster-scope/base/kustomization.yaml"] = "resources:\n- olm.yaml\n"
	repo["cluster-scope/base/olm.yaml"] = strings.Join(base, "---\n")
	for a := range s.AppsPerCluster {
		var docs []string
		for i := range 4 {
			docs = append(docs, Deployment(fmt.Sprintf("web-%d", i)), Service(fmt.Sprintf("web-%d", i)), ConfigMap(fmt.Sprintf("cfg-%d", i)))
		}
		docs = append(docs, Subscription("tool", ""), ConfigMap("extra"))
		repo[fmt.Sprintf("apps/app%02d/base/kustomization.yaml", a)] = "resources:\n- app.yaml\n"
		repo[fmt.Sprintf("apps/app%02d/base/app.yaml", a)] = strings.Join(docs, "---\n")
	}
	for c := range s.Clusters {
		cl := fmt.Sprintf("cl%02d", c)
		cs := "cluster-scope/overlays/prod/region/" + cl
		var own []string
		for i := range 4 {
			ns := fmt.Sprintf("%s-team-%d", cl, i)
			own = append(own, Namespace(ns), OperatorGroup("og", ns))
		}
		repo[cs+"/kustomization.yaml"] = "resources:\n- ../../../../base\n- olm.yaml\n"
		repo[cs+"/olm.yaml"] = strings.Join(own, "---\n")
		repo[fmt.Sprintf("argocd/%s/cluster-scope.yaml", cl)] = Application("cluster-scope-"+cl, cs, cl, "")
		for a := range s.AppsPerCluster {
			app := fmt.Sprintf("app%02d", a)
			ov := fmt.Sprintf("apps/%s/overlays/%s", app, cl)
			repo[ov+"/kustomization.yaml"] = fmt.Sprintf(`namePrefix: %s-
namespace: %s
resources:
- ../../base
- local.yaml
patches:
- path: patch.yaml
configMapGenerator:
- name: settings
  literals: [cluster=%s]
`, cl, app, cl)
			repo[ov+"/local.yaml"] = ConfigMap("local")
			repo[ov+"/patch.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-0\nspec:\n  replicas: 3\n"
			repo[fmt.Sprintf("argocd/%s/%s.yaml", cl, app)] = Application(app, ov, cl, app)
		}
	}
	return repo
}

// Write writes the repository under root in fsys.
func (s Shape) Write(fsys filesys.FileSystem, root string) error {
	for p, content := range s.Files() {
		full := path.Join(root, p)
		if err := fsys.MkdirAll(path.Dir(full)); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := fsys.WriteFile(full, []byte(content)); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// Namespace is a Namespace manifest.
func Namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n"
}

// OperatorGroup is an OperatorGroup targeting its own namespace.
func OperatorGroup(name, ns string) string {
	return "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\nspec:\n  targetNamespaces:\n  - " + ns + "\n"
}

// Subscription is a Subscription to package name; ns may be empty.
func Subscription(name, ns string) string {
	s := "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: " + name + "\n"
	if ns != "" {
		s += "  namespace: " + ns + "\n"
	}
	return s + "spec:\n  channel: stable\n  installPlanApproval: Automatic\n  name: " + name +
		"\n  source: community-operators\n  sourceNamespace: openshift-marketplace\n"
}

// Deployment is a small web Deployment.
func Deployment(name string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  labels: {app: ` + name + `}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: web
        image: quay.io/example/web:1.0.0
        ports: [{containerPort: 8080}]
        env:
        - {name: MODE, value: production}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
`
}

// Service is a Service in front of the Deployment of the same name.
func Service(name string) string {
	return "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\nspec:\n  selector: {app: " + name +
		"}\n  ports:\n  - port: 80\n    targetPort: 8080\n"
}

// ConfigMap is a ConfigMap with two keys.
func ConfigMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  key: value\n  other: thing\n"
}

// Application is an Argo CD Application deploying path of this repository to namespace of
// cluster (a destination name, or a server when it starts with https://).
func Application(name, appPath, cluster, namespace string) string {
	dest := "name: " + cluster
	if strings.HasPrefix(cluster, "https://") {
		dest = "server: " + cluster
	}
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ` + name + `
  namespace: argocd
spec:
  project: default
  destination:
    ` + dest + `
    namespace: "` + namespace + `"
  source:
    repoURL: https://github.com/org/apps
    targetRevision: main
    path: "` + appPath + `"
`
}
