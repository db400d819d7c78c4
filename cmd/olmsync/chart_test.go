//go:build !olmsync_light

package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/charts"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile"
)

// forbidden records every request the API server refused with 403, as a proxy between
// olmsync and the API server sees them.
type forbidden struct {
	mu   sync.Mutex
	seen []string
}

func (f *forbidden) add(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, s)
}

func (f *forbidden) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the ServiceAccount
// with a token the API server issued for it (TokenRequest, as the kubelet mounts one in
// the pod), through a proxy on loopback that records every 403. The proxy forwards with
// the API server's CA and no credentials of its own: the token is all the server sees.
func serviceAccountKubeconfig(t *testing.T, env *testenv.Env, ns, name string) (string, *forbidden) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/%s: %v", ns, name, err)
	}
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(&rest.Config{Host: env.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	seen := &forbidden{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	proxy.FlushInterval = -1 // watches stream
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusForbidden {
			seen.add(resp.Request.Method + " " + resp.Request.URL.RequestURI() + impersonating(resp.Request))
		}
		return nil
	}
	srv := httptest.NewTLSServer(proxy)
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "sa"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, seen
}

func impersonating(r *http.Request) string {
	if u := r.Header.Get("Impersonate-User"); u != "" {
		return " (as " + u + ")"
	}
	return ""
}

// chartOperatorRepository holds a namespace with its OperatorGroup, a ConfigMap catalog
// of one operator with its CatalogSource in the chart's global catalog namespace (named
// after the namespace, as several tests share that namespace), and a Subscription to it.
func chartOperatorRepository(t *testing.T, ns string) map[string]string {
	t.Helper()
	bundle := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{{Group: ns + ".test.olmsync.dev", Version: "v1", Kind: "Widget"}}}
	global, cat := policy.DefaultMarketplaceNamespace, "cat-"+ns
	catalog, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": cat, "namespace": global},
		"data":     olmtest.ConfigMapData(t, []olmtest.Bundle{bundle}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"olmsync.yaml":                     fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team, path: team, namespace: %[1]s}\npolicy:\n  operatorGroups: []\n", ns),
		"cluster-scope/namespace.yaml":     fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns),
		"cluster-scope/operatorgroup.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: %[1]s\nspec:\n  targetNamespaces: [%[1]s]\n", ns),
		"cluster-scope/catalog.yaml":       string(catalog),
		"cluster-scope/catalogsource.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: %[1]s, namespace: %[2]s}\nspec: {sourceType: configmap, configMap: %[1]s, displayName: cat}\n", cat, global),
		"team/subscription.yaml":           fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: widget}\nspec: {name: widget, channel: stable, source: %s, sourceNamespace: %s, installPlanApproval: Automatic}\n", cat, global),
	}
}

// chartRun is the chart installed on the envtest API server and `olmsync run` started as
// its Deployment would start it, authenticated as its ServiceAccount.
type chartRun struct {
	release, namespace string
	forbidden          *forbidden
	out                *syncBuffer
	done               <-chan error
}

