package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/reconcile/tree"
)

// TestAPIReads: every read endpoint against a running manager, with a viewer's token.
func TestAPIReads(t *testing.T) {
	sc := newScenario(t, false)
	syncPath := "/api/v1/syncs/" + sc.sync.Namespace + "/" + sc.sync.Name

	t.Run("whoami", func(t *testing.T) {
		var who dashboard.Who
		sc.get(t, "/api/v1/whoami", sc.viewer, &who)
		if want := "system:serviceaccount:" + sc.ns + ":viewer"; who.Username != want || !who.Authenticated || who.AnonymousRead {
			t.Errorf("whoami = %+v, want %s, authenticated, no anonymous reads", who, want)
		}
	})

	t.Run("list", func(t *testing.T) {
		var list dashboard.SyncList
		sc.get(t, "/api/v1/syncs", sc.viewer, &list)
		s := findSync(t, list, sc.sync.Name)
		if s.Health != "Degraded" || s.Sync != "Synced" || s.Ready != "False" {
			t.Errorf("Sync health %s, sync %s, Ready %s; want Degraded (the broken app), Synced, False", s.Health, s.Sync, s.Ready)
		}
		if head := sc.up.Head(t); s.Revision != "main@sha1:"+head || s.Commit == nil || s.Commit.Subject != "initial" || s.Commit.Author != "olmsync test" {
			t.Errorf("revision %s commit %+v, want main@sha1:%s 'initial' by olmsync test", s.Revision, s.Commit, head)
		}
		if s.LastSync == nil || s.LastSyncDuration == "" || s.LastSyncResult == "" {
			t.Errorf("last sync %v %q %q, want the newest history entry's", s.LastSync, s.LastSyncDuration, s.LastSyncResult)
		}
		if s.Violations < 1 || !slices.Equal(s.Packages, []string{"ghost", "widget"}) {
			t.Errorf("violations %d packages %v, want OP011's and ghost, widget", s.Violations, s.Packages)
		}
		apps := map[string]string{}
		for _, a := range s.Apps {
			apps[a.Name] = a.Sync + "/" + a.Health
		}
		want := map[string]string{"cluster-scope": "Synced/Healthy", "team": "Synced/WaitingForApproval", "broken": "Synced/Degraded"}
		if fmt.Sprint(apps) != fmt.Sprint(want) {
			t.Errorf("apps %v, want %v", apps, want)
		}
		if !slices.Contains(list.Namespaces, sc.sync.Namespace) || !slices.Contains(list.Packages, "widget") {
			t.Errorf("filter values: namespaces %v packages %v", list.Namespaces, list.Packages)
		}
	})

	t.Run("filters", func(t *testing.T) {
		var list dashboard.SyncList
		sc.get(t, "/api/v1/syncs?health=Degraded&namespace="+sc.sync.Namespace, sc.viewer, &list)
		s := findSync(t, list, sc.sync.Name)
		if len(s.Apps) != 1 || s.Apps[0].Name != "broken" {
			t.Errorf("health=Degraded: apps %+v, want broken alone", s.Apps)
		}
		sc.get(t, "/api/v1/syncs?search=BROKEN", sc.viewer, &list)
		if s := findSync(t, list, sc.sync.Name); len(s.Apps) != 1 || s.Apps[0].Name != "broken" {
			t.Errorf("search=BROKEN: apps %+v, want broken", s.Apps)
		}
		sc.get(t, "/api/v1/syncs?package=widget", sc.viewer, &list)
		findSync(t, list, sc.sync.Name)
		for _, q := range []string{"package=nothing", "cluster=elsewhere", "namespace=nowhere", "sync=OutOfSync&namespace=" + sc.sync.Namespace} {
			sc.get(t, "/api/v1/syncs?"+q, sc.viewer, &list)
			for _, s := range list.Items {
				if s.Name == sc.sync.Name {
					t.Errorf("%s: the Sync is listed, with apps %+v", q, s.Apps)
				}
			}
		}
	})

	t.Run("sync view", func(t *testing.T) {
		var v struct {
			dashboard.SyncView
			Tree *tree.Node `json:"tree"`
		}
		sc.get(t, syncPath, sc.viewer, &v)
		team := child(v.Tree, "App", "team")
		if team == nil {
			t.Fatalf("no app team below the Sync: %s", dump(v.Tree))
		}
		sub := child(team, "Subscription", "widget")
		if sub == nil || sub.Health != "WaitingForApproval" {
			t.Fatalf("Subscription widget below team: %+v\n%s", sub, dump(v.Tree))
		}
		ip := child(sub, "InstallPlan", "")
		if ip == nil || ip.Phase != string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval) || ip.Health != "WaitingForApproval" {
			t.Fatalf("InstallPlan below the Subscription: %+v\n%s", ip, dump(v.Tree))
		}
		if csv := child(ip, "ClusterServiceVersion", "widget.v1.0.0"); csv == nil {
			t.Errorf("no CSV widget.v1.0.0 below the InstallPlan:\n%s", dump(v.Tree))
		}
		ghost := child(child(v.Tree, "App", "broken"), "Subscription", "ghost")
		if ghost == nil || ghost.Health != "Degraded" || ghost.Reason == "" {
			t.Errorf("Subscription ghost: %+v, want Degraded with OLM's reason", ghost)
		}
		og := child(child(v.Tree, "App", "cluster-scope"), "OperatorGroup", "og")
		if og == nil || child(og, "Namespace", "") == nil {
			t.Errorf("OperatorGroup og without its target namespace:\n%s", dump(v.Tree))
		}
		if len(v.ApprovalsPending) != 1 || v.ApprovalsPending[0].Name != ip.Name {
			t.Errorf("approvals pending %+v, want %s", v.ApprovalsPending, ip.Name)
		}
		var op011 *dashboard.Violation
		for i := range v.Violations {
			if v.Violations[i].Rule == "OP011" {
				op011 = &v.Violations[i]
			}
		}
		if op011 == nil || op011.File != "broken/extra-namespace.yaml" || op011.Line != 1 || op011.App != "broken" {
			t.Errorf("violations %+v, want OP011 at broken/extra-namespace.yaml:1", v.Violations)
		}
		if op011 != nil && op011.Link != "" {
			t.Errorf("a loopback repository got a forge link: %s", op011.Link)
		}
		if len(v.History) == 0 || v.History[0].Revision != "main@sha1:"+sc.up.Head(t) {
			t.Errorf("history %+v", v.History)
		}
	})

	t.Run("resource graph", func(t *testing.T) { testGraph(t, sc) })
	t.Run("resource", func(t *testing.T) { testResource(t, sc) })
	t.Run("desired", func(t *testing.T) { testDesired(t, sc) })
	t.Run("secrets never sent", func(t *testing.T) { testSecretsNeverSent(t, sc) })

	t.Run("file", func(t *testing.T) {
		var f dashboard.FileView
		sc.get(t, syncPath+"/file?path=broken/extra-namespace.yaml", sc.viewer, &f)
		if len(f.Lines) < 1 || f.Lines[0] != "apiVersion: v1" || f.Revision != "main@sha1:"+sc.up.Head(t) {
			t.Errorf("file view %+v", f)
		}
		for _, p := range []string{"", "../etc/passwd", "/etc/passwd", "broken/../../x"} {
			if status, body := sc.call(t, http.MethodGet, syncPath+"/file?path="+p, sc.viewer, nil); status != http.StatusBadRequest {
				t.Errorf("path %q: %d %s, want 400", p, status, body)
			}
		}
		if status, _ := sc.call(t, http.MethodGet, syncPath+"/file?path=nothing.yaml", sc.viewer, nil); status != http.StatusNotFound {
			t.Errorf("a missing file: %d, want 404", status)
		}
	})

	t.Run("events", func(t *testing.T) {
		var events []dashboard.Event
		olmtest.Eventually(t, "an Event of the Sync", func() error {
			sc.get(t, syncPath+"/events", sc.viewer, &events)
			for _, e := range events {
				if e.Object.Kind == "Sync" && e.Object.Name == sc.sync.Name {
					return nil
				}
			}
			return fmt.Errorf("events %+v", events)
		})
	})

	t.Run("graph", func(t *testing.T) {
		var g dashboard.UpgradeGraph
		sc.get(t, "/api/v1/subscriptions/"+sc.ns+"/widget/graph", sc.viewer, &g)
		if g.Package != "widget" || g.Channel != "stable" || g.Head != "widget.v1.1.0" || len(g.Graph.Nodes) != 2 || len(g.Graph.Edges) != 1 {
			t.Errorf("graph %+v", g)
		}
		if status, _ := sc.call(t, http.MethodGet, "/api/v1/subscriptions/"+sc.ns+"/nothing/graph", sc.viewer, nil); status != http.StatusNotFound {
			t.Errorf("graph of a missing Subscription: %d, want 404", status)
		}
		if status, body := sc.call(t, http.MethodGet, "/api/v1/subscriptions/"+sc.nsb+"/ghost/graph", sc.viewer, nil); status != http.StatusNotFound || !strings.Contains(string(body), "ghost") {
			t.Errorf("graph of a package the catalog lacks: %d %s, want 404 naming it", status, body)
		}
	})

	t.Run("diff", func(t *testing.T) {
		var r diff.Report
		sc.get(t, syncPath+"/diff", sc.viewer, &r)
		if r.Revision != "main@sha1:"+sc.up.Head(t) || len(r.Objects) == 0 {
			t.Fatalf("diff %+v", r)
		}
		sc.get(t, syncPath+"/diff?kind=Subscription&namespace="+sc.ns+"&name=widget", sc.viewer, &r)
		if len(r.Objects) != 1 || r.Objects[0].Action != diff.Unchanged {
			t.Errorf("diff of the Subscription: %+v, want it unchanged", r.Objects)
		}
		if status, _ := sc.call(t, http.MethodGet, syncPath+"/diff?kind=ConfigMap&namespace=x&name=y", sc.viewer, nil); status != http.StatusNotFound {
			t.Errorf("diff of an object the Sync lacks: %d, want 404", status)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			status       int
		}{
			{"GET", "/api/v1/syncs/UPPER/x", 400},
			{"GET", "/api/v1/syncs/" + sc.sync.Namespace + "/nothing", 404},
			{"GET", "/api/v1/syncs?health=Fine", 400},
			{"GET", "/api/v1/syncs?sync=Maybe", 400},
			{"GET", "/api/v1/syncs?search=" + strings.Repeat("x", 300), 400},
			{"GET", "/api/v1/nothing", 404},
			{"DELETE", syncPath, 404},
			{"POST", "/", 405},
		} {
			status, body := sc.call(t, c.method, c.path, sc.viewer, nil)
			if status != c.status {
				t.Errorf("%s %s: %d %s, want %d", c.method, c.path, status, body, c.status)
			}
			if strings.HasPrefix(c.path, "/api/") && !json.Valid(body) {
				t.Errorf("%s %s: the answer is no JSON: %s", c.method, c.path, body)
			}
		}
	})

	t.Run("read refusals", func(t *testing.T) {
		for _, token := range []string{"", "not-a-token", sc.viewer + "x"} {
			for _, p := range []string{"/api/v1/syncs", syncPath, syncPath + "/events", "/api/v1/stream"} {
				status, body := sc.call(t, http.MethodGet, p, token, nil)
				if status != http.StatusUnauthorized || strings.Contains(string(body), sc.viewer) {
					t.Errorf("GET %s with token %.10q: %d %s, want 401", p, token, status, body)
				}
			}
		}
		// A token of an account that may not list Syncs in the Sync's namespace sees
		// nothing of it.
		other := sc.token(t, "stranger", false)
		sc.revokeSyncs(t, "stranger")
		var list dashboard.SyncList
		sc.get(t, "/api/v1/syncs", other, &list)
		for _, s := range list.Items {
			if s.Namespace == sc.sync.Namespace {
				t.Errorf("a stranger sees Sync %s/%s", s.Namespace, s.Name)
			}
		}
		if status, _ := sc.call(t, http.MethodGet, syncPath, other, nil); status != http.StatusForbidden {
			t.Errorf("a stranger reading the Sync: %d, want 403", status)
		}
	})
}

