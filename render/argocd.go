package render

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Argo CD's names for the cluster it runs in.
const (
	argoInClusterName   = "in-cluster"
	argoInClusterServer = "https://kubernetes.default.svc"
)

// argoApplication holds the fields of an Argo CD Application (argoproj.io/v1alpha1) that
// decide what olmsync renders. Other fields are ignored.
type argoApplication struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Project     string `yaml:"project"`
		Destination struct {
			Name      string `yaml:"name"`
			Server    string `yaml:"server"`
			Namespace string `yaml:"namespace"`
		} `yaml:"destination"`
		Source  *argoSource  `yaml:"source"`
		Sources []argoSource `yaml:"sources"`
	} `yaml:"spec"`
}

type argoSource struct {
	RepoURL string `yaml:"repoURL"`
	Path    string `yaml:"path"`
	Chart   string `yaml:"chart"`
	Ref     string `yaml:"ref"`
	// Node-typed fields are set when the key is present (Kind != 0). yaml.v3 fills a
	// yaml.Node field, not a *yaml.Node one.
	Helm      yaml.Node `yaml:"helm"`
	Plugin    yaml.Node `yaml:"plugin"`
	Kustomize yaml.Node `yaml:"kustomize"`
	Directory *struct {
		Recurse bool      `yaml:"recurse"`
		Include string    `yaml:"include"`
		Exclude string    `yaml:"exclude"`
		Jsonnet yaml.Node `yaml:"jsonnet"`
	} `yaml:"directory"`
}

// applicationApps turns one Application into apps: one per source that is a folder of this
// repository. The sources of other repositories are returned as foreign.
func applicationApps(r *repo, file string, doc manifestDoc, id RepositoryIdentity, problems *diagnostics) (apps []App, foreign []ForeignApplication) {
	report := func(reason Reason, format string, args ...any) {
		problems.add(Diagnostic{Reason: reason, File: file, Line: doc.Line, Message: fmt.Sprintf(format, args...)})
	}
	var a argoApplication
	if err := doc.Node.Decode(&a); err != nil {
		ye := yamlError(file, err)
		problems.add(Diagnostic{Reason: ReasonInvalidApplication, File: file, Line: ye.Line, Message: "Application: " + ye.Msg})
		return nil, nil
	}
	name := a.Metadata.Name
	if name == "" {
		report(ReasonInvalidApplication, "Application has no metadata.name; skipped")
		return nil, nil
	}
	sources := a.Spec.Sources
	if a.Spec.Source != nil && len(sources) == 0 {
		sources = []argoSource{*a.Spec.Source}
	}
	cluster := argoCluster(a.Spec.Destination.Name, a.Spec.Destination.Server)
	for i, src := range sources {
		appName := name
		if len(sources) > 1 {
			appName = fmt.Sprintf("%s[%d]", name, i)
		}
		app, ok, why := sourceApp(r, src, id)
		if why.foreign != "" {
			foreign = append(foreign, ForeignApplication{Kind: "Application", Name: appName, File: file, Line: doc.Line,
				RepoURL: src.RepoURL, Path: src.Path, Reason: why.foreign})
			continue
		}
		if why.msg != "" {
			report(why.reason, "Application %q source %s: %s", name, sourceLabel(src, i, len(sources)), why.msg)
		}
		if !ok {
			continue
		}
		app.Name = appName
		app.Namespace = a.Spec.Destination.Namespace
		app.Cluster = cluster
		app.ClusterFrom = ClusterFromApplication
		app.ClusterReason = fmt.Sprintf("Argo CD Application %q deploys it to %s", name, destinationLabel(cluster, ""))
		app.ClusterScope, app.ClusterScopeReason = decideClusterScope(app.Path, nil)
		app.project = a.Spec.Project
		app.Found = Found{Method: MethodArgoCD, File: file, Line: doc.Line,
			Reason: fmt.Sprintf("Argo CD Application %q deploys path %q to %s", name, app.Path, destinationLabel(cluster, app.Namespace))}
		apps = append(apps, app)
	}
	if len(sources) == 0 {
		report(ReasonInvalidApplication, "Application %q has no spec.source or spec.sources; skipped", name)
	}
	return apps, foreign
}

