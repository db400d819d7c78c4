package csv

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// nonStatusCopyHashAnnotation records on a copy the hash of the spec, labels and annotations it
// was written with (OLM's annotation): the API server defaults a CSV's spec, so comparing specs
// would rewrite every copy on every sync.
const nonStatusCopyHashAnnotation = "olm.operatorframework.io/nonStatusCopyHash"

// ensureCopies keeps the copies of the CSV in its group's target namespaces (seed 000, "Copied
// CSVs"): one in every existing target namespace but the group's own while the CSV is an
// active member, mirroring its spec and status with reason Copied, and none where OLM's
// dangling-copy rules say a copy must go.
func (r *Reconciler) ensureCopies(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	s.copies = map[string]*v1alpha1.ClusterServiceVersion{}
	// The cluster's namespaces are listed only when the CSV may have copies: an OwnNamespace
	// group's CSV, the most common, has none (the list cost a copy of every cached Namespace
	// on each sync: 13% of the manager's allocations in BenchmarkSteadyState).
	if og := s.evaluation.Membership.Group; og != nil && s.evaluation.Transition == nil && groups.Copyable(obj, og) {
		namespaces, err := r.liveNamespaces(ctx)
		if err != nil {
			return err
		}
		for _, ns := range groups.CopyNamespaces(obj, og, namespaces, r.Options.Copies) {
			c, err := r.ensureCopy(ctx, obj, ns)
			if err != nil {
				return err
			}
			if c != nil {
				s.copies[ns] = c
			}
		}
	}
	copies, err := r.copiesOf(ctx, obj.Namespace, obj.Name)
	if err != nil {
		return err
	}
	for _, d := range groups.DanglingCopies(append([]v1alpha1.ClusterServiceVersion{*obj}, copies...), r.Options.Copies) {
		c := &v1alpha1.ClusterServiceVersion{}
		c.Namespace, c.Name = d.Namespace, d.Name
		if err := r.Client.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete copied csv %s/%s (%s): %w", d.Namespace, d.Name, d.Reason, err)
		}
		delete(s.copies, d.Namespace)
		log.FromContext(ctx).V(1).Info("deleted copied csv", "namespace", d.Namespace, "reason", d.Reason)
	}
	return nil
}

// ensureCopy creates or updates the copy of parent in namespace, and returns it. A CSV of the
// same name that is not a copy is left alone (nil is returned): it is someone's own operator.
func (r *Reconciler) ensureCopy(ctx context.Context, parent *v1alpha1.ClusterServiceVersion, namespace string) (*v1alpha1.ClusterServiceVersion, error) {
	desired := groups.CopiedCSV(parent, namespace)
	hash, err := nonStatusHash(desired)
	if err != nil {
		return nil, err
	}
	desired.Annotations[nonStatusCopyHashAnnotation] = hash
	existing := &v1alpha1.ClusterServiceVersion{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case apierrors.IsNotFound(err):
		return r.createCopy(ctx, desired)
	case err != nil:
		return nil, fmt.Errorf("get copied csv %s/%s: %w", namespace, desired.Name, err)
	case !groups.IsCopied(existing):
		log.FromContext(ctx).Info("a csv that is not a copy has the copy's name; not copying", "namespace", namespace)
		return nil, nil
	}
	if existing.Annotations[nonStatusCopyHashAnnotation] != hash {
		existing.Labels, existing.Annotations = desired.Labels, desired.Annotations
		existing.Spec = desired.Spec
		if err := r.Client.Update(ctx, existing); err != nil {
			return nil, fmt.Errorf("update copied csv %s/%s: %w", namespace, desired.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(existing.Status, desired.Status) {
		existing.Status = desired.Status
		if err := r.Client.Status().Update(ctx, existing); err != nil {
			return nil, fmt.Errorf("update status of copied csv %s/%s: %w", namespace, desired.Name, err)
		}
	}
	return existing, nil
}

func (r *Reconciler) createCopy(ctx context.Context, desired *v1alpha1.ClusterServiceVersion) (*v1alpha1.ClusterServiceVersion, error) {
	status := desired.Status
	if err := r.Client.Create(ctx, desired); err != nil {
		return nil, fmt.Errorf("create copied csv %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	desired.Status = status
	if err := r.Client.Status().Update(ctx, desired); err != nil {
		return nil, fmt.Errorf("write status of copied csv %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return desired, nil
}

// nonStatusHash hashes what a copy takes from its parent besides the status.
func nonStatusHash(c *v1alpha1.ClusterServiceVersion) (string, error) {
	raw, err := json.Marshal(struct {
		Spec        v1alpha1.ClusterServiceVersionSpec
		Labels      map[string]string
		Annotations map[string]string
	}{c.Spec, c.Labels, c.Annotations})
	if err != nil {
		return "", fmt.Errorf("hash copied csv %s/%s: %w", c.Namespace, c.Name, err)
	}
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return strconv.FormatUint(h.Sum64(), 36), nil
}

// copiesOf lists the copies of the CSV namespace/name in other namespaces.
func (r *Reconciler) copiesOf(ctx context.Context, namespace, name string) ([]v1alpha1.ClusterServiceVersion, error) {
	var list v1alpha1.ClusterServiceVersionList
	opts := []client.ListOption{client.MatchingLabels{v1alpha1.CopiedLabelKey: namespace}}
	if r.indexed {
		opts = append(opts, client.MatchingFields{indexCopiedFrom: namespace + "/" + name})
	}
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list copies of csv %s/%s: %w", namespace, name, err)
	}
	var out []v1alpha1.ClusterServiceVersion
	for _, c := range list.Items {
		if c.Name == name && c.Namespace != namespace {
			out = append(out, c)
		}
	}
	return out, nil
}

// deleteCopies deletes every copy of the CSV namespace/name.
func (r *Reconciler) deleteCopies(ctx context.Context, namespace, name string) error {
	copies, err := r.copiesOf(ctx, namespace, name)
	if err != nil {
		return err
	}
	for i := range copies {
		if err := r.Client.Delete(ctx, &copies[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete copied csv %s/%s: %w", copies[i].Namespace, copies[i].Name, err)
		}
	}
	return nil
}

// liveNamespaces returns the names of the namespaces that are not being deleted: a namespace
// being deleted refuses new objects.
func (r *Reconciler) liveNamespaces(ctx context.Context) ([]string, error) {
	var list corev1.NamespaceList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([]string, 0, len(list.Items))
	for i := range list.Items {
		ns := &list.Items[i]
		if ns.DeletionTimestamp.IsZero() && ns.Status.Phase != corev1.NamespaceTerminating {
			out = append(out, ns.Name)
		}
	}
	return out, nil
}
