# METADATA
# title: Loops
# description: >-
#   A rule that never ends in useful time (issue 12): numbers.range(1, 1e8) builds a
#   hundred million numbers, gigabytes, before it can count them. Only a memory ceiling
#   stops it; the tests of the policy engine and of olmsync check run it under one.
# custom:
#   id: ACME666
package acme.loop

deny contains msg if {
	count(numbers.range(1, 1e8)) > 0
	msg := "never"
}
