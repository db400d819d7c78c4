package render

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Method says how an app was found.
type Method string

// The ways apps are found, in the order they are tried: the first that yields apps wins.
const (
	// MethodConfig: the app is listed in olmsync.yaml.
	MethodConfig Method = "config"
	// MethodArgoCD: the app is an Argo CD Application manifest found in the repository.
	MethodArgoCD Method = "argocd"
	// MethodKustomization: the app is a kustomization that no other kustomization uses
	// and no Argo CD Application of this repository deploys.
	MethodKustomization Method = "kustomization"
	// MethodDirectory: the repository has no kustomization and no Application of its
	// own; its manifests are one app, read as Argo CD reads a directory source.
	MethodDirectory Method = "directory"
)

// ClusterFrom says how an app's cluster was decided.
type ClusterFrom string

// The ways an app's cluster is decided, in precedence order.
const (
	// ClusterFromConfig: olmsync.yaml lists the app (with or without a cluster: apps
	// without one form the default cluster, which the config declares one cluster).
	ClusterFromConfig ClusterFrom = "config"
	// ClusterFromApplication: an Argo CD Application's destination.
	ClusterFromApplication ClusterFrom = "application"
	// ClusterFromPath: a path convention (DiscoveryConfig.ClusterPaths) names it.
	ClusterFromPath ClusterFrom = "path"
	// ClusterUnknown: nothing names it. The app is in the default cluster, but rules that
	// compare two objects (one OperatorGroup per namespace, a Subscription against its
	// namespace's global group) compare its objects only with its own: two apps of
	// unknown clusters may well be on two clusters.
	ClusterUnknown ClusterFrom = "unknown"
)

// ClusterScopeSegment is the path segment that marks an app as cluster-scope.
const ClusterScopeSegment = "cluster-scope"

// App is one deployable unit of the repository: a folder rendered together and deployed to
// one destination of one cluster.
type App struct {
	// Name identifies the app in reports; unique within its cluster.
	Name string `json:"name"`
	// Path is the app's folder, repository-relative and slash-separated ("." for the root).
	Path string `json:"path"`
	// Namespace is the destination namespace ("" when unknown).
	Namespace string `json:"namespace,omitempty"`
	// Cluster is the destination cluster; "" is the default cluster.
	Cluster string `json:"cluster,omitempty"`
	// ClusterFrom says how Cluster was decided; ClusterReason says it in a sentence.
	ClusterFrom   ClusterFrom `json:"clusterFrom"`
	ClusterReason string      `json:"clusterReason"`
	// ClusterScope marks the cluster's cluster-scope app.
	ClusterScope bool `json:"clusterScope"`
	// Recurse reads sub-folders of a plain manifest folder.
	Recurse bool `json:"recurse,omitempty"`
	// Lenient skips the files of a plain folder that hold no Kubernetes object (a CI
	// workflow, a values file) with a warning instead of failing the app: set for the
	// repository read as one directory app, which nobody declared.
	Lenient bool `json:"lenient,omitempty"`
	// Found records where the app was found and why it is an app.
	Found Found `json:"found"`
	// ClusterScopeReason says why ClusterScope is what it is.
	ClusterScopeReason string `json:"clusterScopeReason"`

	// overrides are the Argo CD Application's kustomize settings that olmsync applies
	// (namePrefix, nameSuffix, namespace).
	overrides kustomizeOverrides
}

// Found records where an app was found, for `olmsync apps`.
type Found struct {
	Method Method `json:"method"`
	// File and Line locate the olmsync.yaml entry, the Application manifest or the
	// kustomization file that defines the app.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Reason is one sentence saying why this is an app.
	Reason string `json:"reason"`
}

// OwnScope reports whether rules that compare two objects compare this app's objects only
// with each other: its cluster is unknown.
func (a *App) OwnScope() bool { return a.ClusterFrom == ClusterUnknown }

// ID is the app's identity: cluster and name.
func (a *App) ID() string {
	if a.Cluster == "" {
		return a.Name
	}
	return a.Cluster + "/" + a.Name
}

// kustomizeOverrides are the kustomize settings an Argo CD Application applies on top of
// the kustomization at its path.
type kustomizeOverrides struct {
	NamePrefix string
	NameSuffix string
	Namespace  string
}

// hasClusterScopeSegment reports whether a repository path has a "cluster-scope" folder.
func hasClusterScopeSegment(p string) bool {
	return slices.Contains(strings.Split(path.Clean(p), "/"), ClusterScopeSegment)
}

// decideClusterScope applies the rule: the config says so, else the path has a
// cluster-scope segment.
func decideClusterScope(p string, configured *bool) (bool, string) {
	if configured != nil {
		return *configured, fmt.Sprintf("olmsync.yaml sets clusterScope: %t", *configured)
	}
	if hasClusterScopeSegment(p) {
		return true, fmt.Sprintf("its path has a %q segment", ClusterScopeSegment)
	}
	return false, fmt.Sprintf("its path has no %q segment", ClusterScopeSegment)
}

// sortApps orders apps by cluster, then cluster-scope first, then name.
func sortApps(apps []App) {
	slices.SortStableFunc(apps, func(a, b App) int {
		return compareApps(&a, &b)
	})
}

func compareApps(a, b *App) int {
	if c := cmp.Compare(a.Cluster, b.Cluster); c != 0 {
		return c
	}
	if a.ClusterScope != b.ClusterScope {
		if a.ClusterScope {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.Name, b.Name)
}
