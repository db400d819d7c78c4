package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/olmtest"
)

// graphView is the part of a Sync's view these tests read.
type graphView struct {
	Graph dashboard.Graph `json:"graph"`
}

// syncGraph reads the Sync's resource graph.
func (sc *scenario) syncGraph(t *testing.T, token string) (*dashboard.Graph, map[string]dashboard.GraphNode) {
	t.Helper()
	var v graphView
	sc.get(t, "/api/v1/syncs/"+sc.sync.Namespace+"/"+sc.sync.Name, token, &v)
	nodes := map[string]dashboard.GraphNode{}
	for _, n := range v.Graph.Nodes {
		nodes[n.ID] = n
	}
	return &v.Graph, nodes
}

func (sc *scenario) id(kind, name string) string {
	switch kind {
	case "Subscription", "InstallPlan", "ClusterServiceVersion", "CatalogSource":
		return dashboard.NodeID("operators.coreos.com/v1alpha1", kind, sc.ns, name)
	case "OperatorGroup":
		return dashboard.NodeID("operators.coreos.com/v1", kind, sc.ns, name)
	case "Deployment", "ReplicaSet":
		return dashboard.NodeID("apps/v1", kind, sc.ns, name)
	case "Namespace":
		return dashboard.NodeID("v1", kind, "", name)
	}
	return dashboard.NodeID("v1", kind, sc.ns, name)
}

// testGraph: the Sync's view carries its resource graph — apps, OLM's chain as edges,
// the OperatorGroup's target namespace (the one the Sync applies), each Subscription's
// CatalogSource — and, once the plan is approved and the CSV installed, the chain goes
// on to the Deployment's ReplicaSet and Pod.
func testGraph(t *testing.T, sc *scenario) {
	g, nodes := sc.syncGraph(t, sc.viewer)
	sync := dashboard.NodeID("olmsync.dev/v1alpha1", "Sync", sc.sync.Namespace, sc.sync.Name)
	var plan string
	for id, n := range nodes {
		if n.Kind == "InstallPlan" {
			plan = id
		}
	}
	edges := map[string]string{}
	for _, e := range g.Edges {
		edges[e.From+" -> "+e.To] = e.Kind
	}
	sub, ghost, cat := sc.id("Subscription", "widget"), dashboard.NodeID("operators.coreos.com/v1alpha1", "Subscription", sc.nsb, "ghost"), sc.id("CatalogSource", "cat")
	for edge, kind := range map[string]string{
		sync + " -> App//team": dashboard.EdgeApp,
		"App//team -> " + sub:  dashboard.EdgeApp,
		sub + " -> " + plan:    dashboard.EdgeOwns,
		plan + " -> " + sc.id("ClusterServiceVersion", "widget.v1.0.0"): dashboard.EdgeOwns,
		cat + " -> " + sub:   dashboard.EdgeCatalog,
		cat + " -> " + ghost: dashboard.EdgeCatalog,
		sc.id("OperatorGroup", "og") + " -> " + sc.id("Namespace", sc.ns): dashboard.EdgeTargets,
		"App//cluster-scope -> " + sc.id("Namespace", sc.ns):              dashboard.EdgeApp,
		"App//team -> " + sc.id("ConfigMap", "settings-11"):               dashboard.EdgeApp,
		"App//team -> " + sc.id("Secret", "credentials"):                  dashboard.EdgeApp,
	} {
		if edges[edge] != kind {
			t.Errorf("edge %s: %q, want %q", edge, edges[edge], kind)
		}
	}
	if n := nodes[plan]; n.Phase != "RequiresApproval" || n.Health != "WaitingForApproval" || n.Managed {
		t.Errorf("InstallPlan node %+v, want RequiresApproval, WaitingForApproval, not from Git", n)
	}
	if n := nodes[ghost]; n.Health != "Degraded" || n.Reason == "" || !n.Managed || n.Sync != "Synced" {
		t.Errorf("Subscription ghost %+v, want Degraded with OLM's reason, Synced, from Git", n)
	}
	if n := nodes[sc.id("Namespace", sc.ns)]; !n.Managed || n.Parent != "App//cluster-scope" {
		t.Errorf("the targeted namespace %+v, want the one the cluster-scope app applies", n)
	}
	configMaps := 0
	for _, n := range nodes {
		if n.Kind == "ConfigMap" && n.Parent == "App//team" {
			configMaps++
		}
	}
	if configMaps != 12 {
		t.Errorf("%d ConfigMaps in the team app, want 12", configMaps)
	}
}

