# METADATA
# title: Subscriptions name their channel
# description: >-
#   Every Subscription sets spec.channel, so that the operator does not move to another
#   channel when the package's default channel changes. In the production cluster,
#   Subscriptions also approve their InstallPlans by hand (ACME002, a warning).
# custom:
#   id: ACME001
#   severity: error
#   kinds: [Subscription]
package acme.channels

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	not lib.spec(entry.object).channel
	result := {
		"msg": sprintf("%s names no channel; set spec.channel", [lib.display(entry)]),
		"object": lib.ref(app, entry),
	}
}

warn contains result if {
	input.cluster == "prod"
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	object.get(lib.spec(entry.object), "installPlanApproval", "Automatic") != "Manual"
	result := {
		"rule": "ACME002",
		"msg": sprintf("%s approves InstallPlans automatically in production; set spec.installPlanApproval: Manual", [lib.display(entry)]),
		"object": lib.ref(app, entry),
	}
}
