package olmsync.rules.op007_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op007

test_subscription_in_app_namespace_passes if {
	count(op007.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [f.entry(f.subscription("team-a", "etcd", "etcd"))])])
}

# No metadata.namespace: the app's destination namespace is the Subscription's.
test_subscription_taking_app_namespace_passes if {
	bare := f.subscription("", "etcd", "etcd")
	count(op007.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [f.entry_in(bare, "team-a")])])
}

test_subscription_in_other_namespace_is_denied if {
	sub := f.subscription("team-b", "etcd", "etcd")
	op007.deny == {{
		"msg": `Subscription "team-b/etcd" is in namespace "team-b", but app "team-a" deploys to namespace "team-a"; a Subscription in an individual app belongs in the app's namespace`,
		"object": f.ref("team-a", sub, "team-b"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(sub)])])
}

test_cluster_scope_app_is_not_checked if {
	sub := f.subscription("openshift-operators", "etcd", "etcd")
	cs := object.union(f.cluster_scope([f.entry(sub)]), {"namespace": "somewhere"})
	count(op007.deny) == 0 with input as f.cluster([cs])
}

test_app_without_destination_namespace_is_skipped if {
	count(op007.deny) == 0 with input as f.cluster([f.app("team-a", "", [f.entry(f.subscription("team-b", "etcd", "etcd"))])])
}
