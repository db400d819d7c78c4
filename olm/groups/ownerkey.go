package groups

// OwnerKey is the key under which the controllers' caches index what an owner made: its
// kind, namespace and name as OLM's owner labels write them (the name through LabelValue).
// An index keyed by it finds an owner's ClusterRoles or ClusterRoleBindings among every one
// OLM made in the cluster without matching each one's labels. Neither a namespace nor a
// name holds a "/", so no two owners share a key.
func OwnerKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + LabelValue(name)
}

// OwnerKeyOf is the OwnerKey that an object's owner labels name when its owner is of the
// given kind, and "" when it has no owner of that kind.
func OwnerKeyOf(kind string, labels map[string]string) string {
	if labels[OwnerKindLabel] != kind || labels[OwnerLabel] == "" {
		return ""
	}
	return kind + "/" + labels[OwnerNamespaceLabel] + "/" + labels[OwnerLabel]
}
