package olmsync.rules.op014_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op014

sub_from(ns, source_ns) := object.union(f.subscription(ns, "etcd", "etcd"), {"spec": {"sourceNamespace": source_ns}})

test_global_catalog_namespace_passes if {
	count(op014.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [f.entry(sub_from("team-a", "openshift-marketplace"))])])
}

test_own_namespace_passes if {
	count(op014.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [f.entry(sub_from("team-a", "team-a"))])])
}

# The global catalog namespace is the config's marketplace namespace (olm on plain OLM).
test_configured_global_namespace_passes if {
	count(op014.deny) == 0 with input as f.cluster_with({"marketplaceNamespace": "olm"}, [f.app("team-a", "team-a", [f.entry(sub_from("team-a", "olm"))])])
}

test_other_namespace_is_denied if {
	sub := sub_from("team-a", "team-b")
	op014.deny == {{
		"msg": `Subscription "team-a/etcd" names catalog "community-operators" in namespace "team-b"; OLM looks for a Subscription's catalog only in its own namespace "team-a" and the global catalog namespace "openshift-marketplace", so it never resolves: set spec.sourceNamespace to one of them`,
		"object": f.ref("team-a", sub, "team-a"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(sub)])])
}

test_missing_source_namespace_is_denied if {
	sub := json.remove(f.subscription("team-a", "etcd", "etcd"), ["spec/sourceNamespace"])
	op014.deny == {{
		"msg": `Subscription "team-a/etcd" has no spec.sourceNamespace, so OLM cannot find its catalog "community-operators"; set it to the Subscription's namespace "team-a" or the global catalog namespace "openshift-marketplace"`,
		"object": f.ref("team-a", sub, "team-a"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(sub)])])
}

test_global_namespace_excluded_by_the_operatorgroup_is_denied if {
	og := object.union(
		f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]}),
		{"metadata": {"annotations": {"olm.operatorframework.io/exclude-global-namespace-resolution": "true"}}},
	)
	sub := sub_from("team-a", "openshift-marketplace")
	results := op014.deny with input as f.cluster([f.cluster_scope([f.entry(og)]), f.app("team-a", "team-a", [f.entry(sub)])])
	count(results) == 1
	some r in results
	contains(r.msg, "olm.operatorframework.io/exclude-global-namespace-resolution")
}

excluding_group(ns) := object.union(
	f.operator_group(ns, ns, {"targetNamespaces": [ns]}),
	{"metadata": {"annotations": {"olm.operatorframework.io/exclude-global-namespace-resolution": "true"}}},
)

# Another namespace's group, or a group whose annotation is not "true", excludes nothing.
test_exclusion_applies_to_its_own_namespace_only if {
	sub := sub_from("team-a", "openshift-marketplace")
	count(op014.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(excluding_group("team-b"))]), f.app("team-a", "team-a", [f.entry(sub)])])
	not_true := json.patch(excluding_group("team-a"), [{"op": "replace", "path": "/metadata/annotations/olm.operatorframework.io~1exclude-global-namespace-resolution", "value": "false"}])
	count(op014.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(not_true)]), f.app("team-a", "team-a", [f.entry(sub)])])
}

# A group in an app whose cluster is unknown excludes the global namespace for the
# Subscriptions of its own app only: the others may run on another cluster.
test_exclusion_from_an_app_of_unknown_cluster if {
	sub := sub_from("team-a", "openshift-marketplace")
	count(op014.deny) == 0 with input as f.cluster([
		f.own_scope_app("overlays/x", "team-a", [f.entry(excluding_group("team-a"))]),
		f.app("team-a", "team-a", [f.entry(sub)]),
	])
	count(op014.deny) == 1 with input as f.cluster([f.own_scope_app("overlays/x", "team-a", [f.entry(excluding_group("team-a")), f.entry(sub)])])
}
