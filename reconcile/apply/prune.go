package apply

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// PruneAction is what prune did with one stale entry.
type PruneAction string

// The prune actions.
const (
	// Deleted: the object was deleted (or its deletion began).
	Deleted PruneAction = "Deleted"
	// Gone: the object was already gone.
	Gone PruneAction = "Gone"
	// Kept: the object was left in place: it opts out of prune, or no longer carries
	// this Sync's labels (another Sync, or a person, took it over).
	Kept PruneAction = "Kept"
	// PruneFailed: the API server refused the deletion.
	PruneFailed PruneAction = "Failed"
)

// PruneResult is what happened to one stale entry, or to the CSV a pruned Subscription
// installed (Applier.DeleteInstalledCSVs; its Entry is then not in the inventory).
type PruneResult struct {
	Entry   inventory.Entry
	Action  PruneAction
	Message string
	// With is, for the CSV of a pruned Subscription, that Subscription.
	With *inventory.Entry
}

// PruneError says which objects could not be deleted.
type PruneError struct {
	Failed []PruneResult
}

func (e *PruneError) Error() string {
	return failedFor("prune", e.Failed, func(r PruneResult) string { return r.Message })
}

// Prune deletes the stale entries (inventory.Inventory.Stale, which only a complete
// render yields), last stage first — custom resources before the Subscriptions whose
// operators serve them, Namespaces last. An object is deleted only while it still carries
// this Sync's labels and does not say olmsync.dev/prune: disabled, and only the very
// object that was read (a UID precondition), never one created again meanwhile. It returns
// every entry's outcome and a *PruneError when a deletion failed.
func (a *Applier) Prune(ctx context.Context, stale []inventory.Entry) ([]PruneResult, error) {
	return a.prune(ctx, stale, false)
}

// DryRunPrune reports what Prune would do, deleting nothing: the same checks, and each
// deletion sent as a dry run (so a deletion the API server would refuse is PruneFailed).
// Deleted then means the object would be deleted.
func (a *Applier) DryRunPrune(ctx context.Context, stale []inventory.Entry) ([]PruneResult, error) {
	return a.prune(ctx, stale, true)
}

func (a *Applier) prune(ctx context.Context, stale []inventory.Entry, dryRun bool) ([]PruneResult, error) {
	var out []PruneResult
	for _, e := range pruneOrder(stale) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, deleted := a.pruneOne(ctx, e, e.String(), dryRun, a.keep)
		out = append(out, r)
		if deleted == nil || !a.DeleteInstalledCSVs || e.GroupKind() != subscriptionKind {
			continue
		}
		// Read before it went: the CSV its operator runs as.
		if csv, _, _ := unstructured.NestedString(deleted.Object, "status", "installedCSV"); csv != "" {
			out = append(out, a.pruneInstalledCSV(ctx, e, csv, dryRun))
		}
	}
	if failed := slices.DeleteFunc(slices.Clone(out), func(r PruneResult) bool { return r.Action != PruneFailed }); len(failed) > 0 {
		return out, &PruneError{Failed: failed}
	}
	return out, nil
}

// pruneOrder is the reverse of the apply order: last stage first, and within the first
// stage cluster RBAC, then CRDs, then Namespaces. Entries of one kind keep their order.
func pruneOrder(stale []inventory.Entry) []inventory.Entry {
	ordered := slices.Clone(stale)
	slices.SortStableFunc(ordered, func(x, y inventory.Entry) int { return byStage(y.GroupKind(), x.GroupKind()) })
	return ordered
}

// keep says why a stale object must stay: it no longer carries this Sync's labels, or it
// opts out of prune.
func (a *Applier) keep(live *unstructured.Unstructured) (string, error) {
	labels := live.GetLabels()
	if labels[olmsyncv1alpha1.SyncNameLabel] != a.Owner.Name || labels[olmsyncv1alpha1.SyncNamespaceLabel] != a.Owner.Namespace {
		return fmt.Sprintf("its labels no longer name Sync %s", a.Owner), nil
	}
	if live.GetAnnotations()[olmsyncv1alpha1.PruneAnnotation] == olmsyncv1alpha1.PruneDisabled {
		return fmt.Sprintf("%s is %q", olmsyncv1alpha1.PruneAnnotation, olmsyncv1alpha1.PruneDisabled), nil
	}
	return "", nil
}

