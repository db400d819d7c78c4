package policy

import "fmt"

// The input document's type. Within v1alpha1 the document only grows: fields may be added,
// never renamed, removed or given another meaning (docs/policy.md).
const (
	InputAPIVersion = "olmsync.dev/v1alpha1"
	InputKind       = "PolicyInput"
)

// Defaults of the config, as on OpenShift.
const (
	DefaultMarketplaceNamespace     = "openshift-marketplace"
	DefaultGlobalOperatorsNamespace = "openshift-operators"
	DefaultGlobalOperatorGroupName  = "global-operators"
)

// Input is the document the rules read: one cluster, every app of it and their rendered
// objects, and the config. Rules see it as `input`; its JSON form is documented in
// docs/policy.md. The caller may leave APIVersion, Kind, and each object's Namespace and
// Scope empty: Complete fills them in.
type Input struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Cluster names the cluster; "" is the default cluster (apps with no cluster).
	Cluster string `json:"cluster"`
	// Library is true for a library root's input: one app that no entry point deploys
	// (a catalog entry, a base for other repositories), checked on its own. Only the
	// rules whose METADATA says custom.library: true are evaluated on it — those whose
	// verdict does not depend on which app holds an object; never the placement rules.
	Library bool   `json:"library"`
	Config  Config `json:"config"`
	Apps    []App  `json:"apps"`
}

// Key identifies the input among a revision's: its cluster, or for a library root its
// app, since every library root is an input of its own.
func (in *Input) Key() string {
	if in.Library && len(in.Apps) > 0 {
		return "\x00library:" + in.Apps[0].Path
	}
	return in.Cluster
}

// Name names the input in messages: the cluster, or the library root.
func (in *Input) Name() string {
	if in.Library && len(in.Apps) > 0 {
		return fmt.Sprintf("library root %q", in.Apps[0].Path)
	}
	return clusterName(in.Cluster)
}

// Config holds the policy settings of the cluster.
type Config struct {
	// MarketplaceNamespace is where CatalogSources belong; "" means openshift-marketplace.
	MarketplaceNamespace string `json:"marketplaceNamespace"`
	// GlobalOperatorsNamespace is where the OLM objects of operators for all namespaces
	// belong; "" means openshift-operators.
	GlobalOperatorsNamespace string `json:"globalOperatorsNamespace"`
	// OperatorGroups are the OperatorGroups this cluster has outside Git. Nil means the
	// default, openshift-operators/global-operators (global); an empty list means none.
	OperatorGroups []ClusterOperatorGroup `json:"operatorGroups"`
	// MetaOperators are the package names of meta-operators (operators that deploy other
	// operators at cluster scope).
	MetaOperators []string `json:"metaOperators"`
}

// ClusterOperatorGroup is an OperatorGroup a cluster has without it being in Git.
type ClusterOperatorGroup struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Global: the group selects all namespaces.
	Global bool `json:"global"`
	// TargetNamespaces of a group that is not global.
	TargetNamespaces []string `json:"targetNamespaces"`
}

// App is one app of the cluster and its rendered objects.
type App struct {
	Name string `json:"name"`
	// Path is the app's folder in the repository, slash-separated.
	Path string `json:"path"`
	// Namespace is the app's destination namespace; "" when it has none.
	Namespace string `json:"namespace"`
	// ClusterScope marks the cluster-scope app of the ADR.
	ClusterScope bool `json:"clusterScope"`
	// OwnScope is true when the app's cluster is unknown (a kustomization root no
	// Application deploys and no path convention places): it shares the input with the
	// other apps of the default cluster, but rules that compare two objects compare its
	// objects only with its own (lib.same_cluster), since the others may be elsewhere.
	OwnScope bool     `json:"ownScope"`
	Objects  []Object `json:"objects"`
}

// Object is one rendered object with its provenance.
type Object struct {
	// Object is the rendered manifest as-is.
	Object map[string]any `json:"object"`
	// Source is where the object's document starts.
	Source Source `json:"source"`
	// Namespace is the namespace the object lands in: "" for a cluster-scoped kind, else
	// metadata.namespace, else the app's destination namespace.
	Namespace string `json:"namespace"`
	Scope     Scope  `json:"scope"`
}

// Source is a place in the repository: a slash-separated path from its root and a 1-based
// line (0 when unknown).
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// DefaultConfig is the config of a cluster when the repository says nothing.
func DefaultConfig() Config {
	return Config{
		MarketplaceNamespace:     DefaultMarketplaceNamespace,
		GlobalOperatorsNamespace: DefaultGlobalOperatorsNamespace,
		OperatorGroups:           defaultOperatorGroups(),
		MetaOperators:            []string{},
	}
}

func defaultOperatorGroups() []ClusterOperatorGroup {
	return []ClusterOperatorGroup{{
		Namespace:        DefaultGlobalOperatorsNamespace,
		Name:             DefaultGlobalOperatorGroupName,
		Global:           true,
		TargetNamespaces: []string{},
	}}
}

