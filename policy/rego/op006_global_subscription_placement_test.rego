package olmsync.rules.op006_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op006

global_sub := f.subscription("openshift-operators", "cert-manager", "cert-manager")

test_global_subscription_in_cluster_scope_app_passes if {
	count(op006.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(global_sub)])])
}

test_single_namespace_subscription_in_individual_app_passes if {
	count(op006.deny) == 0 with input as f.cluster([
		f.cluster_scope([f.entry(f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]}))]),
		f.app("team-a", "team-a", [f.entry(f.subscription("team-a", "etcd", "etcd"))]),
	])
}

# openshift-operators' group comes from the default config, not from Git.
test_subscription_under_the_clusters_global_group_is_denied if {
	op006.deny == {{
		"msg": `Subscription "openshift-operators/cert-manager" is declared in app "team-a", but OperatorGroup "global-operators" (on the cluster, outside Git) in its namespace selects all namespaces; Subscriptions of operators for all namespaces belong in the cluster-scope app`,
		"object": f.ref("team-a", global_sub, "openshift-operators"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(global_sub)])])
}

test_subscription_under_a_global_group_in_git_is_denied if {
	sub := f.subscription("team-a", "etcd", "etcd")
	op006.deny == {{
		"msg": `Subscription "team-a/etcd" is declared in app "team-a", but OperatorGroup "team-a" (app "cluster-scope") in its namespace selects all namespaces; Subscriptions of operators for all namespaces belong in the cluster-scope app`,
		"object": f.ref("team-a", sub, "team-a"),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(f.operator_group("team-a", "team-a", null))]),
		f.app("team-a", "team-a", [f.entry(sub)]),
	])
}

# A group selecting namespaces by label does not select all of them (OP002 refuses it).
test_label_selector_group_is_not_global if {
	count(op006.deny) == 0 with input as f.cluster([
		f.cluster_scope([f.entry(f.operator_group("team-a", "team-a", {"selector": {"matchLabels": {"a": "b"}}}))]),
		f.app("team-a", "team-a", [f.entry(f.subscription("team-a", "etcd", "etcd"))]),
	])
}

# A global group of another root whose cluster is unknown may be on another cluster.
test_global_group_of_another_unknown_cluster_is_not_compared if {
	sub := f.subscription("team-a", "etcd", "etcd")
	global_og := f.operator_group("team-a", "team-a", {})
	count(op006.deny) == 0 with input as f.cluster([
		f.own_scope_app("cluster-scope/overlays/x", "", [f.entry(global_og)]),
		f.own_scope_app("team-a/overlays/y", "team-a", [f.entry(sub)]),
	])
	count(op006.deny) == 1 with input as f.cluster([f.own_scope_app("team-a/overlays/y", "team-a", [f.entry(global_og), f.entry(sub)])])
}