// revokeSyncs takes the rights on Syncs from a token's ClusterRole.
func (sc *scenario) revokeSyncs(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	cr := &rbacv1.ClusterRole{}
	if err := sc.env.Client.Get(ctx, client.ObjectKey{Name: sc.ns + "-" + name}, cr); err != nil {
		t.Fatal(err)
	}
	cr.Rules = slices.DeleteFunc(cr.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "syncs") })
	if err := sc.env.Client.Update(ctx, cr); err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer reads RBAC from its own informers: wait until it has
	// taken the update in, or a request made at once may still be allowed.
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + sc.ns + ":" + name,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "list", Group: olmsyncv1alpha1.GroupName, Resource: "syncs", Namespace: sc.sync.Namespace,
		},
	}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := review.DeepCopy()
		if err := sc.env.Client.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		if !r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server still lets %s list Syncs 30 s after the revocation", name)
		}
	}
}

// TestAPIActions: reconcile, suspend, resume and approve, refused without a token, with a
// token the API server rejects, with one whose account lacks the right, and without the
// CSRF header or from another origin — each refusal changing nothing — and then done
// with an approver's token, logged with its identity.
func TestAPIActions(t *testing.T) {
	sc := newScenario(t, true)
	syncPath := "/api/v1/syncs/" + sc.sync.Namespace + "/" + sc.sync.Name
	plan := sc.pendingPlan(t)
	approve := "/api/v1/installplans/" + sc.ns + "/" + plan + "/approve"
	csrf := map[string]string{dashboard.WriteHeader: "1"}

	refusals := []struct {
		name    string
		token   string
		headers map[string]string
		status  int
	}{
		{"no token", "", csrf, http.StatusUnauthorized},
		{"a token the API server rejects", "forged.token.value", csrf, http.StatusUnauthorized},
		{"a token without the right", sc.viewer, csrf, http.StatusForbidden},
		{"without the CSRF header", sc.approver, nil, http.StatusForbidden},
		{"from another origin", sc.approver, map[string]string{dashboard.WriteHeader: "1", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"cross-site", sc.approver, map[string]string{dashboard.WriteHeader: "1", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	before := sc.getSync(t)
	for _, r := range refusals {
		for _, p := range []string{approve, syncPath + "/reconcile", syncPath + "/suspend", syncPath + "/resume"} {
			status, body := sc.call(t, http.MethodPost, p, r.token, r.headers)
			if status != r.status {
				t.Errorf("%s: POST %s: %d %s, want %d", r.name, p, status, body, r.status)
			}
		}
	}
	after := sc.getSync(t)
	if after.Spec.Suspend || after.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation] != before.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation] {
		t.Errorf("a refused action changed the Sync: suspend %v, annotations %v", after.Spec.Suspend, after.Annotations)
	}
	if ip := sc.installPlan(t, plan); ip.Spec.Approved || ip.Annotations[dashboard.ApprovedByAnnotation] != "" {
		t.Fatalf("a refused approval approved %s: %+v", plan, ip.Annotations)
	}
	if logged := sc.log.all(); strings.Contains(logged, "dashboard action") {
		t.Errorf("a refused action was logged as done:\n%s", logged)
	}

	approver := "system:serviceaccount:" + sc.ns + ":approver"
	post := func(p string) dashboard.Done {
		t.Helper()
		status, body := sc.call(t, http.MethodPost, p, sc.approver, map[string]string{dashboard.WriteHeader: "1", "Origin": sc.url, "Sec-Fetch-Site": "same-origin"})
		if status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", p, status, body)
		}
		var d dashboard.Done
		if err := json.Unmarshal(body, &d); err != nil || d.By != approver {
			t.Fatalf("POST %s: %s (%v), want done by %s", p, body, err, approver)
		}
		return d
	}

	d := post(syncPath + "/reconcile")
	olmtest.Eventually(t, "the reconcile handled", func() error {
		s := sc.getSync(t)
		if got := s.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]; got == "" || got == before.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation] || s.Status.LastHandledReconcileAt != got {
			return fmt.Errorf("requestedAt %q handled %q (asked %s)", got, s.Status.LastHandledReconcileAt, d.Value)
		}
		return nil
	})
	post(syncPath + "/suspend")
	if !sc.getSync(t).Spec.Suspend {
		t.Error("suspend did not suspend")
	}
	if status, body := sc.call(t, http.MethodPost, syncPath+"/reconcile", sc.approver, csrf); status != http.StatusConflict {
		t.Errorf("reconcile of a suspended Sync: %d %s, want 409", status, body)
	}
	post(syncPath + "/resume")
	if sc.getSync(t).Spec.Suspend {
		t.Error("resume did not resume")
	}

	post(approve)
	ip := sc.installPlan(t, plan)
	if !ip.Spec.Approved || ip.Annotations[dashboard.ApprovedByAnnotation] != approver || ip.Annotations[dashboard.ApprovedAtAnnotation] == "" {
		t.Errorf("approved plan: approved %v, annotations %v; want approved by %s", ip.Spec.Approved, ip.Annotations, approver)
	}
	if status, body := sc.call(t, http.MethodPost, approve, sc.approver, csrf); status != http.StatusConflict {
		t.Errorf("a second approval: %d %s, want 409", status, body)
	}
	olmtest.Eventually(t, "widget.v1.0.0 installed", func() error {
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := sc.env.Client.Get(context.Background(), client.ObjectKey{Namespace: sc.ns, Name: "widget.v1.0.0"}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("phase %s", csv.Status.Phase)
		}
		return nil
	})
	testWorkloadsInGraph(t, sc)
	logged := sc.log.all()
	for _, action := range []string{"reconcile", "suspend", "resume", "approve"} {
		if !strings.Contains(logged, "action "+action) || !strings.Contains(logged, approver) {
			t.Errorf("action %s not logged with %s:\n%s", action, approver, logged)
		}
	}
	for _, token := range []string{sc.approver, sc.viewer} {
		if strings.Contains(logged, token) {
			t.Error("a token was logged")
		}
	}

	// With the plan approved, the graph says where the Subscription is: installed 1.0.0,
	// 1.1.0 next and the head.
	var g dashboard.UpgradeGraph
	olmtest.Eventually(t, "the graph shows widget.v1.0.0 installed", func() error {
		sc.get(t, "/api/v1/subscriptions/"+sc.ns+"/widget/graph", "", &g)
		if g.Installed != "widget.v1.0.0" || g.Next != "widget.v1.1.0" || !slices.Equal(g.Path, []string{"widget.v1.1.0"}) {
			return fmt.Errorf("graph installed %q next %q path %v", g.Installed, g.Next, g.Path)
		}
		return nil
	})
}