// pruneOne deletes the object of entry e (what names it in messages) unless it is gone,
// being deleted already, or keep says why it must stay; only the very object that was read
// (a UID precondition). It returns the object it deleted, nil when it deleted none.
func (a *Applier) pruneOne(ctx context.Context, e inventory.Entry, what string, dryRun bool, keep func(*unstructured.Unstructured) (string, error)) (PruneResult, *unstructured.Unstructured) {
	result := func(action PruneAction, format string, args ...any) PruneResult {
		return PruneResult{Entry: e, Action: action, Message: fmt.Sprintf(format, args...)}
	}
	live := e.Object()
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(live), live)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		// A kind no longer served (its CRD was pruned first) has no objects left either.
		return result(Gone, "%s was already gone", what), nil
	case err != nil:
		return result(PruneFailed, "read %s: %v", what, err), nil
	}
	switch why, err := keep(live); {
	case err != nil:
		return result(PruneFailed, "%s: %v", what, err), nil
	case why != "":
		return result(Kept, "%s kept: %s", what, why), nil
	case live.GetDeletionTimestamp() != nil:
		return result(Deleted, "%s is being deleted", what), nil
	}
	uid := live.GetUID()
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid}}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err = a.Client.Delete(ctx, live, opts...)
	switch {
	case apierrors.IsNotFound(err):
		return result(Gone, "%s was already gone", what), nil
	case apierrors.IsConflict(err):
		// The UID precondition failed: the object was deleted and created again since it
		// was read. The new one is not known to be ours; the next reconcile looks again.
		return result(Kept, "%s kept: it was replaced while being pruned", what), nil
	case err != nil:
		return result(PruneFailed, "delete %s: %v", what, err), nil
	case dryRun:
		return result(Deleted, "%s would be deleted", what), live
	}
	return result(Deleted, "%s deleted", what), live
}

// pruneInstalledCSV deletes the CSV a pruned Subscription had installed, so that the
// operator goes with the Subscription that brought it (OLM keeps it; OLM's own cleanup
// of a deleted CSV — its cluster RBAC and copies, its namespaced objects through their
// owner references — then runs). It is kept when another Subscription of the namespace
// refers to it. The CSV goes after its Subscription: were it first, the Subscription
// would install it again.
func (a *Applier) pruneInstalledCSV(ctx context.Context, sub inventory.Entry, name string, dryRun bool) PruneResult {
	e := inventory.Entry{Namespace: sub.Namespace, Name: name, Group: olmGroup, Kind: "ClusterServiceVersion", Version: "v1alpha1"}
	r, _ := a.pruneOne(ctx, e, fmt.Sprintf("%s of %s", e, sub), dryRun, func(*unstructured.Unstructured) (string, error) {
		subs := &unstructured.UnstructuredList{}
		subs.SetGroupVersionKind(schema.GroupVersionKind{Group: olmGroup, Version: "v1alpha1", Kind: "SubscriptionList"})
		if err := a.Client.List(ctx, subs, client.InNamespace(sub.Namespace)); err != nil {
			return "", fmt.Errorf("list the Subscriptions beside it: %w", err)
		}
		for _, other := range subs.Items {
			installed, _, _ := unstructured.NestedString(other.Object, "status", "installedCSV")
			current, _, _ := unstructured.NestedString(other.Object, "status", "currentCSV")
			if other.GetName() != sub.Name && other.GetDeletionTimestamp() == nil && (installed == name || current == name) {
				return fmt.Sprintf("Subscription %q refers to it too", other.GetName()), nil
			}
		}
		return "", nil
	})
	r.With = &sub
	return r
}
