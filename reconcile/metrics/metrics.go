package metrics

import (
	"sync"
	"time"

	fluxmetrics "github.com/fluxcd/pkg/runtime/metrics"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/sources"
)

// The outcomes of a fetch, for olmsync_git_fetch_duration_seconds's result label.
const (
	FetchSucceeded = "success"
	FetchFailed    = "failure"
)

// Recorder records the metrics of Syncs.
type Recorder struct {
	flux           *fluxmetrics.Recorder
	info           *prometheus.GaugeVec
	fetchDuration  *prometheus.HistogramVec
	objectsApplied *prometheus.CounterVec
	objectsPruned  *prometheus.CounterVec

	mu       sync.Mutex
	infoSeen map[types.NamespacedName][]string // the info series' labels, to replace it
}

// NewRecorder makes a Recorder; register its collectors with MustRegister.
func NewRecorder() *Recorder {
	return &Recorder{
		flux: fluxmetrics.NewRecorder(),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gotk_resource_info",
			Help: "The current state of a GitOps Toolkit resource.",
		}, []string{"customresource_kind", "name", "exported_namespace", "ready", "suspended", "url", "revision"}),
		fetchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "olmsync_git_fetch_duration_seconds",
			Help: "The duration in seconds of fetching a Sync's git repository.",
			// 10ms to 5 minutes: an up-to-date ls-remote to a first clone of a large repository.
			Buckets: prometheus.ExponentialBucketsRange(0.01, 300, 12),
		}, []string{"name", "exported_namespace", "result"}),
		objectsApplied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "olmsync_objects_applied_total",
			Help: "Objects a Sync created or changed with server-side apply.",
		}, []string{"name", "exported_namespace", "action"}),
		objectsPruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "olmsync_objects_pruned_total",
			Help: "Objects a Sync deleted because its repository no longer renders them.",
		}, []string{"name", "exported_namespace"}),
		infoSeen: map[types.NamespacedName][]string{},
	}
}

// Collectors are the Recorder's collectors.
func (r *Recorder) Collectors() []prometheus.Collector {
	return append(r.flux.Collectors(), r.info, r.fetchDuration, r.objectsApplied, r.objectsPruned)
}

// Default is the Recorder registered with controller-runtime's registry, which every
// manager of the process serves; it is made on first use, once, since a collector can be
// registered only once (a test may start several managers in one process).
var Default = sync.OnceValue(func() *Recorder { return NewRecorder().MustRegister(nil) })

// MustRegister registers the collectors with reg; nil is controller-runtime's registry,
// which the manager serves.
func (r *Recorder) MustRegister(reg prometheus.Registerer) *Recorder {
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	reg.MustRegister(r.Collectors()...)
	return r
}

func ref(obj *olmsyncv1alpha1.Sync) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: olmsyncv1alpha1.SyncKind, Namespace: obj.Namespace, Name: obj.Name}
}

// RecordReconcile is what a reconciler defers: the duration since start, and the Sync's
// state as the info gauge and Flux's condition and suspend gauges.
func (r *Recorder) RecordReconcile(obj *olmsyncv1alpha1.Sync, start time.Time) {
	r.flux.RecordDuration(ref(obj), start)
	r.flux.RecordSuspend(ref(obj), obj.Spec.Suspend)
	ready := string(metav1.ConditionUnknown)
	for _, c := range obj.Status.Conditions {
		if c.Type == olmsyncv1alpha1.ReadyCondition {
			ready = string(c.Status)
			r.flux.RecordCondition(ref(obj), c)
		}
	}
	suspended := "false"
	if obj.Spec.Suspend {
		suspended = "true"
	}
	// The URL as every message shows it: a Sync created before the CRD refused credentials
	// in it, or with a query value under a name the CRD does not know, may hold one, and
	// the metrics endpoint is read by whoever scrapes it.
	url := sources.RedactURL(obj.Spec.Source.URL)
	labels := []string{olmsyncv1alpha1.SyncKind, obj.Name, obj.Namespace, ready, suspended, url, obj.Status.LastAppliedRevision}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	// One series per Sync: a change of state replaces the old series.
	if old, ok := r.infoSeen[key]; ok {
		r.info.DeleteLabelValues(old...)
	}
	r.info.WithLabelValues(labels...).Set(1)
	r.infoSeen[key] = labels
}

// RecordFetch records how long a fetch took and whether it brought a revision.
func (r *Recorder) RecordFetch(obj *olmsyncv1alpha1.Sync, d time.Duration, err error) {
	result := FetchSucceeded
	if err != nil {
		result = FetchFailed
	}
	r.fetchDuration.WithLabelValues(obj.Name, obj.Namespace, result).Observe(d.Seconds())
}

// RecordApplied counts objects written by apply, by action (Created, Configured).
func (r *Recorder) RecordApplied(obj *olmsyncv1alpha1.Sync, action string, n int) {
	if n > 0 {
		r.objectsApplied.WithLabelValues(obj.Name, obj.Namespace, action).Add(float64(n))
	}
}

// RecordPruned counts objects prune deleted.
func (r *Recorder) RecordPruned(obj *olmsyncv1alpha1.Sync, n int) {
	if n > 0 {
		r.objectsPruned.WithLabelValues(obj.Name, obj.Namespace).Add(float64(n))
	}
}

// Forget removes every series of a deleted Sync, so that it stops being reported.
func (r *Recorder) Forget(obj *olmsyncv1alpha1.Sync) {
	r.flux.DeleteDuration(ref(obj))
	r.flux.DeleteSuspend(ref(obj))
	r.flux.DeleteCondition(ref(obj), olmsyncv1alpha1.ReadyCondition)
	match := prometheus.Labels{"name": obj.Name, "exported_namespace": obj.Namespace}
	r.fetchDuration.DeletePartialMatch(match)
	r.objectsApplied.DeletePartialMatch(match)
	r.objectsPruned.DeletePartialMatch(match)
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.infoSeen[key]; ok {
		r.info.DeleteLabelValues(old...)
		delete(r.infoSeen, key)
	}
}
