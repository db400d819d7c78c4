package olmsync.rules.op003_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op003

og := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]})

test_target_declared_in_cluster_scope_app_passes if {
	count(op003.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(og), f.entry(f.namespace("team-a"))])])
}

# A global group and a group of several namespaces have no single target (OP002 judges them).
test_groups_without_single_target_are_ignored if {
	every spec in [{}, {"targetNamespaces": ["a", "b"]}, {"targetNamespaces": [""]}, {"selector": {"matchLabels": {"a": "b"}}}] {
		count(op003.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(f.operator_group("team-a", "team-a", spec))])])
	}
}

test_undeclared_target_is_denied if {
	op003.deny == {{
		"msg": `OperatorGroup "team-a/team-a" targets namespace "team-a", but no Namespace "team-a" is declared in the cluster-scope app; declare it there`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as f.cluster([f.cluster_scope([f.entry(og), f.entry(f.namespace("team-b"))])])
}

test_target_declared_in_individual_app_is_denied if {
	op003.deny == {{
		"msg": `OperatorGroup "team-a/team-a" targets namespace "team-a", which is declared in app "team-a", not in the cluster-scope app; declare the Namespace in the cluster-scope app`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(og)]),
		f.app("team-a", "team-a", [f.entry(f.namespace("team-a"))]),
	])
}

test_target_declared_in_several_individual_apps_lists_them if {
	op003.deny == {{
		"msg": `OperatorGroup "team-a/team-a" targets namespace "team-a", which is declared in apps "x", "y", not in the cluster-scope app; declare the Namespace in the cluster-scope app`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(og)]),
		f.app("y", "team-a", [f.entry(f.namespace("team-a"))]),
		f.app("x", "team-a", [f.entry(f.namespace("team-a"))]),
	])
}

# The target may differ from the group's own namespace; it is the target that must exist.
test_target_other_than_own_namespace_is_checked if {
	other := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-b"]})
	count(op003.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(other), f.entry(f.namespace("team-b"))])])
	count(op003.deny) == 1 with input as f.cluster([f.cluster_scope([f.entry(other), f.entry(f.namespace("team-a"))])])
}

# A Namespace of another API group does not count.
test_namespace_of_other_group_does_not_count if {
	fake := object.union(f.namespace("team-a"), {"apiVersion": "example.com/v1"})
	count(op003.deny) == 1 with input as f.cluster([f.cluster_scope([f.entry(og), f.entry(fake)])])
}
