# METADATA
# title: OperatorGroups only in the cluster-scope app
# description: >-
#   An OperatorGroup is declared only in the cluster-scope app of its cluster. An
#   OperatorGroup is a singleton in its namespace, makes OLM generate ClusterRoles and
#   aggregation rules, and can give an operator every namespace, so only cluster admins
#   manage it. Move the OperatorGroup into the cluster-scope app; keep the Subscription in
#   the individual app if the operator watches only that app's namespace.
# custom:
#   id: OP001
#   severity: error
#   kinds: [OperatorGroup]
#   adr: >-
#     An OperatorGroup resource is a namespace-scoped resource. However we require this
#     resource to be placed in the cluster-scope application only
package olmsync.rules.op001

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.OperatorGroup
	app := input.apps[i]
	not lib.cluster_scope(app)
	entry := app.objects[j]
	result := {
		"msg": sprintf(
			"%s is declared in app %q, not in the cluster-scope app; declare OperatorGroups only in the cluster-scope app",
			[lib.display(entry), app.name],
		),
		"object": lib.ref(app, entry),
	}
}
