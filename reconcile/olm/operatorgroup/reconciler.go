package operatorgroup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm/applier"
	"github.com/olmsync/olmsync/reconcile/olm/patcher"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "operatorgroup"

// The condition olmsync adds where OLM has none: a ClusterRole of the name a group's role
// must have exists and is not the group's (docs/olm.md). With OLM's hashed names only a role
// someone made with that very name does this.
const (
	ConditionClusterRoleConflict = "ClusterRoleConflict"
	ReasonClusterRoleOwned       = "ClusterRoleOwnedByAnotherGroup"
)

// OLM's messages for the group conditions, verbatim.
const (
	messageMultipleGroups = "Multiple OperatorGroup found in the same namespace"
)

// Options are the settings of the OperatorGroup controller.
type Options struct {
	// ResyncInterval is how often a settled group is looked at again; 0 means never.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many OperatorGroups are reconciled at once (1 when 0).
	MaxConcurrentReconciles int
	// Written are the manager's controllers' writes the cache may not show yet (shared by
	// them): the group's ClusterRoles are read through it and remembered in it. Nil
	// remembers nothing.
	Written *written.Objects
}

// Reconciler reconciles OperatorGroups.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads straight from the API server (required) the ClusterRoles a
	// label-filtered cache does not show. The group being reconciled is read from the cache:
	// its status write carries the resourceVersion read (patcher), so a copy older than the
	// controller's last status write is refused instead of leaving what that write put there
	// (a condition or service account reference the sync removes, or targets it sets back,
	// would be no difference and stay).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Options   Options

	// superseded is, per group, what its last write here made of it: a sync that reads an
	// older copy from the cache stops before computing writes the API server would refuse.
	superseded patcher.Superseded

	// ownerIndexed says that Client's cache indexes ClusterRoles by their owning group
	// (indexOwner), as SetupWithManager registers: a group's roles are then looked up, not
	// matched among all.
	ownerIndexed bool
}

// step is one named step of a sync; done ends the sync after it.
type step struct {
	name string
	run  func(ctx context.Context, og *operatorsv1.OperatorGroup) (done bool, err error)
}

// Reconcile brings one group's status and generated objects up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	og := &operatorsv1.OperatorGroup{}
	if err := r.Client.Get(ctx, req.NamespacedName, og); err != nil {
		if apierrors.IsNotFound(err) {
			r.superseded.Forget(req.NamespacedName)
			return reconcile.Result{}, r.cleanup(ctx, req.Namespace, req.Name)
		}
		return reconcile.Result{}, err
	}
	if r.superseded.Stale(req.NamespacedName, og.ResourceVersion) {
		// The cache has not caught up with this controller's last write of the group: its
		// status write would be refused. The event of the version written syncs it (the
		// group watch filters no update).
		log.FromContext(ctx).V(1).Info("operatorgroup read older than the last write; its next event syncs it", "resourceVersion", og.ResourceVersion)
		return reconcile.Result{}, nil
	}
	read := og.ResourceVersion
	writer := patcher.New(og, r.Client)
	defer func() {
		if og.Status.LastUpdated == nil && !statusEmpty(og.Status) {
			// The CRD requires it in any status; a sync stopped before the target step (a
			// missing service account) has not set it yet. A status with nothing to say
			// (a selector matching no namespace) is not written at all, as OLM leaves it.
			now := metav1.Now()
			og.Status.LastUpdated = &now
		}
		err := writer.Patch(ctx, og)
		switch {
		case patcher.IsStale(err):
			// The cache had not caught up with the group: nothing was written, and the
			// event of the newer version syncs it again (the group watch filters no update).
			log.FromContext(ctx).V(1).Info("operatorgroup changed since read; its next event syncs it", "error", err.Error())
		case err != nil && !apierrors.IsNotFound(err):
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patch operatorgroup %s/%s: %w", og.Namespace, og.Name, err)})
		case err == nil:
			r.superseded.Wrote(req.NamespacedName, read, og.ResourceVersion)
		}
	}()
	steps := []step{
		{"multiple groups", r.checkMultipleGroups},
		{"service account", r.checkServiceAccount},
		{"target namespaces", r.updateTargets},
		{"namespace labels", r.labelNamespaces},
		{"cluster roles", r.ensureClusterRoles},
		{"provided apis", r.pruneProvidedAPIs},
	}
	for _, s := range steps {
		done, err := s.run(ctx, og)
		if err != nil {
			var invalid *groups.NamespaceAllInTargetsError
			if errors.As(err, &invalid) {
				return reconcile.Result{}, reconcile.TerminalError(err)
			}
			return reconcile.Result{}, fmt.Errorf("operatorgroup %s/%s: %s: %w", og.Namespace, og.Name, s.name, err)
		}
		if done {
			break
		}
	}
	return reconcile.Result{RequeueAfter: r.Options.ResyncInterval}, nil
}