// TestStream: a change of a Sync reaches an open stream as a "change" event naming it,
// fed by the cache's informers; so does a change of the workloads the graph draws below a
// CSV — its Deployment, and the ReplicaSets and Pods of the namespace it runs in — told as
// a change of that CSV, which names no workload to a caller who may not list them.
func TestStream(t *testing.T) {
	sc := newScenario(t, false)
	req, err := http.NewRequest(http.MethodGet, sc.url+"/api/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sc.viewer)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := changes(resp.Body)
	await := func(what, want string) {
		t.Helper()
		for data := range events {
			if data == want {
				return
			}
		}
		t.Fatalf("the stream ended without %s (%s)", want, what)
	}
	c := sc.env.Client
	bg := context.Background()

	// A change the test makes: the Sync's annotation.
	s := sc.getSync(t)
	patch := client.MergeFrom(s.DeepCopy())
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["test"] = "changed"
	if err := c.Patch(bg, s, patch); err != nil {
		t.Fatal(err)
	}
	await("the Sync's annotation", fmt.Sprintf(`{"kind":"Sync","namespace":%q,"name":%q}`, sc.sync.Namespace, sc.sync.Name))

	// The Deployment OLM makes for a CSV (its labels), in a namespace of its own: told as
	// its CSV.
	ns := sc.ns + "-w"
	olmtest.EnsureNamespace(t, sc.env, ns)
	csv := fmt.Sprintf(`{"kind":"ClusterServiceVersion","namespace":%q,"name":"stream.v1.0.0"}`, ns)
	labels := map[string]string{"app": "stream"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stream-operator",
		Labels: map[string]string{groups.OwnerLabel: "stream.v1.0.0", groups.OwnerKindLabel: operatorsv1alpha1.ClusterServiceVersionKind, groups.OwnerNamespaceLabel: ns}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "example.com/operator:1"}}}}}}
	if err := c.Create(bg, dep); err != nil {
		t.Fatal(err)
	}
	await("the CSV's Deployment made", csv)

	// A Pod of that namespace going Running: the CSV again.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stream-operator-7d9f8-x2x4q", Labels: labels},
		Spec: dep.Spec.Template.Spec}
	if err := c.Create(bg, pod); err != nil {
		t.Fatal(err)
	}
	await("the Pod made", csv)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning}
	if err := c.Status().Update(bg, pod); err != nil {
		t.Fatal(err)
	}
	await("the Pod Running", csv)
}

