package olmsync.rules.op010_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op010

test_no_installplan_passes if {
	count(op010.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(f.subscription("openshift-operators", "etcd", "etcd"))])])
}

test_installplan_in_cluster_scope_app_is_denied if {
	plan := f.install_plan("openshift-operators", "install-abcde")
	op010.deny == {{
		"msg": `InstallPlan "openshift-operators/install-abcde" is declared in Git (app "cluster-scope"); OLM makes InstallPlans from Subscriptions, so remove it`,
		"object": f.ref("cluster-scope", plan, "openshift-operators"),
	}} with input as f.cluster([f.cluster_scope([f.entry(plan)])])
}

test_installplan_in_individual_app_is_denied if {
	plan := f.install_plan("team-a", "install-abcde")
	count(op010.deny) == 1 with input as f.cluster([f.app("team-a", "team-a", [f.entry(plan)])])
}
