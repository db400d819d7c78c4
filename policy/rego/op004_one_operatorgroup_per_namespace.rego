# METADATA
# title: At most one OperatorGroup per namespace
# description: >-
#   A namespace of a cluster holds at most one OperatorGroup, counting every app of the
#   cluster and the groups the cluster has outside Git (from the config). With two, OLM
#   fails every CSV of the namespace (TooManyOperatorGroups) and resolves nothing there.
#   The same OperatorGroup declared by two apps is reported too: the apps would fight over
#   it. An OperatorGroup in Git with the name of a group the config lists for that
#   namespace is that group, managed from Git. Two apps whose clusters are unknown are
#   not compared: they may deploy to two clusters.
# custom:
#   id: OP004
#   severity: error
#   library: true
#   kinds: [OperatorGroup]
#   adr: >-
#     This resource is a singleton in namespace context. There can’t be multiple instances
#     of the said resource in the same namespace, even if the name differs.
package olmsync.rules.op004

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.OperatorGroup
	app := input.apps[i]
	entry := app.objects[j]
	ns := entry.namespace
	this := {"name": lib.name(entry.object), "app": app.name}
	others := sort([lib.describe_group(g) |
		some g in lib.groups[ns]
		not same(g, this)
		not managed_from_git(g, ns)
		lib.same_cluster(app.name, g.app)
	])
	count(others) > 0
	result := {
		"msg": sprintf(
			"%s shares namespace %q with %s; a namespace holds at most one OperatorGroup",
			[lib.display(entry), ns, concat(" and ", others)],
		),
		"object": lib.ref(app, entry),
	}
}

same(g, this) if {
	g.git
	g.name == this.name
	g.app == this.app
}

# managed_from_git holds for a group from the config that Git declares too (same name and
# namespace): applying it from Git updates that group rather than adding another.
managed_from_git(g, ns) if {
	not g.git
	some h in lib.groups[ns]
	h.git
	h.name == g.name
}
