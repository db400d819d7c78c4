package csv

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/reconcile/olm/applier"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
	"github.com/olmsync/olmsync/reconcile/olm/patcher"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// Finalizer is the finalizer OLM puts on every CSV that is not a copy: the CSV's cleanup of
// its cluster-scoped RBAC and its copies runs before it goes.
const Finalizer = "operators.coreos.com/csv-cleanup"

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "clusterserviceversion"

// Options are the settings of the CSV controller.
type Options struct {
	// Copies shapes copied CSVs: DisableCopiedCSVs is OLM's OLMConfig
	// spec.features.disableCopiedCSVs.
	Copies groups.CopyOptions
	// ResyncInterval is how often a settled CSV is looked at again although nothing around it
	// changed; 0 means never.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many CSVs are reconciled at once (1 when 0).
	MaxConcurrentReconciles int
	// Certs are the validity and rotation window of the serving certificates of webhooks and
	// API services: OLM's (two years, rotated a day before) when zero.
	Certs install.CertOptions
	// RetryInterval is how soon a CSV waiting for its APIServices to become Available is
	// looked at again (DefaultRetryInterval when zero).
	RetryInterval time.Duration
	// Written are the manager's controllers' writes the cache may not show yet (shared by
	// them): the permissions and deployments the applier writes are read through it and
	// remembered in it — an InstallPlan writes the same ServiceAccounts and RBAC. Nil
	// remembers nothing.
	Written *written.Objects
}

// Reconciler reconciles ClusterServiceVersions.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads straight from the API server (required) what the cache does not hold
	// (see applier.Applier). The CSV being synced is read from the cache: its writes carry the
	// resourceVersion read (patcher), so a copy older than the controller's last status write
	// is refused instead of leaving what that write put there (a requirementStatus the sync
	// empties after a spec edited to require nothing would be no difference and stay through
	// every later phase, which does not rewrite it).
	APIReader client.Reader
	// Discovery answers the server version and which APIs are served.
	Discovery Discovery
	// Recorder records the Events of phase changes.
	Recorder events.EventRecorder
	Options  Options
	versions versionCache
	// superseded is, per CSV, the version its last write here replaced: a sync that reads
	// that one from the cache stops before computing a write the API server would refuse.
	superseded patcher.Superseded
	// indexed says that Client's cache holds the indexes SetupWithManager registers
	// (indexCopiedFrom, indexOwner): a CSV's copies and cluster RBAC are then looked up, not
	// matched among every CSV's.
	indexed bool
}

func (r *Reconciler) applier() *applier.Applier {
	return &applier.Applier{Client: r.Client, APIReader: r.APIReader, Written: r.Options.Written}
}

// Reconcile takes one CSV a step further.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	obj, err := r.get(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.superseded.Forget(req.NamespacedName)
			metrics.ForgetCSV(req.Namespace, req.Name)
			// A CSV can go without its finalizer running (someone removed it): its copies go too.
			return reconcile.Result{}, r.deleteCopies(ctx, req.Namespace, req.Name)
		}
		return reconcile.Result{}, err
	}
	if groups.IsCopied(obj) {
		// A copy is written by its parent's sync only.
		return reconcile.Result{}, nil
	}
	if r.superseded.Stale(req.NamespacedName, obj.ResourceVersion) {
		// The cache has not caught up with this controller's last write of the CSV: a sync
		// from this copy would compute a write the API server refuses. The event of the
		// version written syncs it (the CSV watch filters no update).
		log.FromContext(ctx).V(1).Info("csv read at the version the last write replaced; its next event syncs it", "resourceVersion", obj.ResourceVersion)
		return reconcile.Result{}, nil
	}
	before := obj.DeepCopy()
	s := &state{}
	writer := patcher.New(obj, r.Client)
	defer func() {
		err := writer.Patch(ctx, obj)
		switch {
		case patcher.IsStale(err):
			// The cache had not caught up with the CSV: nothing was written, and the event
			// of the newer version syncs it again (the CSV watch filters no update).
			log.FromContext(ctx).V(1).Info("csv changed since read; its next event syncs it", "error", err.Error())
			return
		case err != nil && !apierrors.IsNotFound(err):
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patch csv %s/%s: %w", obj.Namespace, obj.Name, err)})
			return
		}
		r.superseded.Wrote(req.NamespacedName, before.ResourceVersion, obj.ResourceVersion)
		r.recordPhase(obj, s.transition)
		if obj.DeletionTimestamp.IsZero() {
			metrics.EmitCSV(before, obj)
		}
		if before.Status.Phase != v1alpha1.CSVPhaseReplacing && obj.Status.Phase == v1alpha1.CSVPhaseReplacing {
			metrics.CSVUpgradeCount.Inc()
		}
	}()

	if !obj.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.finalize(ctx, obj)
	}
	controllerutil.AddFinalizer(obj, Finalizer)
	return r.sync(ctx, obj, s)
}

