# METADATA
# title: A Subscription's namespace has an OperatorGroup
# description: >-
#   The namespace of every Subscription has an OperatorGroup: one declared in Git in any
#   app of the same cluster, or one the cluster has outside Git, listed in the config
#   (openshift-operators with its global-operators group is listed by default). Without
#   one OLM resolves nothing in the namespace and says so nowhere on the Subscription.
#   Declare the OperatorGroup in the cluster-scope app, or list the cluster's own group
#   in olmsync.yaml.
# custom:
#   id: OP005
#   severity: error
#   library: true
#   kinds: [Subscription]
#   adr: >-
#     The Subscription resource manifest is expected to be deployed to the same namespace
#     where the corresponding OperatorGroup is located.
package olmsync.rules.op005

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	ns := entry.namespace
	not lib.groups[ns]
	result := {"msg": message(entry, ns), "object": lib.ref(app, entry)}
}

message(entry, ns) := msg if {
	ns == ""
	msg := sprintf(
		"%s has no namespace, so it has no OperatorGroup; set metadata.namespace or the app's destination namespace",
		[lib.display(entry)],
	)
} else := msg if {
	input.library == true
	msg := sprintf(
		"%s has no OperatorGroup in its namespace %q in this library root; declare one beside it, or list the group the clusters already have in olmsync.yaml",
		[lib.display(entry), ns],
	)
} else := sprintf(
	"%s has no OperatorGroup in its namespace %q; declare one in the cluster-scope app, or list the group the cluster already has in olmsync.yaml",
	[lib.display(entry), ns],
)
