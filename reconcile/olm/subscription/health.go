package subscription

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The messages of the CatalogSourcesUnhealthy condition, verbatim from OLM
// (pkg/controller/operators/catalog/subscription/state.go).
const (
	MessageAllCatalogSourcesHealthy = "all available catalogsources are healthy"
	MessageNoCatalogSourcesFound    = "dependency resolution requires at least one catalogsource"
)

// CatalogHealthy reports whether a CatalogSource can serve resolution: its spec is valid
// and its connection is READY. The embedded CatalogSource controller writes
// status.connectionState for every source type (OLM does the same for the registry pods it
// runs), so one rule covers configmap and image catalogs alike.
func CatalogHealthy(cs *v1alpha1.CatalogSource) bool {
	if cs.Status.Reason == v1alpha1.CatalogSourceSpecInvalidError {
		return false
	}
	s := cs.Status.GRPCConnectionState
	return s != nil && s.LastObservedState == v1alpha1.ConnectionStateReady
}

// UpdateCatalogHealth writes status.catalogHealth and the CatalogSourcesUnhealthy condition
// from the CatalogSources the Subscription can see (its namespace's and the global
// namespace's), as OLM's catalog health reconciler does: True with
// UnhealthyCatalogSourceFound when a catalog is unhealthy or the one the Subscription names
// is missing; False with AllCatalogSourcesHealthy otherwise; and, on the pass that sees the
// set change, the reason says how (CatalogSourcesAdded, CatalogSourcesDeleted,
// CatalogSourcesUpdated), or NoCatalogSourcesFound when there are none. It reports whether
// the status changed; lastUpdated moves only then.
func UpdateCatalogHealth(sub *v1alpha1.Subscription, visible []v1alpha1.CatalogSource, now metav1.Time) bool {
	sorted := slices.Clone(visible)
	slices.SortFunc(sorted, func(a, b v1alpha1.CatalogSource) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	health := make([]v1alpha1.SubscriptionCatalogHealth, 0, len(sorted))
	healthy, targetFound := true, false
	cond := v1alpha1.SubscriptionCondition{Type: v1alpha1.SubscriptionCatalogSourcesUnhealthy}
	for i := range sorted {
		cs := &sorted[i]
		h := CatalogHealthy(cs)
		health = append(health, v1alpha1.SubscriptionCatalogHealth{
			CatalogSourceRef: &corev1.ObjectReference{
				APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CatalogSourceKind,
				Namespace: cs.Namespace, Name: cs.Name, UID: cs.UID, ResourceVersion: cs.ResourceVersion,
			},
			LastUpdated: &now,
			Healthy:     h,
		})
		healthy = healthy && h
		if cs.Namespace == sub.Spec.CatalogSourceNamespace && cs.Name == sub.Spec.CatalogSource {
			targetFound = true
			if !h {
				cond.Message = fmt.Sprintf("targeted catalogsource %s/%s unhealthy", cs.Namespace, cs.Name)
			}
		}
	}
	switch {
	case !targetFound:
		cond.Message = fmt.Sprintf("targeted catalogsource %s/%s missing", sub.Spec.CatalogSourceNamespace, sub.Spec.CatalogSource)
		cond.Status, cond.Reason = corev1.ConditionTrue, v1alpha1.UnhealthyCatalogSourceFound
	case !healthy:
		cond.Status, cond.Reason = corev1.ConditionTrue, v1alpha1.UnhealthyCatalogSourceFound
	default:
		cond.Status, cond.Reason = corev1.ConditionFalse, v1alpha1.AllCatalogSourcesHealthy
		cond.Message = MessageAllCatalogSourcesHealthy
	}

	old := sub.Status.CatalogHealth
	setChanged := false
	switch {
	case len(health) > len(old):
		cond.Reason, setChanged = v1alpha1.CatalogSourcesAdded, true
	case len(health) < len(old):
		cond.Reason, setChanged = v1alpha1.CatalogSourcesDeleted, true
	case len(health) == 0:
		cond.Status, cond.Reason, cond.Message = corev1.ConditionTrue, v1alpha1.NoCatalogSourcesFound, MessageNoCatalogSourcesFound
	default:
		for i := range old {
			if !sameHealth(old[i], health[i]) {
				cond.Reason, setChanged = v1alpha1.CatalogSourcesUpdated, true
				break
			}
		}
	}
	if !setChanged {
		if c := Condition(&sub.Status, cond.Type); c != nil && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			return false
		}
	}
	// OLM moves the transition time on every write of this condition, not only when its
	// status flips: the reason records the change the pass saw.
	cond.LastTransitionTime = &now
	if c := Condition(&sub.Status, cond.Type); c != nil {
		*c = cond
	} else {
		sub.Status.Conditions = append(sub.Status.Conditions, cond)
	}
	sub.Status.CatalogHealth = health
	sub.Status.LastUpdated = now
	return true
}

// sameHealth compares two catalog health entries as OLM does: the same catalog (by UID,
// or by namespace and name when either has no UID) with the same health.
func sameHealth(a, b v1alpha1.SubscriptionCatalogHealth) bool {
	if a.Healthy != b.Healthy || a.CatalogSourceRef == nil || b.CatalogSourceRef == nil {
		return a.Healthy == b.Healthy && a.CatalogSourceRef == nil && b.CatalogSourceRef == nil
	}
	ar, br := a.CatalogSourceRef, b.CatalogSourceRef
	if ar.UID != "" && br.UID != "" {
		return ar.UID == br.UID
	}
	return ar.Namespace == br.Namespace && ar.Name == br.Name
}
