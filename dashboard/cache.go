package dashboard

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheByObject is what the dashboard adds to the manager's cache when it is on: the
// ReplicaSets and Pods it draws below OLM's Deployments, read through the cache as
// everything it shows is. Their informers start with the first view that reads them,
// and hold each object stripped to what its health needs (Transform), since they hold
// every ReplicaSet and Pod of the cluster: a live manifest is read from the API server.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&appsv1.ReplicaSet{}: {Transform: stripWorkload},
		&corev1.Pod{}:        {Transform: stripWorkload},
	}
}

// stripWorkload keeps of a ReplicaSet or a Pod its name, owners, generation and status,
// and a ReplicaSet's replica count: what the tree (controller ownerReferences) and
// health (kstatus reads status, spec.replicas and generation) read. The pod template,
// a Pod's spec, annotations and managedFields go.
func stripWorkload(obj any) (any, error) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		o.ManagedFields, o.Annotations = nil, nil
		o.Spec = appsv1.ReplicaSetSpec{Replicas: o.Spec.Replicas, MinReadySeconds: o.Spec.MinReadySeconds}
	case *corev1.Pod:
		o.ManagedFields, o.Annotations = nil, nil
		o.Spec = corev1.PodSpec{}
	}
	return obj, nil
}
