# METADATA
# title: Subscriptions to meta-operators need a recorded review
# description: >-
#   A meta-operator can deploy other operators at cluster scope. A Subscription to a
#   package the config lists as a meta-operator is always reported, until a waiver records
#   the review showing that the operator limits its own permissions or the create/edit
#   access to the custom resources it creates. Without such a review the ADR expects the
#   operator to be deployed directly, not through OLM. An OLM v1 ClusterExtension of such
#   a package (spec.source.catalog.packageName) is reported the same way.
# custom:
#   id: OP013
#   severity: error
#   kinds: [Subscription, ClusterExtension]
#   adr: >-
#     We expect meta-operators to provide options to either: Limit their permissions via
#     operator configuration, so they are not able to deploy resources requiring
#     cluster-admin permissions. Limit the create/edit access permission to the custom
#     resources they create, in order to limit normal project users or project admins
#     from escalating their privileges.
package olmsync.rules.op013

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	pkg := lib.spec(entry.object).name
	pkg in input.config.metaOperators
	result := {
		"msg": sprintf(
			`%s installs %q, which the config lists as a meta-operator; record the review of what it may deploy in a waiver (olmsync.dev/waive: "OP013: <review>")`,
			[lib.display(entry), pkg],
		),
		"object": lib.ref(app, entry),
	}
}

deny contains result if {
	some app in input.apps
	some entry in app.objects
	entry.object.kind == "ClusterExtension"
	startswith(entry.object.apiVersion, "olm.operatorframework.io/")
	pkg := object.get(lib.spec(entry.object), ["source", "catalog", "packageName"], "")
	pkg in input.config.metaOperators
	result := {
		"msg": sprintf(
			`%s installs %q, which the config lists as a meta-operator; record the review of what it may deploy in a waiver (olmsync.dev/waive: "OP013: <review>")`,
			[lib.display(entry), pkg],
		),
		"object": lib.ref(app, entry),
	}
}