// statusEmpty reports whether a group's status says nothing: no targets, service account or
// condition.
func statusEmpty(s operatorsv1.OperatorGroupStatus) bool {
	return len(s.Namespaces) == 0 && s.ServiceAccountRef == nil && len(s.Conditions) == 0
}

// checkMultipleGroups sets MultipleOperatorGroup on every group of a namespace that holds more
// than one, and removes it once one is left.
func (r *Reconciler) checkMultipleGroups(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	var list operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &list, client.InNamespace(og.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list operatorgroups: %w", err)
	}
	if len(list.Items) > 1 {
		r.setCondition(og, operatorsv1.MultipleOperatorGroupCondition, operatorsv1.MultipleOperatorGroupsReason, messageMultipleGroups)
	} else {
		apimeta.RemoveStatusCondition(&og.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition)
	}
	return false, nil
}

// checkServiceAccount reports a group's missing service account and stops the sync there, as
// OLM does; a present one is referenced from the status.
func (r *Reconciler) checkServiceAccount(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	var sa *corev1.ServiceAccount
	if name := og.Spec.ServiceAccountName; name != "" {
		sa = &corev1.ServiceAccount{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: og.Namespace, Name: name}, sa)
		switch {
		case apierrors.IsNotFound(err):
			sa = nil
		case err != nil:
			return false, fmt.Errorf("get serviceaccount %s: %w", name, err)
		}
	}
	check := groups.CheckServiceAccount(og, sa)
	if check.Missing {
		r.setCondition(og, operatorsv1.OperatorGroupServiceAccountCondition, operatorsv1.OperatorGroupServiceAccountReason, check.Message)
		return true, nil
	}
	apimeta.RemoveStatusCondition(&og.Status.Conditions, operatorsv1.OperatorGroupServiceAccountCondition)
	og.Status.ServiceAccountRef = check.Ref
	if sa != nil && sa.Labels[groups.ManagedLabel] != groups.ManagedLabelValue {
		// OLM's catalog operator labels the service account a group names as its own
		// (its ownership labeller), as it labels everything it manages.
		patch := client.MergeFrom(sa.DeepCopy())
		if sa.Labels == nil {
			sa.Labels = map[string]string{}
		}
		sa.Labels[groups.ManagedLabel] = groups.ManagedLabelValue
		if err := r.Client.Patch(ctx, sa, patch); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("label serviceaccount %s: %w", sa.Name, err)
		}
	}
	return false, nil
}

// updateTargets writes the group's target namespaces to status.namespaces, and lastUpdated with
// them, when the set changed. A group listing "" among spec.targetNamespaces is refused and
// its status left as it is (OLM's rule); the Warning Event says why.
func (r *Reconciler) updateTargets(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	var list corev1.NamespaceList
	// Read only: the cache's own objects, not copies of every namespace per sync.
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list namespaces: %w", err)
	}
	targets, err := groups.TargetNamespaces(og, list.Items)
	if err != nil {
		var invalid *groups.NamespaceAllInTargetsError
		if errors.As(err, &invalid) && r.Recorder != nil {
			r.Recorder.Eventf(og, nil, corev1.EventTypeWarning, "InvalidTargetNamespaces", "Sync", "%s", invalid.Message())
		}
		return true, err
	}
	current := slices.Clone(og.Status.Namespaces)
	slices.Sort(current)
	if !slices.Equal(current, targets) {
		og.Status.Namespaces = targets
		now := metav1.Now()
		og.Status.LastUpdated = &now
	}
	return false, nil
}

// labelNamespaces puts olm.operatorgroup.uid/<uid> on every target namespace of a non-global
// group and takes it off every other namespace.
func (r *Reconciler) labelNamespaces(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	key := operatorsv1.OperatorGroupLabelPrefix + string(og.UID)
	targets := map[string]bool{}
	if !groups.IsAllNamespaces(og.Status.Namespaces) {
		for _, ns := range og.Status.Namespaces {
			targets[ns] = true
		}
	}
	var list corev1.NamespaceList
	// The cache's own objects: only a namespace to relabel is copied.
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list namespaces: %w", err)
	}
	for i := range list.Items {
		ns := &list.Items[i]
		_, has := ns.Labels[key]
		if has == targets[ns.Name] || !ns.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.setNamespaceLabel(ctx, ns.DeepCopy(), key, targets[ns.Name]); err != nil {
			return false, err
		}
	}
	return false, nil
}

