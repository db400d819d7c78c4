package v1alpha1

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// CatalogSourceKind is the kind of a CatalogSource.
	CatalogSourceKind = "CatalogSource"
	// DefaultRegistryPollDuration is the poll interval OLM uses when the given one does not parse.
	DefaultRegistryPollDuration = 15 * time.Minute
)

// SourceType is the kind of store behind a CatalogSource. As in OLM's schema any string is
// accepted; the CatalogSource controller reports one it does not know in the status
// ("unknown sourcetype: <type>", reason SpecInvalidError).
type SourceType string

const (
	// SourceTypeInternal is the deprecated name of SourceTypeConfigmap.
	SourceTypeInternal SourceType = "internal"
	// SourceTypeConfigmap serves a catalog held in a ConfigMap.
	SourceTypeConfigmap SourceType = "configmap"
	// SourceTypeGrpc serves a catalog image, or connects to a registry at an address.
	SourceTypeGrpc SourceType = "grpc"
)

// The CatalogSource status reasons, as OLM writes them.
const (
	CatalogSourceSpecInvalidError     ConditionReason = "SpecInvalidError"
	CatalogSourceConfigMapError       ConditionReason = "ConfigMapError"
	CatalogSourceRegistryServerError  ConditionReason = "RegistryServerError"
	CatalogSourceIntervalInvalidError ConditionReason = "InvalidIntervalError"
)

// The gRPC connection states a CatalogSource reports in status.connectionState.lastObservedState.
const (
	ConnectionStateReady            = "READY"
	ConnectionStateConnecting       = "CONNECTING"
	ConnectionStateTransientFailure = "TRANSIENT_FAILURE"
	ConnectionStateIdle             = "IDLE"
	ConnectionStateShutdown         = "SHUTDOWN"
)

// CatalogSourceSpec says where a catalog's content comes from.
type CatalogSourceSpec struct {
	SourceType SourceType `json:"sourceType"`
	// Priority weighs catalogs for dependency resolution: higher is preferred; ties are
	// broken by name.
	// +optional
	Priority int `json:"priority,omitempty"`
	// ConfigMap names the ConfigMap of a configmap/internal catalog.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
	// Address is host:port of a running registry; ignored when Image is set.
	// +optional
	Address string `json:"address,omitempty"`
	// Image is a catalog image.
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	GrpcPodConfig *GrpcPodConfig `json:"grpcPodConfig,omitempty"`
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`
	// Secrets name pull secrets for the catalog and its bundles.
	// +optional
	Secrets []string `json:"secrets,omitempty"`
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Publisher string `json:"publisher,omitempty"`
	// +optional
	Icon *Icon `json:"icon,omitempty"`
}

// SecurityConfig is the pod security mode of a catalog pod.
// +kubebuilder:validation:Enum=legacy;restricted
type SecurityConfig string

const (
	Legacy     SecurityConfig = "legacy"
	Restricted SecurityConfig = "restricted"
)

// GrpcPodConfig overrides the pod that serves a grpc catalog image.
type GrpcPodConfig struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
	// +optional
	SecurityContextConfig SecurityConfig `json:"securityContextConfig,omitempty"`
	// +optional
	MemoryTarget *resource.Quantity `json:"memoryTarget,omitempty"`
	// +optional
	ExtractContent *ExtractContentConfig `json:"extractContent,omitempty"`
}

// ExtractContentConfig says where a catalog image keeps its file-based catalog.
type ExtractContentConfig struct {
	// +optional
	CacheDir   string `json:"cacheDir,omitempty"`
	CatalogDir string `json:"catalogDir"`
}

// UpdateStrategy says how a catalog image's updates are discovered.
type UpdateStrategy struct {
	// +optional
	RegistryPoll *RegistryPoll `json:"registryPoll,omitempty"`
}

// RegistryPoll re-pulls the catalog image at an interval.
type RegistryPoll struct {
	// Interval is a Go duration ("45m"). It is kept as written; PollInterval parses it.
	// +optional
	Interval string `json:"interval,omitempty"`
}

// PollInterval returns the poll interval of a grpc image catalog and whether polling is on.
// As in OLM, an interval that does not parse falls back to DefaultRegistryPollDuration and
// the error says why, so that the caller can report it.
func (c *CatalogSource) PollInterval() (time.Duration, bool, error) {
	s := c.Spec
	if s.SourceType != SourceTypeGrpc || s.Image == "" || s.UpdateStrategy == nil || s.UpdateStrategy.RegistryPoll == nil {
		return 0, false, nil
	}
	d, err := time.ParseDuration(s.UpdateStrategy.RegistryPoll.Interval)
	if err != nil {
		return DefaultRegistryPollDuration, true, fmt.Errorf("error parsing spec.updateStrategy.registryPoll.interval. Using the default value of %s instead. Error: %w", DefaultRegistryPollDuration, err)
	}
	return d, true, nil
}

// RegistryServiceStatus is the Service that serves a catalog.
type RegistryServiceStatus struct {
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// +optional
	ServiceNamespace string `json:"serviceNamespace,omitempty"`
	// +optional
	Port string `json:"port,omitempty"`
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitzero"`
}

// GRPCConnectionState is the state of the connection to a catalog's registry.
type GRPCConnectionState struct {
	// +optional
	Address           string `json:"address,omitempty"`
	LastObservedState string `json:"lastObservedState"`
	// +optional
	LastConnectTime metav1.Time `json:"lastConnect,omitzero"`
}

// CatalogSourceStatus is where a catalog's health is reported.
type CatalogSourceStatus struct {
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Reason ConditionReason `json:"reason,omitempty"`
	// +optional
	LatestImageRegistryPoll *metav1.Time `json:"latestImageRegistryPoll,omitempty"`
	// +optional
	ConfigMapResource *ConfigMapResourceReference `json:"configMapReference,omitempty"`
	// +optional
	RegistryServiceStatus *RegistryServiceStatus `json:"registryService,omitempty"`
	// +optional
	GRPCConnectionState *GRPCConnectionState `json:"connectionState,omitempty"`
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// ConfigMapResourceReference is the ConfigMap a configmap catalog was last loaded from.
type ConfigMapResourceReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=catsrc,categories=olm
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Display",type=string,JSONPath=`.spec.displayName`,description="The pretty name of the catalog"
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.sourceType`,description="The type of the catalog"
// +kubebuilder:printcolumn:name="Publisher",type=string,JSONPath=`.spec.publisher`,description="The publisher of the catalog"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// CatalogSource is a repository of operator packages: their channels, bundles and CSVs.
type CatalogSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CatalogSourceSpec `json:"spec"`
	// +optional
	Status CatalogSourceStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// CatalogSourceList is a list of CatalogSources.
type CatalogSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CatalogSource `json:"items"`
}
