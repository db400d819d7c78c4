package installplan

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/patcher"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "installplan"

// DefaultRetryInterval is how soon a plan waiting for a catalog or an API is looked at again.
const DefaultRetryInterval = 10 * time.Second

// Options are the settings of the InstallPlan controller.
type Options struct {
	// RetryInterval: DefaultRetryInterval when zero.
	RetryInterval time.Duration
	// BundleUnpackTimeout is how long a bundle image may take to unpack before its plan
	// fails (OLM's --bundle-unpack-timeout): DefaultBundleUnpackTimeout when zero, no limit
	// when negative. An OperatorGroup's BundleUnpackTimeoutAnnotation overrides it.
	BundleUnpackTimeout time.Duration
	// ExecutionRetryTimeout is how long after its first attempt a plan whose execution fails
	// is tried again before it fails (OLM's --install-plan-retry-timeout):
	// DefaultExecutionRetryTimeout when zero. A refusal for lack of rights is retried
	// whatever the time, as OLM does: the rights may come.
	ExecutionRetryTimeout time.Duration
	// MaxConcurrentReconciles is how many InstallPlans are reconciled at once (1 when 0).
	MaxConcurrentReconciles int
	// Written are the manager's controllers' writes the cache may not show yet (shared by
	// them): the steps' ServiceAccounts and RBAC are read through it and remembered in it.
	// Nil remembers nothing.
	Written *written.Objects
	// Plans are the versions of InstallPlans the manager's controllers wrote last (shared
	// with the Subscription controller): a cached plan at the version this process wrote
	// last is executed without reading it from the API server first (current). Nil
	// remembers nothing.
	Plans *written.Versions
}

// DefaultExecutionRetryTimeout is OLM's default --install-plan-retry-timeout.
const DefaultExecutionRetryTimeout = time.Minute

// Reconciler reconciles InstallPlans.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// Writer writes the plan's steps (NewWriter: it hands the API server's warnings to the
	// step that drew them); Client when nil.
	Writer client.Client
	// Scoped makes the clients of scoped installs (an OperatorGroup with
	// spec.serviceAccountName): the plan's steps but its CRDs are written with the account's
	// rights. Required for such plans.
	Scoped *ScopedClients
	// APIReader reads straight from the API server (required) the objects the steps create,
	// which the cache may not show yet. The InstallPlan being reconciled is read from the
	// cache: its status writes carry the resourceVersion read (patcher), so a copy older than
	// the controller's last status write is refused instead of leaving what that write put
	// there (a message or condition the reconcile clears would be no difference and stay).
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// Catalogs plans InstallPlans created without steps.
	Catalogs *catalogsource.Registry
	// Unpacker unpacks the bundle images of bundle lookups (required for plans that have
	// any).
	Unpacker *Unpacker
	Recorder events.EventRecorder
	Options  Options
}

func (r *Reconciler) retry() time.Duration {
	if r.Options.RetryInterval > 0 {
		return r.Options.RetryInterval
	}
	return DefaultRetryInterval
}

func (r *Reconciler) executionRetryTimeout() time.Duration {
	if r.Options.ExecutionRetryTimeout > 0 {
		return r.Options.ExecutionRetryTimeout
	}
	return DefaultExecutionRetryTimeout
}

func (r *Reconciler) unpackTimeout() time.Duration {
	switch t := r.Options.BundleUnpackTimeout; {
	case t == 0:
		return DefaultBundleUnpackTimeout
	case t < 0:
		return 0
	default:
		return t
	}
}

