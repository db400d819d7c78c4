# METADATA
# title: Subscriptions of operators for all namespaces in the cluster-scope app
# description: >-
#   A Subscription whose namespace has an OperatorGroup that selects all namespaces
#   installs an operator with cluster-wide effect, so it is declared in the cluster-scope
#   app. The group may be declared in Git or be one the cluster has outside Git (the
#   config's openshift-operators/global-operators by default). Move the Subscription into
#   the cluster-scope app, or subscribe in the app's own namespace under a single-namespace
#   OperatorGroup.
# custom:
#   id: OP006
#   severity: error
#   kinds: [Subscription]
#   adr: >-
#     An operator with all namespaces visibility: For operators with global effect, we
#     expect the Subscription resource to be hosted in cluster-scope application only.
package olmsync.rules.op006

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	not lib.cluster_scope(app)
	entry := app.objects[j]
	some group in lib.global_groups[entry.namespace]
	lib.same_cluster(app.name, group.app)
	result := {
		"msg": sprintf(
			"%s is declared in app %q, but %s in its namespace selects all namespaces; Subscriptions of operators for all namespaces belong in the cluster-scope app",
			[lib.display(entry), app.name, lib.describe_group(group)],
		),
		"object": lib.ref(app, entry),
	}
}
