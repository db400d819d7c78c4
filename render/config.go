package render

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// ConfigFileName is the optional config file at the repository root.
const ConfigFileName = "olmsync.yaml"

// The apiVersion and kind an olmsync.yaml may declare (both optional).
const (
	ConfigAPIVersion = "olmsync.dev/v1alpha1"
	ConfigKind       = "Config"
)

// Defaults of the policy settings.
const (
	DefaultMarketplaceNamespace     = "openshift-marketplace"
	DefaultGlobalOperatorsNamespace = "openshift-operators"
	DefaultGlobalOperatorGroupName  = "global-operators"
)

// Config is olmsync.yaml: the apps of the repository, the policy settings, the waivers and
// the catalogs. Every field is optional. ParseConfig fills in the defaults, so the values a
// caller reads are the ones in effect.
type Config struct {
	// APIVersion, when given, must be olmsync.dev/v1alpha1.
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	// Kind, when given, must be Config.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`

	// RepoURLs are the URLs this repository is known by (https or ssh, with or without
	// ".git"). Argo CD Applications whose source repoURL is none of them are reported and
	// skipped as other repositories. When empty, every Application with a path is taken to
	// be of this repository.
	RepoURLs []string `yaml:"repoURLs,omitempty" json:"repoURLs,omitempty"`

	// Apps, when present, are the only apps: neither Argo CD Applications nor
	// kustomization roots are looked for.
	Apps []ConfigApp `yaml:"apps,omitempty" json:"apps,omitempty"`

	// Policy holds the settings of the placement rules.
	Policy PolicyConfig `yaml:"policy,omitempty" json:"policy"`

	// Waivers excuse one object from one rule, with a reason and an optional expiry.
	Waivers []Waiver `yaml:"waivers,omitempty" json:"waivers,omitempty"`

	// Catalogs are the catalogs the OLM preview resolves Subscriptions against.
	Catalogs []Catalog `yaml:"catalogs,omitempty" json:"catalogs,omitempty"`

	// Discovery tunes how apps are found when olmsync.yaml lists none.
	Discovery DiscoveryConfig `yaml:"discovery,omitempty" json:"discovery"`
}

// DiscoveryConfig tunes how the apps of a repository without an apps list are found
// (docs/ci.md, "How olmsync finds the apps").
type DiscoveryConfig struct {
	// ClusterPaths are the path conventions that name the cluster of a kustomization root
	// no Argo CD Application deploys: patterns of folder names separated by "/", where
	// "{cluster}" is the cluster's name, "*" any one folder and "**" any number of
	// folders; the first pattern that matches the root's whole path wins. Absent, the
	// defaults DefaultClusterPaths; an empty list turns the conventions off.
	ClusterPaths []string `yaml:"clusterPaths" json:"clusterPaths"`
	// BaseFolders are folder names that hold kustomize bases: a kustomization under one
	// of them that nothing includes is an unused base, not an app (while the repository
	// has other apps). Absent, DefaultBaseFolders; an empty list makes every
	// kustomization that nothing includes an app.
	BaseFolders []string `yaml:"baseFolders" json:"baseFolders"`
	// Clusters are names of the clusters this repository deploys to, for the built-in
	// path conventions: a default convention names a cluster only when the repository
	// names it somewhere (an Argo CD destination, a Flux clusters/<name>/ folder, an
	// Argo CD cluster Secret, or this list).
	Clusters []string `yaml:"clusters,omitempty" json:"clusters,omitempty"`
	// UncoveredRoots says what a kustomization root is that no entry point of this
	// repository (Argo CD Application or ApplicationSet, Flux Kustomization) deploys:
	// "library" (the default) checks it without the placement rules, as a catalog entry
	// or a base meant for other repositories; "apps" makes each an app, as when the
	// entry points that deploy them live in another repository.
	UncoveredRoots string `yaml:"uncoveredRoots,omitempty" json:"uncoveredRoots,omitempty"`

	// ClusterPathsGiven records that olmsync.yaml gives clusterPaths of its own (other
	// than the defaults): conventions written there apply as written; the defaults only
	// name clusters the repository names.
	ClusterPathsGiven bool `yaml:"-" json:"-"`
}

// The values of DiscoveryConfig.UncoveredRoots.
const (
	UncoveredRootsLibrary = "library"
	UncoveredRootsApps    = "apps"
)

