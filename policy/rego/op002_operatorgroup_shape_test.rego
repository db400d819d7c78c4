package olmsync.rules.op002_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op002

in_cluster_scope(og) := f.cluster([f.cluster_scope([f.entry(og)])])

test_allowed_shapes_pass if {
	every spec in [
		{},
		null,
		{"targetNamespaces": ["team-a"]},
		{"targetNamespaces": []},
		{"selector": {}},
		{"selector": null},
		{"selector": {"matchLabels": {}}},
		{"selector": {}, "targetNamespaces": ["team-a"]},
		{"upgradeStrategy": "Default"},
		{"serviceAccountName": "scoped", "targetNamespaces": ["team-a"]},
	] {
		count(op002.deny) == 0 with input as in_cluster_scope(f.operator_group("team-a", "team-a", spec))
	}
}

# `spec:` with no value and no spec at all are global groups.
test_missing_spec_passes if {
	og := object.remove(f.operator_group("team-a", "team-a", {}), ["spec"])
	count(op002.deny) == 0 with input as in_cluster_scope(og)
}

test_several_target_namespaces_are_denied if {
	og := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a", "team-b", "team-c"]})
	op002.deny == {{
		"msg": `OperatorGroup "team-a/team-a" names 3 target namespaces (team-a, team-b, team-c); an OperatorGroup is either global (no targetNamespaces, no selector) or names exactly one target namespace`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as in_cluster_scope(og)
}

test_label_selector_is_denied if {
	og := f.operator_group("team-a", "team-a", {"selector": {"matchLabels": {"cool.io/prod": "true"}}})
	op002.deny == {{
		"msg": `OperatorGroup "team-a/team-a" selects its target namespaces with a label selector; an OperatorGroup is either global (no targetNamespaces, no selector) or names exactly one target namespace`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as in_cluster_scope(og)
}

# olm-docs publishes a selector holding a label directly (not a LabelSelector); it is not
# blank, so it is a selector too.
test_bare_label_selector_is_denied if {
	og := f.operator_group("team-a", "team-a", {"selector": {"cool.io/prod": "true"}})
	count(op002.deny) == 1 with input as in_cluster_scope(og)
}

test_match_expressions_selector_is_denied if {
	og := f.operator_group("team-a", "team-a", {"selector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}})
	count(op002.deny) == 1 with input as in_cluster_scope(og)
}

test_selector_beside_target_namespace_is_denied if {
	og := f.operator_group("team-a", "team-a", {
		"targetNamespaces": ["team-a"],
		"selector": {"matchLabels": {"cool.io/prod": "true"}},
	})
	op002.deny == {{
		"msg": `OperatorGroup "team-a/team-a" sets both targetNamespaces and a selector, and OLM ignores the selector when targetNamespaces is set; remove the selector`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as in_cluster_scope(og)
}

test_empty_target_namespace_is_denied if {
	og := f.operator_group("team-a", "team-a", {"targetNamespaces": [""]})
	op002.deny == {{
		"msg": `OperatorGroup "team-a/team-a" names the empty namespace "" as its target, which OLM refuses; leave out targetNamespaces for a global OperatorGroup`,
		"object": f.ref("cluster-scope", og, "team-a"),
	}} with input as in_cluster_scope(og)
}

# The shape is checked wherever the OperatorGroup is declared (OP001 reports the place).
test_shape_is_checked_in_individual_apps_too if {
	og := f.operator_group("team-a", "team-a", {"targetNamespaces": ["a", "b"]})
	count(op002.deny) == 1 with input as f.cluster([f.app("team-a", "team-a", [f.entry(og)])])
}