// get reads the CSV to sync from the cache (see APIReader).
func (r *Reconciler) get(ctx context.Context, key types.NamespacedName) (*v1alpha1.ClusterServiceVersion, error) {
	obj := &v1alpha1.ClusterServiceVersion{}
	if err := r.Client.Get(ctx, key, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// state is what the steps of one sync hand on to each other.
type state struct {
	evaluation groups.Evaluation
	// strategy is why the install strategy cannot run; nil when it can.
	strategy error
	// csvs are the CSVs of the namespace, read once (not to be modified).
	csvs        []v1alpha1.ClusterServiceVersion
	replacement phase.Replacement
	// applied are the permission objects written in this sync, which the cache may not show yet.
	applied *install.Permissions
	// copies are the CSV's copies by namespace, as written in this sync.
	copies map[string]*v1alpha1.ClusterServiceVersion
	// rotateAt is when the first serving certificate of the CSV becomes due for rotation
	// (zero when it has none, or one is due now).
	rotateAt time.Time
	// stop ends the sync after the current step.
	stop         bool
	requeueAfter time.Duration
	// transition is the phase change the sync wrote into the status, recorded as an Event
	// once the status write lands: a sync whose write is refused (a stale copy) records none.
	transition *groups.Transition
}

func (s *state) requeue(after time.Duration) {
	if after > 0 && (s.requeueAfter == 0 || after < s.requeueAfter) {
		s.requeueAfter = after
	}
}

// step is one named step of a sync.
type step struct {
	name string
	run  func(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error
}

// sync runs the steps in order: labels, groups, permissions, phase, copies, group RBAC.
func (r *Reconciler) sync(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) (reconcile.Result, error) {
	steps := []step{
		{"api labels", r.ensureAPILabels},
		{"operatorgroup", r.checkGroups},
		{"csvs", r.readCSVs},
		{"permissions", r.ensurePermissions},
		{"phase", r.transition},
		{"copies", r.ensureCopies},
		{"group rbac", r.ensureGroupRBAC},
	}
	for _, st := range steps {
		if err := st.run(ctx, obj, s); err != nil {
			var terminal *terminalError
			if errors.As(err, &terminal) {
				log.FromContext(ctx).Error(err, "csv cannot be processed", "step", st.name)
				return reconcile.Result{}, reconcile.TerminalError(err)
			}
			return reconcile.Result{}, fmt.Errorf("csv %s/%s: %s: %w", obj.Namespace, obj.Name, st.name, err)
		}
		if s.stop {
			break
		}
	}
	s.requeue(r.Options.ResyncInterval)
	return reconcile.Result{RequeueAfter: s.requeueAfter}, nil
}

// terminalError is a problem with the CSV itself that no retry fixes.
type terminalError struct{ err error }

func (e *terminalError) Error() string { return e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// setPhase writes a transition into the CSV's status; a change is kept in s for its Event.
func (r *Reconciler) setPhase(obj *v1alpha1.ClusterServiceVersion, t groups.Transition, s *state) {
	if phase.SetPhase(obj, t, metav1.NewTime(time.Now())) {
		s.transition = &t
	}
}

// recordPhase records the Event of a phase change whose status write landed: Warning for
// Failed, Normal otherwise, with the CSV's reason as the Event's reason (as OLM does).
func (r *Reconciler) recordPhase(obj *v1alpha1.ClusterServiceVersion, t *groups.Transition) {
	if t == nil || r.Recorder == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if t.Phase == v1alpha1.CSVPhaseFailed {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(obj, nil, eventType, string(t.Reason), string(t.Phase), "%s", t.Message)
}
