package health

import (
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kstatusHealth is the health of a kind that is not OLM's: kstatus (Flux's fork of
// sigs.k8s.io/cli-utils, the one reconcile/apply polls with; the rules Flux and Argo CD's
// kstatus support share) decides, and Argo CD's few rules that
// kstatus has no word for come on top (argoRules).
func kstatusHealth(obj *unstructured.Unstructured) Result {
	if r, ok := argoRules(obj); ok {
		return r
	}
	res, err := status.Compute(obj)
	if err != nil {
		return unknown(err)
	}
	out := Result{Message: res.Message, Reason: reasonOf(obj, res)}
	switch res.Status {
	case status.CurrentStatus:
		out.Status = Healthy
	case status.InProgressStatus:
		out.Status = Progressing
	case status.FailedStatus:
		out.Status = Degraded
	case status.TerminatingStatus:
		out.Status, out.Reason = Progressing, "Deleting"
	case status.NotFoundStatus:
		out.Status = Missing
	default:
		out.Status = Unknown
	}
	return out
}

// reasonOf is the reason kstatus gives (of the Stalled or Reconciling condition it
// computed), else that of the object's own Ready condition.
func reasonOf(obj *unstructured.Unstructured, res *status.Result) string {
	for _, c := range res.Conditions {
		if c.Reason != "" {
			return c.Reason
		}
	}
	for _, c := range conditionsOf(obj) {
		if c.Type == "Ready" {
			return c.Reason
		}
	}
	return ""
}

// argoRules are Argo CD's health rules that kstatus lacks: a paused Deployment and a
// suspended Job or CronJob are Suspended (kstatus says Current or InProgress); a container
// stuck on an image pull or a bad config, and a claim whose volume is lost, are Degraded
// (kstatus waits on them).
func argoRules(obj *unstructured.Unstructured) (Result, bool) {
	gk := obj.GroupVersionKind().GroupKind()
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
			return Result{Status: Suspended, Reason: "Paused", Message: "the rollout is paused"}, true
		}
	case schema.GroupKind{Group: "batch", Kind: "Job"}, schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		if suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); suspended && !jobFinished(obj) {
			return Result{Status: Suspended, Reason: "Suspended", Message: fmt.Sprintf("the %s is suspended", gk.Kind)}, true
		}
	case schema.GroupKind{Kind: "Pod"}:
		return podStuck(obj)
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "Lost" {
			return Result{Status: Degraded, Reason: phase, Message: "the bound volume is gone"}, true
		}
	}
	return Result{}, false
}

// jobFinished: a Job that completed or failed is judged by kstatus, suspended or not.
func jobFinished(obj *unstructured.Unstructured) bool {
	for _, c := range conditionsOf(obj) {
		if (c.Type == "Complete" || c.Type == "Failed") && c.Status == "True" {
			return true
		}
	}
	return false
}

// badWaitingReasons are container states that do not clear without a change.
var badWaitingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true,
}

// podStuck finds a container that waits for a reason that does not clear by itself.
func podStuck(obj *unstructured.Unstructured) (Result, bool) {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		list, _, _ := unstructured.NestedSlice(obj.Object, "status", field)
		for _, item := range list {
			cs, ok := item.(map[string]any)
			if !ok {
				continue
			}
			reason, _, _ := unstructured.NestedString(cs, "state", "waiting", "reason")
			if !badWaitingReasons[reason] {
				continue
			}
			name, _, _ := unstructured.NestedString(cs, "name")
			msg, _, _ := unstructured.NestedString(cs, "state", "waiting", "message")
			return Result{Status: Degraded, Reason: reason, Message: fmt.Sprintf("container %s: %s", name, msg)}, true
		}
	}
	return Result{}, false
}
