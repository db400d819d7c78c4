package extension

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group, version and kinds of OLM v1's API (operator-controller's api/v1).
const (
	Group                = "olm.operatorframework.io"
	Version              = "v1"
	APIVersion           = Group + "/" + Version
	KindClusterExtension = "ClusterExtension"
	KindClusterCatalog   = "ClusterCatalog"
)

// UpgradeConstraintPolicy is spec.source.catalog.upgradeConstraintPolicy.
type UpgradeConstraintPolicy string

// The upgrade constraint policies; an empty field is CatalogProvided (the CRD's default).
const (
	// UpgradeConstraintPolicyCatalogProvided: an installed bundle is only replaced by one
	// of its successors in the catalog (replaces, skips, skipRange), or kept.
	UpgradeConstraintPolicyCatalogProvided UpgradeConstraintPolicy = "CatalogProvided"
	// UpgradeConstraintPolicySelfCertified: any bundle of the package may replace the
	// installed one, downgrades included.
	UpgradeConstraintPolicySelfCertified UpgradeConstraintPolicy = "SelfCertified"
)

// SourceTypeCatalog is the only spec.source.sourceType of a ClusterExtension.
const SourceTypeCatalog = "Catalog"

// AvailabilityMode is a ClusterCatalog's spec.availabilityMode; empty is Available.
type AvailabilityMode string

// The availability modes. An Unavailable catalog is left out of resolution.
const (
	AvailabilityModeAvailable   AvailabilityMode = "Available"
	AvailabilityModeUnavailable AvailabilityMode = "Unavailable"
)

// CatalogSourceTypeImage is the only spec.source.type of a ClusterCatalog.
const CatalogSourceTypeImage = "Image"

// MetadataNameLabel is the label OLM v1 puts on every ClusterCatalog with its name, so that
// a ClusterExtension's catalog selector can pick catalogs by name.
const MetadataNameLabel = "olm.operatorframework.io/metadata.name"

// ClusterExtension is OLM v1's request to install a package from the cluster's catalogs.
// It is cluster-scoped.
type ClusterExtension struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterExtensionSpec   `json:"spec,omitempty"`
	Status ClusterExtensionStatus `json:"status,omitempty"`
}

// ClusterExtensionSpec is a ClusterExtension's spec, with OLM v1's field names.
type ClusterExtensionSpec struct {
	// Namespace is where the extension's namespaced objects go; it must exist.
	Namespace string `json:"namespace"`
	// ServiceAccount is the account OLM v1 installed with up to 1.x; newer releases ignore it.
	ServiceAccount ServiceAccountReference `json:"serviceAccount,omitzero"`
	Source         SourceConfig            `json:"source"`
	// Install, Config and ProgressDeadlineMinutes are read but not previewed.
	Install                 *InstallConfig `json:"install,omitempty"`
	Config                  *ConfigSource  `json:"config,omitempty"`
	ProgressDeadlineMinutes int32          `json:"progressDeadlineMinutes,omitempty"`
}

// ServiceAccountReference names a ServiceAccount of spec.namespace.
type ServiceAccountReference struct {
	Name string `json:"name,omitempty"`
}

// SourceConfig selects where the extension's content comes from.
type SourceConfig struct {
	SourceType string         `json:"sourceType"`
	Catalog    *CatalogFilter `json:"catalog,omitempty"`
}

// CatalogFilter picks the bundles of one package from the ClusterCatalogs.
type CatalogFilter struct {
	PackageName             string                  `json:"packageName"`
	Version                 string                  `json:"version,omitempty"`
	Channels                []string                `json:"channels,omitempty"`
	Selector                *metav1.LabelSelector   `json:"selector,omitempty"`
	UpgradeConstraintPolicy UpgradeConstraintPolicy `json:"upgradeConstraintPolicy,omitempty"`
}

// InstallConfig is spec.install (the preflight checks); not previewed.
type InstallConfig struct {
	Preflight *PreflightConfig `json:"preflight,omitempty"`
}

// PreflightConfig configures the CRD upgrade safety check.
type PreflightConfig struct {
	CRDUpgradeSafety *CRDUpgradeSafetyPreflightConfig `json:"crdUpgradeSafety"`
}

// CRDUpgradeSafetyPreflightConfig is None or Strict.
type CRDUpgradeSafetyPreflightConfig struct {
	Enforcement string `json:"enforcement"`
}

// ConfigSource is spec.config (inline bundle configuration); not previewed.
type ConfigSource struct {
	ConfigType string         `json:"configType"`
	Inline     map[string]any `json:"inline,omitempty"`
}

// ClusterExtensionStatus is what OLM v1 wrote: the bundle installed, when any.
type ClusterExtensionStatus struct {
	Conditions      []metav1.Condition `json:"conditions,omitempty"`
	Install         *InstallStatus     `json:"install,omitempty"`
	ActiveRevisions []RevisionStatus   `json:"activeRevisions,omitempty"`
}

// InstallStatus is status.install.
type InstallStatus struct {
	Bundle BundleMetadata `json:"bundle"`
}

// RevisionStatus is one of status.activeRevisions.
type RevisionStatus struct {
	Name       string             `json:"name"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BundleMetadata names an installed bundle: its name and version (a release may ride in
// the version's build metadata, as registry+v1 bundles write it, or in Release).
type BundleMetadata struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Release *string `json:"release,omitempty"`
}

// ClusterCatalog is a catalog image OLM v1 serves to the resolver. It is cluster-scoped.
type ClusterCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   ClusterCatalogSpec   `json:"spec"`
	Status ClusterCatalogStatus `json:"status,omitempty"`
}

// ClusterCatalogSpec is a ClusterCatalog's spec.
type ClusterCatalogSpec struct {
	Source CatalogSource `json:"source"`
	// Priority breaks a tie between catalogs that both have a bundle: the higher wins;
	// 0 by default.
	Priority         int32            `json:"priority"`
	AvailabilityMode AvailabilityMode `json:"availabilityMode,omitempty"`
}

// CatalogSource is where a ClusterCatalog's content is: an image.
type CatalogSource struct {
	Type  string       `json:"type"`
	Image *ImageSource `json:"image,omitempty"`
}

// ImageSource is spec.source.image.
type ImageSource struct {
	Ref                 string `json:"ref"`
	PollIntervalMinutes *int   `json:"pollIntervalMinutes,omitempty"`
}

// ClusterCatalogStatus is what catalogd wrote; read but not previewed.
type ClusterCatalogStatus struct {
	Conditions     []metav1.Condition `json:"conditions,omitempty"`
	ResolvedSource *ResolvedSource    `json:"resolvedSource,omitempty"`
	URLs           *CatalogURLs       `json:"urls,omitempty"`
	LastUnpacked   *metav1.Time       `json:"lastUnpacked,omitempty"`
}

// ResolvedSource is the image catalogd unpacked, by digest.
type ResolvedSource struct {
	Type  string               `json:"type"`
	Image *ResolvedImageSource `json:"image"`
}

// ResolvedImageSource is status.resolvedSource.image.
type ResolvedImageSource struct {
	Ref string `json:"ref"`
}

// CatalogURLs is status.urls.
type CatalogURLs struct {
	Base string `json:"base"`
}
