package groups

// OwnerKey is the key under which the controllers' caches index what an owner made: its
// kind, namespace and name as OLM's owner labels write them (the name through LabelValue).
// An index keyed by it finds an owner's ClusterRoles or ClusterRoleBindings among every one
// OLM made in the cluster without matching each one's labels. Neither a namespace nor a
// name holds a "/", so no two owners share a key.
func OwnerKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + LabelValue(name)
}

// OwnerKeysOf is what an owner index holds for an object: the OwnerKey its owner labels
// name when its owner is of the given kind, and none when it has no owner of that kind.
func OwnerKeysOf(kind string, labels map[string]string) []string {
	if labels[OwnerKindLabel] != kind || labels[OwnerLabel] == "" {
		return nil
	}
	return []string{kind + "/" + labels[OwnerNamespaceLabel] + "/" + labels[OwnerLabel]}
}
