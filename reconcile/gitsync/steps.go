package gitsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/health"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
)

// build renders and checks the revision with the code `olmsync check` runs (step 2). The
// findings go into status.violations and the PolicyViolation condition whatever else
// happens; a revision that did not build completely (an app, olmsync.yaml, a user rule)
// ends the pipeline, and nothing is applied or pruned.
func (r *Reconciler) build(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error {
	if !p.due {
		p.build = p.last.build
		return nil
	}
	pb, err := r.postBuild(ctx, obj)
	if err != nil {
		return err
	}
	opts := r.Options.Check
	if opts.Render.Decryption, err = r.decryption(ctx, obj); err != nil {
		return err
	}
	b, err := BuildRevision(ctx, p.tree, obj, opts, pb)
	if err != nil {
		return err
	}
	p.build = b
	obj.Status.Violations, obj.Status.ViolationCount = b.StatusViolations()
	if msg := b.PolicyMessage(); msg != "" {
		conditions.MarkTrue(obj, olmsyncv1alpha1.PolicyViolationCondition, olmsyncv1alpha1.PolicyViolationReason, "%s", msg)
	} else {
		conditions.Delete(obj, olmsyncv1alpha1.PolicyViolationCondition)
	}
	if !b.Complete() {
		obj.Status.Apps = unbuiltApps(b, obj.Status.Apps)
		verb := "did not build"
		if b.IncompleteReason() == olmsyncv1alpha1.PluginSkippedReason {
			verb = "built without a generator whose plugin is off"
		}
		conditions.MarkTrue(obj, olmsyncv1alpha1.BuildFailedCondition, b.IncompleteReason(),
			"revision %s %s, so nothing was applied or pruned: %s", b.Revision, verb, b.ProblemMessage())
		return waiting("build: %s", b.ProblemMessage())
	}
	conditions.Delete(obj, olmsyncv1alpha1.BuildFailedCondition)
	return nil
}

// postBuild reads what the Sync adds to its apps after the build; its ConfigMaps and
// Secrets are read as the Sync's service account when it names one. A variable source
// that cannot be read fails the build: nothing is applied or pruned.
func (r *Reconciler) postBuild(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*render.PostBuild, error) {
	reader := r.APIReader
	if obj.Spec.PostBuild != nil && len(obj.Spec.PostBuild.SubstituteFrom) > 0 {
		var err error
		if reader, err = VariablesReader(ctx, r.Config, r.Client, r.APIReader, obj); err != nil {
			return nil, r.clientError(obj, err)
		}
	}
	pb, err := PostBuildFor(ctx, reader, obj, r.Options.StrictSubstitute)
	var serr *SubstituteError
	if errors.As(err, &serr) {
		conditions.MarkTrue(obj, olmsyncv1alpha1.BuildFailedCondition, olmsyncv1alpha1.SubstituteFailedReason,
			"%s; nothing was applied or pruned", serr)
		return nil, waiting("build: %s", serr)
	}
	return pb, err
}

// decryption reads the age identities of spec.decryption's Secret, as the Sync's service
// account when it names one. A Secret that cannot be read fails the build as Flux's does
// (BuildFailed): nothing is applied or pruned.
func (r *Reconciler) decryption(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*render.Decryption, error) {
	if obj.Spec.Decryption == nil {
		return nil, nil
	}
	reader, err := VariablesReader(ctx, r.Config, r.Client, r.APIReader, obj)
	if err != nil {
		return nil, r.clientError(obj, err)
	}
	dec, err := DecryptionFor(ctx, reader, obj)
	var derr *DecryptionError
	if errors.As(err, &derr) {
		conditions.MarkTrue(obj, olmsyncv1alpha1.BuildFailedCondition, olmsyncv1alpha1.BuildFailedReason,
			"%s; nothing was applied or pruned", derr)
		return nil, waiting("build: %s", derr)
	}
	return dec, err
}

// unbuiltApps is status.apps after a build that failed: apps that did not render are
// Unknown with their error; the others keep what the last reconcile said of them, or are
// Unknown when it said nothing.
func unbuiltApps(b *Build, before []olmsyncv1alpha1.AppStatus) []olmsyncv1alpha1.AppStatus {
	prev := map[string]olmsyncv1alpha1.AppStatus{}
	for _, a := range before {
		prev[a.Name] = a
	}
	out := make([]olmsyncv1alpha1.AppStatus, 0, len(b.Apps))
	for _, a := range b.Apps {
		st, ok := prev[a.Name]
		switch {
		case a.Err != nil:
			st = olmsyncv1alpha1.AppStatus{Name: a.Name, Path: a.Path, Namespace: a.Namespace,
				Sync: olmsyncv1alpha1.SyncStatusUnknown, Health: health.Unknown, Message: a.Err.Error()}
		case !ok:
			st = olmsyncv1alpha1.AppStatus{Name: a.Name, Path: a.Path, Namespace: a.Namespace, Objects: len(a.Objects),
				Sync: olmsyncv1alpha1.SyncStatusUnknown, Health: health.Unknown, Message: "not applied: the revision did not build"}
		}
		out = append(out, st)
	}
	return out
}

// apply applies the objects in stages with server-side apply (step 3), as the Sync's
// service account when it names one. It runs only when due (see applyDue); otherwise the
// last apply's results stand and only health is looked at.
func (r *Reconciler) apply(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error {
	c, err := r.clientFor(ctx, obj)
	if err != nil {
		return err
	}
	p.client = c
	if !p.due {
		p.applied = p.last.applied
		return nil
	}
	objs := p.build.Objects()
	if err := RefuseEncrypted(objs); err != nil {
		// Applied as it is, the Secret would hold ciphertext: nothing is applied (Flux).
		conditions.MarkTrue(obj, olmsyncv1alpha1.ApplyFailedCondition, olmsyncv1alpha1.ApplyFailedReason, "%s", err)
		return waiting("apply: %s", err)
	}
	newRevision := p.tree.Revision != obj.Status.LastAppliedRevision
	if err := r.recordPending(ctx, obj, p, objs, newRevision); err != nil {
		return err
	}
	res, err := r.applier(obj, c).Apply(ctx, objs)
	if err != nil {
		return err
	}
	if r.afterApply != nil {
		r.afterApply(obj, p.tree.Revision) // a test's crash point: applied, status not yet written
	}
	p.applied, p.appliedNow = res, true
	r.Metrics.RecordApplied(obj, string(apply.Created), len(res.With(apply.Created)))
	r.Metrics.RecordApplied(obj, string(apply.Configured), len(res.With(apply.Configured)))
	logApply(ctx, p.tree.Revision, res)
	if failed := res.With(apply.Failed); len(failed) > 0 {
		conditions.MarkTrue(obj, olmsyncv1alpha1.ApplyFailedCondition, olmsyncv1alpha1.ApplyFailedReason, "%s", applyMessage(failed))
		p.failed = true
	} else {
		conditions.Delete(obj, olmsyncv1alpha1.ApplyFailedCondition)
		if newRevision {
			r.revisionChanged(ctx, obj, p)
		}
		obj.Status.LastAppliedRevision = p.tree.Revision
		obj.Status.LastAppliedCommit = commitMetadata(p.tree.CommitMeta)
	}
	r.memory.set(key(obj), &lastApply{uid: obj.UID, generation: obj.Generation, requestedAt: requestedAt(obj),
		revision: p.tree.Revision, at: r.clock(), build: p.build, applied: res, retry: needsRetry(res)})
	return nil
}

// applyMessage names the first objects the API server refused, and how many there were.
func applyMessage(failed []apply.ObjectResult) string {
	msgs := make([]string, 0, 3)
	for _, f := range failed[:min(3, len(failed))] {
		msgs = append(msgs, f.Message)
	}
	msg := fmt.Sprintf("%d object(s) refused: %s", len(failed), strings.Join(msgs, "; "))
	if len(failed) > 3 {
		msg += fmt.Sprintf("; and %d more", len(failed)-3)
	}
	return msg
}

func (r *Reconciler) applier(obj *olmsyncv1alpha1.Sync, c client.Client) *apply.Applier {
	return &apply.Applier{Client: c, Owner: key(obj), CRDTimeout: r.Options.CRDTimeout,
		DeleteInstalledCSVs: obj.PruneOperators() == olmsyncv1alpha1.PruneOperatorsDelete, Force: obj.Spec.Force}
}

// checkHealth reads the health of every applied object (step 5) and writes status.apps.
// Right after an apply it judges the objects the API server answered with; otherwise it
// reads them again. OLM's kinds are judged with the objects they refer to (a
// Subscription's CSV and InstallPlan).
func (r *Reconciler) checkHealth(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error {
	gone := false
	lookup := r.lookup(ctx, obj, p)
	p.states = objectStates(p.build, p.applied, func(o apply.ObjectResult) health.Result {
		live := o.Live
		if !p.appliedNow {
			var err error
			if live, err = readLive(ctx, p.client, o.Entry); err != nil {
				return health.Result{Status: health.Unknown, Message: err.Error()}
			}
		}
		res := health.Of(live, lookup)
		gone = gone || res.Status == health.Missing
		return res
	})
	if gone && p.last != nil && !p.appliedNow {
		p.last.retry = true // put it back at the next reconcile, without waiting for the interval
	}
	p.health = summarizeHealth(p.states)
	obj.Status.Apps = appStatuses(p.build.Apps, p.states)
	switch waiting := append(slices.Clone(p.health.waitingForCRD), p.health.progressing...); {
	case len(p.health.failed) > 0:
		conditions.MarkTrue(obj, olmsyncv1alpha1.HealthCheckFailedCondition, olmsyncv1alpha1.HealthCheckFailedReason, "%s", describe(p.health.failed))
	case len(waiting) > 0 && r.timedOut(obj, p):
		conditions.MarkTrue(obj, olmsyncv1alpha1.HealthCheckFailedCondition, olmsyncv1alpha1.HealthCheckFailedReason,
			"health check failed after %s: timeout waiting for: %s", obj.Spec.Timeout.Duration, describe(waiting))
	default:
		conditions.Delete(obj, olmsyncv1alpha1.HealthCheckFailedCondition)
	}
	return nil
}

// timedOut reports whether spec.timeout has passed since the objects were last applied.
// The objects keep being watched: once they are healthy the Sync is Ready again.
func (r *Reconciler) timedOut(obj *olmsyncv1alpha1.Sync, p *pass) bool {
	t := obj.Spec.Timeout
	if t == nil || t.Duration <= 0 || p.appliedNow || p.last == nil {
		return false
	}
	return r.clock().Sub(p.last.at) >= t.Duration
}

// readLive reads an object as it is now; nil when it is not in the cluster.
func readLive(ctx context.Context, c client.Client, e inventory.Entry) (*unstructured.Unstructured, error) {
	live := e.Object()
	err := c.Get(ctx, client.ObjectKeyFromObject(live), live)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", e, err)
	}
	return live, nil
}

// lookup reads the objects OLM's kinds refer to (a Subscription's CSV and InstallPlan) with
// olmsync's own identity: they are OLM's, not the Sync's.
func (r *Reconciler) lookup(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) health.Lookup {
	c := client.Reader(r.Client)
	if obj.Spec.KubeConfig != nil && p.client != nil {
		c = p.client // another cluster's OLM: read there, with its kubeconfig
	}
	return func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
			return nil
		}
		return u
	}
}