// Reconcile takes one InstallPlan a phase further.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	obj := &v1alpha1.InstallPlan{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Options.Plans.Forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if plannedBySubscription(obj) && len(obj.Status.Plan) == 0 && len(obj.Status.BundleLookups) == 0 && obj.Status.Phase == v1alpha1.InstallPlanPhaseNone {
		// The Subscription controller writes the steps of the plans it makes right after
		// creating them (the API server drops status on create). Planning this one from the
		// catalog now would race that write, and lose what resolution decided (the CSV's
		// spec.replaces is the installed CSV, not the catalog's).
		return reconcile.Result{}, nil
	}
	was := obj.Status.Phase
	writer := patcher.New(obj, r.Client)
	defer func() {
		if obj.Status.CatalogSources == nil {
			// The CRD requires status.catalogSources (OLM's type has no omitempty): a plan
			// written by hand, with no catalog found yet, would have every status refused.
			obj.Status.CatalogSources = []string{}
		}
		err := r.patch(ctx, writer, obj)
		switch {
		case patcher.IsStale(err):
			// The cache had not caught up with the plan: nothing was written, and the event
			// of the newer version reconciles it again (the plan watch filters no update).
			log.FromContext(ctx).V(1).Info("installplan changed since read; its next event reconciles it", "error", err.Error())
			return
		case err != nil && !apierrors.IsNotFound(err):
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patch installplan %s: %w", req.NamespacedName, err)})
			return
		}
		r.recordPhase(obj, was)
	}()

	next, action := Next(obj)
	obj.Status.Phase = next
	if action == ActionPlan {
		waiting, err := r.plan(obj)
		if err != nil {
			obj.Status.Message = err.Error()
			setCondition(obj, v1alpha1.InstallPlanResolved, corev1.ConditionFalse, v1alpha1.InstallPlanReasonPlanUnknown, err.Error(), time.Now())
			return reconcile.Result{}, reconcile.TerminalError(err)
		}
		if waiting != "" {
			setCondition(obj, v1alpha1.InstallPlanResolved, corev1.ConditionFalse, v1alpha1.InstallPlanReasonPlanUnknown, waiting, time.Now())
			return reconcile.Result{RequeueAfter: r.retry()}, nil
		}
		setCondition(obj, v1alpha1.InstallPlanResolved, corev1.ConditionTrue, "", "", time.Now())
		next, action = Next(obj)
		obj.Status.Phase = next
	}
	if action == ActionNone || action == ActionPlan {
		return reconcile.Result{}, nil
	}
	if result, stop, err := r.queryServiceAccount(ctx, obj); stop || err != nil {
		return result, err
	}
	// Bundle images are unpacked before anything is installed, and also while a Manual plan
	// waits for approval, so that it shows every step it would take.
	if state := lookupsState(obj.Status.BundleLookups); state != LookupUnpacked {
		if state == LookupPending {
			if state, err := r.unpack(ctx, obj); err != nil || state == LookupPending {
				return reconcile.Result{RequeueAfter: r.retry()}, err
			}
		}
		if l, c := FailedLookup(obj.Status.BundleLookups); l != nil {
			// Nothing of the plan was installed: the steps run only once every bundle is in.
			obj.Status.Phase = v1alpha1.InstallPlanPhaseFailed
			// OLM's words on the condition; what went wrong last in the message.
			if detail := LastUnpackError(l); detail != "" {
				obj.Status.Message = fmt.Sprintf("bundle %s (%s): %s", l.Identifier, l.Path, detail)
			}
			setCondition(obj, v1alpha1.InstallPlanInstalled, corev1.ConditionFalse, v1alpha1.InstallPlanReasonInstallCheckFailed,
				fmt.Sprintf(v1alpha1.MessageBundleUnpackingFailed, c.Reason, c.Message), time.Now())
			return reconcile.Result{}, nil
		}
	}
	if action != ActionInstall {
		return reconcile.Result{}, nil
	}
	if obj.Status.StartTime == nil {
		obj.Status.StartTime = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
	return r.install(ctx, obj, writer)
}

// plan fills status.plan of a plan made without steps from the bundles of its
// spec.clusterServiceVersionNames, found in the catalogs the namespace sees (spec.source
// first): their steps when the catalog carries their content, else a bundle lookup of their
// image. It returns why it waits when a bundle is not in any catalog yet (a catalog may
// still be loading).
func (r *Reconciler) plan(obj *v1alpha1.InstallPlan) (string, error) {
	source := types.NamespacedName{Namespace: obj.Spec.CatalogSourceNamespace, Name: obj.Spec.CatalogSource}
	var steps []v1alpha1.Step
	var lookups []v1alpha1.BundleLookup
	var missing []string
	sources := map[string]bool{}
	for _, name := range obj.Spec.ClusterServiceVersionNames {
		b, from, ok := r.Catalogs.FindBundle(obj.Namespace, name, source)
		if !ok {
			missing = append(missing, name)
			continue
		}
		rb := resolve.Bundle{
			Name: b.Name, Package: b.Package, Replaces: replacesOf(r.Catalogs, from, b), Content: b,
			Source: resolve.CatalogKey{Name: from.Name, Namespace: from.Namespace},
		}
		sources[from.Name] = true
		if b.CSV == nil {
			lookup, err := resolve.NewBundleLookup(rb)
			if err != nil {
				return "", err
			}
			lookups = append(lookups, lookup)
			continue
		}
		bs, err := resolve.BundleSteps(obj.Namespace, rb)
		if err != nil {
			return "", err
		}
		steps = append(steps, bs...)
	}
	if len(missing) > 0 {
		return fmt.Sprintf("bundles not found in the catalogs namespace %s sees: %s", obj.Namespace, strings.Join(missing, ", ")), nil
	}
	obj.Status.Plan = resolve.OrderSteps(steps)
	obj.Status.BundleLookups = lookups
	for name := range sources {
		obj.Status.CatalogSources = append(obj.Status.CatalogSources, name)
	}
	return "", nil
}

