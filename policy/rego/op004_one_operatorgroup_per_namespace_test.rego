package olmsync.rules.op004_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op004

og_a := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]})

og_b := f.operator_group("team-a", "other", {})

test_one_group_per_namespace_passes if {
	count(op004.deny) == 0 with input as f.cluster([f.cluster_scope([
		f.entry(og_a),
		f.entry(f.operator_group("team-b", "team-b", {"targetNamespaces": ["team-b"]})),
	])])
}

test_two_groups_in_one_app_are_both_denied if {
	op004.deny == {
		{
			"msg": `OperatorGroup "team-a/team-a" shares namespace "team-a" with OperatorGroup "other" (app "cluster-scope"); a namespace holds at most one OperatorGroup`,
			"object": f.ref("cluster-scope", og_a, "team-a"),
		},
		{
			"msg": `OperatorGroup "team-a/other" shares namespace "team-a" with OperatorGroup "team-a" (app "cluster-scope"); a namespace holds at most one OperatorGroup`,
			"object": f.ref("cluster-scope", og_b, "team-a"),
		},
	} with input as f.cluster([f.cluster_scope([f.entry(og_a), f.entry(og_b)])])
}

# Across apps of the cluster, also when the second group takes its namespace from its app.
test_groups_across_apps_are_denied if {
	bare := f.operator_group("", "other", {})
	results := op004.deny with input as f.cluster([
		f.cluster_scope([f.entry(og_a)]),
		f.app("team-a", "team-a", [f.entry_in(bare, "team-a")]),
	])
	results == {
		{
			"msg": `OperatorGroup "team-a/team-a" shares namespace "team-a" with OperatorGroup "other" (app "team-a"); a namespace holds at most one OperatorGroup`,
			"object": f.ref("cluster-scope", og_a, "team-a"),
		},
		{
			"msg": `OperatorGroup "team-a/other" shares namespace "team-a" with OperatorGroup "team-a" (app "cluster-scope"); a namespace holds at most one OperatorGroup`,
			"object": f.ref("team-a", bare, "team-a"),
		},
	}
}

test_same_group_declared_by_two_apps_is_denied if {
	count(op004.deny) == 2 with input as f.cluster([
		f.cluster_scope([f.entry(og_a)]),
		f.app("team-a", "team-a", [f.entry(og_a)]),
	])
}

test_group_beside_one_the_cluster_has_is_denied if {
	other := f.operator_group("openshift-operators", "my-global", {})
	op004.deny == {{
		"msg": `OperatorGroup "openshift-operators/my-global" shares namespace "openshift-operators" with OperatorGroup "global-operators" (on the cluster, outside Git); a namespace holds at most one OperatorGroup`,
		"object": f.ref("cluster-scope", other, "openshift-operators"),
	}} with input as f.cluster([f.cluster_scope([f.entry(other)])])
}

# Declaring the group the cluster already has, under its own name, manages it from Git.
test_group_the_cluster_has_declared_in_git_passes if {
	same := f.operator_group("openshift-operators", "global-operators", {})
	count(op004.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(same)])])
}

test_three_groups_name_the_two_others if {
	og_c := f.operator_group("team-a", "third", {})
	results := op004.deny with input as f.cluster([f.cluster_scope([f.entry(og_a), f.entry(og_b), f.entry(og_c)])])
	count(results) == 3
	some r in results
	r.object.name == "third"
	r.msg == `OperatorGroup "team-a/third" shares namespace "team-a" with OperatorGroup "other" (app "cluster-scope") and OperatorGroup "team-a" (app "cluster-scope"); a namespace holds at most one OperatorGroup`
}

# Two kustomization roots whose clusters are unknown may deploy to two clusters: their
# groups of the same namespace are not compared. Within one such root they are.
test_groups_of_two_unknown_clusters_are_not_compared if {
	count(op004.deny) == 0 with input as f.cluster([
		f.own_scope_app("overlays/x", "", [f.entry(og_a)]),
		f.own_scope_app("overlays/y", "", [f.entry(og_b)]),
	])
	count(op004.deny) == 2 with input as f.cluster([f.own_scope_app("overlays/x", "", [f.entry(og_a), f.entry(og_b)])])
}

# A group the cluster has outside Git is on every cluster, an unknown one too.
test_group_of_unknown_cluster_beside_the_clusters_own_is_denied if {
	other := f.operator_group("openshift-operators", "my-global", {})
	count(op004.deny) == 1 with input as f.cluster([f.own_scope_app("overlays/x", "", [f.entry(other)])])
}