// installChart renders the chart with its default values, lets edit change the rendered
// objects, applies them all with server-side apply as `olmsync install` does (each must
// be accepted), and runs `olmsync run` in-process with the Deployment's arguments and a
// token of the chart's ServiceAccount: the chart's RBAC is all it has.
func installChart(t *testing.T, env *testenv.Env, release string, edit func([]*unstructured.Unstructured)) *chartRun {
	// Without a rule it needs, olmsync may stop at once (the embedded OLM cannot look for
	// another OLM's Deployments): that is what such a test looks for.
	mayFail := edit != nil
	t.Helper()
	ns := olmtest.NewNamespace(t, env, release)
	r, err := charts.Render(charts.Options{ReleaseName: release, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(r.Objects)
	}
	if err := reconcile.Install(context.Background(), env.Client, ns, r.Objects, nil); err != nil {
		t.Fatalf("the API server refused the chart's objects: %v", err)
	}
	t.Cleanup(func() {
		for _, o := range r.Objects {
			if o.GetKind() != "CustomResourceDefinition" {
				_ = env.Client.Delete(context.Background(), o)
			}
		}
	})
	var deployment, sa *unstructured.Unstructured
	for _, o := range r.Objects {
		switch o.GetKind() {
		case "Deployment":
			deployment = o
		case "ServiceAccount":
			sa = o
		}
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("the Deployment does not run `olmsync run`: %q", args)
	}
	kubeconfig, seen := serviceAccountKubeconfig(t, env, ns, sa.GetName())
	// The Deployment's own arguments; then what differs in a test process: the kubeconfig
	// (in a pod, the mounted token), the caches (emptyDirs in the pod) and the ports.
	args = append(args[1:], "--kubeconfig", kubeconfig, "--git-cache", t.TempDir(), "--catalog-cache", t.TempDir(),
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--webhook-bind-address="+testenv.FreeAddr(t),
		"--dashboard-addr="+testenv.FreeAddr(t))
	out, done := startRunExpecting(t, mayFail, args...)
	return &chartRun{release: release, namespace: ns, forbidden: seen, out: out, done: done}
}

// syncOperator pushes the operator repository to a git server and creates a Sync of it
// in the release namespace, applying as a ServiceAccount "deployer" of that namespace
// (impersonated by olmsync) allowed to apply what the repository holds.
func (c *chartRun) syncOperator(t *testing.T, env *testenv.Env, operatorNS string) *olmsyncv1alpha1.Sync {
	t.Helper()
	ctx := context.Background()
	olmtest.EnsureNamespace(t, env, policy.DefaultMarketplaceNamespace) // the chart's global catalog namespace
	up := gittest.NewUpstream(t, chartOperatorRepository(t, operatorNS))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: c.release + "-deployer"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"operatorgroups", "catalogsources", "subscriptions"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: c.release + "-deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: c.namespace, Name: "deployer"}},
	}
	env.Create(t, fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: deployer, namespace: %s}\n", c.namespace))
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	s := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: "operator"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:             olmsyncv1alpha1.GitSource{URL: srv.RepoURL(), Interval: metav1.Duration{Duration: 5 * time.Second}},
			ServiceAccountName: "deployer",
			Prune:              true,
			Interval:           metav1.Duration{Duration: time.Minute},
		},
	}
	createSync(t, env, s)
	return s
}

// createSync creates a Sync that is gone when the test ends, whether a manager still
// runs to finalize it or not.
func createSync(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync) {
	t.Helper()
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		got := &olmsyncv1alpha1.Sync{}
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), got) == nil {
			got.Finalizers = nil
			_ = env.Client.Update(context.Background(), got)
		}
		_ = env.Client.Delete(context.Background(), s)
	})
}