func (r *Reconciler) setNamespaceLabel(ctx context.Context, ns *corev1.Namespace, key string, present bool) error {
	before := ns.DeepCopy()
	if present {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[key] = ""
	} else {
		delete(ns.Labels, key)
	}
	if err := r.Client.Patch(ctx, ns, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("label namespace %s: %w", ns.Name, err)
	}
	return nil
}

// ensureClusterRoles keeps the group's admin, edit and view ClusterRoles, named and
// aggregating as OLM's code does (groups.GroupClusterRoles): unique per group, so groups of
// the same name in different namespaces each have theirs. A role of that name that is not
// the group's (made by someone else) is never touched; ClusterRoleConflict and a Warning
// Event say which. Roles the group owns under other names — the seed's <group>-admin, -edit
// and -view that olmsync wrote before it followed OLM's names — are deleted.
func (r *Reconciler) ensureClusterRoles(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	var csvs v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &csvs, client.InNamespace(og.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list csvs: %w", err)
	}
	a := &applier.Applier{Client: r.Client, APIReader: r.APIReader, Written: r.Options.Written}
	var conflicts []string
	desired := groups.GroupClusterRoles(og, groups.GroupRoleAPIs(og, csvs.Items))
	for _, role := range desired {
		conflict, err := r.clusterRoleConflict(ctx, og, &role)
		if err != nil {
			return false, err
		}
		if conflict != "" {
			conflicts = append(conflicts, conflict)
			continue
		}
		if err := a.ApplyClusterRole(ctx, &role); err != nil {
			return false, err
		}
	}
	if err := r.deleteRenamedClusterRoles(ctx, og, desired); err != nil {
		return false, err
	}
	if len(conflicts) > 0 {
		message := strings.Join(conflicts, "; ")
		if r.setCondition(og, ConditionClusterRoleConflict, ReasonClusterRoleOwned, message) && r.Recorder != nil {
			r.Recorder.Eventf(og, nil, corev1.EventTypeWarning, ReasonClusterRoleOwned, "Sync", "%s", message)
		}
	} else {
		apimeta.RemoveStatusCondition(&og.Status.Conditions, ConditionClusterRoleConflict)
	}
	return false, nil
}

// deleteRenamedClusterRoles deletes the ClusterRoles the group owns (its owner labels) that
// are none of its current roles. It reads the cache, which holds every ClusterRole an
// OperatorGroup owns (olm.CacheByObject): no request to the API server per sync, and, through
// the owner index, no look at every other group's roles.
func (r *Reconciler) deleteRenamedClusterRoles(ctx context.Context, og *operatorsv1.OperatorGroup, current []rbacv1.ClusterRole) error {
	var owned rbacv1.ClusterRoleList
	opts := []client.ListOption{ownedBy(og.Namespace, og.Name)}
	if r.ownerIndexed {
		opts = append(opts, client.MatchingFields{indexOwner: groups.OwnerKey(operatorsv1.OperatorGroupKind, og.Namespace, og.Name)})
	}
	if err := r.Client.List(ctx, &owned, opts...); err != nil {
		return fmt.Errorf("list clusterroles of operatorgroup %s/%s: %w", og.Namespace, og.Name, err)
	}
	keep := map[string]bool{}
	for _, c := range current {
		keep[c.Name] = true
	}
	for i := range owned.Items {
		if keep[owned.Items[i].Name] {
			continue
		}
		if err := r.Client.Delete(ctx, &owned.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete clusterrole %s: %w", owned.Items[i].Name, err)
		}
	}
	return nil
}

// ownedBy selects what a group owns by the owner labels OLM puts on it.
func ownedBy(namespace, name string) client.MatchingLabels {
	return client.MatchingLabels{
		groups.OwnerLabel:          groups.LabelValue(name),
		groups.OwnerNamespaceLabel: namespace,
		groups.OwnerKindLabel:      operatorsv1.OperatorGroupKind,
	}
}

