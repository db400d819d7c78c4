package v1alpha1

import (
	"fmt"

	"github.com/blang/semver/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// ClusterServiceVersionKind is the kind of a CSV.
	ClusterServiceVersionKind = "ClusterServiceVersion"
	// InstallStrategyNameDeployment is the only install strategy OLM knows.
	InstallStrategyNameDeployment = "deployment"
	// SkipRangeAnnotationKey holds a CSV's semver range of versions it replaces at once.
	SkipRangeAnnotationKey = "olm.skipRange"
)

// InstallModeType is one of the four ways an operator can watch namespaces.
// +kubebuilder:validation:Enum=OwnNamespace;SingleNamespace;MultiNamespace;AllNamespaces
type InstallModeType string

const (
	// InstallModeTypeOwnNamespace: the operator can be a member of a group that selects its own namespace.
	InstallModeTypeOwnNamespace InstallModeType = "OwnNamespace"
	// InstallModeTypeSingleNamespace: the operator can be a member of a group that selects one namespace.
	InstallModeTypeSingleNamespace InstallModeType = "SingleNamespace"
	// InstallModeTypeMultiNamespace: the operator can be a member of a group that selects more than one namespace.
	InstallModeTypeMultiNamespace InstallModeType = "MultiNamespace"
	// InstallModeTypeAllNamespaces: the operator can be a member of a group that selects all namespaces ("").
	InstallModeTypeAllNamespaces InstallModeType = "AllNamespaces"
)

// InstallMode says whether a CSV supports one InstallModeType.
type InstallMode struct {
	Type      InstallModeType `json:"type"`
	Supported bool            `json:"supported"`
}

// NamedInstallStrategy is the install block of a CSV.
type NamedInstallStrategy struct {
	// StrategyName is always "deployment".
	StrategyName string `json:"strategy"`
	// StrategySpec holds the deployments and the RBAC they need.
	StrategySpec StrategyDetailsDeployment `json:"spec,omitzero"`
}

// StrategyDeploymentPermissions are the RBAC rules a service account of the operator needs.
type StrategyDeploymentPermissions struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

// StrategyDeploymentSpec is one Deployment the install strategy creates.
type StrategyDeploymentSpec struct {
	Name string                `json:"name"`
	Spec appsv1.DeploymentSpec `json:"spec"`
	// Label is merged into the Deployment's labels.
	// +optional
	Label map[string]string `json:"label,omitempty"`
}

// StrategyDetailsDeployment is the "deployment" install strategy.
type StrategyDetailsDeployment struct {
	DeploymentSpecs []StrategyDeploymentSpec `json:"deployments"`
	// Permissions are namespaced rules, granted in the operator's target namespaces.
	// +optional
	Permissions []StrategyDeploymentPermissions `json:"permissions,omitempty"`
	// ClusterPermissions are cluster-wide rules.
	// +optional
	ClusterPermissions []StrategyDeploymentPermissions `json:"clusterPermissions,omitempty"`
}

