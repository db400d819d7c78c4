package csv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
)

// ensureAPILabels puts OLM's olm.api.<hash>: provided label on the CSV for each API it
// provides, so that a group's change can find the CSVs that provide its APIs. A CSV whose
// owned CRD name has no dot cannot be processed at all (OLM stops there too).
func (r *Reconciler) ensureAPILabels(_ context.Context, obj *v1alpha1.ClusterServiceVersion, _ *state) error {
	labels, err := groups.ProvidedAPILabels(obj)
	if err != nil {
		return &terminalError{err: err}
	}
	for k, v := range labels {
		if obj.Labels[k] != v {
			if obj.Labels == nil {
				obj.Labels = map[string]string{}
			}
			obj.Labels[k] = v
		}
	}
	return nil
}

// checkGroups runs the OperatorGroup checks (groups.Evaluate): it writes the membership
// annotations on the CSV and the group's new olm.providedAPIs, and keeps the outcome for the
// phase step, which applies a failure.
func (r *Reconciler) checkGroups(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	var list operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list operatorgroups: %w", err)
	}
	pending, err := r.groupPending(ctx, obj, list.Items)
	if err != nil || pending {
		s.stop = pending
		return err
	}
	ev, err := groups.Evaluate(obj, list.Items)
	if err != nil {
		return &terminalError{err: err}
	}
	s.evaluation = ev
	if ev.Skipped != "" {
		s.stop = true
		return nil
	}
	if ev.Membership.Group != nil && ev.Membership.AnnotationsDiffer(obj) {
		if obj.Annotations == nil {
			obj.Annotations = map[string]string{}
		}
		maps.Copy(obj.Annotations, ev.Membership.Annotations)
	}
	if ev.GroupAnnotationChanged {
		stale, err := r.writeProvidedAPIs(ctx, ev.Membership.Group, ev.GroupProvidedAPIs)
		s.stop = stale
		return err
	}
	return nil
}

// groupPending reports whether the CSV's namespace has one group whose controller has not yet
// written the targets its spec selects: the CSV waits for it (the group's status update wakes
// it up) rather than fail with NoTargetNamespaces.
func (r *Reconciler) groupPending(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, ogs []operatorsv1.OperatorGroup) (bool, error) {
	var mine []*operatorsv1.OperatorGroup
	for i := range ogs {
		if ogs[i].Namespace == obj.Namespace {
			mine = append(mine, &ogs[i])
		}
	}
	if len(mine) != 1 || len(mine[0].Status.Namespaces) > 0 {
		return false, nil
	}
	var namespaces corev1.NamespaceList
	if err := r.Client.List(ctx, &namespaces, client.UnsafeDisableDeepCopy); err != nil { // read only
		return false, fmt.Errorf("list namespaces: %w", err)
	}
	pending := groups.TargetsPending(mine[0], namespaces.Items)
	if pending {
		log.FromContext(ctx).V(1).Info("waiting for the operatorgroup to resolve its target namespaces", "operatorgroup", mine[0].Name)
	}
	return pending, nil
}

// writeProvidedAPIs sets a group's olm.providedAPIs under the resourceVersion it was read at.
// A concurrent change of the group (another member adding its APIs, or a cache behind it)
// refuses the write: stale says so, and the sync stops there — the newer group's event
// queues the namespace's CSVs (groupEvents), which sync again from what the other writer left.
func (r *Reconciler) writeProvidedAPIs(ctx context.Context, og *operatorsv1.OperatorGroup, value string) (stale bool, err error) {
	current := og.DeepCopy()
	updated := current.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = value
	err = r.Client.Patch(ctx, updated, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("operatorgroup changed since read; its newer version syncs this csv again", "operatorgroup", og.Namespace+"/"+og.Name)
		return true, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("update %s of operatorgroup %s/%s: %w", operatorsv1.OperatorGroupProvidedAPIsAnnotationKey, og.Namespace, og.Name, err)
	}
	log.FromContext(ctx).V(1).Info("updated operatorgroup provided apis", "operatorgroup", og.Namespace+"/"+og.Name, "providedAPIs", value)
	return false, nil
}

// readCSVs reads the CSVs of the namespace once for the steps that follow, and where this CSV
// stands in their replacement chain.
func (r *Reconciler) readCSVs(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list csvs: %w", err)
	}
	s.csvs = list.Items
	s.replacement = phase.ReplacementOf(obj, s.csvs)
	s.strategy = install.Validate(obj)
	return nil
}

// ensurePermissions creates or updates the service accounts and RBAC of the install strategy
// before the requirements are checked: OLM leaves this to the InstallPlan, olmsync's CSV does
// it itself so that a CSV applied straight from Git installs (docs/olm.md). It runs for an
// active member of its group whose strategy can run, from Pending on, and not once a newer CSV
// replaces it (the newer one owns the shared service accounts from then on).
func (r *Reconciler) ensurePermissions(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	if s.evaluation.Transition != nil || s.strategy != nil || s.replacement.ReplacedBy != nil {
		return nil
	}
	switch obj.Status.Phase {
	case v1alpha1.CSVPhasePending, v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVPhaseInstalling,
		v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVPhaseFailed:
	default:
		return nil
	}
	perms, err := install.PermissionsFor(obj)
	if err != nil {
		return &terminalError{err: err}
	}
	chain := phase.ReplacementChain(obj, s.csvs)
	if err := r.applier().EnsurePermissions(ctx, obj, perms, func(owner string) bool { return chain[owner] }); err != nil {
		return err
	}
	s.applied = &perms
	return nil
}

// transition gathers the facts, asks the phase machine what comes next and does it.
func (r *Reconciler) transition(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	facts, err := r.facts(ctx, obj, s)
	if err != nil {
		return err
	}
	d := phase.Next(obj, facts)
	if d.DeleteDeployments {
		if err := r.applier().DeleteDeployments(ctx, obj); err != nil {
			return err
		}
	}
	if d.Install {
		err := r.installStrategy(ctx, obj, s)
		if err != nil {
			log.FromContext(ctx).Error(err, "install strategy failed")
		}
		t := phase.AfterInstall(err)
		d.Transition = &t
	}
	if d.WriteRequirements {
		obj.Status.RequirementStatus = d.Requirements
	}
	if d.Transition != nil {
		r.setPhase(obj, *d.Transition, s)
	}
	// d.CountUpgrade is counted by Reconcile once the status write of the Replacing phase
	// lands: a write that fails and is retried must not count the same upgrade twice.
	if d.Wait != "" {
		log.FromContext(ctx).V(1).Info("waiting", "reason", d.Wait)
	}
	s.requeue(d.RequeueAfter)
	if facts.APIServicesMissing {
		// The API server's availability check of an APIService wakes nothing up here.
		s.requeue(r.retryInterval())
	}
	if !s.rotateAt.IsZero() {
		// OLM notices a certificate due for rotation at its next resync; look at it when
		// it is due.
		s.requeue(max(time.Until(s.rotateAt), time.Second))
	}
	switch {
	case errors.Is(d.Err, phase.ErrNoReplacement):
		// Nothing to retry until a CSV replaces this one again; its creation wakes this one up.
		log.FromContext(ctx).Info(d.Err.Error())
	case d.Err != nil:
		return d.Err
	}
	if d.Delete {
		s.stop = true
		if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete replaced csv: %w", err)
		}
	}
	return nil
}
