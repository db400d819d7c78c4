package olmtest

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
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
//
// As the Deployment controller does, it keeps the Deployments with an informer (one list
// and watch, of every namespace or of the one given), so that it answers each change as it
// comes and asks the API server nothing while nothing changes: a benchmark's control plane
// serves the controllers it measures, not a poll. It polled every namespace each 100 ms
// before: in BenchmarkSteadyState a hundred lists a pass, up to ten passes a second (the
// rate was not counted), against the API server the controllers wait on. The informer's
// resync, each second, writes again what a refused write left behind. A client without
// watches (client.WithWatch) is polled still.
func KeepDeployments(ctx context.Context, c client.Client, failing func(*appsv1.Deployment) bool, namespaces ...string) {
	k := kubelet{c: c, failing: failing, want: map[string]bool{}}
	for _, ns := range namespaces {
		k.want[ns] = true
	}
	w, ok := c.(client.WithWatch)
	if !ok {
		k.poll(ctx, namespaces)
		return
	}
	namespace := "" // one watch for every namespace kept, whose events settle filters
	if len(namespaces) == 1 {
		namespace = namespaces[0]
	}
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				list := &appsv1.DeploymentList{}
				if err := w.List(ctx, list, &client.ListOptions{Namespace: namespace, Raw: &o}); err != nil {
					return nil, err
				}
				return list, nil
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return w.Watch(ctx, &appsv1.DeploymentList{}, &client.ListOptions{Namespace: namespace, Raw: &o})
			},
		},
		ObjectType:   &appsv1.Deployment{},
		ResyncPeriod: time.Second,
		Handler: cache.ResourceEventHandlerFuncs{
			// The informer's objects are its cache's: settle marks a copy.
			AddFunc:    func(obj any) { k.settle(ctx, obj.(*appsv1.Deployment).DeepCopy()) },
			UpdateFunc: func(_, obj any) { k.settle(ctx, obj.(*appsv1.Deployment).DeepCopy()) },
		},
	})
	informer.RunWithContext(ctx)
}

// kubelet is KeepDeployments' state: whom it answers and how.
type kubelet struct {
	c       client.Client
	failing func(*appsv1.Deployment) bool
	want    map[string]bool // the namespaces; every one when empty
}

// poll settles every Deployment of the namespaces each 100 ms, for a client without watches.
func (k *kubelet) poll(ctx context.Context, namespaces []string) {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, ns := range namespaces {
			var list appsv1.DeploymentList
			if err := k.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				continue
			}
			for i := range list.Items {
				k.settle(ctx, &list.Items[i])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// settle marks d rolled out and Available, or stalled when failing says so, unless its
// status says so already. A write that fails is made again on the next look (the next
// event or resync, or the next poll).
func (k *kubelet) settle(ctx context.Context, d *appsv1.Deployment) {
	if len(k.want) > 0 && !k.want[d.Namespace] {
		return
	}
	fail := k.failing != nil && k.failing(d)
	if d.Status.ObservedGeneration == d.Generation && (fail && stalled(d) || !fail && available(d)) {
		return
	}
	if fail {
		MarkStalled(d)
	} else {
		MarkAvailable(d)
	}
	_ = k.c.Status().Update(ctx, d)
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
