package olmsync.rules.op013_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op013

odh := f.subscription("openshift-operators", "opendatahub-operator", "opendatahub-operator")

meta_config := {"metaOperators": ["opendatahub-operator"]}

test_ordinary_package_passes if {
	count(op013.deny) == 0 with input as f.cluster_with(meta_config, [f.cluster_scope([f.entry(f.subscription("openshift-operators", "etcd", "etcd"))])])
}

test_no_meta_operators_configured_passes if {
	count(op013.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(odh)])])
}

test_meta_operator_is_always_denied if {
	op013.deny == {{
		"msg": `Subscription "openshift-operators/opendatahub-operator" installs "opendatahub-operator", which the config lists as a meta-operator; record the review of what it may deploy in a waiver (olmsync.dev/waive: "OP013: <review>")`,
		"object": f.ref("cluster-scope", odh, "openshift-operators"),
	}} with input as f.cluster_with(meta_config, [f.cluster_scope([f.entry(odh)])])
}

# The package is spec.name, not the Subscription's own name.
test_package_not_subscription_name_is_matched if {
	renamed := f.subscription("openshift-operators", "odh", "opendatahub-operator")
	count(op013.deny) == 1 with input as f.cluster_with(meta_config, [f.cluster_scope([f.entry(renamed)])])
	other := f.subscription("openshift-operators", "opendatahub-operator", "etcd")
	count(op013.deny) == 0 with input as f.cluster_with(meta_config, [f.cluster_scope([f.entry(other)])])
}

test_subscription_with_null_spec_is_ignored if {
	broken := object.union(odh, {"spec": null})
	count(op013.deny) == 0 with input as f.cluster_with(meta_config, [f.cluster_scope([f.entry(broken)])])
}

test_cluster_extension_of_a_meta_operator_is_denied if {
	ext := {
		"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": {"name": "odh"},
		"spec": {"namespace": "odh", "source": {"sourceType": "Catalog", "catalog": {"packageName": "opendatahub-operator"}}},
	}
	op013.deny == {{
		"msg": `ClusterExtension "odh" installs "opendatahub-operator", which the config lists as a meta-operator; record the review of what it may deploy in a waiver (olmsync.dev/waive: "OP013: <review>")`,
		"object": f.ref("cluster-scope", ext, ""),
	}} with input as f.cluster_with({"metaOperators": ["opendatahub-operator"]}, [f.cluster_scope([f.entry(ext)])])
}