// install executes the steps in order, writing each step's status as it goes, once every CRD
// update of the plan passed OLM's safety check (checkCRDs): a refused one fails the plan
// before anything is written. A step that can never succeed fails the plan; one that may (an
// API not served yet, a conflict) is retried.
func (r *Reconciler) install(ctx context.Context, obj *v1alpha1.InstallPlan, progress *patcher.Serial) (reconcile.Result, error) {
	if current, err := r.current(ctx, obj); err != nil || !current {
		return reconcile.Result{}, err
	}
	writer, crdWriter, err := r.stepClients(obj)
	if err != nil {
		return reconcile.Result{}, err
	}
	e := &executor{client: writer, crds: crdWriter, reader: r.APIReader, mapper: r.Mapper, namespace: obj.Namespace, plan: obj.Name}
	if obj.Status.AttenuatedServiceAccountRef == nil {
		e.cached, e.written = r.Client, r.Options.Written
	}
	images := &referencedImages{r: r, plan: client.ObjectKeyFromObject(obj)}
	var crds []v1alpha1.Step
	for _, s := range obj.Status.Plan {
		if s.Resource.Kind != "CustomResourceDefinition" {
			continue
		}
		step, ready, err := images.resolve(ctx, s)
		switch {
		case err != nil:
			return r.executionFailed(ctx, obj, err)
		case !ready:
			return reconcile.Result{RequeueAfter: r.retry()}, nil
		}
		crds = append(crds, step)
	}
	if err := e.checkCRDs(ctx, crds); err != nil {
		return r.executionFailed(ctx, obj, err)
	}
	for i := range obj.Status.Plan {
		s := &obj.Status.Plan[i]
		if s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			continue
		}
		step, ready, err := images.resolve(ctx, *s)
		if err == nil && !ready {
			// The bundle image is being pulled again (the cache lost it): the pull wakes the plan.
			return reconcile.Result{RequeueAfter: r.retry()}, nil
		}
		status := s.Status
		if err == nil {
			stepCtx, warned := recordingWarnings(ctx)
			status, err = e.execute(stepCtx, step)
			r.stepWarned(obj, i, warned.list())
		}
		s.Status = status
		switch {
		case status == v1alpha1.StepStatusWaitingForAPI && err != nil:
			log.FromContext(ctx).Info("waiting for an API", "step", s.Resource.Name, "error", err.Error())
			return reconcile.Result{RequeueAfter: r.retry()}, nil
		case err != nil:
			return r.executionFailed(ctx, obj, err)
		}
		if s.Resource.Kind == v1alpha1.ClusterServiceVersionKind {
			// Later steps read the CSV for its UID: write the progress first. A stale copy
			// writes nothing (the deferred write is refused too): the newer version's event
			// reconciles the plan again.
			if err := r.patch(ctx, progress, obj); err != nil {
				if patcher.IsStale(err) {
					return reconcile.Result{}, nil
				}
				return reconcile.Result{}, err
			}
		}
	}
	for _, w := range e.warnings {
		if r.Recorder != nil {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "CRDValidation", "Install", "%s", w)
		}
	}
	if Done(obj.Status.Plan) {
		obj.Status.Phase = v1alpha1.InstallPlanPhaseComplete
		obj.Status.Message = ""
		setCondition(obj, v1alpha1.InstallPlanInstalled, corev1.ConditionTrue, "", "", time.Now())
	}
	return reconcile.Result{}, nil
}

// patch writes what changed in the plan (patcher) and remembers the version a write left.
func (r *Reconciler) patch(ctx context.Context, writer *patcher.Serial, obj *v1alpha1.InstallPlan) error {
	read := obj.ResourceVersion
	err := writer.Patch(ctx, obj)
	if err == nil && obj.ResourceVersion != read {
		r.Options.Plans.Wrote(client.ObjectKeyFromObject(obj), obj.ResourceVersion)
	}
	return err
}