// clusterRoleConflict creates the group's role when it does not exist, and otherwise says why
// the existing one is not the group's to update ("" when it is).
func (r *Reconciler) clusterRoleConflict(ctx context.Context, og *operatorsv1.OperatorGroup, desired *rbacv1.ClusterRole) (string, error) {
	existing := &rbacv1.ClusterRole{}
	err := r.Options.Written.Get(ctx, r.Client, client.ObjectKey{Name: desired.Name}, existing)
	if apierrors.IsNotFound(err) {
		created := desired.DeepCopy()
		var ran bool
		ran, err = r.Options.Written.Create(ctx, created, func() error { return r.Client.Create(ctx, created) })
		if err == nil && ran {
			return "", nil
		}
		if err == nil {
			// Another worker created it at this moment: read what it wrote.
			err = r.Options.Written.Get(ctx, r.Client, client.ObjectKey{Name: desired.Name}, existing)
		}
		if apierrors.IsAlreadyExists(err) {
			// It exists out of the cache's sight (a label-filtered cache): ask the API server.
			if err = r.APIReader.Get(ctx, client.ObjectKey{Name: desired.Name}, existing); err == nil {
				r.Options.Written.Wrote(existing, "")
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("clusterrole %s: %w", desired.Name, err)
	}
	l := existing.Labels
	switch {
	case l[groups.OwnerKindLabel] != operatorsv1.OperatorGroupKind:
		return fmt.Sprintf("ClusterRole %s exists and belongs to no OperatorGroup", desired.Name), nil
	case l[groups.OwnerNamespaceLabel] != og.Namespace || l[groups.OwnerLabel] != groups.LabelValue(og.Name):
		return fmt.Sprintf("ClusterRole %s belongs to OperatorGroup %s/%s", desired.Name, l[groups.OwnerNamespaceLabel], l[groups.OwnerLabel]), nil
	}
	return "", nil
}

// pruneProvidedAPIs removes from the group's olm.providedAPIs the APIs no CSV of its namespace
// provides any more (groups.PruneProvidedAPIs). The write fails on a concurrent change of the
// group, so that an API a CSV just added is never pruned from a stale view.
func (r *Reconciler) pruneProvidedAPIs(ctx context.Context, og *operatorsv1.OperatorGroup) (bool, error) {
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(og.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list csvs: %w", err)
	}
	prune := groups.PruneProvidedAPIs(og, list.Items)
	if prune.WaitingFor != "" {
		log.FromContext(ctx).V(1).Info("not pruning provided apis while a csv installs", "csv", prune.WaitingFor)
	}
	if !prune.Changed {
		return false, nil
	}
	// The patch carries the resourceVersion the sync started from, so that a concurrent change
	// fails it. og itself keeps the old annotations (the deferred status patch must not touch
	// metadata) but takes the new resourceVersion, which the status patch is made under.
	base := og.DeepCopy()
	updated := og.DeepCopy()
	updated.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = prune.ProvidedAPIs
	err := r.Client.Patch(ctx, updated, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		// The group changed since read (the cache lagging, or a CSV adding its APIs): the
		// newer version's event syncs it again; its status patch is refused too.
		log.FromContext(ctx).V(1).Info("operatorgroup changed since read; not pruning from a stale view")
		return true, nil
	case err != nil:
		return false, fmt.Errorf("prune %s: %w", operatorsv1.OperatorGroupProvidedAPIsAnnotationKey, err)
	}
	og.ResourceVersion = updated.ResourceVersion
	return false, nil
}

// setCondition sets a True condition with a stable message, and reports whether it changed.
func (r *Reconciler) setCondition(og *operatorsv1.OperatorGroup, conditionType, reason, message string) bool {
	return apimeta.SetStatusCondition(&og.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: og.Generation, LastTransitionTime: metav1.Now(),
	})
}

// cleanup removes what a deleted group left: its ClusterRoles, and the namespace labels of
// groups that no longer exist.
func (r *Reconciler) cleanup(ctx context.Context, namespace, name string) error {
	err := r.Client.DeleteAllOf(ctx, &rbacv1.ClusterRole{}, ownedBy(namespace, name))
	if err != nil {
		return fmt.Errorf("delete clusterroles of operatorgroup %s/%s: %w", namespace, name, err)
	}
	return r.removeStaleNamespaceLabels(ctx)
}

// removeStaleNamespaceLabels takes olm.operatorgroup.uid/<uid> labels off namespaces when no
// group of that UID exists.
func (r *Reconciler) removeStaleNamespaceLabels(ctx context.Context) error {
	var ogs operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &ogs, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list operatorgroups: %w", err)
	}
	live := map[string]bool{}
	for i := range ogs.Items {
		live[operatorsv1.OperatorGroupLabelPrefix+string(ogs.Items[i].UID)] = true
	}
	var list corev1.NamespaceList
	// The cache's own objects: only a namespace to relabel is copied.
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list namespaces: %w", err)
	}
	for i := range list.Items {
		var stale []string
		for key := range list.Items[i].Labels {
			if strings.HasPrefix(key, operatorsv1.OperatorGroupLabelPrefix) && !live[key] && list.Items[i].DeletionTimestamp.IsZero() {
				stale = append(stale, key)
			}
		}
		if len(stale) == 0 {
			continue
		}
		ns := list.Items[i].DeepCopy()
		for _, key := range stale {
			if err := r.setNamespaceLabel(ctx, ns, key, false); err != nil {
				return err
			}
		}
	}
	return nil
}
