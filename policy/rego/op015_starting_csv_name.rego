# METADATA
# title: A Subscription's startingCSV is a valid CSV name
# description: >-
#   spec.startingCSV names the ClusterServiceVersion OLM installs first, and a CSV's name is
#   a Kubernetes object name: a lowercase RFC 1123 subdomain (lower case alphanumeric
#   characters, '-' or '.', starting and ending with an alphanumeric character, at most 253
#   characters), such as etcdoperator.v0.9.4. OLM accepts any string there and then never
#   finds the CSV, so the Subscription fails on the cluster; write the CSV's name as the
#   catalog gives it (olmsync catalog graph lists them), or leave startingCSV out.
# custom:
#   id: OP015
#   severity: error
#   library: true
#   kinds: [Subscription]
package olmsync.rules.op015

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	starting := lib.spec(entry.object).startingCSV
	not valid_csv_name(starting)
	result := {
		"msg": sprintf(
			"%s names startingCSV %s, which is not a valid CSV name: a CSV is named by a lowercase RFC 1123 subdomain (lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character, at most 253 characters), such as etcdoperator.v0.9.4",
			[lib.display(entry), json.marshal(starting)],
		),
		"object": lib.ref(app, entry),
	}
}

valid_csv_name(s) if {
	is_string(s)
	count(s) <= 253
	regex.match(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, s)
}