// TestChartRBAC installs the chart on a real API server and runs olmsync with nothing
// but the rights the chart grants its ServiceAccount: a Sync applying as its own service
// account installs an operator through the embedded OLM — the Subscription
// AtLatestKnown, its CSV Succeeded — and a Sync without one applies with the chart's
// apply rules, and not one request is refused. Each rule taken out of the chart makes a
// request refused.
func TestChartRBAC(t *testing.T) {
	env := testenv.Get(t)
	t.Run("the chart's rights", func(t *testing.T) {
		c := installChart(t, env, "rbac", nil) // the chart's defaults: olm.mode auto
		operatorNS := olmtest.NewNamespace(t, env, "widget")
		ctx, cancel := context.WithCancel(context.Background())
		kubelet := make(chan struct{})
		go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, operatorNS); close(kubelet) }()
		t.Cleanup(func() { cancel(); <-kubelet })

		s := c.syncOperator(t, env, operatorNS)
		plainNS := olmtest.NewNamespace(t, env, "plain")
		up := gittest.NewUpstream(t, map[string]string{
			"configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {level: info}\n", plainNS),
		})
		srv := gittest.Serve(t, up, gittest.ServerOptions{})
		plain := &olmsyncv1alpha1.Sync{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: "plain"},
			Spec: olmsyncv1alpha1.SyncSpec{Source: olmsyncv1alpha1.GitSource{URL: srv.RepoURL(), Interval: metav1.Duration{Duration: 5 * time.Second}},
				Prune: true, Interval: metav1.Duration{Duration: time.Minute}},
		}
		createSync(t, env, plain)
		olmtest.Eventually(t, "both Syncs Ready, the operator installed", func() error {
			select {
			case err := <-c.done:
				return fmt.Errorf("olmsync run stopped: %w\n%s", err, c.out)
			default:
			}
			for _, obj := range []*olmsyncv1alpha1.Sync{s, plain} {
				got := &olmsyncv1alpha1.Sync{}
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
					return err
				}
				if r := conditions.Get(got, olmsyncv1alpha1.ReadyCondition); r == nil || r.Status != metav1.ConditionTrue {
					return fmt.Errorf("Sync %s: Ready %+v; refused so far: %v", obj.Name, r, c.forbidden.list())
				}
			}
			sub := &v1alpha1.Subscription{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: "widget"}, sub); err != nil {
				return err
			}
			if sub.Status.State != v1alpha1.SubscriptionStateAtLatest {
				return fmt.Errorf("Subscription %q", sub.Status.State)
			}
			csv := &v1alpha1.ClusterServiceVersion{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: sub.Status.InstalledCSV}, csv); err != nil {
				return err
			}
			if csv.Status.Phase != v1alpha1.CSVPhaseSucceeded {
				return fmt.Errorf("CSV %s %s", csv.Name, csv.Status.Phase)
			}
			return nil
		})
		if refused := c.forbidden.list(); len(refused) > 0 {
			t.Errorf("requests refused with the chart's RBAC:\n%s", strings.Join(refused, "\n"))
		}
		if strings.Contains(strings.ToLower(c.out.String()), "forbidden") {
			t.Errorf("olmsync logged a forbidden error:\n%s", c.out)
		}
	})

	// One rule out of the chart: a request is refused.
	for _, tc := range []struct {
		name, role string
		rule       func(rbacv1.PolicyRule) bool
	}{
		// Both roles impersonate (a Sync's service account; the embedded OLM a scoped
		// install's): the rule goes from every role.
		{"impersonation of a Sync's service account", "", func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "impersonate") }},
		{"the embedded OLM's Deployments", "-olm", func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "deployments") }},
		{"Syncs' status", "-gitops", func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "syncs/status") }},
	} {
		t.Run("without "+tc.name, func(t *testing.T) {
			removed := 0
			c := installChart(t, env, "rbac", func(objs []*unstructured.Unstructured) {
				for _, o := range objs {
					if o.GetKind() != "ClusterRole" || !strings.HasSuffix(o.GetName(), tc.role) {
						continue
					}
					rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
					kept := rules[:0]
					for _, r := range rules {
						var pr rbacv1.PolicyRule
						data, _ := yaml.Marshal(r)
						if err := yaml.Unmarshal(data, &pr); err != nil {
							t.Fatal(err)
						}
						if tc.rule(pr) {
							removed++
							continue
						}
						kept = append(kept, r)
					}
					_ = unstructured.SetNestedSlice(o.Object, kept, "rules")
				}
			})
			if removed == 0 || tc.role != "" && removed != 1 {
				t.Fatalf("removed %d rules, want 1 (or, from every role, at least 1)", removed)
			}
			c.syncOperator(t, env, olmtest.NewNamespace(t, env, "widget"))
			olmtest.Eventually(t, "a request refused", func() error {
				if len(c.forbidden.list()) == 0 {
					return fmt.Errorf("none refused yet")
				}
				return nil
			})
			t.Logf("refused: %v", c.forbidden.list())
		})
	}
}

// TestChartPassesCheck: the manifests `olmsync install --export` prints, laid out as the
// placement rules want a GitOps repository (the cluster-scoped objects and the namespace
// in the cluster-scope app, the rest in an app of olmsync-system), pass `olmsync check`
// with the built-in rules: olmsync can be deployed by GitOps, by itself included.
func TestChartPassesCheck(t *testing.T) {
	for _, flags := range [][]string{nil, {"--olm", "external", "--replicas", "2", "--set", "metrics.serviceMonitor.enabled=true"}} {
		out, err := run(t, append([]string{"install", "--export"}, flags...)...)
		if err != nil {
			t.Fatalf("olmsync install --export %v: %v\n%s", flags, err, out)
		}
		objs, err := charts.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": defaultSyncNamespace}}}
		clusterScope, namespaced := []*unstructured.Unstructured{ns}, []*unstructured.Unstructured(nil)
		for _, o := range objs {
			if o.GetNamespace() == "" {
				clusterScope = append(clusterScope, o)
			} else {
				namespaced = append(namespaced, o)
			}
		}
		dir := t.TempDir()
		files := map[string][]*unstructured.Unstructured{"cluster-scope/olmsync.yaml": clusterScope, defaultSyncNamespace + "/olmsync.yaml": namespaced}
		for name, list := range files {
			data, err := charts.YAML(list)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{name: string(data)})
		}
		writeFiles(t, dir, map[string]string{"olmsync.yaml": fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: olmsync, path: %[1]s, namespace: %[1]s}\n", defaultSyncNamespace)})
		r, err := checkJSON(t, dir)
		wantExit(t, err, 0)
		if len(r.Violations) > 0 || len(r.Problems) > 0 {
			t.Errorf("olmsync check of the chart (%v): violations %+v, problems %+v", flags, r.Violations, r.Problems)
		}
		if len(namespaced) == 0 || len(clusterScope) < 4 {
			t.Errorf("the chart rendered %d namespaced and %d cluster-scoped objects", len(namespaced), len(clusterScope))
		}
	}
}

