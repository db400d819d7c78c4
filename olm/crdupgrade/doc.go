// Package crdupgrade decides whether OLM may replace a CustomResourceDefinition that is on
// the cluster with the one a new bundle carries. It is a pure function over the two CRDs and
// the custom resources that exist, shared by the InstallPlan controller (before it updates a
// CRD) and the offline check (to predict a failed upgrade). It does both checks the OLM
// documents and OLM's code ask for (docs/olm.md): every version the current CRD serves must
// still be in the new CRD (seeds 001 and 004: a served version is first set to served: false,
// and removed only in a later upgrade); every version in the current CRD's
// status.storedVersions must still be in the new CRD (OLM's code: "risk of data loss"); and
// every existing custom resource of a version served before and after must validate against
// the new schema (OLM's code, with k8s.io/apiextensions-apiserver's validator and OLM's
// message). Decode reads a CRD manifest of apiextensions.k8s.io/v1 or v1beta1 into v1, as
// bundles still ship both.
package crdupgrade
