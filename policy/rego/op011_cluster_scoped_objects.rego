# METADATA
# title: Cluster-scoped objects only in the cluster-scope app
# description: >-
#   Every cluster-scoped object (CustomResourceDefinitions, ClusterRoles,
#   ClusterRoleBindings, Namespaces, webhook configurations, any kind that is not
#   namespaced) is declared only in the cluster-scope app, as for an operator deployed
#   without OLM. A kind is cluster-scoped by olmsync's table of Kubernetes, OpenShift and
#   OLM kinds, or by a CustomResourceDefinition rendered in the same cluster; objects of
#   kinds olmsync cannot place (scope Unknown) are not reported. Move the object into the
#   cluster-scope app.
# custom:
#   id: OP011
#   severity: error
#   adr: >-
#     Some operators are not deployed via the OLM. That means, their manifests require
#     manual deployment of CustomResourceDefinitions, ClusterRoles etc. We require this
#     kind of resources to be deployed via cluster-scope application.
package olmsync.rules.op011

import data.olmsync.lib

deny contains result if {
	some app in input.apps
	not lib.cluster_scope(app)
	some entry in app.objects
	entry.scope == "Cluster"
	result := {
		"msg": sprintf(
			"%s is cluster-scoped and is declared in app %q; cluster-scoped objects belong in the cluster-scope app",
			[lib.display(entry), app.name],
		),
		"object": lib.ref(app, entry),
	}
}