// skipReason says why a source is not rendered (or what of it is ignored). foreign is set
// for a source of another repository: not a problem, only listed.
type skipReason struct {
	reason  Reason
	msg     string
	foreign string
}

// sourceApp decides whether one Application source is a folder olmsync renders.
func sourceApp(r *repo, src argoSource, id RepositoryIdentity) (App, bool, skipReason) {
	switch {
	case src.Chart != "":
		return App{}, false, skipReason{foreign: fmt.Sprintf("Helm chart %q of repository %s", src.Chart, src.RepoURL)}
	case src.Path == "" && src.Ref != "":
		return App{}, false, skipReason{} // a values-only source: nothing to deploy
	case len(id.URLs) > 0 && !matchesRepoURL(src.RepoURL, id.URLs):
		return App{}, false, skipReason{foreign: fmt.Sprintf("repository %s is not this one (this one is %s, from %s)",
			src.RepoURL, strings.Join(id.URLs, ", "), id.From)}
	}
	p := src.Path
	if p == "" {
		p = "."
	}
	if msg := checkRepoPath(p); msg != "" {
		return App{}, false, skipReason{reason: ReasonInvalidApplication, msg: fmt.Sprintf("path %q %s", p, msg)}
	}
	p = path.Clean(p)
	local, inside := inCheckedFolder(r, p, id.Path)
	if !inside && !id.fromConfig() {
		// The git remote names the repository whose top the path starts from; the
		// checked folder is only part of it.
		return App{}, false, skipReason{foreign: fmt.Sprintf("path %q is outside the checked folder %s of the repository", p, id.Path)}
	}
	p = local
	switch {
	case !r.isDir(p) && len(id.URLs) == 0:
		return App{}, false, skipReason{foreign: fmt.Sprintf(
			"path %q is not in this repository, and this repository's URL is unknown (set repoURLs in %s, or --repo-url), so the Application is taken to deploy another one", p, ConfigFileName)}
	case !r.isDir(p):
		return App{}, false, skipReason{reason: ReasonPathMissing, msg: fmt.Sprintf("path %q does not exist in this repository", p)}
	case src.Plugin.Kind != 0:
		return App{}, false, skipReason{reason: ReasonUnsupportedSource, msg: "uses a config management plugin; olmsync does not render it"}
	case src.Helm.Kind != 0 || (r.isFile(path.Join(p, "Chart.yaml")) && !r.hasKustomization(p)):
		return App{}, false, skipReason{reason: ReasonHelmChart, msg: fmt.Sprintf("path %q is a Helm chart; olmsync does not render Helm charts", p)}
	case src.Directory != nil && src.Directory.Jsonnet.Kind != 0:
		return App{}, false, skipReason{reason: ReasonUnsupportedSource, msg: "uses jsonnet; olmsync does not render it"}
	}
	app := App{Path: p}
	var ignored []string
	if d := src.Directory; d != nil {
		app.Recurse = d.Recurse
		if d.Include != "" {
			ignored = append(ignored, "directory.include")
		}
		if d.Exclude != "" {
			ignored = append(ignored, "directory.exclude")
		}
	}
	var more []string
	app.overrides, more = kustomizeSettings(&src.Kustomize)
	ignored = append(ignored, more...)
	if len(ignored) > 0 {
		return app, true, skipReason{reason: ReasonIgnoredSetting, msg: fmt.Sprintf("olmsync renders path %q without %s", p, strings.Join(ignored, ", "))}
	}
	return app, true, skipReason{}
}

