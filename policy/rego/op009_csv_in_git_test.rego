package olmsync.rules.op009_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op009

csv := f.csv("openshift-operators", "etcdoperator.v0.9.4")

test_no_csv_passes if {
	results := {"deny": op009.deny, "warn": op009.warn} with input as f.cluster([
		f.cluster_scope([f.entry(f.subscription("openshift-operators", "etcd", "etcd"))]),
	])
	results == {"deny": set(), "warn": set()}
}

test_csv_in_cluster_scope_app_is_a_warning if {
	results := {"deny": op009.deny, "warn": op009.warn} with input as f.cluster([f.cluster_scope([f.entry(csv)])])
	results == {"deny": set(), "warn": {{
		"msg": `ClusterServiceVersion "openshift-operators/etcdoperator.v0.9.4" is declared in Git; a ClusterServiceVersion is expected to come from a catalog through a Subscription`,
		"object": f.ref("cluster-scope", csv, "openshift-operators"),
	}}}
}

test_csv_in_individual_app_is_an_error if {
	results := {"deny": op009.deny, "warn": op009.warn} with input as f.cluster([f.app("team-a", "team-a", [f.entry(csv)])])
	results == {"warn": set(), "deny": {{
		"msg": `ClusterServiceVersion "openshift-operators/etcdoperator.v0.9.4" is declared in app "team-a"; a ClusterServiceVersion in Git belongs in the cluster-scope app only, and is normally installed from a catalog through a Subscription`,
		"object": f.ref("team-a", csv, "openshift-operators"),
	}}}
}
