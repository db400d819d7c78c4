# METADATA
# title: Slow
# description: >-
#   A rule that loops ten billion times without building anything large: only the policy
#   timeout stops it.
# custom:
#   id: ACME667
package acme.slow

deny contains msg if {
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i == j + 200000
	msg := "never"
}
