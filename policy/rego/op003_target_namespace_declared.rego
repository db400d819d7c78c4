# METADATA
# title: A single target namespace is declared in the cluster-scope app
# description: >-
#   When an OperatorGroup names exactly one target namespace, a Namespace of that name is
#   declared in the cluster-scope app of the same cluster. Declare the Namespace in the
#   cluster-scope app (moving it there if an individual app declares it).
# custom:
#   id: OP003
#   severity: error
#   kinds: [OperatorGroup]
#   adr: >-
#     A single namespace operator. Resource manifest specifies .spec.targetNamespaces: [
#     SINGLE_MEMBER_NAMESPACE ]. This namespace has to be deployed via cluster-scope
#     application as well.
package olmsync.rules.op003

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.OperatorGroup
	app := input.apps[i]
	entry := app.objects[j]
	[target] := lib.target_namespaces(entry.object)
	target != ""
	not lib.cluster_scope_namespaces[target]
	result := {
		"msg": sprintf("%s targets namespace %q, %s", [lib.display(entry), target, where_declared(target)]),
		"object": lib.ref(app, entry),
	}
}

where_declared(target) := msg if {
	apps := lib.namespace_apps[target]
	msg := sprintf(
		"which is declared in %s, not in the cluster-scope app; declare the Namespace in the cluster-scope app",
		[app_list(apps)],
	)
} else := sprintf("but no Namespace %q is declared in the cluster-scope app; declare it there", [target])

app_list(apps) := sprintf("app %q", [n]) if {
	count(apps) == 1
	some n in apps
} else := sprintf("apps %s", [concat(", ", [sprintf("%q", [n]) | some n in sort(apps)])])
