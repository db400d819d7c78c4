package policy

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scope says whether objects of a kind live in a namespace.
type Scope string

const (
	// ScopeNamespaced kinds live in a namespace.
	ScopeNamespaced Scope = "Namespaced"
	// ScopeCluster kinds have no namespace.
	ScopeCluster Scope = "Cluster"
	// ScopeUnknown is a kind neither the built-in table nor a CRD rendered in the same
	// cluster knows. Rules about cluster-scoped objects leave such objects alone.
	ScopeUnknown Scope = "Unknown"
)

// builtinScopes holds the kinds whose scope olmsync knows without a CRD in Git. The
// Kubernetes kinds are every kind of k8s.io/api and kube-aggregator v0.36 (all versions,
// alpha and beta included), read from their +genclient:nonNamespaced markers and checked
// against a real kube-apiserver by TestBuiltinScopesMatchAPIServer. The OpenShift kinds are
// the common ones of github.com/openshift/api (its CRD manifests' spec.scope and its
// +genclient:nonNamespaced markers); the OLM kinds are operator-framework/api's CRDs.
var builtinScopes = func() map[schema.GroupKind]Scope {
	m := map[schema.GroupKind]Scope{}
	add := func(scope Scope, group string, kinds ...string) {
		for _, k := range kinds {
			m[schema.GroupKind{Group: group, Kind: k}] = scope
		}
	}

	// Kubernetes, cluster-scoped.
	add(ScopeCluster, "", "ComponentStatus", "Namespace", "Node", "PersistentVolume")
	add(ScopeCluster, "admissionregistration.k8s.io", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"ValidatingWebhookConfiguration")
	add(ScopeCluster, "apiextensions.k8s.io", "CustomResourceDefinition")
	add(ScopeCluster, "apiregistration.k8s.io", "APIService")
	add(ScopeCluster, "authentication.k8s.io", "SelfSubjectReview", "TokenReview")
	add(ScopeCluster, "authorization.k8s.io", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview")
	add(ScopeCluster, "certificates.k8s.io", "CertificateSigningRequest", "ClusterTrustBundle")
	add(ScopeCluster, "flowcontrol.apiserver.k8s.io", "FlowSchema", "PriorityLevelConfiguration")
	add(ScopeCluster, "imagepolicy.k8s.io", "ImageReview")
	add(ScopeCluster, "internal.apiserver.k8s.io", "StorageVersion")
	add(ScopeCluster, "networking.k8s.io", "IPAddress", "IngressClass", "ServiceCIDR")
	add(ScopeCluster, "node.k8s.io", "RuntimeClass")
	add(ScopeCluster, "rbac.authorization.k8s.io", "ClusterRole", "ClusterRoleBinding")
	add(ScopeCluster, "resource.k8s.io", "DeviceClass", "DeviceTaintRule", "ResourcePoolStatusRequest", "ResourceSlice")
	add(ScopeCluster, "scheduling.k8s.io", "PriorityClass")
	add(ScopeCluster, "storage.k8s.io", "CSIDriver", "CSINode", "StorageClass", "VolumeAttachment", "VolumeAttributesClass")
	add(ScopeCluster, "storagemigration.k8s.io", "StorageVersionMigration")

	// Kubernetes, namespaced.
	add(ScopeNamespaced, "", "Binding", "ConfigMap", "Endpoints", "Event", "LimitRange", "PersistentVolumeClaim", "Pod",
		"PodTemplate", "ReplicationController", "ResourceQuota", "Secret", "Service", "ServiceAccount")
	add(ScopeNamespaced, "apps", "ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet")
	add(ScopeNamespaced, "authorization.k8s.io", "LocalSubjectAccessReview")
	add(ScopeNamespaced, "autoscaling", "HorizontalPodAutoscaler")
	add(ScopeNamespaced, "batch", "CronJob", "Job")
	add(ScopeNamespaced, "certificates.k8s.io", "PodCertificateRequest")
	add(ScopeNamespaced, "coordination.k8s.io", "Lease", "LeaseCandidate")
	add(ScopeNamespaced, "discovery.k8s.io", "EndpointSlice")
	add(ScopeNamespaced, "events.k8s.io", "Event")
	add(ScopeNamespaced, "extensions", "DaemonSet", "Deployment", "Ingress", "NetworkPolicy", "ReplicaSet")
	add(ScopeNamespaced, "networking.k8s.io", "Ingress", "NetworkPolicy")
	add(ScopeNamespaced, "policy", "Eviction", "PodDisruptionBudget")
	add(ScopeNamespaced, "rbac.authorization.k8s.io", "Role", "RoleBinding")
	add(ScopeNamespaced, "resource.k8s.io", "ResourceClaim", "ResourceClaimTemplate")
	add(ScopeNamespaced, "scheduling.k8s.io", "PodGroup", "Workload")
	add(ScopeNamespaced, "storage.k8s.io", "CSIStorageCapacity")

	// OLM: the five kinds olmsync serves are namespaced; Operator and OLMConfig are not.
	add(ScopeNamespaced, "operators.coreos.com", "CatalogSource", "ClusterServiceVersion", "InstallPlan",
		"OperatorCondition", "OperatorGroup", "Subscription")
	add(ScopeCluster, "operators.coreos.com", "OLMConfig", "Operator")
	add(ScopeNamespaced, "packages.operators.coreos.com", "PackageManifest")
	// OLM v1's kinds are cluster-scoped (operator-controller's api/v1).
	add(ScopeCluster, "olm.operatorframework.io", "ClusterCatalog", "ClusterExtension", "ClusterObjectSet")
	// olmsync's own kind.
	add(ScopeNamespaced, "olmsync.dev", "Sync")

	// OpenShift, cluster-scoped.
	add(ScopeCluster, "apiserver.openshift.io", "APIRequestCount")
	add(ScopeCluster, "authorization.openshift.io", "ClusterRole", "ClusterRoleBinding")
	add(ScopeCluster, "config.openshift.io", "APIServer", "Authentication", "Build", "ClusterImagePolicy",
		"ClusterOperator", "ClusterVersion", "Console", "DNS", "FeatureGate", "Image", "ImageContentPolicy",
		"ImageDigestMirrorSet", "ImageTagMirrorSet", "Infrastructure", "Ingress", "Network", "Node", "OAuth",
		"OperatorHub", "Project", "Proxy", "Scheduler")
	add(ScopeCluster, "console.openshift.io", "ConsoleCLIDownload", "ConsoleExternalLogLink", "ConsoleLink",
		"ConsoleNotification", "ConsolePlugin", "ConsoleQuickStart", "ConsoleSample", "ConsoleYAMLSample")
	add(ScopeCluster, "helm.openshift.io", "HelmChartRepository")
	add(ScopeCluster, "image.openshift.io", "Image", "ImageSignature")
	add(ScopeCluster, "imageregistry.operator.openshift.io", "Config", "ImagePruner")
	add(ScopeCluster, "machineconfiguration.openshift.io", "ContainerRuntimeConfig", "ControllerConfig",
		"KubeletConfig", "MachineConfig", "MachineConfigPool")
	add(ScopeCluster, "network.openshift.io", "ClusterNetwork", "HostSubnet", "NetNamespace")
	add(ScopeCluster, "oauth.openshift.io", "OAuthAccessToken", "OAuthAuthorizeToken", "OAuthClient",
		"OAuthClientAuthorization", "UserOAuthAccessToken")
	add(ScopeCluster, "operator.openshift.io", "Authentication", "CSISnapshotController", "CloudCredential",
		"ClusterCSIDriver", "Config", "Console", "DNS", "Etcd", "ImageContentSourcePolicy", "KubeAPIServer",
		"KubeControllerManager", "KubeScheduler", "KubeStorageVersionMigrator", "Network", "OpenShiftAPIServer",
		"OpenShiftControllerManager", "ServiceCA", "Storage")
	add(ScopeCluster, "project.openshift.io", "Project", "ProjectRequest")
	add(ScopeCluster, "quota.openshift.io", "ClusterResourceQuota")
	add(ScopeCluster, "security.openshift.io", "RangeAllocation", "SecurityContextConstraints")
	add(ScopeCluster, "template.openshift.io", "BrokerTemplateInstance")
	add(ScopeCluster, "user.openshift.io", "Group", "Identity", "User", "UserIdentityMapping")

	// OpenShift, namespaced.
	add(ScopeNamespaced, "apps.openshift.io", "DeploymentConfig")
	add(ScopeNamespaced, "authorization.openshift.io", "Role", "RoleBinding", "RoleBindingRestriction")
	add(ScopeNamespaced, "build.openshift.io", "Build", "BuildConfig")
	add(ScopeNamespaced, "helm.openshift.io", "ProjectHelmChartRepository")
	add(ScopeNamespaced, "image.openshift.io", "ImageStream", "ImageStreamTag", "ImageTag")
	add(ScopeNamespaced, "monitoring.openshift.io", "AlertRelabelConfig", "AlertingRule")
	add(ScopeNamespaced, "operator.openshift.io", "IngressController")
	add(ScopeNamespaced, "route.openshift.io", "Route")
	add(ScopeNamespaced, "template.openshift.io", "Template", "TemplateInstance")

	// Common add-ons whose CRDs a cluster usually gets from elsewhere than the repository.
	add(ScopeCluster, "snapshot.storage.k8s.io", "VolumeSnapshotClass", "VolumeSnapshotContent")
	add(ScopeNamespaced, "snapshot.storage.k8s.io", "VolumeSnapshot")
	add(ScopeCluster, "cert-manager.io", "ClusterIssuer")
	add(ScopeNamespaced, "cert-manager.io", "Certificate", "CertificateRequest", "Issuer")
	add(ScopeCluster, "gateway.networking.k8s.io", "GatewayClass")
	add(ScopeNamespaced, "gateway.networking.k8s.io", "Gateway", "GRPCRoute", "HTTPRoute", "ReferenceGrant")
	add(ScopeNamespaced, "monitoring.coreos.com", "Alertmanager", "PodMonitor", "Prometheus", "PrometheusRule",
		"ServiceMonitor")
	return m
}()

// BuiltinScope returns the scope of a kind in olmsync's built-in table, and whether the
// table has it.
func BuiltinScope(gk schema.GroupKind) (Scope, bool) {
	s, ok := builtinScopes[gk]
	return s, ok
}

// Scopes decides the scope of kinds for one cluster: the CustomResourceDefinitions
// rendered in that cluster first (they define the kinds there), then the built-in table.
type Scopes struct {
	crds map[schema.GroupKind]Scope
}

// NewScopes returns Scopes that know only the built-in table.
func NewScopes() *Scopes {
	return &Scopes{crds: map[schema.GroupKind]Scope{}}
}

// AddCRD records the kind a CustomResourceDefinition manifest defines and its spec.scope.
// It reports whether the manifest was a CRD with a group, a kind and a known scope.
func (s *Scopes) AddCRD(manifest map[string]any) bool {
	apiVersion, _ := manifest["apiVersion"].(string)
	kind, _ := manifest["kind"].(string)
	if kind != "CustomResourceDefinition" || groupOf(apiVersion) != "apiextensions.k8s.io" {
		return false
	}
	spec, _ := manifest["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	crdKind, _ := names["kind"].(string)
	scope, _ := spec["scope"].(string)
	if group == "" || crdKind == "" || (scope != string(ScopeNamespaced) && scope != string(ScopeCluster)) {
		return false
	}
	s.crds[schema.GroupKind{Group: group, Kind: crdKind}] = Scope(scope)
	return true
}

// Of returns the scope of objects with this apiVersion and kind.
func (s *Scopes) Of(apiVersion, kind string) Scope {
	gk := schema.GroupKind{Group: groupOf(apiVersion), Kind: kind}
	if scope, ok := s.crds[gk]; ok {
		return scope
	}
	if scope, ok := builtinScopes[gk]; ok {
		return scope
	}
	return ScopeUnknown
}

// groupOf returns the API group of an apiVersion: "" for the core group ("v1"). It reads
// the apiVersion as the Rego library's group() does, so both sides agree.
func groupOf(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}