func (sc *scenario) getSync(t *testing.T) *olmsyncv1alpha1.Sync {
	t.Helper()
	s := &olmsyncv1alpha1.Sync{}
	if err := sc.env.Client.Get(context.Background(), client.ObjectKeyFromObject(sc.sync), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (sc *scenario) installPlan(t *testing.T, name string) *operatorsv1alpha1.InstallPlan {
	t.Helper()
	ip := &operatorsv1alpha1.InstallPlan{}
	if err := sc.env.Client.Get(context.Background(), client.ObjectKey{Namespace: sc.ns, Name: name}, ip); err != nil {
		t.Fatal(err)
	}
	return ip
}

// pendingPlan is the name of the team's InstallPlan waiting for approval.
func (sc *scenario) pendingPlan(t *testing.T) string {
	t.Helper()
	name := ""
	olmtest.Eventually(t, "an InstallPlan waiting for approval", func() error {
		var l operatorsv1alpha1.InstallPlanList
		if err := sc.env.Client.List(context.Background(), &l, client.InNamespace(sc.ns)); err != nil {
			return err
		}
		for _, ip := range l.Items {
			if ip.Status.Phase == operatorsv1alpha1.InstallPlanPhaseRequiresApproval {
				name = ip.Name
				return nil
			}
		}
		return fmt.Errorf("%d plans, none RequiresApproval", len(l.Items))
	})
	return name
}

func findSync(t *testing.T, list dashboard.SyncList, name string) dashboard.SyncSummary {
	t.Helper()
	for _, s := range list.Items {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("Sync %s not listed: %+v", name, list.Items)
	return dashboard.SyncSummary{}
}

// child is the first child of n of that kind (and name, unless empty); nil when none.
func child(n *tree.Node, kind, name string) *tree.Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Kind == kind && (name == "" || c.Name == name) {
			return c
		}
	}
	return nil
}

func dump(n *tree.Node) string {
	var b strings.Builder
	n.Write(&b)
	return b.String()
}
