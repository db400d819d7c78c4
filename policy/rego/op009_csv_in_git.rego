# METADATA
# title: ClusterServiceVersions in Git only in the cluster-scope app, and flagged there
# description: >-
#   A ClusterServiceVersion is normally installed by OLM from a catalog through a
#   Subscription. One declared in Git is an error outside the cluster-scope app and a
#   warning inside it. Subscribe to the operator from a catalog instead; if a custom CSV
#   is really needed, declare it in the cluster-scope app.
# custom:
#   id: OP009
#   severity: error
#   kinds: [ClusterServiceVersion]
#   adr: >-
#     This resource is not meant to be deployed manually and is expected to be provided
#     from a Catalog source. If there’s really a need to deploy a custom Cluster service
#     version, the resource has to live within the cluster-scope application.
package olmsync.rules.op009

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.ClusterServiceVersion
	app := input.apps[i]
	not lib.cluster_scope(app)
	entry := app.objects[j]
	result := {
		"msg": sprintf(
			"%s is declared in app %q; a ClusterServiceVersion in Git belongs in the cluster-scope app only, and is normally installed from a catalog through a Subscription",
			[lib.display(entry), app.name],
		),
		"object": lib.ref(app, entry),
	}
}

warn contains result if {
	some [i, j] in lib.olm.ClusterServiceVersion
	app := input.apps[i]
	lib.cluster_scope(app)
	entry := app.objects[j]
	result := {
		"msg": sprintf(
			"%s is declared in Git; a ClusterServiceVersion is expected to come from a catalog through a Subscription",
			[lib.display(entry)],
		),
		"object": lib.ref(app, entry),
	}
}
