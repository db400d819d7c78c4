package gitsync_test

import (
	"testing"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// TestStatusHistoryAndCommit: a Sync's status names the applied commit's subject and
// author (status.lastAppliedCommit) and keeps a history of its applies, newest first,
// each with its revision, result and duration, for the dashboard and `kubectl get -o yaml`.
func TestStatusHistoryAndCommit(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("history")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-history")
	s := newSync(t, env, "olmsync-history", ns, srv.RepoURL(), nil)
	first := up.Head(t)
	appliedAt(t, env, s, first)

	second := up.Push(t, map[string]string{"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n"}, "debug logging for the team\n\nto chase the outage")
	got := appliedAt(t, env, s, second)
	c := got.Status.LastAppliedCommit
	if c == nil || c.Subject != "debug logging for the team" || c.Author != "olmsync test" || c.Time == nil {
		t.Errorf("lastAppliedCommit = %+v, want the subject and author of %s", c, second)
	}
	h := got.Status.History
	if len(h) < 2 {
		t.Fatalf("history %+v, want an entry for each applied revision", h)
	}
	if h[0].Revision != "main@sha1:"+second || h[0].LastReconciledStatus != olmsyncv1alpha1.ReconciliationSucceededReason || !h[0].Applied || h[0].TotalReconciles < 1 {
		t.Errorf("newest history entry %+v, want %s applied and ReconciliationSucceeded", h[0], second)
	}
	found := false
	for _, e := range h[1:] {
		found = found || e.Revision == "main@sha1:"+first
	}
	if !found {
		t.Errorf("history %+v has no entry of the first revision %s", h, first)
	}
	if h[0].LastReconciled.Before(&h[len(h)-1].FirstReconciled) {
		t.Errorf("history not newest first: %+v", h)
	}
}