// TestInstall: `olmsync install` applies the embedded chart to a cluster — every object,
// the namespace created — and waits for the Deployment to be available (the test plays
// the kubelet); run again, it changes nothing and still succeeds.
func TestInstall(t *testing.T) {
	env := testenv.Get(t)
	ns := "install-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(kubelet) }()
	t.Cleanup(func() { cancel(); <-kubelet })
	kubeconfig := kubeconfigFile(t, env)
	for range 2 {
		out, err := run(t, "install", "--kubeconfig", kubeconfig, "-n", ns, "--release-name", "inst",
			"--image", "registry.example.com/olmsync:v9", "--olm", "embedded", "--timeout", "2m")
		if err != nil {
			t.Fatalf("olmsync install: %v\n%s", err, out)
		}
		for _, want := range []string{"applied CustomResourceDefinition syncs.olmsync.dev", "applied ClusterRole inst-olmsync-olm",
			"applied Deployment " + ns + "/inst-olmsync", "olmsync is installed in namespace " + ns, "kind: Sync"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	}
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "inst-olmsync"}, d); err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != "registry.example.com/olmsync:v9" {
		t.Errorf("image %v", img)
	}
	if a, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args"); !slices.Contains(a, "--olm=embedded") {
		t.Errorf("args %q", a)
	}
	t.Cleanup(func() {
		r, err := charts.Render(charts.Options{ReleaseName: "inst", Namespace: ns})
		if err != nil {
			return
		}
		for _, o := range r.Objects {
			if o.GetKind() != "CustomResourceDefinition" {
				_ = env.Client.Delete(context.Background(), o)
			}
		}
	})
}

func TestParseImage(t *testing.T) {
	for _, tc := range []struct{ ref, repo, tag, digest string }{
		{"ghcr.io/you/olmsync:v1", "ghcr.io/you/olmsync", "v1", ""},
		{"localhost:5000/olmsync", "localhost:5000/olmsync", "", ""},
		{"localhost:5000/olmsync:dev", "localhost:5000/olmsync", "dev", ""},
		{"r.example/olmsync@sha256:abc", "r.example/olmsync", "", "sha256:abc"},
	} {
		repo, tag, digest, err := parseImage(tc.ref)
		if err != nil || repo != tc.repo || tag != tc.tag || digest != tc.digest {
			t.Errorf("parseImage(%q) = %q %q %q %v", tc.ref, repo, tag, digest, err)
		}
	}
}

// TestChartOptionalObjectsAccepted: with every optional object the API server serves
// without another CRD — two replicas (a PodDisruptionBudget), the receiver's Ingress, the
// NetworkPolicy, olm.mode external — the API server accepts each object of the chart.
func TestChartOptionalObjectsAccepted(t *testing.T) {
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "optional")
	r, err := charts.Render(charts.Options{ReleaseName: "optional", Namespace: ns, Values: map[string]any{
		"replicaCount": 2, "olm": map[string]any{"mode": "external"},
		"webhook": map[string]any{"ingress": map[string]any{"enabled": true, "className": "nginx", "hosts": []any{"hooks.example.com"},
			"tls": []any{map[string]any{"secretName": "hooks-tls", "hosts": []any{"hooks.example.com"}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	err = reconcile.Install(context.Background(), env.Client, ns, r.Objects, func(u *unstructured.Unstructured) { kinds = append(kinds, u.GetKind()) })
	if err != nil {
		t.Fatalf("the API server refused the chart's objects: %v", err)
	}
	t.Cleanup(func() {
		for _, o := range r.Objects {
			if o.GetKind() != "CustomResourceDefinition" {
				_ = env.Client.Delete(context.Background(), o)
			}
		}
	})
	for _, want := range []string{"PodDisruptionBudget", "Ingress", "NetworkPolicy", "Deployment"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("applied %v, no %s", kinds, want)
		}
	}
}
