package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestBrowser drives the dashboard in Debian's chromium through playwright-core
// (testdata/browser/dashboard.mjs) against a manager on envtest syncing a repository
// from a git server on loopback: the list shows a tile per app (Synced/Healthy, Degraded,
// WaitingForApproval) with counts per status that filter it, in the URL, and a table whose
// messages expand; the Sync's graph has the edges Sync → app → Subscription → InstallPlan
// → CSV, CatalogSource → Subscriptions, OperatorGroup → target namespace, and the badges
// of health, sync status and OLM's phase and reason; the keyboard expands the group of
// twelve ConfigMaps, moves between nodes and opens one; a node's panel shows its
// conditions, upgrade graph, live manifest (no managedFields) and desired manifest (file
// and line), and for a ConfigMap this test changed in the cluster the diff side by side
// and field by field; a Secret's values are masked everywhere, and no answer of the API
// the page read holds them; the list view filters; a violation links to its file and
// line; approving the Manual InstallPlan without a token, or with one lacking the right,
// is refused and changes nothing; with an allowed token it installs the CSV and the graph
// follows without a reload, down to the Deployment's ReplicaSet and Pod. Screenshots go
// to $OLMSYNC_ARTIFACTS (else a temporary folder, logged).
//
// `make browser-deps` installs chromium and the node modules; `make test` runs it first.
// Without them the test is skipped, unless CI is set: then it fails.
func TestBrowser(t *testing.T) {
	node, chromium := browserTools(t)
	artifacts := os.Getenv("OLMSYNC_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	artifacts, err := filepath.Abs(filepath.Join(artifacts, "dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", artifacts)

	// A long spec.interval: the drift this test makes stays until it has looked at it.
	sc := newScenarioWith(t, true, time.Hour)
	const drifted = "settings-03"
	cm := &corev1.ConfigMap{}
	if err := sc.env.Client.Get(context.Background(), client.ObjectKey{Namespace: sc.ns, Name: drifted}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["level"] = "debug"
	if err := sc.env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Dir = filepath.Join("testdata", "browser")
	cmd.Env = append(os.Environ(),
		"DASHBOARD_URL="+sc.url, "SYNC="+sc.sync.Namespace+"/"+sc.sync.Name, "TEAM_NS="+sc.ns, "BROKEN_NS="+sc.nsb,
		"SECRET_FORMS="+strings.Join(secretForms(), "\n"), "DRIFTED="+drifted,
		"VIEWER_TOKEN="+sc.viewer, "APPROVER_TOKEN="+sc.approver, "ARTIFACTS="+artifacts, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("node dashboard.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v (screenshots in %s)", err, artifacts)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// browserTools finds node and chromium and the browser test's node modules; without them
// the test is skipped, unless CI is set: then it fails.
func browserTools(tb testing.TB) (node, chromium string) {
	tb.Helper()
	chromium = os.Getenv("OLMSYNC_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node"
	case !exists(chromium):
		missing = chromium
	case !exists(filepath.Join("testdata", "browser", "node_modules", "playwright-core", "package.json")):
		missing = "dashboard/testdata/browser/node_modules (npm ci)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("browser test: %s is missing; `make browser-deps` installs chromium and the node modules", missing)
		}
		tb.Skipf("browser test skipped: %s is missing; run `make browser-deps` (apt-get install chromium, npm ci)", missing)
	}
	return node, chromium
}
