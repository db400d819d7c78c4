// Package phase is the ClusterServiceVersion phase machine of olmsync's embedded OLM as pure
// functions: given a CSV and a snapshot of the facts around it (the outcome of the
// OperatorGroup checks, whether its install strategy can run, its requirements — CRDs, the
// Kubernetes version, native APIs, service accounts and their RBAC — the CSVs it replaces and
// that replace it, and the health of its deployments), Next says what OLM does next: the
// phase, reason and message it writes (OLM's strings verbatim, olm-behaviour 3.1–3.5), whether
// the install strategy runs, whether deployments are deleted, whether the CSV is deleted and
// whether an upgrade is counted. Requirements evaluates a CSV's requirements over such a
// snapshot into OLM's status.requirementStatus, and SetPhase writes a transition into a CSV's
// status with OLM's condition history. The CSV controller gathers the facts from the cluster
// and applies the decision; the offline check can gather them from Git and preview it.
package phase
