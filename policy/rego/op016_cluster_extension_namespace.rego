# METADATA
# title: A ClusterExtension's namespace and service account are declared in the cluster-scope app
# description: >-
#   An OLM v1 ClusterExtension (olm.operatorframework.io/v1) installs an operator for the
#   whole cluster: it is cluster-scoped, so OP011 keeps it in the cluster-scope app, as
#   OP006 keeps a Subscription of an operator for all namespaces there. The namespace it
#   installs into (spec.namespace) must exist before OLM v1 installs anything, and is
#   declared in the cluster-scope app of the same cluster, as OP003 asks of an
#   OperatorGroup's target namespace. The ServiceAccount it names
#   (spec.serviceAccount.name, which OLM v1 up to 1.x installs with and which therefore
#   holds the extension's cluster-wide permissions; later releases ignore the field) is
#   declared there too, in spec.namespace. Declare the Namespace and the ServiceAccount in
#   the cluster-scope app.
# custom:
#   id: OP016
#   severity: error
#   kinds: [ClusterExtension]
#   adr: >-
#     it is desired to keep track of all resources which may effect other users and other
#     namespaces i.e. operators provisioned to manage all cluster namespaces.
package olmsync.rules.op016

import data.olmsync.lib

# extensions holds [i, j] for every ClusterExtension of OLM v1.
extensions contains [i, j] if {
	some i, j
	obj := input.apps[i].objects[j].object
	obj.kind == "ClusterExtension"
	startswith(obj.apiVersion, "olm.operatorframework.io/")
}

deny contains result if {
	some [i, j] in extensions
	app := input.apps[i]
	entry := app.objects[j]
	ns := object.get(lib.spec(entry.object), "namespace", "")
	is_string(ns)
	ns != ""
	not lib.cluster_scope_namespaces[ns]
	result := {
		"msg": sprintf("%s installs into namespace %q, %s", [lib.display(entry), ns, where_declared(ns)]),
		"object": lib.ref(app, entry),
	}
}

deny contains result if {
	some [i, j] in extensions
	app := input.apps[i]
	entry := app.objects[j]
	spec := lib.spec(entry.object)
	ns := object.get(spec, "namespace", "")
	sa := object.get(object.get(spec, "serviceAccount", {}), "name", "")
	is_string(sa)
	sa != ""
	not cluster_scope_service_accounts[[ns, sa]]
	result := {
		"msg": sprintf(
			"%s names ServiceAccount %q of namespace %q, which is not declared in the cluster-scope app; it holds the extension's cluster-wide permissions, so declare it there",
			[lib.display(entry), sa, ns],
		),
		"object": lib.ref(app, entry),
	}
}

# cluster_scope_service_accounts holds [namespace, name] of every ServiceAccount declared
# in a cluster-scope app.
cluster_scope_service_accounts contains [entry.namespace, lib.name(entry.object)] if {
	some app in input.apps
	lib.cluster_scope(app)
	some entry in app.objects
	entry.object.kind == "ServiceAccount"
	entry.object.apiVersion == "v1"
}

where_declared(ns) := msg if {
	apps := lib.namespace_apps[ns]
	msg := sprintf(
		"which is declared in %s, not in the cluster-scope app; declare the Namespace in the cluster-scope app",
		[concat(", ", [sprintf("app %q", [n]) | some n in sort(apps)])],
	)
} else := sprintf("but no Namespace %q is declared in the cluster-scope app; declare it there", [ns])
