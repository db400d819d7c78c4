package olmtest

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeepDeploymentsAvailable plays the kubelet and Deployment controller envtest lacks until
// ctx ends: every Deployment in the namespaces (all when none are given) whose status is
// behind its spec is marked rolled out and Available.
func KeepDeploymentsAvailable(ctx context.Context, c client.Client, namespaces ...string) {
	KeepDeployments(ctx, c, nil, namespaces...)
}

// KeepDeployments is KeepDeploymentsAvailable, except that a Deployment for which failing
// returns true is marked as the Deployment controller marks one whose pods never become
// ready: Progressing=False, ProgressDeadlineExceeded (OLM fails its CSV at once).
func KeepDeployments(ctx context.Context, c client.Client, failing func(*appsv1.Deployment) bool, namespaces ...string) {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, ns := range namespaces {
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				continue
			}
			for i := range list.Items {
				d := &list.Items[i]
				fail := failing != nil && failing(d)
				if d.Status.ObservedGeneration == d.Generation && (fail && stalled(d) || !fail && available(d)) {
					continue
				}
				if fail {
					MarkStalled(d)
				} else {
					MarkAvailable(d)
				}
				_ = c.Status().Update(ctx, d) // a conflict is retried on the next tick
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// MarkAvailable sets a Deployment's status to rolled out and Available.
func MarkAvailable(d *appsv1.Deployment) {
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		// As the Deployment controller writes them: kstatus (the Sync's health) reads both.
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
}

// MarkStalled sets a Deployment's status to what the Deployment controller writes once its
// progress deadline has passed with no pod ready.
func MarkStalled(d *appsv1.Deployment) {
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"},
		},
	}
}

func available(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration != d.Generation {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func stalled(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}
