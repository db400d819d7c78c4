package render

import (
	"cmp"
	"slices"
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
	// MethodApplicationSet: the app is an Application an Argo CD ApplicationSet of this
	// repository generates.
	MethodApplicationSet Method = "applicationset"
	// MethodFlux: the app is a Flux Kustomization (kustomize.toolkit.fluxcd.io) whose
	// source is this repository.
	MethodFlux Method = "flux"
)

// IsEntryPoint reports whether apps found this way are what the repository itself says
// it deploys (an Application, an ApplicationSet, a Flux Kustomization, olmsync.yaml).
func (m Method) IsEntryPoint() bool {
	switch m {
	case MethodConfig, MethodArgoCD, MethodApplicationSet, MethodFlux:
		return true
	}
	return false
}

// ClusterFrom says how an app's cluster was decided.
type ClusterFrom string

// The ways an app's cluster is decided, in precedence order.
const (
	// ClusterFromConfig: olmsync.yaml lists the app (with or without a cluster: apps
	// without one form the default cluster, which the config declares one cluster).
	ClusterFromConfig ClusterFrom = "config"
	// ClusterFromApplication: an Argo CD Application's destination (one an ApplicationSet
	// generates included).
	ClusterFromApplication ClusterFrom = "application"
	// ClusterFromFlux: the Flux clusters/<name>/ folder that holds the Flux Kustomization,
	// or the cluster of the Flux Kustomization that applies it.
	ClusterFromFlux ClusterFrom = "flux"
	// ClusterFromPath: a path convention (DiscoveryConfig.ClusterPaths) names it.
	ClusterFromPath ClusterFrom = "path"
	// ClusterUnknown: nothing names it. The app is in the default cluster, but rules that
	// compare two objects (one OperatorGroup per namespace, a Subscription against its
	// namespace's global group) compare its objects only with its own: two apps of
	// unknown clusters may well be on two clusters.
	ClusterUnknown ClusterFrom = "unknown"
	// ClusterNone: a library root, which nothing deploys anywhere: it is checked on its
	// own (App.Library).
	ClusterNone ClusterFrom = "none"
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
	// Library marks a library root: a kustomization root (or the repository read as one
	// folder) that no entry point of the repository deploys — a catalog entry, an
	// example, a base for other repositories. It is rendered and checked on its own, with
	// the rules whose verdict does not depend on which app holds an object, never with
	// the placement rules; a Sync does not apply it.
	Library bool `json:"library,omitempty"`
	// Found records where the app was found and why it is an app.
	Found Found `json:"found"`
	// ClusterScopeReason says why ClusterScope is what it is.
	ClusterScopeReason string `json:"clusterScopeReason"`

	// overrides are the Argo CD Application's kustomize settings that olmsync applies
	// (namePrefix, nameSuffix, namespace).
	overrides kustomizeOverrides
	// autodetect builds a folder without a kustomization as Flux does: a kustomization
	// generated from its manifests and the folders below that hold a kustomization.
	autodetect bool
	// project is the Argo CD AppProject of the Application that deploys the app.
	project string
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

// Deployed reports whether the repository deploys the app: every app but a library root.
func (a *App) Deployed() bool { return !a.Library }

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

// sortApps orders deployed apps before library roots, then by cluster, cluster-scope first,
// then name.
func sortApps(apps []App) {
	slices.SortStableFunc(apps, func(a, b App) int {
		return compareApps(&a, &b)
	})
}

func compareApps(a, b *App) int {
	if a.Library != b.Library {
		if b.Library {
			return -1
		}
		return 1
	}
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
