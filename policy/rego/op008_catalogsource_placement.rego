# METADATA
# title: CatalogSources only in the cluster-scope app, in the marketplace namespace
# description: >-
#   A CatalogSource is declared only in the cluster-scope app, and in the marketplace
#   namespace (openshift-marketplace unless the config says otherwise). Prefer publishing
#   the operator to a community catalog over adding a CatalogSource.
# custom:
#   id: OP008
#   severity: error
#   kinds: [CatalogSource]
#   adr: >-
#     If it is necessary to deploy an additional CatalogSource resource, this resource must
#     be deployed to the openshift-marketplace namespace and therefore must be declared
#     within the cluster-scope application.
package olmsync.rules.op008

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.CatalogSource
	app := input.apps[i]
	not lib.cluster_scope(app)
	entry := app.objects[j]
	result := {
		"msg": sprintf(
			"%s is declared in app %q, not in the cluster-scope app; declare CatalogSources only in the cluster-scope app",
			[lib.display(entry), app.name],
		),
		"object": lib.ref(app, entry),
	}
}

deny contains result if {
	some [i, j] in lib.olm.CatalogSource
	app := input.apps[i]
	entry := app.objects[j]
	marketplace := input.config.marketplaceNamespace
	entry.namespace != marketplace
	result := {
		"msg": sprintf(
			"%s is in namespace %q; CatalogSources belong in the marketplace namespace %q",
			[lib.display(entry), entry.namespace, marketplace],
		),
		"object": lib.ref(app, entry),
	}
}
