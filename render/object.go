package render

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Object is one rendered object and where it came from.
type Object struct {
	// Manifest is the object exactly as it would be applied: kustomize's output with the
	// origin annotations olmsync added removed. Never rewritten by olmsync otherwise
	// (in particular, metadata.namespace is not filled in: see EffectiveNamespace).
	// Objects of one render share the maps and lists they have in common (a base rendered
	// into many apps): read it, or change a DeepCopy, never the Manifest itself.
	Manifest *unstructured.Unstructured `json:"object"`
	// App is the name of the app that rendered it; Cluster the app's cluster.
	App     string `json:"app"`
	Cluster string `json:"cluster,omitempty"`
	// Source is the file and line it was written at.
	Source Source `json:"source"`
	// Scope says whether the kind is cluster-scoped, namespaced, or unknown to olmsync.
	Scope Scope `json:"scope"`
	// EffectiveNamespace is the namespace the object lands in: metadata.namespace, else,
	// for a namespaced (or unknown) kind, the app's destination namespace, as Argo CD does.
	// Empty for cluster-scoped objects.
	EffectiveNamespace string `json:"effectiveNamespace,omitempty"`
}

// Source is where an object was written.
type Source struct {
	// File is the repository-relative file of the object's document. For a generated
	// object (configMapGenerator, a generator plugin) it is the kustomization, or plugin
	// config, that generated it. For an object of a remote base it is the path in that
	// repository (see Repo).
	File string `json:"file"`
	// Line is the 1-based line the object's document starts on (its first key), or the
	// generator's entry. 0 when it could not be found.
	Line int `json:"line,omitempty"`
	// GeneratedBy is the kind of the generator that made the object (ConfigMapGenerator,
	// SecretGenerator, a plugin's kind); empty for objects written in a file.
	GeneratedBy string `json:"generatedBy,omitempty"`
	// Repo and Ref name the remote base the object came from, if any.
	Repo string `json:"repo,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

// Scope is whether a kind is namespaced.
type Scope string

// The scopes.
const (
	ScopeNamespaced Scope = "Namespaced"
	ScopeCluster    Scope = "Cluster"
	// ScopeUnknown: neither a CRD in the cluster's render nor olmsync's tables know the
	// kind. It is treated as namespaced for EffectiveNamespace, as kustomize does.
	ScopeUnknown Scope = "Unknown"
)

// APIVersion, Kind, Name and Namespace read the manifest.
func (o *Object) APIVersion() string { return o.Manifest.GetAPIVersion() }
func (o *Object) Kind() string       { return o.Manifest.GetKind() }
func (o *Object) Name() string       { return o.Manifest.GetName() }
func (o *Object) Namespace() string  { return o.Manifest.GetNamespace() }

// Group is the API group of the object's apiVersion ("" for the core group).
func (o *Object) Group() string { return groupOf(o.APIVersion()) }

// GroupKind is the object's group and kind.
func (o *Object) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: o.Group(), Kind: o.Kind()}
}

// ClusterScoped reports whether the object's kind is known to be cluster-scoped.
func (o *Object) ClusterScoped() bool { return o.Scope == ScopeCluster }

func groupOf(apiVersion string) string {
	g, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return g
}

// Cluster is the apps of one destination cluster. Rules that look across objects (one
// OperatorGroup per namespace, a Subscription's group) look within one Cluster.
type Cluster struct {
	// Name is the cluster's name; "" is the default cluster of apps without one, and of
	// library roots.
	Name string `json:"name"`
	// Library is set for a library root, which is checked on its own: a Cluster of its
	// own, with that one app.
	Library bool `json:"library,omitempty"`
	// Apps are the cluster's apps, cluster-scope apps first, then by name.
	Apps []*AppResult `json:"apps"`
}

// MarshalJSON writes the cluster with its apps' names (the apps themselves are in
// Result.Apps), so a Result encodes each app once.
func (c *Cluster) MarshalJSON() ([]byte, error) {
	names := make([]string, 0, len(c.Apps))
	for _, a := range c.Apps {
		names = append(names, a.Name)
	}
	return json.Marshal(struct {
		Name    string   `json:"name"`
		Library bool     `json:"library,omitempty"`
		Apps    []string `json:"apps"`
	}{c.Name, c.Library, names})
}

// ClusterScopeApps returns the cluster's cluster-scope apps (normally one).
func (c *Cluster) ClusterScopeApps() []*AppResult {
	var out []*AppResult
	for _, a := range c.Apps {
		if a.ClusterScope {
			out = append(out, a)
		}
	}
	return out
}

// Objects returns the objects of every app of the cluster, app by app.
func (c *Cluster) Objects() []*Object {
	var out []*Object
	for _, a := range c.Apps {
		out = append(out, a.Objects...)
	}
	return out
}

// Complete reports whether every app of the cluster rendered. Checks of what is absent
// ("no OperatorGroup in this namespace") cannot be trusted on an incomplete cluster.
func (c *Cluster) Complete() bool {
	return !slices.ContainsFunc(c.Apps, func(a *AppResult) bool { return a.Err != nil })
}

// groupClusters groups apps by cluster, in cluster-name order, then each library root in a
// cluster of its own, in name order.
func groupClusters(apps []*AppResult) []*Cluster {
	byName := map[string]*Cluster{}
	var out, libraries []*Cluster
	for _, a := range apps {
		if a.Library {
			libraries = append(libraries, &Cluster{Library: true, Apps: []*AppResult{a}})
			continue
		}
		c := byName[a.Cluster]
		if c == nil {
			c = &Cluster{Name: a.Cluster}
			byName[a.Cluster] = c
			out = append(out, c)
		}
		c.Apps = append(c.Apps, a)
	}
	slices.SortFunc(out, func(a, b *Cluster) int { return cmp.Compare(a.Name, b.Name) })
	for _, c := range out {
		slices.SortStableFunc(c.Apps, func(a, b *AppResult) int { return compareApps(&a.App, &b.App) })
	}
	slices.SortFunc(libraries, func(a, b *Cluster) int { return cmp.Compare(a.Apps[0].Name, b.Apps[0].Name) })
	return append(out, libraries...)
}

// settleNamespaces decides each object's scope and effective namespace. A CRD rendered in
// the cluster says its kind's scope, since that is what the cluster will have.
func (c *Cluster) settleNamespaces() {
	crdScope := map[schema.GroupKind]Scope{}
	for _, o := range c.Objects() {
		if o.Kind() != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Manifest.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Manifest.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(o.Manifest.Object, "spec", "scope")
		if scope == string(ScopeCluster) || scope == string(ScopeNamespaced) {
			crdScope[schema.GroupKind{Group: group, Kind: kind}] = Scope(scope)
		}
	}
	for _, a := range c.Apps {
		for _, o := range a.Objects {
			o.Cluster = a.Cluster
			o.Scope = scopeOf(o.APIVersion(), o.Kind(), crdScope)
			o.EffectiveNamespace = ""
			if o.Scope != ScopeCluster {
				o.EffectiveNamespace = cmp.Or(o.Namespace(), a.Namespace)
			}
		}
	}
}

// scopeOf finds a kind's scope: the cluster's CRDs, then OLM's kinds, then kustomize's
// built-in Kubernetes schema, then olmsync's table of cluster-scoped kinds.
func scopeOf(apiVersion, kind string, crds map[schema.GroupKind]Scope) Scope {
	gk := schema.GroupKind{Group: groupOf(apiVersion), Kind: kind}
	if s, ok := crds[gk]; ok {
		return s
	}
	if s, ok := knownScopes[gk]; ok {
		return s
	}
	if namespaced, found := openapi.IsNamespaceScoped(yaml.TypeMeta{APIVersion: apiVersion, Kind: kind}); found {
		if namespaced {
			return ScopeNamespaced
		}
		return ScopeCluster
	}
	if clusterScopedGroups[gk.Group] {
		return ScopeCluster
	}
	return ScopeUnknown
}

// knownScopes holds the kinds whose scope does not depend on the version: OLM's, and the
// cluster-scoped kinds of Kubernetes and OpenShift (so an old or new apiVersion the
// built-in schema lacks is still known).
var knownScopes = func() map[schema.GroupKind]Scope {
	m := map[schema.GroupKind]Scope{}
	set := func(scope Scope, group string, kinds ...string) {
		for _, k := range kinds {
			m[schema.GroupKind{Group: group, Kind: k}] = scope
		}
	}
	set(ScopeNamespaced, "operators.coreos.com", "ClusterServiceVersion", "CatalogSource", "Subscription", "InstallPlan", "OperatorGroup", "OperatorCondition")
	set(ScopeCluster, "operators.coreos.com", "Operator", "OLMConfig")
	set(ScopeCluster, "", "Namespace", "Node", "PersistentVolume", "ComponentStatus")
	set(ScopeCluster, "rbac.authorization.k8s.io", "ClusterRole", "ClusterRoleBinding")
	set(ScopeCluster, "apiextensions.k8s.io", "CustomResourceDefinition")
	set(ScopeCluster, "apiregistration.k8s.io", "APIService")
	set(ScopeCluster, "admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")
	set(ScopeCluster, "storage.k8s.io", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass")
	set(ScopeCluster, "scheduling.k8s.io", "PriorityClass")
	set(ScopeCluster, "node.k8s.io", "RuntimeClass")
	set(ScopeCluster, "networking.k8s.io", "IngressClass", "IPAddress", "ServiceCIDR")
	set(ScopeCluster, "certificates.k8s.io", "CertificateSigningRequest", "ClusterTrustBundle")
	set(ScopeCluster, "policy", "PodSecurityPolicy")
	set(ScopeCluster, "flowcontrol.apiserver.k8s.io", "FlowSchema", "PriorityLevelConfiguration")
	set(ScopeCluster, "resource.k8s.io", "DeviceClass", "ResourceSlice")
	set(ScopeCluster, "project.openshift.io", "Project", "ProjectRequest")
	set(ScopeCluster, "security.openshift.io", "SecurityContextConstraints")
	set(ScopeCluster, "user.openshift.io", "User", "Group", "Identity", "UserIdentityMapping")
	set(ScopeCluster, "oauth.openshift.io", "OAuthClient")
	set(ScopeCluster, "image.openshift.io", "Image")
	set(ScopeCluster, "quota.openshift.io", "ClusterResourceQuota")
	set(ScopeCluster, "machineconfiguration.openshift.io", "MachineConfig", "MachineConfigPool", "KubeletConfig", "ContainerRuntimeConfig")
	set(ScopeNamespaced, "operator.openshift.io", "IngressController")
	return m
}()

// clusterScopedGroups are API groups all of whose kinds are cluster-scoped.
var clusterScopedGroups = map[string]bool{
	"config.openshift.io":  true, // cluster configuration singletons
	"console.openshift.io": true, // ConsoleLink, ConsoleNotification, ConsolePlugin...
}
