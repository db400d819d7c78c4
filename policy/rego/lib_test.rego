package olmsync.lib_test

import data.olmsync.fixtures as f
import data.olmsync.lib

test_group if {
	lib.group("v1") == ""
	lib.group("apps/v1") == "apps"
	lib.group("operators.coreos.com/v1alpha1") == "operators.coreos.com"
}

test_spec_of_null_or_missing_spec_is_empty if {
	lib.spec({"spec": null}) == {}
	lib.spec({}) == {}
	lib.spec({"spec": {"a": 1}}) == {"a": 1}
}

test_global if {
	every spec in [{}, null, {"selector": {}}, {"targetNamespaces": []}, {"upgradeStrategy": "Default"}] {
		lib.global(f.operator_group("a", "a", spec))
	}
	every spec in [{"targetNamespaces": ["a"]}, {"selector": {"matchLabels": {"a": "b"}}}, {"selector": {"a": "b"}}] {
		not lib.global(f.operator_group("a", "a", spec))
	}
}

test_indexes if {
	og := f.operator_group("team-a", "team-a", {"targetNamespaces": ["team-a"]})
	sub := f.subscription("team-a", "etcd", "etcd")
	doc := f.cluster([
		f.cluster_scope([f.entry(og), f.entry(f.namespace("team-a"))]),
		f.app("team-a", "team-a", [f.entry(sub), f.entry(f.namespace("team-x"))]),
	])
	lib.olm == {"OperatorGroup": {[0, 0]}, "Subscription": {[1, 0]}} with input as doc
	lib.groups == {
		"team-a": {{"name": "team-a", "app": "cluster-scope", "git": true, "global": false}},
		"openshift-operators": {{"name": "global-operators", "app": "", "git": false, "global": true}},
	} with input as doc
	lib.global_groups == {"openshift-operators": {{"name": "global-operators", "app": "", "git": false, "global": true}}} with input as doc
	lib.namespace_apps == {"team-a": {"cluster-scope"}, "team-x": {"team-a"}} with input as doc
	lib.cluster_scope_namespaces == {"team-a"} with input as doc
}

test_ref_and_display if {
	sub := f.subscription("", "etcd", "etcd")
	entry := f.entry_in(sub, "team-a")
	lib.display(entry) == `Subscription "team-a/etcd"`
	lib.ref({"name": "team-a"}, entry) == f.ref("team-a", sub, "team-a")
	lib.display(f.entry(f.namespace("x"))) == `Namespace "x"`
}

test_same_cluster if {
	doc := f.cluster([
		f.app("a", "a", []),
		f.app("b", "b", []),
		f.own_scope_app("x", "x", []),
		f.own_scope_app("y", "y", []),
	])
	lib.same_cluster("a", "b") with input as doc
	lib.same_cluster("x", "x") with input as doc
	lib.same_cluster("", "x") with input as doc
	lib.same_cluster("y", "") with input as doc
	not lib.same_cluster("x", "y") with input as doc
	not lib.same_cluster("a", "x") with input as doc
}
