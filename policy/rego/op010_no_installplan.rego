# METADATA
# title: No InstallPlan in Git
# description: >-
#   OLM makes InstallPlans from Subscriptions; an InstallPlan is never declared in Git,
#   in any app. Remove it and let the Subscription produce the plan (use
#   installPlanApproval: Manual on the Subscription to approve plans by hand).
# custom:
#   id: OP010
#   severity: error
#   library: true
#   kinds: [InstallPlan]
#   adr: >-
#     Operators are not expected to deploy a custom Install plan. We expect every plan to
#     be provided by the Cluster service version resource belonging to the given operator.
package olmsync.rules.op010

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.InstallPlan
	app := input.apps[i]
	entry := app.objects[j]
	result := {
		"msg": sprintf(
			"%s is declared in Git (app %q); OLM makes InstallPlans from Subscriptions, so remove it",
			[lib.display(entry), app.name],
		),
		"object": lib.ref(app, entry),
	}
}