// The discovery defaults: Flux's clusters/<cluster>/ layout and the overlay folders of a
// kustomize layout (overlays/<cluster>, overlays/<environment>/<region>/<cluster>).
var (
	DefaultClusterPaths = []string{"**/clusters/{cluster}/**", "**/overlays/**/{cluster}"}
	DefaultBaseFolders  = []string{"base", "bases"}
)

// ConfigApp is one app listed in olmsync.yaml.
type ConfigApp struct {
	// Name identifies the app in reports; unique within its cluster. Required.
	Name string `yaml:"name" json:"name"`
	// Path is the app's folder, relative to the repository root (slash-separated, no
	// "..", "." for the root). It holds a kustomization or plain manifests. Required.
	Path string `yaml:"path" json:"path"`
	// Namespace is the app's destination namespace: namespaced objects without
	// metadata.namespace land there (as Argo CD does), and rules about "the app's
	// namespace" use it.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Cluster is the cluster the app is deployed to. Apps without one form the default
	// cluster. Rules that look across objects look only within one cluster.
	Cluster string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	// ClusterScope marks the app as the cluster's cluster-scope app. When absent, an app
	// is cluster-scope when its path has a "cluster-scope" segment.
	ClusterScope *bool `yaml:"clusterScope,omitempty" json:"clusterScope,omitempty"`
	// Recurse reads the sub-folders of a plain manifest folder too (like Argo CD's
	// directory.recurse). It has no effect on a kustomization.
	Recurse bool `yaml:"recurse,omitempty" json:"recurse,omitempty"`
}

// PolicyConfig holds the settings of the placement rules.
type PolicyConfig struct {
	// Rules are extra folders of Rego rules inside the repository (relative paths).
	Rules []string `yaml:"rules,omitempty" json:"rules,omitempty"`
	// MarketplaceNamespace is where CatalogSources belong. Default openshift-marketplace.
	MarketplaceNamespace string `yaml:"marketplaceNamespace,omitempty" json:"marketplaceNamespace"`
	// GlobalOperatorsNamespace is where the OLM objects of global operators belong.
	// Default openshift-operators.
	GlobalOperatorsNamespace string `yaml:"globalOperatorsNamespace,omitempty" json:"globalOperatorsNamespace"`
	// OperatorGroups are the OperatorGroups clusters have outside Git. When the key is
	// absent, the default is the global group openshift-operators/global-operators on
	// every cluster (as on OpenShift); an empty list means none.
	OperatorGroups []ExternalOperatorGroup `yaml:"operatorGroups" json:"operatorGroups"`
	// MetaOperators are package names of meta-operators (operators that install other
	// operators); a Subscription to one needs a waiver recording its review.
	MetaOperators []string `yaml:"metaOperators,omitempty" json:"metaOperators,omitempty"`
	// ClusterScopeApps name the cluster-scope apps, beside discovery: globs over app
	// names and paths ("*" within a folder name, "**" across folders). An app one of
	// them matches is its cluster's cluster-scope app, and no other app of a cluster
	// where one matches is. Empty: an app is cluster-scope when its path or name has a
	// "cluster-scope" segment, else when its Argo CD AppProject allows cluster-scoped
	// kinds (docs/policy.md).
	ClusterScopeApps []string `yaml:"clusterScopeApps,omitempty" json:"clusterScopeApps,omitempty"`
}

// ExternalOperatorGroup is an OperatorGroup a cluster has without it being in Git.
type ExternalOperatorGroup struct {
	// Namespace and Name of the OperatorGroup. Both required.
	Namespace string `yaml:"namespace" json:"namespace"`
	Name      string `yaml:"name" json:"name"`
	// Global: the group selects all namespaces.
	Global bool `yaml:"global,omitempty" json:"global,omitempty"`
	// TargetNamespaces of a group that is not global.
	TargetNamespaces []string `yaml:"targetNamespaces,omitempty" json:"targetNamespaces,omitempty"`
	// Cluster the group exists on; empty for every cluster.
	Cluster string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
}

// Waiver excuses one object from one rule.
type Waiver struct {
	// Rule is the rule's ID (OP006, or a user rule's). Required.
	Rule string `yaml:"rule" json:"rule"`
	// Object identifies the object waived.
	Object WaiverObject `yaml:"object" json:"object"`
	// Reason records why, for the reviewer and the report. Required.
	Reason string `yaml:"reason" json:"reason"`
	// Expires is the last day (YYYY-MM-DD) the waiver holds; after it the waiver is itself
	// a violation. Optional.
	Expires *Date `yaml:"expires,omitempty" json:"expires,omitempty"`
	// Line is where the waiver is written in the config file (set by ParseConfig), so that
	// a report about the waiver itself (expired, unused) points at it.
	Line int `yaml:"-" json:"-"`
}

