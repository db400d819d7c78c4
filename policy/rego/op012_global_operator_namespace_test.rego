package olmsync.rules.op012_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op012

test_global_operator_in_openshift_operators_passes if {
	count(op012.warn) == 0 with input as f.cluster([f.cluster_scope([
		f.entry(f.operator_group("openshift-operators", "global-operators", {})),
		f.entry(f.subscription("openshift-operators", "cert-manager", "cert-manager")),
	])])
}

test_single_namespace_operator_elsewhere_passes if {
	count(op012.warn) == 0 with input as f.cluster([f.cluster_scope([
		f.entry(f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]})),
		f.entry(f.subscription("team-a", "etcd", "etcd")),
	])])
}

test_global_operator_elsewhere_is_warned if {
	og := f.operator_group("openshift-logging", "cluster-logging", {})
	sub := f.subscription("openshift-logging", "cluster-logging", "cluster-logging")
	op012.warn == {
		{
			"msg": `OperatorGroup "openshift-logging/cluster-logging" selects all namespaces but is in namespace "openshift-logging"; OLM objects of operators for all namespaces belong in "openshift-operators" unless the ADR agrees an exception`,
			"object": f.ref("cluster-scope", og, "openshift-logging"),
		},
		{
			"msg": `Subscription "openshift-logging/cluster-logging" installs an operator for all namespaces (OperatorGroup "cluster-logging" (app "cluster-scope") selects all namespaces) in namespace "openshift-logging"; OLM objects of operators for all namespaces belong in "openshift-operators" unless the ADR agrees an exception`,
			"object": f.ref("cluster-scope", sub, "openshift-logging"),
		},
	} with input as f.cluster([f.cluster_scope([f.entry(og), f.entry(sub)])])
}

# A global group the cluster has outside Git counts; CSVs are reported too.
test_objects_under_a_configured_global_group_are_warned if {
	config := {"operatorGroups": [{"namespace": "openshift-operators-redhat", "name": "openshift-operators-redhat", "global": true}]}
	csv := f.csv("openshift-operators-redhat", "loki-operator.v5.9.0")
	op012.warn == {{
		"msg": `ClusterServiceVersion "openshift-operators-redhat/loki-operator.v5.9.0" installs an operator for all namespaces (OperatorGroup "openshift-operators-redhat" (on the cluster, outside Git) selects all namespaces) in namespace "openshift-operators-redhat"; OLM objects of operators for all namespaces belong in "openshift-operators" unless the ADR agrees an exception`,
		"object": f.ref("cluster-scope", csv, "openshift-operators-redhat"),
	}} with input as f.cluster_with(config, [f.cluster_scope([f.entry(csv)])])
}

test_configured_global_namespace_is_used if {
	og := f.operator_group("operators", "global-operators", {})
	count(op012.warn) == 0 with input as f.cluster_with({"globalOperatorsNamespace": "operators"}, [f.cluster_scope([f.entry(og)])])
	count(op012.warn) == 1 with input as f.cluster([f.cluster_scope([f.entry(og)])])
}

test_global_group_of_another_unknown_cluster_is_not_compared if {
	sub := f.subscription("team-a", "etcd", "etcd")
	count(op012.warn) == 1 with input as f.cluster([
		f.own_scope_app("x", "", [f.entry(f.operator_group("team-a", "team-a", {}))]),
		f.own_scope_app("y", "team-a", [f.entry(sub)]),
	])
}
