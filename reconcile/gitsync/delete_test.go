package gitsync_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// TestDeleteSync: deleting a Sync with spec.prune deletes every object of its inventory
// (the Namespace last) before the finalizer lets the Sync go; with prune off, or while
// suspended, the Sync goes and its objects stay.
func TestDeleteSync(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	syncNS := "olmsync-delete"
	createNamespace(t, env, syncNS)
	for _, tc := range []struct {
		name     string
		prune    bool
		suspend  bool
		wantGone bool
	}{
		{name: "prune", prune: true, wantGone: true},
		{name: "no prune", prune: false},
		{name: "suspended", prune: true, suspend: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := uniqueNS("delete")
			up := gittest.NewUpstream(t, repository(ns))
			srv := gittest.Serve(t, up, gittest.ServerOptions{})
			s := newSync(t, env, syncNS, ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) { spec.Prune = tc.prune })
			applied := appliedAt(t, env, s, up.Head(t))
			if n := len(applied.Status.Inventory.Entries); n != 3 {
				t.Fatalf("inventory has %d entries, want the Namespace, the OperatorGroup and the ConfigMap: %+v", n, applied.Status.Inventory.Entries)
			}
			if tc.suspend {
				patchSpec(t, env, applied, func(spec *olmsyncv1alpha1.SyncSpec) { spec.Suspend = true })
				waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.SuspendedReason)
			}

			if err := env.Client.Delete(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			olmtest.Eventually(t, "the Sync gone", func() error {
				got, err := getSync(env, s)
				if apierrors.IsNotFound(err) {
					return nil
				}
				if err != nil {
					return err
				}
				return fmt.Errorf("still there: finalizers %v, conditions %+v", got.Finalizers, got.Status.Conditions)
			})

			nsGVK := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
			objects := []struct {
				gvk       schema.GroupVersionKind
				ns, name  string
				namespace bool
			}{
				{configMapGVK, ns, "settings", false},
				{operatorGroupGVK, ns, "og", false},
				{nsGVK, "", ns, true},
			}
			for _, o := range objects {
				live := object(t, env, o.gvk, o.ns, o.name)
				switch {
				case !tc.wantGone && (live == nil || live.GetDeletionTimestamp() != nil):
					t.Errorf("%s %s/%s was deleted with the Sync", o.gvk.Kind, o.ns, o.name)
				case tc.wantGone && o.namespace && (live != nil && live.GetDeletionTimestamp() == nil):
					// envtest runs no namespace controller: a deleted Namespace stays
					// Terminating.
					t.Errorf("Namespace %s was not deleted with the Sync", o.name)
				case tc.wantGone && !o.namespace && live != nil:
					// OLM may hold an OperatorGroup a moment for its own cleanup.
					if live.GetDeletionTimestamp() == nil {
						t.Errorf("%s %s/%s was not deleted with the Sync", o.gvk.Kind, o.ns, o.name)
					}
				}
			}
		})
	}
}
