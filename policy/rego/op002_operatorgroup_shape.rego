# METADATA
# title: OperatorGroups are global or target exactly one namespace
# description: >-
#   An OperatorGroup is either global (neither spec.targetNamespaces nor spec.selector:
#   OLM makes it select all namespaces) or names exactly one target namespace in
#   spec.targetNamespaces. A label selector, several target namespaces, the empty
#   namespace "" (which OLM refuses) and a selector next to targetNamespaces (which OLM
#   ignores) are refused. A null or empty spec, an empty selector ({}) and other spec
#   fields (upgradeStrategy, serviceAccountName) do not change the target namespaces and
#   are allowed.
# custom:
#   id: OP002
#   severity: error
#   library: true
#   kinds: [OperatorGroup]
#   adr: >-
#     we enforce and support only these options for target namespace specification in
#     Operator groups specification: A global, cluster-wide operator with visibility to
#     all namespaces, that means the .spec section of the manifest is blank. A single
#     namespace operator. Resource manifest specifies .spec.targetNamespaces: [
#     SINGLE_MEMBER_NAMESPACE ].
package olmsync.rules.op002

import data.olmsync.lib

allowed := "an OperatorGroup is either global (no targetNamespaces, no selector) or names exactly one target namespace"

deny contains result if {
	some [i, j] in lib.olm.OperatorGroup
	app := input.apps[i]
	entry := app.objects[j]
	problem := shape_problem(entry.object)
	result := {
		"msg": sprintf("%s %s", [lib.display(entry), problem]),
		"object": lib.ref(app, entry),
	}
}

# shape_problem says what is wrong with an OperatorGroup's target namespace selection; it
# is undefined for the two allowed shapes.
shape_problem(og) := msg if {
	targets := lib.target_namespaces(og)
	count(targets) > 1
	msg := sprintf("names %d target namespaces (%s); %s", [count(targets), concat(", ", targets), allowed])
} else := msg if {
	lib.target_namespaces(og) == [""]
	msg := `names the empty namespace "" as its target, which OLM refuses; leave out targetNamespaces for a global OperatorGroup`
} else := msg if {
	count(lib.target_namespaces(og)) == 1
	lib.has_selector(og)
	msg := "sets both targetNamespaces and a selector, and OLM ignores the selector when targetNamespaces is set; remove the selector"
} else := msg if {
	count(lib.target_namespaces(og)) == 0
	lib.has_selector(og)
	msg := sprintf("selects its target namespaces with a label selector; %s", [allowed])
}
