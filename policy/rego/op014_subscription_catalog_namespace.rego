# METADATA
# title: A Subscription's catalog is in a namespace OLM searches
# description: >-
#   OLM looks for the catalog a Subscription names (spec.source) only in the Subscription's
#   own namespace and in the global catalog namespace (the marketplace namespace of the
#   config: openshift-marketplace on OpenShift, olm on a plain OLM install), and not in
#   the global one when the namespace's OperatorGroup sets
#   olm.operatorframework.io/exclude-global-namespace-resolution. A Subscription whose
#   spec.sourceNamespace is any other namespace never resolves: OLM reports
#   ConstraintsNotSatisfiable ("no operators found from catalog ...") and installs
#   nothing. Set spec.sourceNamespace to the Subscription's namespace (with a
#   CatalogSource there) or to the global catalog namespace.
# custom:
#   id: OP014
#   severity: error
#   library: true
#   kinds: [Subscription]
#   olm: >-
#     Visible catalogs for the namespace = CatalogSources in the Subscription's namespace +
#     the global catalog namespace
package olmsync.rules.op014

import data.olmsync.lib

global_namespace := input.config.marketplaceNamespace

exclude_global_annotation := "olm.operatorframework.io/exclude-global-namespace-resolution"

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	source_ns := source_namespace(entry.object)
	not searched(app, entry.namespace, source_ns)
	result := {"msg": message(entry, source_ns, app), "object": lib.ref(app, entry)}
}

source_namespace(sub) := ns if {
	ns := lib.spec(sub).sourceNamespace
	is_string(ns)
} else := ""

# searched holds when OLM searches source_ns for the Subscription's catalog.
searched(_, ns, source_ns) if {
	source_ns != ""
	source_ns == ns
}

searched(app, ns, source_ns) if {
	source_ns != ""
	source_ns == global_namespace
	not excludes_global(app, ns)
}

# excludes_global holds when an OperatorGroup of the namespace, on the same cluster,
# turns off resolution from the global catalog namespace.
excludes_global(app, ns) if {
	some [group_ns, group_app] in exclusions
	group_ns == ns
	lib.same_cluster(app.name, group_app)
}

# exclusions holds [namespace, app name] for every OperatorGroup that turns off resolution
# from the global catalog namespace. Made once, in one pass over the groups: looking for
# them again for every Subscription was most of the rules' time on a cluster of hundreds of
# namespaces (a Subscription and an OperatorGroup each).
exclusions contains [entry.namespace, input.apps[k].name] if {
	some [k, l] in lib.olm.OperatorGroup
	entry := input.apps[k].objects[l]
	object.get(entry.object, ["metadata", "annotations", exclude_global_annotation], "") == "true"
}

message(entry, source_ns, _) := msg if {
	source_ns == ""
	msg := sprintf(
		"%s has no spec.sourceNamespace, so OLM cannot find its catalog %q; set it to the Subscription's namespace %q or the global catalog namespace %q",
		[lib.display(entry), object.get(lib.spec(entry.object), "source", ""), entry.namespace, global_namespace],
	)
}

message(entry, source_ns, app) := msg if {
	source_ns == global_namespace
	excludes_global(app, entry.namespace)
	msg := sprintf(
		"%s names catalog %q in the global catalog namespace %q, but the OperatorGroup of namespace %q sets %s: OLM will not look there, and the Subscription never resolves; use a CatalogSource in %q",
		[lib.display(entry), object.get(lib.spec(entry.object), "source", ""), source_ns, entry.namespace, exclude_global_annotation, entry.namespace],
	)
}

message(entry, source_ns, _) := msg if {
	source_ns != ""
	source_ns != global_namespace
	msg := sprintf(
		"%s names catalog %q in namespace %q; OLM looks for a Subscription's catalog only in its own namespace %q and the global catalog namespace %q, so it never resolves: set spec.sourceNamespace to one of them",
		[lib.display(entry), object.get(lib.spec(entry.object), "source", ""), source_ns, entry.namespace, global_namespace],
	)
}
