// Package v1alpha1 contains OLM's operators.coreos.com/v1alpha1 kinds:
// ClusterServiceVersion, CatalogSource, Subscription and InstallPlan.
//
// Field names, JSON tags, enums, short names and status strings follow OLM so that
// existing manifests, consoles and health checks keep working. Where olmsync's schema
// differs from OLM's on purpose (for example descriptor values accept any JSON), the
// field comment says so; docs/olm.md lists every such case.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1alpha1