// Descriptor describes a field of a custom resource's spec or status, or an action on it,
// so that consoles can render it. SpecDescriptor, StatusDescriptor and ActionDescriptor
// share this shape in OLM.
type Descriptor struct {
	Path        string `json:"path"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	// +optional
	XDescriptors []string `json:"x-descriptors,omitempty"`
	// Value is any JSON value. OLM's schema says string/byte here although its Go type is raw
	// JSON, so a CSV with an object value fails validation there; olmsync accepts any JSON.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// APIResourceReference names a resource type that an API's instances create or use.
type APIResourceReference struct {
	// Name is the plural name of the resource type; empty when it is not a custom resource.
	// OLM's schema requires it, yet real CSVs (etcd's, for one) leave it out for built-in
	// kinds, so olmsync accepts its absence.
	// +optional
	Name    string `json:"name,omitempty"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// CRDDescription describes a CRD that a CSV owns or requires.
type CRDDescription struct {
	// Name is the CRD's name, <plural>.<group>.
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Resources []APIResourceReference `json:"resources,omitempty"`
	// +optional
	StatusDescriptors []Descriptor `json:"statusDescriptors,omitempty"`
	// +optional
	SpecDescriptors []Descriptor `json:"specDescriptors,omitempty"`
	// +optional
	ActionDescriptor []Descriptor `json:"actionDescriptors,omitempty"`
}

// APIServiceDescription describes an aggregated API that a CSV owns or requires.
type APIServiceDescription struct {
	Name    string `json:"name"`
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// +optional
	DeploymentName string `json:"deploymentName,omitempty"`
	// +optional
	ContainerPort int32 `json:"containerPort,omitempty"`
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Resources []APIResourceReference `json:"resources,omitempty"`
	// +optional
	StatusDescriptors []Descriptor `json:"statusDescriptors,omitempty"`
	// +optional
	SpecDescriptors []Descriptor `json:"specDescriptors,omitempty"`
	// +optional
	ActionDescriptor []Descriptor `json:"actionDescriptors,omitempty"`
}

// APIServiceName is the name of the APIService object: <version>.<group>.
func (d APIServiceDescription) APIServiceName() string {
	return fmt.Sprintf("%s.%s", d.Version, d.Group)
}

// WebhookAdmissionType is the type of an admission or conversion webhook.
// +kubebuilder:validation:Enum=ValidatingAdmissionWebhook;MutatingAdmissionWebhook;ConversionWebhook
type WebhookAdmissionType string

const (
	ValidatingAdmissionWebhook WebhookAdmissionType = "ValidatingAdmissionWebhook"
	MutatingAdmissionWebhook   WebhookAdmissionType = "MutatingAdmissionWebhook"
	ConversionWebhook          WebhookAdmissionType = "ConversionWebhook"
)

// WebhookDescription describes a webhook the operator serves.
type WebhookDescription struct {
	GenerateName string               `json:"generateName"`
	Type         WebhookAdmissionType `json:"type"`
	// +optional
	DeploymentName string `json:"deploymentName,omitempty"`
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=443
	// +optional
	ContainerPort int32 `json:"containerPort,omitempty"`
	// +optional
	TargetPort *intstr.IntOrString `json:"targetPort,omitempty"`
	// +optional
	Rules []admissionregistrationv1.RuleWithOperations `json:"rules,omitempty"`
	// +optional
	FailurePolicy *admissionregistrationv1.FailurePolicyType `json:"failurePolicy,omitempty"`
	// +optional
	MatchPolicy *admissionregistrationv1.MatchPolicyType `json:"matchPolicy,omitempty"`
	// +optional
	ObjectSelector *metav1.LabelSelector                    `json:"objectSelector,omitempty"`
	SideEffects    *admissionregistrationv1.SideEffectClass `json:"sideEffects"`
	// +optional
	TimeoutSeconds          *int32   `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string `json:"admissionReviewVersions"`
	// +optional
	ReinvocationPolicy *admissionregistrationv1.ReinvocationPolicyType `json:"reinvocationPolicy,omitempty"`
	// +optional
	WebhookPath *string `json:"webhookPath,omitempty"`
	// +optional
	ConversionCRDs []string `json:"conversionCRDs,omitempty"`
}

// CustomResourceDefinitions lists the CRDs a CSV owns (and so provides) and requires.
type CustomResourceDefinitions struct {
	// +optional
	Owned []CRDDescription `json:"owned,omitempty"`
	// +optional
	Required []CRDDescription `json:"required,omitempty"`
}

// APIServiceDefinitions lists the aggregated APIs a CSV owns and requires.
type APIServiceDefinitions struct {
	// +optional
	Owned []APIServiceDescription `json:"owned,omitempty"`
	// +optional
	Required []APIServiceDescription `json:"required,omitempty"`
}

// OperatorVersion is a CSV's semantic version. It is kept as written so that a manifest
// encodes back exactly as it came; Semver parses it the way OLM does (tolerantly).
// +kubebuilder:validation:Type=string
type OperatorVersion string

// Semver parses the version as OLM does: a leading "v" and missing minor/patch are tolerated.
func (v OperatorVersion) Semver() (semver.Version, error) {
	return semver.ParseTolerant(string(v))
}

// ClusterServiceVersionSpec tells OLM how to install one version of an operator.
type ClusterServiceVersionSpec struct {
	InstallStrategy NamedInstallStrategy `json:"install"`
	// +optional
	Version OperatorVersion `json:"version,omitempty"`
	// Release distinguishes builds of the same version (OLM's semver pre-release format, at most 20 characters).
	// +kubebuilder:validation:MaxLength=20
	// +optional
	Release string `json:"release,omitempty"`
	// +optional
	Maturity string `json:"maturity,omitempty"`
	// +optional
	CustomResourceDefinitions CustomResourceDefinitions `json:"customresourcedefinitions,omitzero"`
	// +optional
	APIServiceDefinitions APIServiceDefinitions `json:"apiservicedefinitions,omitzero"`
	// +optional
	WebhookDefinitions []WebhookDescription `json:"webhookdefinitions,omitempty"`
	// NativeAPIs are built-in APIs the operator needs; the CSV waits until discovery serves them.
	// +optional
	NativeAPIs []metav1.GroupVersionKind `json:"nativeAPIs,omitempty"`
	// MinKubeVersion is the lowest Kubernetes version the operator runs on.
	// +optional
	MinKubeVersion string `json:"minKubeVersion,omitempty"`
	DisplayName    string `json:"displayName"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Keywords []string `json:"keywords,omitempty"`
	// +optional
	Maintainers []Maintainer `json:"maintainers,omitempty"`
	// +optional
	Provider *AppLink `json:"provider,omitempty"`
	// +optional
	Links []AppLink `json:"links,omitempty"`
	// +optional
	Icon []Icon `json:"icon,omitempty"`
	// InstallModes say which OperatorGroup target sets the operator supports. An omitted
	// type is unsupported: OLM infers nothing.
	// +optional
	InstallModes []InstallMode `json:"installModes,omitempty"`
	// Replaces names the CSV this one replaces in the upgrade graph.
	// +optional
	Replaces string `json:"replaces,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	Cleanup *CleanupSpec `json:"cleanup,omitempty"`
	// Skips names CSVs that this one replaces too, so that they are never installed on the way up.
	// +optional
	Skips []string `json:"skips,omitempty"`
	// +optional
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
}

// CleanupSpec says whether OLM deletes the operator's custom resources with the CSV.
type CleanupSpec struct {
	Enabled bool `json:"enabled"`
}

// Maintainer is a person or team that maintains an operator.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// AppLink is a named URL.
type AppLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Icon is a base64-encoded image.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// RelatedImage is an image the operator uses.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// ClusterServiceVersionPhase is the phase of a CSV's lifecycle.
type ClusterServiceVersionPhase string

// The CSV phases, as OLM writes them.
const (
	CSVPhaseNone         ClusterServiceVersionPhase = ""
	CSVPhasePending      ClusterServiceVersionPhase = "Pending"
	CSVPhaseInstallReady ClusterServiceVersionPhase = "InstallReady"
	CSVPhaseInstalling   ClusterServiceVersionPhase = "Installing"
	CSVPhaseSucceeded    ClusterServiceVersionPhase = "Succeeded"
	CSVPhaseFailed       ClusterServiceVersionPhase = "Failed"
	CSVPhaseUnknown      ClusterServiceVersionPhase = "Unknown"
	CSVPhaseReplacing    ClusterServiceVersionPhase = "Replacing"
	CSVPhaseDeleting     ClusterServiceVersionPhase = "Deleting"
)

// ConditionReason is a CamelCase reason for a CSV's (or CatalogSource's) state.
type ConditionReason string

// The CSV reasons, as OLM writes them.
const (
	CSVReasonRequirementsUnknown                         ConditionReason = "RequirementsUnknown"
	CSVReasonRequirementsNotMet                          ConditionReason = "RequirementsNotMet"
	CSVReasonRequirementsMet                             ConditionReason = "AllRequirementsMet"
	CSVReasonOwnerConflict                               ConditionReason = "OwnerConflict"
	CSVReasonComponentFailed                             ConditionReason = "InstallComponentFailed"
	CSVReasonComponentFailedNoRetry                      ConditionReason = "InstallComponentFailedNoRetry"
	CSVReasonInvalidStrategy                             ConditionReason = "InvalidInstallStrategy"
	CSVReasonWaiting                                     ConditionReason = "InstallWaiting"
	CSVReasonInstallSuccessful                           ConditionReason = "InstallSucceeded"
	CSVReasonInstallCheckFailed                          ConditionReason = "InstallCheckFailed"
	CSVReasonComponentUnhealthy                          ConditionReason = "ComponentUnhealthy"
	CSVReasonBeingReplaced                               ConditionReason = "BeingReplaced"
	CSVReasonReplaced                                    ConditionReason = "Replaced"
	CSVReasonNeedsReinstall                              ConditionReason = "NeedsReinstall"
	CSVReasonNeedsCertRotation                           ConditionReason = "NeedsCertRotation"
	CSVReasonAPIServiceResourceIssue                     ConditionReason = "APIServiceResourceIssue"
	CSVReasonAPIServiceResourcesNeedReinstall            ConditionReason = "APIServiceResourcesNeedReinstall"
	CSVReasonAPIServiceInstallFailed                     ConditionReason = "APIServiceInstallFailed"
	CSVReasonCopied                                      ConditionReason = "Copied"
	CSVReasonInvalidInstallModes                         ConditionReason = "InvalidInstallModes"
	CSVReasonNoTargetNamespaces                          ConditionReason = "NoTargetNamespaces"
	CSVReasonUnsupportedOperatorGroup                    ConditionReason = "UnsupportedOperatorGroup"
	CSVReasonNoOperatorGroup                             ConditionReason = "NoOperatorGroup"
	CSVReasonTooManyOperatorGroups                       ConditionReason = "TooManyOperatorGroups"
	CSVReasonInterOperatorGroupOwnerConflict             ConditionReason = "InterOperatorGroupOwnerConflict"
	CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs ConditionReason = "CannotModifyStaticOperatorGroupProvidedAPIs"
	CSVReasonDetectedClusterChange                       ConditionReason = "DetectedClusterChange"
	CSVReasonInvalidWebhookDescription                   ConditionReason = "InvalidWebhookDescription"
	CSVReasonOperatorConditionNotUpgradeable             ConditionReason = "OperatorConditionNotUpgradeable"
	CSVReasonWaitingForCleanupToComplete                 ConditionReason = "WaitingOnCleanup"
)

// ClusterServiceVersionCondition is one entry of a CSV's phase history.
type ClusterServiceVersionCondition struct {
	Phase ClusterServiceVersionPhase `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Reason ConditionReason `json:"reason,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// StatusReason is the state of one requirement of a CSV.
type StatusReason string

// The requirement states, as OLM writes them.
const (
	RequirementStatusReasonPresent             StatusReason = "Present"
	RequirementStatusReasonNotPresent          StatusReason = "NotPresent"
	RequirementStatusReasonPresentNotSatisfied StatusReason = "PresentNotSatisfied"
	RequirementStatusReasonNotAvailable        StatusReason = "PresentNotAvailable"
	DependentStatusReasonSatisfied             StatusReason = "Satisfied"
	DependentStatusReasonNotSatisfied          StatusReason = "NotSatisfied"
)

// DependentStatus is the state of one thing a requirement depends on (a policy rule of a
// service account, for example).
type DependentStatus struct {
	Group   string       `json:"group"`
	Version string       `json:"version"`
	Kind    string       `json:"kind"`
	Status  StatusReason `json:"status"`
	// +optional
	UUID string `json:"uuid,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// RequirementStatus is the state of one requirement of a CSV: a CRD, an APIService, a
// native API, a service account with its rules, or the Kubernetes version.
type RequirementStatus struct {
	Group   string       `json:"group"`
	Version string       `json:"version"`
	Kind    string       `json:"kind"`
	Name    string       `json:"name"`
	Status  StatusReason `json:"status"`
	Message string       `json:"message"`
	// +optional
	UUID string `json:"uuid,omitempty"`
	// +optional
	Dependents []DependentStatus `json:"dependents,omitempty"`
}

// ClusterServiceVersionStatus is where OLM reports a CSV's phase.
type ClusterServiceVersionStatus struct {
	// +optional
	Phase ClusterServiceVersionPhase `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Reason ConditionReason `json:"reason,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// Conditions is the phase history, newest last (at most 20 entries).
	// +optional
	Conditions []ClusterServiceVersionCondition `json:"conditions,omitempty"`
	// +optional
	RequirementStatus []RequirementStatus `json:"requirementStatus,omitempty"`
	// +optional
	CertsLastUpdated *metav1.Time `json:"certsLastUpdated,omitempty"`
	// +optional
	CertsRotateAt *metav1.Time `json:"certsRotateAt,omitempty"`
	// +optional
	Cleanup *CleanupStatus `json:"cleanup,omitempty"`
}

// CleanupStatus lists the custom resources a CSV's deletion is waiting for.
type CleanupStatus struct {
	// +optional
	PendingDeletion []ResourceList `json:"pendingDeletion,omitempty"`
}

// ResourceList is a list of resources of one group and kind.
type ResourceList struct {
	Group     string             `json:"group"`
	Kind      string             `json:"kind"`
	Instances []ResourceInstance `json:"instances"`
}

// ResourceInstance names one resource; the namespace is empty for cluster-scoped ones.
type ResourceInstance struct {
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName={csv,csvs},categories=olm
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Display",type=string,JSONPath=`.spec.displayName`,description="The name of the CSV"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`,description="The version of the CSV"
// +kubebuilder:printcolumn:name="Replaces",type=string,JSONPath=`.spec.replaces`,description="The name of a CSV that this one replaces"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`

// ClusterServiceVersion is one version of an operator: what it installs (its install
// strategy), which APIs it provides and requires, and which install modes it supports.
type ClusterServiceVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterServiceVersionSpec `json:"spec"`
	// +optional
	Status ClusterServiceVersionStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterServiceVersionList is a list of ClusterServiceVersions.
type ClusterServiceVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterServiceVersion `json:"items"`
}

// CopiedLabelKey is the label OLM puts on a copied CSV, naming the namespace of its parent.
const CopiedLabelKey = "olm.copiedFrom"
