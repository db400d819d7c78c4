# METADATA
# title: A Subscription in an individual app is in the app's namespace
# description: >-
#   A Subscription declared in an individual app (not the cluster-scope app) is in that
#   app's destination namespace. A Subscription without metadata.namespace takes the app's
#   namespace and passes. An app with no destination namespace cannot be checked and is
#   skipped. Set the Subscription's namespace to the app's namespace, or move it to the
#   cluster-scope app.
# custom:
#   id: OP007
#   severity: error
#   kinds: [Subscription]
#   adr: >-
#     The Subscription resource can be hosted along with application manifests in an
#     application repository. This application has to be deployed to the same namespace
#     as specified for the subscription.
package olmsync.rules.op007

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	not lib.cluster_scope(app)
	app.namespace != ""
	entry := app.objects[j]
	entry.namespace != app.namespace
	result := {
		"msg": sprintf(
			"%s is in namespace %q, but app %q deploys to namespace %q; a Subscription in an individual app belongs in the app's namespace",
			[lib.display(entry), entry.namespace, app.name, app.namespace],
		),
		"object": lib.ref(app, entry),
	}
}