// current reports whether obj, read from the cache, is the API server's version of the plan:
// the version this process wrote last (Options.Plans), or else from one metadata-only read. Only such a copy is executed: an older one does not show the
// steps the last execution did, and would run them again — a CRD the plan created moments
// ago would take the update path, which lists its custom resources (OLM validates them
// against the new schema), with rights olmsync's chart does not grant. The status write at
// the end would be refused, but the steps would have run. When it is not current, the
// newer version's event reconciles the plan again.
func (r *Reconciler) current(ctx context.Context, obj *v1alpha1.InstallPlan) (bool, error) {
	if r.Options.Plans.Last(client.ObjectKeyFromObject(obj), obj.ResourceVersion) {
		// The version this process's own last write of the plan left — the Subscription
		// controller's steps, or this controller's progress: an execution's progress is
		// written only by this controller, so no copy holds more than this one.
		return true, nil
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.InstallPlanKind))
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read installplan %s before executing it: %w", obj.Name, err)
	case live.ResourceVersion != obj.ResourceVersion:
		log.FromContext(ctx).V(1).Info("installplan changed since read; its next event executes it", "read", obj.ResourceVersion, "current", live.ResourceVersion)
		return false, nil
	}
	return true, nil
}

// executionFailed is what OLM does with a plan whose execution failed: within the retry
// timeout since the plan's first attempt (or whatever the time, when the API server refused
// for lack of rights, which may come), status.message says "retrying execution due to
// error: ..." and the plan is tried again; after it, the plan is Failed with the error,
// Installed False InstallComponentFailed. The steps already done stay done.
func (r *Reconciler) executionFailed(ctx context.Context, obj *v1alpha1.InstallPlan, err error) (reconcile.Result, error) {
	if apierrors.IsForbidden(err) || time.Since(obj.Status.StartTime.Time) < r.executionRetryTimeout() {
		obj.Status.Message = fmt.Sprintf(v1alpha1.MessageRetryingExecution, err.Error())
		log.FromContext(ctx).Info("retrying the plan's execution", "error", err.Error())
		return reconcile.Result{RequeueAfter: r.retry()}, nil
	}
	obj.Status.Phase = v1alpha1.InstallPlanPhaseFailed
	obj.Status.Message = err.Error()
	setCondition(obj, v1alpha1.InstallPlanInstalled, corev1.ConditionFalse, v1alpha1.InstallPlanReasonComponentFailed, err.Error(), time.Now())
	return reconcile.Result{}, nil
}

// setCondition sets a condition of the plan, moving lastTransitionTime only when the status
// changes.
func setCondition(obj *v1alpha1.InstallPlan, t v1alpha1.InstallPlanConditionType, status corev1.ConditionStatus, reason v1alpha1.InstallPlanConditionReason, message string, now time.Time) {
	at := metav1.NewTime(now.Truncate(time.Second))
	for i := range obj.Status.Conditions {
		c := &obj.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			return
		}
		if c.Status != status {
			c.LastTransitionTime = &at
		}
		c.Status, c.Reason, c.Message, c.LastUpdateTime = status, reason, message, &at
		return
	}
	obj.Status.Conditions = append(obj.Status.Conditions, v1alpha1.InstallPlanCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastUpdateTime: &at, LastTransitionTime: &at,
	})
}

// recordPhase records an Event when the plan's phase changed: Warning for Failed.
func (r *Reconciler) recordPhase(obj *v1alpha1.InstallPlan, was v1alpha1.InstallPlanPhase) {
	if r.Recorder == nil || obj.Status.Phase == was {
		return
	}
	eventType := corev1.EventTypeNormal
	if obj.Status.Phase == v1alpha1.InstallPlanPhaseFailed {
		eventType = corev1.EventTypeWarning
	}
	msg := fmt.Sprintf("phase %s", obj.Status.Phase)
	if obj.Status.Message != "" {
		msg += ": " + obj.Status.Message
	}
	r.Recorder.Eventf(obj, nil, eventType, string(obj.Status.Phase), "Sync", "%s", msg)
}

// plannedBySubscription reports whether a Subscription controller made the plan: it is owned
// by a Subscription.
func plannedBySubscription(ip *v1alpha1.InstallPlan) bool {
	for _, o := range ip.OwnerReferences {
		if o.Kind == v1alpha1.SubscriptionKind && o.APIVersion == v1alpha1.SchemeGroupVersion.String() {
			return true
		}
	}
	return false
}
