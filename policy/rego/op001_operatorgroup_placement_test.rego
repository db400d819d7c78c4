package olmsync.rules.op001_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op001

og := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]})

test_operator_group_in_cluster_scope_app_passes if {
	count(op001.deny) == 0 with input as f.cluster([
		f.cluster_scope([f.entry(og)]),
		f.app("team-a", "team-a", [f.entry(f.subscription("team-a", "etcd", "etcd"))]),
	])
}

test_operator_group_in_individual_app_is_denied if {
	op001.deny == {{
		"msg": `OperatorGroup "team-a/team-a" is declared in app "team-a", not in the cluster-scope app; declare OperatorGroups only in the cluster-scope app`,
		"object": f.ref("team-a", og, "team-a"),
	}} with input as f.cluster([f.cluster_scope([]), f.app("team-a", "team-a", [f.entry(og)])])
}

# The namespace an OperatorGroup without metadata.namespace takes from its app is the one
# reported.
test_operator_group_namespace_from_app_is_reported if {
	bare := f.operator_group("", "team-a", {})
	op001.deny == {{
		"msg": `OperatorGroup "team-a/team-a" is declared in app "team-a", not in the cluster-scope app; declare OperatorGroups only in the cluster-scope app`,
		"object": f.ref("team-a", bare, "team-a"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry_in(bare, "team-a")])])
}

# An OperatorGroup of another API group is not OLM's.
test_other_group_kind_is_ignored if {
	other := object.union(og, {"apiVersion": "example.com/v1"})
	count(op001.deny) == 0 with input as f.cluster([f.app("team-a", "team-a", [f.entry(other)])])
}
