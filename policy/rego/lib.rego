# METADATA
# title: olmsync Rego library
# description: >-
#   Helpers the built-in placement rules share. Users' rules may import them
#   (import data.olmsync.lib). Every helper reads the input document described
#   in docs/policy.md: one cluster, its apps and their rendered objects.
package olmsync.lib

# olm_group is the API group of OLM's kinds.
olm_group := "operators.coreos.com"

# group is the API group of an apiVersion: "" for the core group ("v1").
group(api_version) := g if {
	contains(api_version, "/")
	g := split(api_version, "/")[0]
} else := ""

# name is an object's metadata.name, or "" when it has none.
name(obj) := n if {
	n := obj.metadata.name
	is_string(n)
} else := ""

# spec is an object's spec, or {} when it is absent or null (`spec:` with no value).
spec(obj) := s if {
	s := obj.spec
	is_object(s)
} else := {}

# cluster_scope holds for the cluster-scope app of the cluster (there may be more than one).
cluster_scope(app) if app.clusterScope == true

# own_scope is the set of names of the apps whose cluster is unknown (ownScope): a
# kustomization root no Application deploys and no path convention places. They share the
# input with the default cluster's other apps, but may run on other clusters.
own_scope := {app.name | some app in input.apps; app.ownScope == true}

# same_cluster(a, b) holds when the objects of the apps named a and b certainly land on
# one cluster: the same app, two apps of a known cluster, or a group the cluster has
# outside Git (app "", on every cluster). Rules that find a conflict between two objects
# (OP004, OP006, OP012) ask it; rules that look for a partner (OP003, OP005) do not, so an
# app of unknown cluster neither conflicts with nor misses what another app declares.
same_cluster(a, b) if a == b

same_cluster(a, b) if {
	a != b
	not own_scope[a]
	not own_scope[b]
}

same_cluster("", _)

same_cluster(_, "")

# display names an object entry the way messages do: Kind "namespace/name", or Kind "name"
# when it has no namespace.
display(entry) := sprintf("%s %q", [entry.object.kind, qualified(entry.namespace, name(entry.object))])

qualified(ns, n) := n if ns == ""

qualified(ns, n) := concat("/", [ns, n]) if ns != ""

# ref is the object of a rule result: which object of which app the result is about. The Go
# side uses it to attach the object's file and line.
ref(app, entry) := {
	"app": app.name,
	"apiVersion": object.get(entry.object, "apiVersion", ""),
	"kind": object.get(entry.object, "kind", ""),
	"namespace": entry.namespace,
	"name": name(entry.object),
}

# olm[kind] is the set of positions [i, j] of every OLM object of that kind, that is
# input.apps[i].objects[j]. Rules iterate it instead of every object of the cluster.
#
# This and the other indexes below are complete rules (one value, computed once per
# evaluation) rather than partial rules: a partial rule looked up by a key re-runs its
# body for every key, over every object of the cluster.
olm := {kind: positions |
	some [kind, _, _] in olm_positions
	positions := {[i, j] | some [k, i, j] in olm_positions; k == kind}
}

# olm_positions visits every object of the cluster once. It tests the group with
# startswith rather than group(): a function call per object doubles the cost.
olm_positions contains [obj.kind, i, j] if {
	some i, j
	obj := input.apps[i].objects[j].object
	startswith(obj.apiVersion, "operators.coreos.com/") # olm_group
}

# --- OperatorGroups -------------------------------------------------------------------

# target_namespaces is an OperatorGroup's spec.targetNamespaces, or [] when it has none.
target_namespaces(og) := t if {
	t := spec(og).targetNamespaces
	is_array(t)
} else := []

# has_selector holds when an OperatorGroup's spec.selector selects namespaces by label.
# OLM treats an absent, null or empty selector ({}, or only empty matchLabels and
# matchExpressions) as no selector at all.
has_selector(og) if {
	sel := spec(og).selector
	not blank_selector(sel)
}

blank_selector(sel) if sel == null

blank_selector(sel) if {
	is_object(sel)
	every key, value in sel {
		key in {"matchLabels", "matchExpressions"}
		blank(value)
	}
}

blank(value) if value == null

blank(value) if count(value) == 0

# global holds for an OperatorGroup that selects all namespaces: no target namespaces and no
# selector (OLM then writes status.namespaces: [""]).
global(og) if {
	count(target_namespaces(og)) == 0
	not has_selector(og)
}

global_flag(og) if {
	global(og)
} else := false

# groups[ns] is the set of OperatorGroups of namespace ns in this cluster, each
# {"name", "app", "git", "global"}: the ones declared in Git (app is the app declaring it)
# and the ones the cluster has outside Git, from the config (app is "", git is false).
groups := {ns: members |
	some [ns, _] in group_entries
	members := {g | some [n, g] in group_entries; n == ns}
}

group_entries contains [entry.namespace, g] if {
	some [i, j] in olm.OperatorGroup
	entry := input.apps[i].objects[j]
	g := {"name": name(entry.object), "app": input.apps[i].name, "git": true, "global": global_flag(entry.object)}
}

group_entries contains [c.namespace, g] if {
	some c in input.config.operatorGroups
	g := {"name": c.name, "app": "", "git": false, "global": c.global == true}
}

# global_groups[ns] is the set of groups of namespace ns that select all namespaces.
global_groups := {ns: members |
	some ns, all in groups
	members := {g | some g in all; g.global}
	count(members) > 0
}

# describe_group names a member of groups in messages.
describe_group(g) := sprintf("OperatorGroup %q (app %q)", [g.name, g.app]) if g.git

describe_group(g) := sprintf("OperatorGroup %q (on the cluster, outside Git)", [g.name]) if not g.git

# --- Namespaces -----------------------------------------------------------------------

# namespace_apps[n] is the set of names of the apps that declare the Namespace n.
namespace_apps := {n: apps |
	some [n, _, _] in namespace_entries
	apps := {a | some [m, a, _] in namespace_entries; m == n}
}

# cluster_scope_namespaces is the set of Namespaces declared in a cluster-scope app.
cluster_scope_namespaces := {n | some [n, _, true] in namespace_entries}

# namespace_entries holds [name, app name, app is cluster-scope] for every Namespace.
namespace_entries contains [name(obj), app.name, cluster_scope_flag(app)] if {
	some app in input.apps
	some entry in app.objects
	obj := entry.object
	obj.kind == "Namespace"
	obj.apiVersion == "v1"
}

cluster_scope_flag(app) if {
	cluster_scope(app)
} else := false
