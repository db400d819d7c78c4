package apply

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Stage is one step of a staged apply; every object of a stage is applied before any of
// the next.
type Stage int

// The stages, in the order they are applied (and, reversed, pruned).
const (
	// StageClusterSetup: Namespaces, CustomResourceDefinitions, ClusterRoles and
	// ClusterRoleBindings — what everything after needs to exist.
	StageClusterSetup Stage = iota
	// StageOLMSetup: OperatorGroups and CatalogSources, which a Subscription needs before
	// OLM can resolve it.
	StageOLMSetup
	// StageSubscriptions: Subscriptions, whose operators install the CRDs of the custom
	// resources of the last stage.
	StageSubscriptions
	// StageRest: everything else.
	StageRest
)

var stageNames = [...]string{"cluster setup", "OLM setup", "subscriptions", "rest"}

func (s Stage) String() string {
	if s < 0 || int(s) >= len(stageNames) {
		return "unknown stage"
	}
	return stageNames[s]
}

const (
	olmGroup  = "operators.coreos.com"
	rbacGroup = "rbac.authorization.k8s.io"
	crdGroup  = "apiextensions.k8s.io"
)

var (
	crdKind          = schema.GroupKind{Group: crdGroup, Kind: "CustomResourceDefinition"}
	subscriptionKind = schema.GroupKind{Group: olmGroup, Kind: "Subscription"}
)

func kindOf(o *unstructured.Unstructured) schema.GroupKind { return o.GroupVersionKind().GroupKind() }

func stageOf(o *unstructured.Unstructured) Stage {
	s, _ := StageOf(kindOf(o))
	return s
}

// StageOf is the stage of a kind, and its rank within the stage (Namespaces before CRDs
// before cluster RBAC, as kubectl and Flux order them).
func StageOf(gk schema.GroupKind) (Stage, int) {
	switch gk {
	case schema.GroupKind{Kind: "Namespace"}:
		return StageClusterSetup, 0
	case crdKind:
		return StageClusterSetup, 1
	case schema.GroupKind{Group: rbacGroup, Kind: "ClusterRole"}:
		return StageClusterSetup, 2
	case schema.GroupKind{Group: rbacGroup, Kind: "ClusterRoleBinding"}:
		return StageClusterSetup, 3
	case schema.GroupKind{Group: olmGroup, Kind: "OperatorGroup"}:
		return StageOLMSetup, 0
	case schema.GroupKind{Group: olmGroup, Kind: "CatalogSource"}:
		return StageOLMSetup, 1
	case subscriptionKind:
		return StageSubscriptions, 0
	}
	return StageRest, 0
}

// byStage orders kinds as they are applied: by stage, then by rank within the stage.
func byStage(x, y schema.GroupKind) int {
	sx, rx := StageOf(x)
	sy, ry := StageOf(y)
	return cmp.Or(cmp.Compare(sx, sy), cmp.Compare(rx, ry))
}

// Staged splits objects into the stages, in stage order; within a stage objects keep
// their order but for the rank of their kind. Empty stages are left out.
func Staged(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	sorted := slices.Clone(objs)
	slices.SortStableFunc(sorted, func(x, y *unstructured.Unstructured) int { return byStage(kindOf(x), kindOf(y)) })
	var out [][]*unstructured.Unstructured
	for i, o := range sorted {
		if i == 0 || stageOf(sorted[i-1]) != stageOf(o) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], o)
	}
	return out
}
