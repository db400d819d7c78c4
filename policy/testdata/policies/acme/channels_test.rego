package acme.channels_test

import data.acme.channels

sub(spec) := {
	"object": {
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind": "Subscription",
		"metadata": {"name": "etcd", "namespace": "team-a"},
		"spec": spec,
	},
	"source": {"file": "apps/team-a/subscription.yaml", "line": 1},
	"namespace": "team-a",
	"scope": "Namespaced",
}

cluster(name, entry) := {
	"apiVersion": "olmsync.dev/v1alpha1",
	"kind": "PolicyInput",
	"cluster": name,
	"config": {},
	"apps": [{"name": "team-a", "path": "apps/team-a", "namespace": "team-a", "clusterScope": false, "objects": [entry]}],
}

ref := {"app": "team-a", "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "namespace": "team-a", "name": "etcd"}

test_subscription_with_channel_passes if {
	count(channels.deny) == 0 with input as cluster("dev", sub({"name": "etcd", "channel": "stable"}))
}

test_subscription_without_channel_is_denied if {
	channels.deny == {{
		"msg": `Subscription "team-a/etcd" names no channel; set spec.channel`,
		"object": ref,
	}} with input as cluster("dev", sub({"name": "etcd"}))
}

test_automatic_approval_warns_in_prod_only if {
	automatic := sub({"name": "etcd", "channel": "stable"})
	count(channels.warn) == 0 with input as cluster("dev", automatic)
	channels.warn == {{
		"rule": "ACME002",
		"msg": `Subscription "team-a/etcd" approves InstallPlans automatically in production; set spec.installPlanApproval: Manual`,
		"object": ref,
	}} with input as cluster("prod", automatic)
	count(channels.warn) == 0 with input as cluster("prod", sub({"name": "etcd", "channel": "stable", "installPlanApproval": "Manual"}))
}
