// Package operatorcondition is the OperatorCondition controller of olmsync's embedded OLM, OLM's
// operator-condition-generator and operatorcondition controllers in one: for every CSV that
// is not a copy it keeps an OperatorCondition of the CSV's name (its service accounts and
// deployments, the CSV its controller), and for every OperatorCondition the Role and
// RoleBinding that let the operator's service accounts get, update and patch it, and it
// copies spec.conditions to status.conditions with the generation observed. What those
// objects hold is decided in olm/install; what an Upgradeable=False condition holds back is
// the CSV controller's (olm/phase.Upgradeable). The OPERATOR_CONDITION_NAME variable OLM's
// controller sets in the operator's containers is already set by the install strategy.
package operatorcondition
