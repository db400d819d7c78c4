package olmsync.rules.op011_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op011

test_cluster_scoped_objects_in_cluster_scope_app_pass if {
	count(op011.deny) == 0 with input as f.cluster([
		f.cluster_scope([f.entry(f.namespace("team-a")), f.entry(f.cluster_role("team-a-admin"))]),
		f.app("team-a", "team-a", [f.entry(f.config_map("team-a", "settings"))]),
	])
}

test_cluster_role_in_individual_app_is_denied if {
	role := f.cluster_role("team-a-admin")
	op011.deny == {{
		"msg": `ClusterRole "team-a-admin" is cluster-scoped and is declared in app "team-a"; cluster-scoped objects belong in the cluster-scope app`,
		"object": f.ref("team-a", role, ""),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(role), f.entry(f.config_map("team-a", "settings"))])])
}

# The scope comes from the input (the Go side decides it); Unknown is not reported.
test_only_cluster_scope_is_reported if {
	widget := {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
	unknown := object.union(f.entry(widget), {"scope": "Unknown"})
	cluster := object.union(f.entry(widget), {"scope": "Cluster"})
	count(op011.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [unknown])])
	count(op011.deny) == 1 with input as f.cluster([f.app("team-a", "team-a", [cluster])])
}
