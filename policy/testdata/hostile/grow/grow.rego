# METADATA
# title: grows
# description: >-
#   A rule whose replace() grows a string to hundreds of megabytes in one built-in call,
#   which no deadline interrupts (issue 30): only the policy sandbox's memory limit stops
#   it. The tests of the Sync reconciler commit it to a repository's olmsync.yaml rules.
# custom:
#   id: ACME666
package acme.grow

s0 := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
s1 := replace(s0, "a", s0)
s2 := replace(s1, "a", s1)
s3 := replace(s2, "a", s2)

deny contains "never" if count(s3) > 0
