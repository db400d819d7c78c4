package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// Status is a health code: olmsyncv1alpha1's, so results go into a Sync's status as
// they are.
type Status = olmsyncv1alpha1.HealthStatusCode

// The health codes.
const (
	Healthy            = olmsyncv1alpha1.HealthHealthy
	Progressing        = olmsyncv1alpha1.HealthProgressing
	Degraded           = olmsyncv1alpha1.HealthDegraded
	Suspended          = olmsyncv1alpha1.HealthSuspended
	Missing            = olmsyncv1alpha1.HealthMissing
	Unknown            = olmsyncv1alpha1.HealthUnknown
	WaitingForApproval = olmsyncv1alpha1.HealthWaitingForApproval
)

// Result is the health of one object.
type Result struct {
	Status Status
	// Reason is PascalCase: the object's own (an OLM phase or reason, a condition's
	// reason) where it has one.
	Reason  string
	Message string
}

// Lookup finds a related object in the cluster (a Subscription's CSV or InstallPlan); nil
// when there is none.
type Lookup func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured

// Of is the health of obj; nil obj is Missing. lookup may be nil: a Subscription then
// cannot be Healthy, since its CSV cannot be read.
func Of(obj *unstructured.Unstructured, lookup Lookup) Result {
	if obj == nil {
		return Result{Status: Missing, Message: "not found in the cluster"}
	}
	if lookup == nil {
		lookup = func(schema.GroupVersionKind, string, string) *unstructured.Unstructured { return nil }
	}
	if obj.GetDeletionTimestamp() != nil {
		return Result{Status: Progressing, Reason: "Deleting", Message: "being deleted"}
	}
	gk := obj.GroupVersionKind().GroupKind()
	if check, ok := olmChecks[gk]; ok {
		return check(obj, lookup)
	}
	return kstatusHealth(obj)
}

// severity orders health codes from best to worst, for Worst.
var severity = map[Status]int{
	Healthy: 0, Suspended: 1, Progressing: 2, WaitingForApproval: 3, Unknown: 4, Missing: 5, Degraded: 6,
}

// Worst is the worst of results (an app's health is its worst object's): Degraded, then
// Missing, Unknown, WaitingForApproval, Progressing, Suspended, Healthy. No results is
// Healthy.
func Worst(results ...Result) Result {
	worst := Result{Status: Healthy}
	for _, r := range results {
		if severity[r.Status] > severity[worst.Status] {
			worst = r
		}
	}
	return worst
}

func unknown(err error) Result {
	return Result{Status: Unknown, Message: err.Error()}
}

// condition is a status condition in its common shape.
type condition struct {
	Type, Status, Reason, Message string
}

func conditionsOf(obj *unstructured.Unstructured) []condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]condition, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, condition{str("type"), str("status"), str("reason"), str("message")})
	}
	return out
}

// into converts an object into a typed one, for OLM's kinds whose status has structure.
func into[T any](obj *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
		return nil, fmt.Errorf("read %s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	return out, nil
}
