package olmsync.rules.op015_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op015

starting(csv) := object.union(f.subscription("openshift-operators", "etcd", "etcd"), {"spec": {"startingCSV": csv}})

denied(sub) := d if {
	d := op015.deny with input as f.cluster([f.cluster_scope([f.entry(sub)])])
}

test_no_starting_csv_passes if {
	count(denied(f.subscription("openshift-operators", "etcd", "etcd"))) == 0
}

test_valid_names_pass if {
	every name in ["etcdoperator.v0.9.4", "a", "cert-manager.v1.14.2", "x.y.z-1"] {
		count(denied(starting(name))) == 0
	}
}

test_malformed_name_is_denied if {
	sub := starting("Etcd Operator v0.9.4")
	denied(sub) == {{
		"msg": `Subscription "openshift-operators/etcd" names startingCSV "Etcd Operator v0.9.4", which is not a valid CSV name: a CSV is named by a lowercase RFC 1123 subdomain (lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character, at most 253 characters), such as etcdoperator.v0.9.4`,
		"object": f.ref("cluster-scope", sub, "openshift-operators"),
	}}
}

test_other_malformed_names_are_denied if {
	long := concat("", [x | some _ in numbers.range(1, 254); x := "a"])
	every name in ["", "etcd.", "-etcd", "etcd..v1", "etcd_v1", "ETCD.v1", "etcd.v1 ", 7, long] {
		count(denied(starting(name))) == 1
	}
}

test_a_name_of_253_characters_passes if {
	name := concat("", [x | some _ in numbers.range(1, 253); x := "a"])
	count(denied(starting(name))) == 0
}
