package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InstallError says which object of an install the API server refused.
type InstallError struct {
	Kind, Namespace, Name string
	Err                   error
}

func (e *InstallError) Error() string {
	id := e.Name
	if e.Namespace != "" {
		id = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("apply %s %s: %v", e.Kind, id, e.Err)
}

func (e *InstallError) Unwrap() error { return e.Err }

// Install applies the objects of olmsync's rendered chart (`olmsync install`) in the order
// given (helm's install order) with server-side apply, field manager olmsync, into
// namespace, which it creates first when missing. Every object is tried; the errors of
// those refused are returned together. It returns once the CRDs it applied are
// established, so that Syncs can be created right after. applied is called after each
// object was applied.
func Install(ctx context.Context, c client.Client, namespace string, objs []*unstructured.Unstructured, applied func(*unstructured.Unstructured)) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(namespace)
	if err := c.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{}); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("read namespace %s: %w", namespace, err)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(ns), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return &InstallError{Kind: "Namespace", Name: namespace, Err: err}
		}
	}
	var errs []error
	var crds []string
	for _, o := range objs {
		o = o.DeepCopy()
		unstructured.RemoveNestedField(o.Object, "status")
		unstructured.RemoveNestedField(o.Object, "metadata", "creationTimestamp")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			errs = append(errs, &InstallError{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Err: err})
			continue
		}
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o.GetName())
		}
		if applied != nil {
			applied(o)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, name := range crds {
		if err := waitEstablished(ctx, c, name); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// WaitAvailable waits until the Deployment has rolled out its current generation and is
// Available, or ctx ends; the error then says what it last showed.
func WaitAvailable(ctx context.Context, c client.Client, key client.ObjectKey) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, key, d); err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("%d of %d replicas updated, %d available", d.Status.UpdatedReplicas, ptrOr(d.Spec.Replicas, 1), d.Status.AvailableReplicas)
		return rolledOut(d), nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s is not available: %s", key, last)
	}
	return nil
}

// rolledOut reports whether a Deployment runs its current generation and is Available.
func rolledOut(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < ptrOr(d.Spec.Replicas, 1) {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
