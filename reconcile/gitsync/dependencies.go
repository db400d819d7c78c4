package gitsync

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// dependsOnIndex is the field index of the Syncs a Sync depends on ("namespace/name"), so
// that a dependency becoming Ready wakes its dependents at once.
const dependsOnIndex = ".spec.dependsOn"

// dependencies holds the pipeline until every Sync of spec.dependsOn is Ready for its
// current generation (step 0). A missing dependency or a cycle waits like a dependency
// that is not Ready, at the retry interval: another Sync's change can end either.
func (r *Reconciler) dependencies(ctx context.Context, obj *olmsyncv1alpha1.Sync, _ *pass) error {
	if len(obj.Spec.DependsOn) == 0 {
		conditions.Delete(obj, olmsyncv1alpha1.DependencyNotReadyCondition)
		return nil
	}
	msg, err := unready(obj, func(key types.NamespacedName) (*olmsyncv1alpha1.Sync, error) {
		s := &olmsyncv1alpha1.Sync{}
		if err := r.Client.Get(ctx, key, s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	if msg != "" {
		conditions.MarkTrue(obj, olmsyncv1alpha1.DependencyNotReadyCondition, olmsyncv1alpha1.DependencyNotReadyReason, "%s", msg)
		return waiting("%s", msg)
	}
	conditions.Delete(obj, olmsyncv1alpha1.DependencyNotReadyCondition)
	return nil
}

// dependencyKey is a dependency's namespace and name, its namespace defaulting to the
// depending Sync's.
func dependencyKey(obj *olmsyncv1alpha1.Sync, d olmsyncv1alpha1.DependencyReference) types.NamespacedName {
	ns := d.Namespace
	if ns == "" {
		ns = obj.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: d.Name}
}

// unready says why obj may not go on ("" when it may): the first dependency that is
// missing or not Ready for its generation, or a cycle through obj. get returns nil for a
// Sync that does not exist. It is pure over get, so the rule is table-tested alone.
func unready(obj *olmsyncv1alpha1.Sync, get func(types.NamespacedName) (*olmsyncv1alpha1.Sync, error)) (string, error) {
	self := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	if cycle, err := findCycle(obj, self, get); err != nil || cycle != nil {
		if err != nil {
			return "", err
		}
		names := make([]string, len(cycle))
		for i, k := range cycle {
			names[i] = k.String()
		}
		return "dependency cycle: " + strings.Join(names, " -> "), nil
	}
	for _, d := range obj.Spec.DependsOn {
		key := dependencyKey(obj, d)
		dep, err := get(key)
		if err != nil {
			return "", err
		}
		switch {
		case dep == nil:
			return fmt.Sprintf("dependency '%s' not found", key), nil
		case dep.Generation != dep.Status.ObservedGeneration:
			return fmt.Sprintf("dependency '%s' is not ready: generation %d not reconciled yet", key, dep.Generation), nil
		case !conditions.IsReady(dep):
			return fmt.Sprintf("dependency '%s' is not ready", key), nil
		}
	}
	return "", nil
}

// findCycle walks spec.dependsOn depth-first from obj and returns the path back to self,
// or nil when there is none. Syncs that do not exist end their branch.
func findCycle(obj *olmsyncv1alpha1.Sync, self types.NamespacedName, get func(types.NamespacedName) (*olmsyncv1alpha1.Sync, error)) ([]types.NamespacedName, error) {
	seen := map[types.NamespacedName]bool{}
	var walk func(s *olmsyncv1alpha1.Sync, path []types.NamespacedName) ([]types.NamespacedName, error)
	walk = func(s *olmsyncv1alpha1.Sync, path []types.NamespacedName) ([]types.NamespacedName, error) {
		for _, d := range s.Spec.DependsOn {
			key := dependencyKey(s, d)
			next := append(path[:len(path):len(path)], key)
			if key == self {
				return next, nil
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			dep, err := get(key)
			if err != nil {
				return nil, err
			}
			if dep == nil {
				continue
			}
			if c, err := walk(dep, next); c != nil || err != nil {
				return c, err
			}
		}
		return nil, nil
	}
	return walk(obj, []types.NamespacedName{self})
}

// dependents maps a Sync to the Syncs that depend on it, through the field index.
func (r *Reconciler) dependents(ctx context.Context, o client.Object) []reconcile.Request {
	var list olmsyncv1alpha1.SyncList
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
	if err := r.Client.List(ctx, &list, client.MatchingFields{dependsOnIndex: key}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, s := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
	}
	return out
}

// dependsOnKeys is the index function of dependsOnIndex.
func dependsOnKeys(o client.Object) []string {
	s, ok := o.(*olmsyncv1alpha1.Sync)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(s.Spec.DependsOn))
	for _, d := range s.Spec.DependsOn {
		out = append(out, dependencyKey(s, d).String())
	}
	return out
}
