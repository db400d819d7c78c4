package gitsync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// emptied are the changes that leave both apps of repository(ns) rendering nothing.
var emptied = map[string]string{
	"cluster-scope/namespace.yaml":     "",
	"cluster-scope/operatorgroup.yaml": "",
	"cluster-scope/kustomization.yaml": "resources: []\n",
	"team/configmap.yaml":              "",
	"team/kustomization.yaml":          "resources: []\n",
}

// waitEvent waits for an Event about the Sync that starts with prefix and holds every
// one of parts.
func waitEvent(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync, prefix string, parts ...string) {
	t.Helper()
	olmtest.Eventually(t, "an Event "+prefix, func() error {
		for _, e := range syncEvents(t, env, s) {
			if !strings.HasPrefix(e, prefix) {
				continue
			}
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(e, p)
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("events: %q", syncEvents(t, env, s))
	})
}

// TestEmptiedRevisionRefused: a revision whose apps render nothing would delete every
// object of the Sync. It is refused, as Argo CD refuses an empty sync: nothing is deleted,
// the inventory keeps the objects, Ready=False PruneRefused, status.lastPrune counts them as
// refused, and a Warning Event names them. With spec.pruneOptions.allowEmpty the same
// revision prunes them all, and says so (status.lastPrune, a Normal Event).
func TestEmptiedRevisionRefused(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("empty")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-empty")
	s := newSync(t, env, "olmsync-empty", ns, srv.RepoURL(), nil)
	appliedAt(t, env, s, up.Head(t))

	empty := up.Push(t, emptied, "empty every app")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PruneRefusedReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, "would delete all 3 objects of the Sync") || !strings.Contains(msg, "spec.pruneOptions.allowEmpty") || !strings.Contains(msg, empty) {
		t.Errorf("Ready message %q does not say what was refused, at which revision, and how to allow it", msg)
	}
	if object(t, env, configMapGVK, ns, "settings") == nil || object(t, env, operatorGroupGVK, ns, "og") == nil {
		t.Fatal("an emptied revision pruned objects")
	}
	if n := len(got.Status.Inventory.Entries); n != 3 {
		t.Errorf("the inventory holds %d entries, want the 3 objects not pruned: %+v", n, got.Status.Inventory.Entries)
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Refused != 3 || lp.Stale != 3 || lp.Deleted != 0 || !strings.HasSuffix(lp.Revision, empty) {
		t.Errorf("status.lastPrune = %+v, want 3 refused at %s", lp, empty)
	}
	waitEvent(t, env, s, "Warning PruneRefused: ", "would delete all 3 objects", `ConfigMap "`+ns+`/settings"`)

	patchSpec(t, env, got, func(spec *olmsyncv1alpha1.SyncSpec) { spec.PruneOptions.AllowEmpty = true })
	olmtest.Eventually(t, "everything pruned with allowEmpty", func() error {
		if object(t, env, configMapGVK, ns, "settings") != nil || object(t, env, operatorGroupGVK, ns, "og") != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	got = appliedAt(t, env, s, empty)
	if got.Status.Inventory != nil && len(got.Status.Inventory.Entries) > 0 {
		t.Errorf("the inventory still holds %+v", got.Status.Inventory.Entries)
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Deleted != 3 || lp.Refused != 0 || lp.Failed != 0 {
		t.Errorf("status.lastPrune = %+v, want 3 deleted", lp)
	}
	if c := conditions.Get(got, olmsyncv1alpha1.PruneFailedCondition); c != nil {
		t.Errorf("PruneFailed is still there: %+v", c)
	}
	waitEvent(t, env, s, "Normal Pruned: ", "3 deleted", `ConfigMap "`+ns+`/settings"`)
}

// TestMaxDeletions: a revision that would delete more objects than
// spec.pruneOptions.maxDeletions allows deletes none; one within the bound prunes.
func TestMaxDeletions(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("maxdel")
	extra := map[string]string{}
	for i := range 5 {
		extra[fmt.Sprintf("team/extra-%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-%d\n", i)
	}
	up := gittest.NewUpstream(t, with(repository(ns), extra))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-maxdel")
	s := newSync(t, env, "olmsync-maxdel", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.PruneOptions.MaxDeletions = ptr.To(intstr.FromString("40%")) // of 8 objects: 3
	})
	appliedAt(t, env, s, up.Head(t))

	four := up.Push(t, map[string]string{"team/extra-0.yaml": "", "team/extra-1.yaml": "", "team/extra-2.yaml": "", "team/extra-3.yaml": ""}, "remove four")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PruneRefusedReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, "would delete 4 of 8 objects, more than spec.pruneOptions.maxDeletions 40% allows (3)") {
		t.Errorf("Ready message %q", msg)
	}
	if object(t, env, configMapGVK, ns, "extra-0") == nil {
		t.Fatal("a refused prune deleted an object")
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Refused != 4 || !strings.HasSuffix(lp.Revision, four) {
		t.Errorf("status.lastPrune = %+v", lp)
	}

	three := up.Push(t, map[string]string{"team/extra-3.yaml": extra["team/extra-3.yaml"]}, "keep one of them")
	got = appliedAt(t, env, s, three)
	for i := range 3 {
		if object(t, env, configMapGVK, ns, fmt.Sprintf("extra-%d", i)) != nil {
			t.Errorf("extra-%d was not pruned", i)
		}
	}
	if object(t, env, configMapGVK, ns, "extra-3") == nil || object(t, env, configMapGVK, ns, "extra-4") == nil {
		t.Error("an object still rendered was pruned")
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Deleted != 3 || lp.Refused != 0 {
		t.Errorf("status.lastPrune = %+v, want 3 deleted", lp)
	}
}

// TestBranchMovedBackwards: a branch reset to a commit applied before is said in status
// (lastRevisionChange, Ready's message) and by a Warning Event; what the newer commits
// added is pruned, and counted. The fetches, the apply and the prune are logged at the
// default level, with the objects.
func TestBranchMovedBackwards(t *testing.T) {
	env := testenv.Get(t)
	logs := &logBuffer{}
	startManager(t, env, managerOptions{logger: funcr.New(logs.write, funcr.Options{Verbosity: 0})})
	ns := uniqueNS("backwards")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-backwards")
	s := newSync(t, env, "olmsync-backwards", ns, srv.RepoURL(), nil)
	old := up.Head(t)
	first := appliedAt(t, env, s, old)

	newer := up.Push(t, map[string]string{"team/newer.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: newer\n"}, "newer")
	got := appliedAt(t, env, s, newer)
	if c := got.Status.LastRevisionChange; c == nil || c.Relation != olmsyncv1alpha1.RevisionFastForward || c.From != first.Status.LastAppliedRevision {
		t.Errorf("status.lastRevisionChange = %+v, want a fast-forward from %s", c, first.Status.LastAppliedRevision)
	}
	applied := got.Status.LastAppliedRevision

	gittest.Git(t, up.Work, "reset", "-q", "--hard", old)
	up.PushRefs(t)
	got = appliedAt(t, env, s, old)
	want := olmsyncv1alpha1.RevisionChange{From: applied, To: first.Status.LastAppliedRevision, Relation: olmsyncv1alpha1.RevisionBackward}
	if c := got.Status.LastRevisionChange; c == nil || *c != want {
		t.Errorf("status.lastRevisionChange = %+v, want %+v", c, want)
	}
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, "non-fast-forward") || !strings.Contains(msg, "moved backwards") {
		t.Errorf("Ready message %q does not say the branch moved backwards", msg)
	}
	if object(t, env, configMapGVK, ns, "newer") != nil {
		t.Error("the newer commit's ConfigMap was not pruned")
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Deleted != 1 {
		t.Errorf("status.lastPrune = %+v, want 1 deleted", lp)
	}
	waitEvent(t, env, s, "Warning NonFastForward: ", "moved backwards", applied)

	newerCM := fmt.Sprintf(`"ConfigMap \"%s/newer\""`, ns) // as funcr quotes it
	for _, want := range [][]string{
		{`"msg"="fetched a new revision"`, newer},
		{`"msg"="applied"`, `"created"=[` + newerCM},
		{`"msg"="revision changed"`, `"relation"="Backward"`},
		{`"msg"="pruned"`, `"deleted"=[` + newerCM},
	} {
		if !logLine(logs.String(), want...) {
			t.Errorf("no log line holds %q:\n%s", want, logs)
		}
	}
}

// logLine reports whether one line of the log holds every part.
func logLine(log string, parts ...string) bool {
	for line := range strings.SplitSeq(log, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
