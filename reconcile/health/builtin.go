package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var builtinChecks = map[schema.GroupKind]func(*unstructured.Unstructured) Result{
	{Group: "apps", Kind: "Deployment"}:                               deployment,
	{Group: "apps", Kind: "StatefulSet"}:                              statefulSet,
	{Group: "apps", Kind: "DaemonSet"}:                                daemonSet,
	{Group: "apps", Kind: "ReplicaSet"}:                               replicaSet,
	{Group: "batch", Kind: "Job"}:                                     job,
	{Group: "batch", Kind: "CronJob"}:                                 cronJob,
	{Kind: "Pod"}:                                                     pod,
	{Kind: "PersistentVolumeClaim"}:                                   pvc,
	{Kind: "Service"}:                                                 service,
	{Kind: "Namespace"}:                                               namespace,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: crd,
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func progressing(format string, args ...any) Result {
	return Result{Status: Progressing, Message: fmt.Sprintf(format, args...)}
}

func deployment(obj *unstructured.Unstructured) Result {
	d, err := into[appsv1.Deployment](obj)
	if err != nil {
		return unknown(err)
	}
	if d.Spec.Paused {
		return Result{Status: Suspended, Reason: "Paused", Message: "the rollout is paused"}
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Result{Status: Degraded, Reason: c.Reason, Message: c.Message}
		}
	}
	want := replicas(d.Spec.Replicas)
	switch {
	case d.Status.UpdatedReplicas < want:
		return progressing("%d of %d replicas updated", d.Status.UpdatedReplicas, want)
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		return progressing("%d old replicas pending termination", d.Status.Replicas-d.Status.UpdatedReplicas)
	case d.Status.AvailableReplicas < want:
		return progressing("%d of %d replicas available", d.Status.AvailableReplicas, want)
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("%d replicas available", want)}
}

func statefulSet(obj *unstructured.Unstructured) Result {
	s, err := into[appsv1.StatefulSet](obj)
	if err != nil {
		return unknown(err)
	}
	want := replicas(s.Spec.Replicas)
	switch {
	case s.Status.ReadyReplicas < want:
		return progressing("%d of %d replicas ready", s.Status.ReadyReplicas, want)
	case s.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && s.Status.UpdateRevision != "" && s.Status.CurrentRevision != s.Status.UpdateRevision:
		return progressing("%d of %d replicas updated", s.Status.UpdatedReplicas, want)
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("%d replicas ready", want)}
}

func daemonSet(obj *unstructured.Unstructured) Result {
	d, err := into[appsv1.DaemonSet](obj)
	if err != nil {
		return unknown(err)
	}
	want := d.Status.DesiredNumberScheduled
	switch {
	case d.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && d.Status.UpdatedNumberScheduled < want:
		return progressing("%d of %d pods updated", d.Status.UpdatedNumberScheduled, want)
	case d.Status.NumberAvailable < want:
		return progressing("%d of %d pods available", d.Status.NumberAvailable, want)
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("%d pods available", want)}
}

func replicaSet(obj *unstructured.Unstructured) Result {
	r, err := into[appsv1.ReplicaSet](obj)
	if err != nil {
		return unknown(err)
	}
	want := replicas(r.Spec.Replicas)
	if r.Status.AvailableReplicas < want {
		return progressing("%d of %d replicas available", r.Status.AvailableReplicas, want)
	}
	return Result{Status: Healthy}
}

func job(obj *unstructured.Unstructured) Result {
	j, err := into[batchv1.Job](obj)
	if err != nil {
		return unknown(err)
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return Result{Status: Degraded, Reason: c.Reason, Message: c.Message}
		case batchv1.JobComplete:
			return Result{Status: Healthy, Reason: string(c.Type), Message: "complete"}
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return Result{Status: Suspended, Reason: "Suspended", Message: "the Job is suspended"}
	}
	return progressing("%d pods active, %d succeeded", j.Status.Active, j.Status.Succeeded)
}

func cronJob(obj *unstructured.Unstructured) Result {
	c, err := into[batchv1.CronJob](obj)
	if err != nil {
		return unknown(err)
	}
	if c.Spec.Suspend != nil && *c.Spec.Suspend {
		return Result{Status: Suspended, Reason: "Suspended", Message: "the CronJob is suspended"}
	}
	return Result{Status: Healthy}
}

// badWaitingReasons are container states that do not clear without a change.
var badWaitingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true,
}

func pod(obj *unstructured.Unstructured) Result {
	p, err := into[corev1.Pod](obj)
	if err != nil {
		return unknown(err)
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return Result{Status: Healthy, Reason: string(p.Status.Phase)}
	case corev1.PodFailed:
		return Result{Status: Degraded, Reason: orString(p.Status.Reason, string(p.Status.Phase)), Message: p.Status.Message}
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && badWaitingReasons[w.Reason] {
			return Result{Status: Degraded, Reason: w.Reason, Message: fmt.Sprintf("container %s: %s", cs.Name, w.Message)}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return Result{Status: Healthy, Reason: string(p.Status.Phase)}
		}
	}
	return Result{Status: Progressing, Reason: string(p.Status.Phase), Message: "not ready"}
}

func pvc(obj *unstructured.Unstructured) Result {
	c, err := into[corev1.PersistentVolumeClaim](obj)
	if err != nil {
		return unknown(err)
	}
	switch c.Status.Phase {
	case corev1.ClaimBound:
		return Result{Status: Healthy, Reason: string(c.Status.Phase)}
	case corev1.ClaimLost:
		return Result{Status: Degraded, Reason: string(c.Status.Phase), Message: "the bound volume is gone"}
	}
	return Result{Status: Progressing, Reason: string(c.Status.Phase), Message: "not bound yet"}
}

func service(obj *unstructured.Unstructured) Result {
	s, err := into[corev1.Service](obj)
	if err != nil {
		return unknown(err)
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == 0 {
		return progressing("waiting for a load balancer address")
	}
	return Result{Status: Healthy}
}

func namespace(obj *unstructured.Unstructured) Result {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	if phase == string(corev1.NamespaceTerminating) {
		return Result{Status: Progressing, Reason: phase, Message: "being deleted"}
	}
	return Result{Status: Healthy, Reason: phase}
}

func crd(obj *unstructured.Unstructured) Result {
	conds := conditionsOf(obj)
	if c, ok := findCondition(conds, "NamesAccepted"); ok && c.Status == "False" {
		return Result{Status: Degraded, Reason: c.Reason, Message: c.Message}
	}
	if c, ok := findCondition(conds, "Established"); ok && c.Status == "True" {
		return Result{Status: Healthy, Reason: c.Reason}
	}
	return progressing("not established yet")
}