// Complete returns a copy of the input with everything the caller may leave empty filled
// in: apiVersion and kind, the config's defaults, and each object's scope (from the
// built-in table and the CRDs rendered in this cluster) and namespace. Scopes and
// namespaces the caller set are kept, except that a cluster-scoped object has no
// namespace. Lists are never nil, so the JSON form of the result is exactly what rules
// see as input. The manifests themselves are shared, not copied.
func (in Input) Complete() Input {
	out := in
	out.APIVersion, out.Kind = InputAPIVersion, InputKind
	out.Config = in.Config.complete()
	scopes := scopesOf(in.Apps)
	out.Apps = make([]App, len(in.Apps))
	for i, app := range in.Apps {
		out.Apps[i] = app
		out.Apps[i].Objects = make([]Object, len(app.Objects)) // never nil
		for j, obj := range app.Objects {
			out.Apps[i].Objects[j] = obj.complete(app.Namespace, scopes)
		}
	}
	return out
}

func (c Config) complete() Config {
	if c.MarketplaceNamespace == "" {
		c.MarketplaceNamespace = DefaultMarketplaceNamespace
	}
	if c.GlobalOperatorsNamespace == "" {
		c.GlobalOperatorsNamespace = DefaultGlobalOperatorsNamespace
	}
	if c.OperatorGroups == nil {
		c.OperatorGroups = defaultOperatorGroups()
	}
	groups := make([]ClusterOperatorGroup, len(c.OperatorGroups))
	for i, g := range c.OperatorGroups {
		if g.TargetNamespaces == nil {
			g.TargetNamespaces = []string{}
		}
		groups[i] = g
	}
	c.OperatorGroups = groups
	if c.MetaOperators == nil {
		c.MetaOperators = []string{}
	}
	return c
}

// scopesOf learns the kinds the CRDs of a cluster's apps define.
func scopesOf(apps []App) *Scopes {
	scopes := NewScopes()
	for _, app := range apps {
		for _, obj := range app.Objects {
			scopes.AddCRD(obj.Object)
		}
	}
	return scopes
}

func (o Object) complete(appNamespace string, scopes *Scopes) Object {
	if o.Scope == "" {
		apiVersion, _ := o.Object["apiVersion"].(string)
		kind, _ := o.Object["kind"].(string)
		o.Scope = scopes.Of(apiVersion, kind)
	}
	switch {
	case o.Scope == ScopeCluster:
		// The API server ignores metadata.namespace on a cluster-scoped object, and
		// kustomize's namespace transformer leaves such objects alone.
		o.Namespace = ""
	case o.Namespace == "":
		o.Namespace = metadataString(o.Object, "namespace")
		if o.Namespace == "" {
			o.Namespace = appNamespace
		}
	}
	return o
}

// metadataString returns metadata.<key> of a manifest when it is a string.
func metadataString(manifest map[string]any, key string) string {
	meta, _ := manifest["metadata"].(map[string]any)
	s, _ := meta[key].(string)
	return s
}

// value is the completed input as the generic JSON-shaped value the sandbox's child reads
// (the rules in this process read astValue, the same value), built directly rather than
// through encoding/json: the manifests are already maps, and a JSON round trip of thousands
// of them would cost more than the evaluation. It equals the JSON form of the Input
// (TestInputValueMatchesJSON).
func (in *Input) value() map[string]any {
	apps := make([]any, len(in.Apps))
	for i, app := range in.Apps {
		objects := make([]any, len(app.Objects))
		for j, obj := range app.Objects {
			manifest := any(obj.Object)
			if obj.Object == nil {
				manifest = nil
			}
			objects[j] = map[string]any{
				"object":    manifest,
				"source":    map[string]any{"file": obj.Source.File, "line": obj.Source.Line},
				"namespace": obj.Namespace,
				"scope":     string(obj.Scope),
			}
		}
		apps[i] = map[string]any{
			"name":         app.Name,
			"path":         app.Path,
			"namespace":    app.Namespace,
			"clusterScope": app.ClusterScope,
			"ownScope":     app.OwnScope,
			"objects":      objects,
		}
	}
	return map[string]any{
		"apiVersion": in.APIVersion,
		"kind":       in.Kind,
		"cluster":    in.Cluster,
		"library":    in.Library,
		"config":     in.configValue(),
		"apps":       apps,
	}
}

// configValue is the value of the input's config.
func (in *Input) configValue() map[string]any {
	groups := make([]any, len(in.Config.OperatorGroups))
	for i, g := range in.Config.OperatorGroups {
		groups[i] = map[string]any{
			"namespace":        g.Namespace,
			"name":             g.Name,
			"global":           g.Global,
			"targetNamespaces": stringsValue(g.TargetNamespaces),
		}
	}
	return map[string]any{
		"marketplaceNamespace":     in.Config.MarketplaceNamespace,
		"globalOperatorsNamespace": in.Config.GlobalOperatorsNamespace,
		"operatorGroups":           groups,
		"metaOperators":            stringsValue(in.Config.MetaOperators),
	}
}

func stringsValue(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
