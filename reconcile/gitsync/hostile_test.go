package gitsync_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// hostileRepositories are the repositories of issue 30 that took `olmsync run` down with
// every Sync of the cluster (under `ulimit -v 3000000`, the binary before the memory
// ceiling died with "fatal error: out of memory" 8 s, 3 s and 1 s after the Sync was
// created): each app of it is deployed (discovery.uncoveredRoots), and says is what the
// Sync's Ready message must name.
func hostileRepositories(t *testing.T) []struct {
	name, says string
	files      map[string]string
} {
	t.Helper()
	amplified := map[string]string{"olmsync.yaml": "discovery:\n  uncoveredRoots: apps\n"}
	for i := range 16 {
		amplified[fmt.Sprintf("app%d/thing.yaml", i)] = yamltest.Amplified(i)
		amplified[fmt.Sprintf("app%d/kustomization.yaml", i)] = "resources: [thing.yaml]\n"
	}
	grow, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "hostile", "grow", "grow.rego"))
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name, says string
		files      map[string]string
	}{
		{name: "amplified", files: amplified, says: "thing.yaml: parsing it takes the YAML read so far to"},
		{name: "scalars", says: "big/thing.yaml: parsing it takes the YAML read so far to 990014 nodes", files: map[string]string{
			"olmsync.yaml":           "discovery:\n  uncoveredRoots: apps\n",
			"big/thing.yaml":         yamltest.Scalars(990000),
			"big/kustomization.yaml": "resources: [thing.yaml]\n",
		}},
		{name: "grow", says: "policies/grow.rego: rule ACME666 (acme.grow) stopped the policy sandbox", files: map[string]string{
			"olmsync.yaml":           "discovery:\n  uncoveredRoots: apps\npolicy:\n  rules: [policies]\n",
			"app/kustomization.yaml": "resources: [cm.yaml]\n",
			"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\n",
			"policies/grow.rego":     string(grow),
		}},
	}
}

// TestOneSyncCannotTakeDownTheOthers (issue 30): each hostile repository — 16 alias-amplified
// files, a 990,000-scalar resource, a rule of its own olmsync.yaml whose replace() grows a
// string — committed to a Sync beside a healthy one, all of them at once, under the
// options olmsync run builds with (gitsync.BoundedChecks: a share of the default memory
// ceiling per worker, users' rules in a sandbox). Each hostile Sync is Ready=False
// BuildFailed naming its file or rule, with a Warning Event (one however often it is
// retried, but for the amplified files, whose message varies);
// the process stays up (this test runs in it) and the healthy Sync applies its next commit
// while the hostile ones are retried every second.
func TestOneSyncCannotTakeDownTheOthers(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	const syncNS = "olmsync-hostile"
	createNamespace(t, env, syncNS)

	ns := uniqueNS("healthy")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	healthy := newSync(t, env, syncNS, "healthy", srv.RepoURL(), nil)
	appliedAt(t, env, healthy, up.Head(t))

	var hostile []*olmsyncv1alpha1.Sync
	repos := hostileRepositories(t)
	for _, r := range repos {
		hu := gittest.NewUpstream(t, r.files)
		hs := gittest.Serve(t, hu, gittest.ServerOptions{})
		hostile = append(hostile, newSync(t, env, syncNS, r.name, hs.RepoURL(), nil))
	}
	for i, r := range repos {
		got := waitReady(t, env, hostile[i], metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)
		if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, r.says) {
			t.Errorf("Sync %s: Ready message %q does not say %q", r.name, msg, r.says)
		}
		olmtest.Eventually(t, "a Warning Event of Sync "+r.name, func() error {
			for _, e := range syncEvents(t, env, hostile[i]) {
				if strings.HasPrefix(e, "Warning "+olmsyncv1alpha1.BuildFailedReason+": ") && strings.Contains(e, r.says) {
					return nil
				}
			}
			return fmt.Errorf("events %q", syncEvents(t, env, hostile[i]))
		})
	}

	// The hostile Syncs are retried every second meanwhile: each build runs again.
	pushed := time.Now()
	next := up.Push(t, map[string]string{"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n"}, "debug")
	appliedAt(t, env, healthy, next)
	t.Logf("the healthy Sync applied its commit %s after the push, beside %d failing Syncs", time.Since(pushed).Round(time.Millisecond), len(hostile))
	if cm := object(t, env, configMapGVK, ns, "settings"); cm == nil || cm.Object["data"].(map[string]any)["level"] != "debug" {
		t.Errorf("ConfigMap settings = %v, want level debug", cm)
	}
	for i, r := range repos {
		got, err := getSync(env, hostile[i])
		if err != nil {
			t.Fatal(err)
		}
		if c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition); c == nil || c.Reason != olmsyncv1alpha1.BuildFailedReason {
			t.Errorf("Sync %s: Ready %+v after the healthy Sync's commit, want BuildFailed", r.name, c)
		}
		if got.Status.LastAppliedRevision != "" || got.Status.Inventory != nil && len(got.Status.Inventory.Entries) > 0 {
			t.Errorf("Sync %s applied %q (inventory %v)", r.name, got.Status.LastAppliedRevision, got.Status.Inventory)
		}
		// Retried every second, the same failure says the same: one Event, not one a retry
		// (the sandbox's message held the memory it measured, which differs at every run).
		// Not the amplified files': render plans their 16 apps at once, and which file
		// crosses the parse budget first, so what the message says, varies.
		if r.name == "amplified" {
			continue
		}
		var warnings []string
		for _, e := range syncEvents(t, env, hostile[i]) {
			if strings.HasPrefix(e, "Warning ") {
				warnings = append(warnings, e)
			}
		}
		if len(warnings) != 1 {
			t.Errorf("Sync %s: %d Warning Events, want 1:\n%s", r.name, len(warnings), strings.Join(warnings, "\n"))
		}
	}
}