// inCheckedFolder maps an Application's path, relative to the top of its repository, to
// the checked folder (which is repoPath inside the repository). A path under repoPath
// loses that prefix; any other path is taken as relative to the checked folder when it
// exists there (a folder checked as a repository of its own), else it is outside.
func inCheckedFolder(r *repo, p, repoPath string) (string, bool) {
	if repoPath == "" {
		return p, true
	}
	if p == repoPath {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(p, repoPath+"/"); ok {
		return rest, true
	}
	return p, r.isDir(p)
}

// foreignApplicationSet reports an ApplicationSet whose template deploys another
// repository (every source of its template).
func foreignApplicationSet(file string, doc manifestDoc, id RepositoryIdentity) (ForeignApplication, bool) {
	var set struct {
		Spec struct {
			Template struct {
				Spec struct {
					Source  *argoSource  `yaml:"source"`
					Sources []argoSource `yaml:"sources"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if len(id.URLs) == 0 || doc.Node.Decode(&set) != nil {
		return ForeignApplication{}, false
	}
	sources := set.Spec.Template.Spec.Sources
	if s := set.Spec.Template.Spec.Source; s != nil {
		sources = append(sources, *s)
	}
	if len(sources) == 0 {
		return ForeignApplication{}, false
	}
	for _, src := range sources {
		if src.Chart == "" && (src.RepoURL == "" || strings.Contains(src.RepoURL, "{{") || matchesRepoURL(src.RepoURL, id.URLs)) {
			return ForeignApplication{}, false
		}
	}
	return ForeignApplication{Kind: "ApplicationSet", Name: doc.Name, File: file, Line: doc.Line,
		RepoURL: sources[0].RepoURL, Path: sources[0].Path,
		Reason: fmt.Sprintf("its template deploys repository %s, not this one (this one is %s, from %s)", sources[0].RepoURL, strings.Join(id.URLs, ", "), id.From)}, true
}

// kustomizeSettings reads an Application's spec.source.kustomize. namePrefix, nameSuffix
// and namespace are applied (they change names and namespaces, which rules look at); the
// other settings are returned as ignored.
func kustomizeSettings(n *yaml.Node) (kustomizeOverrides, []string) {
	var o kustomizeOverrides
	var ignored []string
	if n == nil || n.Kind != yaml.MappingNode {
		return o, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		switch key {
		case "namePrefix":
			o.NamePrefix = val.Value
		case "nameSuffix":
			o.NameSuffix = val.Value
		case "namespace":
			o.Namespace = val.Value
		default:
			ignored = append(ignored, "kustomize."+key)
		}
	}
	slices.Sort(ignored)
	return o, ignored
}

func (r *repo) hasKustomization(dir string) bool {
	k, err := r.kustomizationAt(dir)
	return k != nil || err != nil
}

// argoCluster names the destination cluster: its name, else its server. The in-cluster
// server and the name "in-cluster" are the same cluster to Argo CD.
func argoCluster(name, server string) string {
	server = strings.TrimSuffix(server, "/")
	if name != "" {
		return name
	}
	if server == argoInClusterServer {
		return argoInClusterName
	}
	return server
}

// normalizeRepoURL reduces the ways one repository is written to one:
// https://github.com/org/repo(.git), ssh://git@github.com/org/repo and git@github.com:org/repo
// all become github.com/org/repo.
func normalizeRepoURL(u string) string {
	u = strings.TrimSpace(strings.ToLower(u))
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	} else if at := strings.Index(u, "@"); at >= 0 {
		// scp-like: git@host:org/repo
		u = strings.Replace(u[at+1:], ":", "/", 1)
	}
	if at := strings.Index(u, "@"); at >= 0 && at < strings.Index(u+"/", "/") {
		u = u[at+1:] // user@ in a URL
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	return strings.TrimSuffix(u, "/")
}

func matchesRepoURL(u string, repoURLs []string) bool {
	n := normalizeRepoURL(u)
	return slices.ContainsFunc(repoURLs, func(r string) bool { return normalizeRepoURL(r) == n })
}

func sourceLabel(src argoSource, i, n int) string {
	label := fmt.Sprintf("%q", src.Path)
	if src.Path == "" {
		label = src.RepoURL
	}
	if n > 1 {
		return fmt.Sprintf("sources[%d] %s", i, label)
	}
	return label
}

func destinationLabel(cluster, namespace string) string {
	c := "the default cluster"
	if cluster != "" {
		c = fmt.Sprintf("cluster %q", cluster)
	}
	if namespace == "" {
		return c
	}
	return fmt.Sprintf("namespace %q of %s", namespace, c)
}
