package installplan

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/reference"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// ReasonAppliedWithWarnings is OLM's Event reason for a step whose write the API server
// answered with warnings.
const ReasonAppliedWithWarnings = "AppliedWithWarnings"

// OLM's messages of that Event (catalog operator ExecutePlan): the count, the step's kind and
// name, the warnings joined with ", "; the second names the CSV the step belongs to.
const (
	messageWarnings          = "%d warning(s) generated during operator installation (%s %q): %s"
	messageWarningsResolving = "%d warning(s) generated during installation of operator %q (%s %q): %s"
)

// NewWriter is the client the executor writes a plan's steps with: the manager's client
// settings, with a warning handler that hands the API server's warnings (HTTP warning code
// 299) to the step being written, as OLM's plan client does (its warningRecorder).
func NewWriter(mgr ctrl.Manager) (client.Client, error) {
	return client.New(writerConfig(mgr.GetConfig()), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
}

// writerConfig is a copy of cfg whose warnings go to the step being written.
func writerConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, stepWarnings{}
	return cfg
}

// stepWarnings records each warning in the warningRecorder of the request's context, if any.
type stepWarnings struct{}

func (stepWarnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	log.FromContext(ctx).Info("the API server warned", "warning", text)
	if rec, ok := ctx.Value(warningsKey{}).(*warningRecorder); ok {
		rec.add(text)
	}
}

type warningsKey struct{}

// warningRecorder collects the warnings of one step's requests.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.warnings
}

// recordingWarnings returns a context whose requests through the writer record their
// warnings in the returned recorder.
func recordingWarnings(ctx context.Context) (context.Context, *warningRecorder) {
	rec := &warningRecorder{}
	return context.WithValue(ctx, warningsKey{}, rec), rec
}

// WarningsMessage is OLM's message of the AppliedWithWarnings Event of a step.
func WarningsMessage(step *v1alpha1.Step, warnings []string) string {
	if step.Resolving != "" {
		return fmt.Sprintf(messageWarningsResolving, len(warnings), step.Resolving, step.Resource.Kind, step.Resource.Name, strings.Join(warnings, ", "))
	}
	return fmt.Sprintf(messageWarnings, len(warnings), step.Resource.Kind, step.Resource.Name, strings.Join(warnings, ", "))
}

// stepWarned does what OLM does after a step whose writes drew warnings: one Warning Event
// on the plan, its field path the step (status.plan[i]), and installplan_warnings_total
// counts the step once.
func (r *Reconciler) stepWarned(obj *v1alpha1.InstallPlan, i int, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	metrics.InstallPlanWarnings.Inc()
	if r.Recorder == nil {
		return
	}
	msg := WarningsMessage(&obj.Status.Plan[i], warnings)
	ref, err := reference.GetReference(r.Client.Scheme(), obj)
	if err != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReasonAppliedWithWarnings, "Install", "%s", msg)
		return
	}
	ref.FieldPath = fmt.Sprintf("status.plan[%d]", i)
	r.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, ReasonAppliedWithWarnings, "Install", "%s", msg)
}