// WaiverObject identifies a waived object. Kind and Name are required; Namespace is
// empty for cluster-scoped objects; Cluster empty matches every cluster.
type WaiverObject struct {
	Kind      string `yaml:"kind" json:"kind"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Name      string `yaml:"name" json:"name"`
	Cluster   string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
}

// Catalog is a catalog the OLM preview resolves Subscriptions against.
type Catalog struct {
	// Name of the CatalogSource it stands for. Required.
	Name string `yaml:"name" json:"name"`
	// Namespace of the CatalogSource; the marketplace namespace (policy.marketplaceNamespace)
	// when empty.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Source is where its content is: a folder in the repository (relative path) or an
	// image reference naming its registry. Required.
	Source string `yaml:"source" json:"source"`
	// Line is where the catalog is written in the config file (set by ParseConfig).
	Line int `yaml:"-" json:"-"`
}

// Date is a calendar day written YYYY-MM-DD.
type Date struct{ time.Time }

const dateLayout = "2006-01-02"

// UnmarshalYAML reads YYYY-MM-DD.
func (d *Date) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a date must be written YYYY-MM-DD", n.Line)
	}
	t, err := time.Parse(dateLayout, n.Value)
	if err != nil {
		return fmt.Errorf("line %d: date %q is not YYYY-MM-DD", n.Line, n.Value)
	}
	d.Time = t
	return nil
}

// MarshalYAML writes YYYY-MM-DD.
func (d Date) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

func (d Date) String() string { return d.Format(dateLayout) }

// Expired reports whether the day has passed at now: a waiver that expires on a day
// holds through that whole day (in UTC).
func (d Date) Expired(now time.Time) bool {
	return !now.UTC().Before(d.AddDate(0, 0, 1))
}

// DefaultConfig is the config in effect when a repository has no olmsync.yaml.
func DefaultConfig() *Config {
	c := &Config{}
	c.applyDefaults(nil)
	return c
}

func (c *Config) applyDefaults(root *yaml.Node) {
	policyNode := mapValue(root, "policy")
	if c.Policy.MarketplaceNamespace == "" {
		c.Policy.MarketplaceNamespace = DefaultMarketplaceNamespace
	}
	if c.Policy.GlobalOperatorsNamespace == "" {
		c.Policy.GlobalOperatorsNamespace = DefaultGlobalOperatorsNamespace
	}
	// Only an absent key gets the default group: "operatorGroups: []" says "none".
	if mapKey(policyNode, "operatorGroups") == nil && c.Policy.OperatorGroups == nil {
		c.Policy.OperatorGroups = []ExternalOperatorGroup{{
			Namespace: DefaultGlobalOperatorsNamespace,
			Name:      DefaultGlobalOperatorGroupName,
			Global:    true,
		}}
	}
	if c.Policy.OperatorGroups == nil {
		c.Policy.OperatorGroups = []ExternalOperatorGroup{}
	}
	// As for operatorGroups, only an absent key gets the default: "[]" turns it off.
	discovery := mapValue(root, "discovery")
	if mapKey(discovery, "clusterPaths") == nil {
		c.Discovery.ClusterPaths = slices.Clone(DefaultClusterPaths)
	} else {
		// The defaults written out are still the defaults (a config olmsync wrote).
		c.Discovery.ClusterPathsGiven = !slices.Equal(c.Discovery.ClusterPaths, DefaultClusterPaths)
	}
	if mapKey(discovery, "baseFolders") == nil {
		c.Discovery.BaseFolders = slices.Clone(DefaultBaseFolders)
	}
	if c.Discovery.ClusterPaths == nil {
		c.Discovery.ClusterPaths = []string{}
	}
	if c.Discovery.BaseFolders == nil {
		c.Discovery.BaseFolders = []string{}
	}
}

// LoadConfig reads olmsync.yaml at the repository root. It returns (nil, nil) when the file
// does not exist.
func LoadConfig(fsys filesys.FileSystem, root string) (*Config, error) {
	c, _, err := loadConfig(fsys, root)
	return c, err
}

func loadConfig(fsys filesys.FileSystem, root string) (*Config, *yaml.Node, error) {
	p := path.Join(root, ConfigFileName)
	if !fsys.Exists(p) {
		return nil, nil, nil
	}
	data, err := fsys.ReadFile(p)
	if err != nil {
		return nil, nil, &ConfigError{File: ConfigFileName, Msg: fmt.Sprintf("read: %v", err)}
	}
	return parseConfig(ConfigFileName, data)
}

// ParseConfig reads an olmsync.yaml strictly: malformed YAML, a key given twice, an unknown
// field, a value of the wrong type and a value that breaks a rule are each a *ConfigError
// naming file and line. file is used in messages only. The defaults are filled in.
func ParseConfig(file string, data []byte) (*Config, error) {
	c, _, err := parseConfig(file, data)
	return c, err
}

// parseConfig is ParseConfig that also returns the top mapping node (nil for an empty
// file), so callers can point at the line of an entry.
func parseConfig(file string, data []byte) (*Config, *yaml.Node, error) {
	root, err := decodeConfigNode(file, data)
	if err != nil {
		return nil, nil, err
	}
	c := &Config{}
	if root != nil {
		if err := checkKnownFields(file, root, reflect.TypeFor[Config](), "the config"); err != nil {
			return nil, nil, asConfigError(err)
		}
		if err := root.Decode(c); err != nil {
			return nil, nil, asConfigError(yamlError(file, err))
		}
	}
	if err := c.validate(file, root); err != nil {
		return nil, nil, err
	}
	for i := range c.Waivers {
		c.Waivers[i].Line = seqItemLine(root, "waivers", i)
	}
	for i := range c.Catalogs {
		c.Catalogs[i].Line = seqItemLine(root, "catalogs", i)
	}
	c.normalize()
	c.applyDefaults(root)
	return c, root, nil
}

// normalize makes an empty list the same as an absent one ("waivers: []" is no waivers),
// except operatorGroups, where an empty list means "none" and absence means the default.
func (c *Config) normalize() {
	nilIfEmpty := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	c.RepoURLs = nilIfEmpty(c.RepoURLs)
	c.Policy.Rules = nilIfEmpty(c.Policy.Rules)
	c.Policy.MetaOperators = nilIfEmpty(c.Policy.MetaOperators)
	for i := range c.Policy.OperatorGroups {
		c.Policy.OperatorGroups[i].TargetNamespaces = nilIfEmpty(c.Policy.OperatorGroups[i].TargetNamespaces)
	}
	if len(c.Waivers) == 0 {
		c.Waivers = nil
	}
	if len(c.Catalogs) == 0 {
		c.Catalogs = nil
	}
}

// decodeConfigNode returns the top mapping of the file, or nil for an empty file.
// It reads through the bounded decoder, as every manifest is read (see decodeDocs).
func decodeConfigNode(file string, data []byte) (*yaml.Node, error) {
	docs, err := safeyaml.Documents(file, data)
	if le, ok := limitError(err); ok {
		return nil, asConfigError(le)
	}
	if len(docs) > 1 {
		extra := docs[1]
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, &ConfigError{File: file, Line: line, Msg: "a config file holds one YAML document; found a second"}
	}
	if err != nil {
		return nil, asConfigError(syntaxError(file, data, err))
	}
	if len(docs) == 0 {
		return nil, nil
	}
	doc := docs[0]
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &ConfigError{File: file, Line: root.Line, Msg: "the config must be a mapping (apiVersion, apps, policy, waivers, catalogs)"}
	}
	if err := checkDuplicateKeys(file, root); err != nil {
		return nil, asConfigError(err)
	}
	return root, nil
}

func asConfigError(err error) error {
	var ye *YAMLError
	if errors.As(err, &ye) {
		return &ConfigError{File: ye.File, Line: ye.Line, Msg: ye.Msg}
	}
	return err
}

// validate checks the rules the types cannot express. Messages point at the item's line.
func (c *Config) validate(file string, root *yaml.Node) error {
	fail := func(line int, format string, args ...any) error {
		return &ConfigError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if c.APIVersion != "" && c.APIVersion != ConfigAPIVersion {
		return fail(lineOf(mapValue(root, "apiVersion")), "apiVersion %q: want %s", c.APIVersion, ConfigAPIVersion)
	}
	if c.Kind != "" && c.Kind != ConfigKind {
		return fail(lineOf(mapValue(root, "kind")), "kind %q: want %s", c.Kind, ConfigKind)
	}
	if err := c.validateApps(root, fail); err != nil {
		return err
	}
	policy := mapValue(root, "policy")
	for i, r := range c.Policy.Rules {
		if msg := checkRepoPath(r); msg != "" {
			return fail(seqItemLine(policy, "rules", i), "policy.rules[%d] %q: %s", i, r, msg)
		}
	}
	for i, og := range c.Policy.OperatorGroups {
		line := seqItemLine(policy, "operatorGroups", i)
		if og.Namespace == "" || og.Name == "" {
			return fail(line, "policy.operatorGroups[%d]: namespace and name are required", i)
		}
		if og.Global && len(og.TargetNamespaces) > 0 {
			return fail(line, "policy.operatorGroups[%d] %s/%s: a global group has no targetNamespaces", i, og.Namespace, og.Name)
		}
	}
	for i, w := range c.Waivers {
		line := seqItemLine(root, "waivers", i)
		switch {
		case strings.TrimSpace(w.Rule) == "":
			return fail(line, "waivers[%d]: rule is required", i)
		case w.Object.Kind == "" || w.Object.Name == "":
			return fail(line, "waivers[%d] (%s): object.kind and object.name are required", i, w.Rule)
		case strings.TrimSpace(w.Reason) == "":
			return fail(line, "waivers[%d] (%s %s/%s): reason is required: say why the object may break the rule",
				i, w.Rule, w.Object.Kind, w.Object.Name)
		}
	}
	for i, cat := range c.Catalogs {
		if cat.Name == "" || cat.Source == "" {
			return fail(seqItemLine(root, "catalogs", i), "catalogs[%d]: name and source are required", i)
		}
	}
	discovery := mapValue(root, "discovery")
	for i, p := range c.Discovery.ClusterPaths {
		if _, err := parseClusterPath(p); err != nil {
			return fail(seqItemLine(discovery, "clusterPaths", i), "discovery.clusterPaths[%d] %q: %v", i, p, err)
		}
	}
	for i, name := range c.Discovery.BaseFolders {
		if name == "" || strings.Contains(name, "/") {
			return fail(seqItemLine(discovery, "baseFolders", i), "discovery.baseFolders[%d] %q: a folder name, without \"/\"", i, name)
		}
	}
	for i, name := range c.Discovery.Clusters {
		if strings.TrimSpace(name) == "" {
			return fail(seqItemLine(discovery, "clusters", i), "discovery.clusters[%d]: a cluster name is required", i)
		}
	}
	switch c.Discovery.UncoveredRoots {
	case "", UncoveredRootsLibrary, UncoveredRootsApps:
	default:
		return fail(lineOf(mapValue(discovery, "uncoveredRoots")), "discovery.uncoveredRoots %q: want %s or %s",
			c.Discovery.UncoveredRoots, UncoveredRootsLibrary, UncoveredRootsApps)
	}
	for i, g := range c.Policy.ClusterScopeApps {
		if _, err := compileAppGlob(g); err != nil {
			return fail(seqItemLine(policy, "clusterScopeApps", i), "policy.clusterScopeApps[%d] %q: %v", i, g, err)
		}
	}
	return nil
}

func (c *Config) validateApps(root *yaml.Node, fail func(int, string, ...any) error) error {
	if mapKey(root, "apps") != nil && len(c.Apps) == 0 {
		return fail(mapKey(root, "apps").Line, "apps is empty: list the apps, or remove the key to discover them")
	}
	type key struct{ cluster, name string }
	first := map[key]int{}
	for i, a := range c.Apps {
		line := seqItemLine(root, "apps", i)
		if a.Name == "" {
			return fail(line, "apps[%d]: name is required", i)
		}
		if a.Path == "" {
			return fail(line, "apps[%d] %q: path is required", i, a.Name)
		}
		if msg := checkRepoPath(a.Path); msg != "" {
			return fail(line, "apps[%d] %q: path %q: %s", i, a.Name, a.Path, msg)
		}
		k := key{a.Cluster, a.Name}
		if at, dup := first[k]; dup {
			return fail(line, "apps[%d]: app name %q is used twice in cluster %s (first at line %d)", i, a.Name, clusterLabel(a.Cluster), at)
		}
		first[k] = line
	}
	return nil
}

// checkRepoPath says what is wrong with a path that must stay inside the repository, or "".
func checkRepoPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.Contains(p, `\`):
		return `use "/" to separate folders`
	case path.IsAbs(p):
		return "must be relative to the repository root"
	}
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return "leads outside the repository"
	}
	return ""
}

func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// clusterLabel names a cluster in messages; the default cluster has no name.
func clusterLabel(c string) string {
	if c == "" {
		return "(default)"
	}
	return fmt.Sprintf("%q", c)
}