// testWorkloadsInGraph: after the approval, CSV → Deployment → ReplicaSet → Pod.
func testWorkloadsInGraph(t *testing.T, sc *scenario) {
	dep := sc.id("Deployment", "widget-operator")
	rs := sc.id("ReplicaSet", "widget-operator-7d9f8")
	pod := dashboard.NodeID("v1", "Pod", sc.ns, "widget-operator-7d9f8-x2x4q")
	olmtest.Eventually(t, "the chain down to the Pod", func() error {
		g, nodes := sc.syncGraph(t, "")
		edges := map[string]string{}
		for _, e := range g.Edges {
			edges[e.From+" -> "+e.To] = e.Kind
		}
		for _, e := range []string{sc.id("ClusterServiceVersion", "widget.v1.0.0") + " -> " + dep, dep + " -> " + rs, rs + " -> " + pod} {
			if edges[e] != dashboard.EdgeOwns {
				return fmt.Errorf("no owns edge %s in %v", e, edges)
			}
		}
		if n := nodes[pod]; n.Health != "Healthy" || n.Phase != "Running" {
			return fmt.Errorf("pod %+v, want Healthy and Running", n)
		}
		return nil
	})
}

// testResource: a node's panel — its live manifest without managedFields, its
// conditions and Events — for objects of the graph only.
func testResource(t *testing.T, sc *scenario) {
	syncPath := "/api/v1/syncs/" + sc.sync.Namespace + "/" + sc.sync.Name
	var r dashboard.ResourceView
	olmtest.Eventually(t, "the Subscription's panel with its Events", func() error {
		sc.get(t, syncPath+"/resource?id="+url.QueryEscape(sc.id("Subscription", "widget")), sc.viewer, &r)
		if len(r.Events) == 0 {
			return fmt.Errorf("no Events: %+v", r)
		}
		return nil
	})
	if !strings.Contains(r.Live, "kind: Subscription") || !strings.Contains(r.Live, "installPlanApproval: Manual") || strings.Contains(r.Live, "managedFields") {
		t.Errorf("live manifest:\n%s", r.Live)
	}
	if len(r.Conditions) == 0 || r.Node.Health != "WaitingForApproval" {
		t.Errorf("conditions %+v, node %+v: want OLM's conditions, WaitingForApproval", r.Conditions, r.Node)
	}
	for _, e := range r.Events {
		if e.Object.Kind != "Subscription" || e.Object.Name != "widget" {
			t.Errorf("an Event of another object: %+v", e)
		}
	}
	var app dashboard.ResourceView
	sc.get(t, syncPath+"/resource?id="+url.QueryEscape("App//team"), sc.viewer, &app)
	if app.Node.Kind != "App" || app.Live != "" {
		t.Errorf("an app's panel: %+v", app)
	}
	for q, status := range map[string]int{
		"":   http.StatusBadRequest,
		"id": http.StatusBadRequest,
		"id=" + url.QueryEscape(dashboard.NodeID("v1", "Secret", "kube-system", "bootstrap-token")): http.StatusNotFound,
		"id=" + url.QueryEscape(dashboard.NodeID("v1", "ConfigMap", sc.ns, "elsewhere")):            http.StatusNotFound,
	} {
		if got, body := sc.call(t, http.MethodGet, syncPath+"/resource?"+q, sc.viewer, nil); got != status {
			t.Errorf("resource?%s: %d %s, want %d", q, got, body, status)
		}
	}
}

// testDesired: an object applied from Git as the applied revision has it, with its file
// and line; what OLM made has none.
func testDesired(t *testing.T, sc *scenario) {
	syncPath := "/api/v1/syncs/" + sc.sync.Namespace + "/" + sc.sync.Name
	revision := "main@sha1:" + sc.up.Head(t)
	for _, c := range []struct {
		id, file string
		line     int
		has      []string
	}{
		{sc.id("Subscription", "widget"), "team/subscription.yaml", 1, []string{"name: widget", "namespace: " + sc.ns, "installPlanApproval: Manual"}},
		// The fourth document of five lines each.
		{sc.id("ConfigMap", "settings-03"), "team/settings.yaml", 16, []string{"name: settings-03", "level: info"}},
	} {
		var d dashboard.DesiredView
		sc.get(t, syncPath+"/desired?id="+url.QueryEscape(c.id), sc.viewer, &d)
		if d.File != c.file || d.Line != c.line || d.Revision != revision || d.App != "team" || d.Path != c.file {
			t.Errorf("desired %s: %s:%d at %s in app %s, want %s:%d at %s in team", c.id, d.File, d.Line, d.Revision, d.App, c.file, c.line, revision)
		}
		for _, h := range c.has {
			if !strings.Contains(d.Manifest, h) {
				t.Errorf("desired %s lacks %q:\n%s", c.id, h, d.Manifest)
			}
		}
	}
	var plan string
	_, nodes := sc.syncGraph(t, sc.viewer)
	for id, n := range nodes {
		if n.Kind == "InstallPlan" {
			plan = id
		}
	}
	if status, body := sc.call(t, http.MethodGet, syncPath+"/desired?id="+url.QueryEscape(plan), sc.viewer, nil); status != http.StatusNotFound || !strings.Contains(string(body), "not applied from Git") {
		t.Errorf("desired of the InstallPlan: %d %s, want 404, not from Git", status, body)
	}
}

