package olmsync.rules.op005_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op005

sub := f.subscription("team-a", "etcd", "etcd")

test_group_in_cluster_scope_app_passes if {
	count(op005.deny) == 0 with input as f.cluster([
		f.cluster_scope([f.entry(f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]}))]),
		f.app("team-a", "team-a", [f.entry(sub)]),
	])
}

# Any app of the cluster counts (OP001 reports a group outside the cluster-scope app).
test_group_in_any_app_passes if {
	count(op005.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [
		f.entry(sub),
		f.entry(f.operator_group("team-a", "team-a", {})),
	])])
}

test_default_global_group_of_the_cluster_passes if {
	count(op005.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(f.subscription("openshift-operators", "etcd", "etcd"))])])
}

test_group_listed_in_config_passes if {
	config := {"operatorGroups": [{"namespace": "team-a", "name": "existing", "global": false}]}
	count(op005.deny) == 0 with input as f.cluster_with(config, [f.app("team-a", "team-a", [f.entry(sub)])])
}

test_subscription_without_group_is_denied if {
	op005.deny == {{
		"msg": `Subscription "team-a/etcd" has no OperatorGroup in its namespace "team-a"; declare one in the cluster-scope app, or list the group the cluster already has in olmsync.yaml`,
		"object": f.ref("team-a", sub, "team-a"),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(f.operator_group("team-b", "team-b", {}))]),
		f.app("team-a", "team-a", [f.entry(sub)]),
	])
}

# A config without the default group: openshift-operators has none then.
test_config_without_groups_is_honoured if {
	global_sub := f.subscription("openshift-operators", "etcd", "etcd")
	count(op005.deny) == 1 with input as f.cluster_with({"operatorGroups": []}, [f.cluster_scope([f.entry(global_sub)])])
}

test_subscription_without_namespace_is_denied if {
	bare := f.subscription("", "etcd", "etcd")
	op005.deny == {{
		"msg": `Subscription "etcd" has no namespace, so it has no OperatorGroup; set metadata.namespace or the app's destination namespace`,
		"object": f.ref("team-a", bare, ""),
	}} with input as f.cluster([f.app("team-a", "", [f.entry_in(bare, "")])])
}

# In a library root's input (issue 29), the group belongs beside the Subscription: nothing
# says there is a cluster-scope app.
test_library_root_subscription_without_group_says_beside_it if {
	op005.deny == {{
		"msg": `Subscription "team-a/etcd" has no OperatorGroup in its namespace "team-a" in this library root; declare one beside it, or list the group the clusters already have in olmsync.yaml`,
		"object": f.ref("team-a", sub, "team-a"),
	}} with input as object.union(f.cluster([f.app("team-a", "team-a", [f.entry(sub)])]), {"library": true})
}
