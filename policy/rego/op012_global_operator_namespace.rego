# METADATA
# title: OLM objects of operators for all namespaces in the global operators namespace
# description: >-
#   An OperatorGroup that selects all namespaces, and the Subscriptions and
#   ClusterServiceVersions in a namespace whose OperatorGroup selects all namespaces, live
#   in the global operators namespace (openshift-operators unless the config says
#   otherwise). The ADR calls this a rule of thumb with agreed exceptions (ClusterLogging,
#   OpenShift Metering), so it is a warning: move the objects, or waive the warning for an
#   agreed exception.
# custom:
#   id: OP012
#   severity: warning
#   kinds: [OperatorGroup, Subscription, ClusterServiceVersion]
#   adr: >-
#     In general, the rule of thumb is to put them in openshift-operators, however we take
#     note that there may be various exceptions to this rule (e.g. ClusterLogging,
#     OpenShift Metering, etc.).
package olmsync.rules.op012

import data.olmsync.lib

global_namespace := input.config.globalOperatorsNamespace

warn contains result if {
	some [i, j] in lib.olm.OperatorGroup
	app := input.apps[i]
	entry := app.objects[j]
	lib.global(entry.object)
	entry.namespace != global_namespace
	result := {
		"msg": sprintf(
			"%s selects all namespaces but is in namespace %q; OLM objects of operators for all namespaces belong in %q unless the ADR agrees an exception",
			[lib.display(entry), entry.namespace, global_namespace],
		),
		"object": lib.ref(app, entry),
	}
}

warn contains result if {
	some kind in ["Subscription", "ClusterServiceVersion"]
	some [i, j] in lib.olm[kind]
	app := input.apps[i]
	entry := app.objects[j]
	ns := entry.namespace
	ns != global_namespace
	some group in lib.global_groups[ns]
	lib.same_cluster(app.name, group.app)
	result := {
		"msg": sprintf(
			"%s installs an operator for all namespaces (%s selects all namespaces) in namespace %q; OLM objects of operators for all namespaces belong in %q unless the ADR agrees an exception",
			[lib.display(entry), lib.describe_group(group), ns, global_namespace],
		),
		"object": lib.ref(app, entry),
	}
}
