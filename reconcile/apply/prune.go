package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

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

	installedCSV string
}

// PruneError says which objects could not be deleted.
type PruneError struct {
	Failed []PruneResult
}

func (e *PruneError) Error() string {
	msgs := make([]string, 0, len(e.Failed))
	for _, f := range e.Failed {
		msgs = append(msgs, f.Message)
	}
	return fmt.Sprintf("prune failed for %d object(s): %s", len(e.Failed), strings.Join(msgs, "; "))
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
	var failed []PruneResult
	for _, e := range pruneOrder(stale) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := a.pruneOne(ctx, e, dryRun)
		out = append(out, r)
		if r.Action == PruneFailed {
			failed = append(failed, r)
		}
		if r.Action == Deleted && a.DeleteInstalledCSVs && r.installedCSV != "" {
			c := a.pruneInstalledCSV(ctx, e, r.installedCSV, dryRun)
			out = append(out, c)
			if c.Action == PruneFailed {
				failed = append(failed, c)
			}
		}
	}
	if len(failed) > 0 {
		return out, &PruneError{Failed: failed}
	}
	return out, nil
}

// pruneOrder is the reverse of the apply order: last stage first, and within the first
// stage cluster RBAC, then CRDs, then Namespaces. Entries of one kind keep their order.
func pruneOrder(stale []inventory.Entry) []inventory.Entry {
	ordered := slices.Clone(stale)
	slices.SortStableFunc(ordered, func(x, y inventory.Entry) int {
		sx, rx := StageOf(x.GroupKind())
		sy, ry := StageOf(y.GroupKind())
		return cmp.Or(cmp.Compare(sy, sx), cmp.Compare(ry, rx))
	})
	return ordered
}

func (a *Applier) pruneOne(ctx context.Context, e inventory.Entry, dryRun bool) PruneResult {
	live := e.Object()
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(live), live)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		// A kind no longer served (its CRD was pruned first) has no objects left either.
		return PruneResult{Entry: e, Action: Gone, Message: fmt.Sprintf("%s was already gone", e)}
	case err != nil:
		return PruneResult{Entry: e, Action: PruneFailed, Message: fmt.Sprintf("read %s: %v", e, err)}
	}
	labels := live.GetLabels()
	if labels[olmsyncv1alpha1.SyncNameLabel] != a.Owner.Name || labels[olmsyncv1alpha1.SyncNamespaceLabel] != a.Owner.Namespace {
		return PruneResult{Entry: e, Action: Kept, Message: fmt.Sprintf("%s kept: its labels no longer name Sync %s", e, a.Owner)}
	}
	if live.GetAnnotations()[olmsyncv1alpha1.PruneAnnotation] == olmsyncv1alpha1.PruneDisabled {
		return PruneResult{Entry: e, Action: Kept, Message: fmt.Sprintf("%s kept: %s is %q", e, olmsyncv1alpha1.PruneAnnotation, olmsyncv1alpha1.PruneDisabled)}
	}
	if live.GetDeletionTimestamp() != nil {
		return PruneResult{Entry: e, Action: Deleted, Message: fmt.Sprintf("%s is being deleted", e)}
	}
	r := a.deleteLive(ctx, e, live, dryRun)
	if e.GroupKind() == subscriptionKind {
		// Read before it goes: the CSV its operator runs as.
		r.installedCSV, _, _ = unstructured.NestedString(live.Object, "status", "installedCSV")
	}
	return r
}

// deleteLive deletes the very object that was read (a UID precondition).
func (a *Applier) deleteLive(ctx context.Context, e inventory.Entry, live *unstructured.Unstructured, dryRun bool) PruneResult {
	uid := live.GetUID()
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid}}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := a.Client.Delete(ctx, live, opts...)
	switch {
	case apierrors.IsNotFound(err):
		return PruneResult{Entry: e, Action: Gone, Message: fmt.Sprintf("%s was already gone", e)}
	case apierrors.IsConflict(err):
		// The UID precondition failed: the object was deleted and created again since it
		// was read. The new one is not known to be ours; the next reconcile looks again.
		return PruneResult{Entry: e, Action: Kept, Message: fmt.Sprintf("%s kept: it was replaced while being pruned", e)}
	case err != nil:
		return PruneResult{Entry: e, Action: PruneFailed, Message: fmt.Sprintf("delete %s: %v", e, err)}
	}
	if dryRun {
		return PruneResult{Entry: e, Action: Deleted, Message: fmt.Sprintf("%s would be deleted", e)}
	}
	return PruneResult{Entry: e, Action: Deleted, Message: fmt.Sprintf("%s deleted", e)}
}

var (
	subscriptionKind = schema.GroupKind{Group: olmGroup, Kind: "Subscription"}
	csvVersion       = "v1alpha1"
)

// pruneInstalledCSV deletes the CSV a pruned Subscription had installed, so that the
// operator goes with the Subscription that brought it (OLM keeps it; OLM's own cleanup
// of a deleted CSV — its cluster RBAC and copies, its namespaced objects through their
// owner references — then runs). It is kept when another Subscription of the namespace
// refers to it. The CSV goes after its Subscription: were it first, the Subscription
// would install it again.
func (a *Applier) pruneInstalledCSV(ctx context.Context, sub inventory.Entry, name string, dryRun bool) PruneResult {
	e := inventory.Entry{Namespace: sub.Namespace, Name: name, Group: olmGroup, Kind: "ClusterServiceVersion", Version: csvVersion}
	with := sub
	result := func(action PruneAction, format string, args ...any) PruneResult {
		return PruneResult{Entry: e, With: &with, Action: action, Message: fmt.Sprintf(format, args...)}
	}
	live := e.Object()
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(live), live)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return result(Gone, "%s of %s was already gone", e, sub)
	case err != nil:
		return result(PruneFailed, "read %s of %s: %v", e, sub, err)
	}
	subs := &unstructured.UnstructuredList{}
	subs.SetGroupVersionKind(schema.GroupVersionKind{Group: olmGroup, Version: csvVersion, Kind: "SubscriptionList"})
	if err := a.Client.List(ctx, subs, client.InNamespace(sub.Namespace)); err != nil {
		return result(PruneFailed, "list the Subscriptions beside %s: %v", e, err)
	}
	for _, other := range subs.Items {
		installed, _, _ := unstructured.NestedString(other.Object, "status", "installedCSV")
		current, _, _ := unstructured.NestedString(other.Object, "status", "currentCSV")
		if other.GetName() != sub.Name && other.GetDeletionTimestamp() == nil && (installed == name || current == name) {
			return result(Kept, "%s kept: Subscription %q refers to it too", e, other.GetName())
		}
	}
	if live.GetDeletionTimestamp() != nil {
		return result(Deleted, "%s is being deleted", e)
	}
	r := a.deleteLive(ctx, e, live, dryRun)
	r.With = &with
	r.Message += " with " + sub.String()
	return r
}
