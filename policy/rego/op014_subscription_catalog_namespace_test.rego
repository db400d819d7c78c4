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
