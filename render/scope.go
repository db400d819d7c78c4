package render

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// This file decides which app is its cluster's cluster-scope app (the ADR's application
// with cluster-wide privileges), in this order:
//
//  1. olmsync.yaml: an app listed with clusterScope set says so itself; otherwise, when
//     policy.clusterScopeApps is given, the apps one of its globs matches (by name or
//     path) are the cluster-scope apps and no other is;
//  2. the app's path or name has a "cluster-scope" segment;
//  3. in a cluster where neither names one, an Argo CD Application whose AppProject (in
//     the repository) allows cluster-scoped kinds (spec.clusterResourceWhitelist): what
//     the ADR means by the cluster-scope application.
//
// A library root is never the cluster-scope app: no placement rule looks at it.

// compileAppGlob checks a policy.clusterScopeApps entry: "*" matches within a folder
// name, "**" across folders (doublestar's syntax).
func compileAppGlob(pattern string) (string, error) {
	if strings.TrimSpace(pattern) == "" {
		return "", fmt.Errorf("an empty pattern")
	}
	if !doublestar.ValidatePattern(pattern) {
		return "", fmt.Errorf("not a valid pattern (\"*\" within a folder name, \"**\" across folders, [abc], {a,b})")
	}
	return pattern, nil
}

// globMatch matches a validated pattern against a name or path.
func globMatch(pattern, s string) bool {
	ok, err := doublestar.Match(pattern, s)
	return err == nil && ok
}

// appProject is what olmsync reads of an Argo CD AppProject.
type appProject struct {
	name string
	file string
	line int
	// clusterKinds is spec.clusterResourceWhitelist, as group/kind strings.
	clusterKinds []string
}

// allowsClusterKinds reports whether the project lets its Applications create
// cluster-scoped objects.
func (p appProject) allowsClusterKinds() bool { return len(p.clusterKinds) > 0 }

// hasClusterScopeSegment reports whether a repository path (or an app name) has a
// "cluster-scope" folder, or a name segment "cluster-scope", "cluster-scope-<x>" or
// "<x>-cluster-scope" (an Application "cluster-scope-alpha").
func hasClusterScopeSegment(p string) bool {
	for _, seg := range strings.Split(path.Clean(p), "/") {
		if seg == ClusterScopeSegment || strings.HasPrefix(seg, ClusterScopeSegment+"-") || strings.HasSuffix(seg, "-"+ClusterScopeSegment) {
			return true
		}
	}
	return false
}

// decideClusterScope applies steps 1 (an app's own clusterScope in olmsync.yaml) and 2
// (its path) to one app; settleClusterScopes applies the rest.
func decideClusterScope(p string, configured *bool) (bool, string) {
	if configured != nil {
		return *configured, fmt.Sprintf("olmsync.yaml sets clusterScope: %t", *configured)
	}
	if hasClusterScopeSegment(p) {
		return true, fmt.Sprintf("its path has a %q segment", ClusterScopeSegment)
	}
	return false, fmt.Sprintf("its path has no %q segment", ClusterScopeSegment)
}

// settleClusterScopes decides ClusterScope for every app, in the order the file's comment
// gives. explicit says which apps olmsync.yaml set clusterScope for (by index).
func settleClusterScopes(apps []App, cfg *Config, explicit map[int]bool, projects map[string]appProject) {
	globs := cfg.Policy.ClusterScopeApps // validated with the config
	named := map[string]bool{}           // clusters where steps 1 and 2 named a cluster-scope app
	for i := range apps {
		a := &apps[i]
		switch {
		case a.Library:
			a.ClusterScope = false
			a.ClusterScopeReason = "a library root: no entry point deploys it, so no placement rule looks at it"
			continue
		case explicit[i]:
		case len(globs) > 0:
			a.ClusterScope, a.ClusterScopeReason = false, "no pattern of policy.clusterScopeApps in olmsync.yaml matches its name or path"
			for j, g := range globs {
				if globMatch(g, a.Name) || globMatch(g, a.Path) {
					a.ClusterScope = true
					a.ClusterScopeReason = fmt.Sprintf("policy.clusterScopeApps[%d] %q in olmsync.yaml matches its name or path", j, cfg.Policy.ClusterScopeApps[j])
					break
				}
			}
		case hasClusterScopeSegment(a.Path):
			a.ClusterScope, a.ClusterScopeReason = true, fmt.Sprintf("its path has a %q segment", ClusterScopeSegment)
		case hasClusterScopeSegment(a.Name):
			a.ClusterScope, a.ClusterScopeReason = true, fmt.Sprintf("its name has a %q segment", ClusterScopeSegment)
		default:
			a.ClusterScope, a.ClusterScopeReason = false, fmt.Sprintf("neither its path nor its name has a %q segment", ClusterScopeSegment)
		}
		if a.ClusterScope {
			named[a.Cluster] = true
		}
	}
	if len(globs) > 0 {
		return
	}
	for i := range apps {
		a := &apps[i]
		if a.Library || a.ClusterScope || explicit[i] || named[a.Cluster] || a.project == "" {
			continue
		}
		p, ok := projects[a.project]
		switch {
		case !ok:
			a.ClusterScopeReason += fmt.Sprintf("; its AppProject %q is not in the repository", a.project)
		case p.allowsClusterKinds():
			a.ClusterScope = true
			a.ClusterScopeReason = fmt.Sprintf("its Argo CD AppProject %q (%s:%d) allows cluster-scoped kinds (clusterResourceWhitelist: %s), and no app of its cluster is named cluster-scope",
				p.name, p.file, p.line, strings.Join(p.clusterKinds, ", "))
		default:
			a.ClusterScopeReason += fmt.Sprintf("; its AppProject %q allows no cluster-scoped kind", a.project)
		}
	}
}

// projectOf reads an AppProject document.
func projectOf(file string, doc manifestDoc) (appProject, bool) {
	var p struct {
		Spec struct {
			ClusterResourceWhitelist []struct {
				Group string `yaml:"group"`
				Kind  string `yaml:"kind"`
			} `yaml:"clusterResourceWhitelist"`
		} `yaml:"spec"`
	}
	if doc.Name == "" || doc.Node.Decode(&p) != nil {
		return appProject{}, false
	}
	proj := appProject{name: doc.Name, file: file, line: doc.Line}
	for _, gk := range p.Spec.ClusterResourceWhitelist {
		if gk.Kind == "" {
			continue
		}
		proj.clusterKinds = append(proj.clusterKinds, gk.Group+"/"+gk.Kind)
	}
	slices.Sort(proj.clusterKinds)
	return proj, true
}