// testSecretsNeverSent calls every read endpoint of the API (dashboard.Endpoints) with
// every object of the Sync's graph, every file of its repository and every Subscription,
// and reads each answer whole: none holds a value of the Sync's Secrets, in plain or in
// base64, though the cluster has them (checked first, so that the test can fail). Where
// a Secret is shown, its values are masked.
func testSecretsNeverSent(t *testing.T, sc *scenario) {
	ctx := context.Background()
	for _, name := range []string{"credentials", "generated"} {
		var list corev1.SecretList
		if err := sc.env.Client.List(ctx, &list, client.InNamespace(sc.ns)); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range list.Items {
			if strings.HasPrefix(s.Name, name) && len(s.Data) > 0 {
				found = true
			}
		}
		if !found {
			t.Fatalf("the cluster has no Secret %s with data: the test would prove nothing", name)
		}
	}
	g, _ := sc.syncGraph(t, sc.viewer)
	syncPath := "/api/v1/syncs/" + sc.sync.Namespace + "/" + sc.sync.Name
	revisions := []string{"", "main@sha1:" + sc.up.Head(t)}
	var calls []string
	for _, e := range dashboard.Endpoints() {
		method, pattern, _ := strings.Cut(e, " ")
		if method != http.MethodGet {
			continue
		}
		p := strings.NewReplacer("{namespace}", sc.sync.Namespace, "{name}", sc.sync.Name).Replace(pattern)
		switch {
		case strings.HasSuffix(pattern, "/resource") || strings.HasSuffix(pattern, "/desired"):
			for _, n := range g.Nodes {
				calls = append(calls, p+"?id="+url.QueryEscape(n.ID))
			}
		case strings.HasSuffix(pattern, "/diff"):
			calls = append(calls, p)
			for _, n := range g.Nodes {
				if n.Kind == "Secret" {
					calls = append(calls, p+"?kind=Secret&namespace="+n.Namespace+"&name="+n.Name)
				}
			}
		case strings.HasSuffix(pattern, "/file"):
			for f := range sc.files(t) {
				for _, r := range revisions {
					calls = append(calls, p+"?path="+url.QueryEscape(f)+"&revision="+url.QueryEscape(r))
				}
			}
		case strings.HasPrefix(pattern, "/api/v1/subscriptions/"):
			calls = append(calls, "/api/v1/subscriptions/"+sc.ns+"/widget/graph", "/api/v1/subscriptions/"+sc.nsb+"/ghost/graph")
		case pattern == "/api/v1/stream":
			// Read below, for a while.
		case strings.Contains(pattern, "{"):
			calls = append(calls, p)
		case pattern == "/api/v1/whoami" || pattern == "/api/v1/syncs":
			calls = append(calls, p)
		default:
			t.Errorf("endpoint %s: this test does not know how to call it; teach it", e)
		}
	}
	forms := secretForms()
	shownMasked := map[string]bool{}
	for _, c := range calls {
		status, body := sc.call(t, http.MethodGet, c, sc.viewer, nil)
		if status == http.StatusTooManyRequests {
			time.Sleep(time.Second)
			status, body = sc.call(t, http.MethodGet, c, sc.viewer, nil)
		}
		for _, f := range forms {
			if strings.Contains(string(body), f) {
				t.Errorf("GET %s (%d) holds a Secret's value %q", c, status, f)
			}
		}
		if strings.Contains(string(body), `password: '***'`) || strings.Contains(string(body), `password: ***`) {
			shownMasked[strings.SplitN(c, "?", 2)[0]] = true
		}
		if strings.Contains(c, "cert.yaml") && status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404: a secretGenerator reads it", c, status)
		}
	}
	for _, p := range []string{syncPath + "/resource", syncPath + "/desired", syncPath + "/file"} {
		if !shownMasked[p] {
			t.Errorf("%s never showed the Secret's password masked: the Secret was not reached", p)
		}
	}
	// The stream, for a while: it names objects, never their values.
	req, err := http.NewRequest(http.MethodGet, sc.url+"/api/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sc.viewer)
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(sctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		for _, f := range forms {
			if strings.Contains(lines.Text(), f) {
				t.Errorf("the stream holds a Secret's value: %s", lines.Text())
			}
		}
	}
	if !slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "kind=Secret") }) {
		t.Error("no diff of a Secret was asked for")
	}
}
