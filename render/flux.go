package render

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file reads Flux's entry points: Kustomizations (kustomize.toolkit.fluxcd.io v1,
// v1beta2, v1beta1) whose source is a GitRepository of this repository. Each is an app:
// its spec.path, in its spec.targetNamespace, on the cluster Flux's layout names — the
// clusters/<name>/ folder that holds it, or the cluster of the app that applies it (a
// Kustomization applied by another one). A path without a kustomization is built as Flux
// builds it, from a kustomization generated over its manifests (App.autodetect).

// Flux's API groups.
const (
	fluxKustomizeGroup = "kustomize.toolkit.fluxcd.io"
	fluxSourceGroup    = "source.toolkit.fluxcd.io"
	// fluxDefaultNamespace is where `flux bootstrap` puts its objects.
	fluxDefaultNamespace = "flux-system"
)

// fluxKustomization holds the fields of a Flux Kustomization olmsync reads.
type fluxKustomization struct {
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Path      string `yaml:"path"`
		SourceRef struct {
			Kind      string `yaml:"kind"`
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"sourceRef"`
		TargetNamespace string    `yaml:"targetNamespace"`
		NamePrefix      string    `yaml:"namePrefix"`
		NameSuffix      string    `yaml:"nameSuffix"`
		KubeConfig      yaml.Node `yaml:"kubeConfig"`
		PostBuild       yaml.Node `yaml:"postBuild"`
		Patches         yaml.Node `yaml:"patches"`
		Images          yaml.Node `yaml:"images"`
		Components      yaml.Node `yaml:"components"`
		CommonMetadata  yaml.Node `yaml:"commonMetadata"`
	} `yaml:"spec"`
}

// fluxPending is a Kustomization of this repository whose cluster is not decided yet.
type fluxPending struct {
	d   entryDoc
	app App
}

// fluxApps turns the Flux Kustomizations of the repository into apps. deployed are the
// apps found so far (Argo CD's): a Kustomization in a folder one of them deploys is on
// that app's cluster.
func fluxApps(r *repo, s *repoScan, docs *entryDocs, id RepositoryIdentity, deployed []App, problems *diagnostics) (apps []App, foreign []ForeignApplication) {
	repos := map[string]string{} // namespace/name -> url
	for _, d := range docs.gitRepositories {
		var g struct {
			Metadata struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
			Spec struct {
				URL string `yaml:"url"`
			} `yaml:"spec"`
		}
		if d.doc.Node.Decode(&g) == nil && g.Metadata.Name != "" {
			repos[fluxNamespace(g.Metadata.Namespace)+"/"+g.Metadata.Name] = g.Spec.URL
		}
	}
	var pending []fluxPending
	for _, d := range docs.fluxKustomizations {
		app, f, ok := fluxApp(r, d, id, repos, problems)
		switch {
		case f != nil:
			foreign = append(foreign, *f)
		case ok:
			pending = append(pending, fluxPending{d, app})
		}
	}
	// Place each by its clusters/<name>/ folder, else by the app that applies it, until
	// no more can be placed: a Kustomization applied by one applied by another.
	placed := deployed
	for len(pending) > 0 {
		var rest []fluxPending
		progress := false
		for _, p := range pending {
			if cluster, how, ok := fluxCluster(s, p.d.file, placed); ok {
				p.app.Cluster, p.app.ClusterFrom, p.app.ClusterReason = cluster, ClusterFromFlux, how
				apps = append(apps, p.app)
				placed = append(placed, p.app)
				progress = true
				continue
			}
			rest = append(rest, p)
		}
		pending = rest
		if !progress {
			break
		}
	}
	for _, p := range pending {
		p.app.ClusterFrom = ClusterUnknown
		p.app.ClusterReason = "neither a clusters/<name>/ folder nor an app of a known cluster holds its Flux Kustomization: rules that compare two objects compare its objects only with each other"
		apps = append(apps, p.app)
	}
	return apps, foreign
}

func fluxNamespace(ns string) string {
	if ns == "" {
		return fluxDefaultNamespace
	}
	return ns
}

// fluxApp reads one Kustomization: an app of this repository (ok), one of another
// (foreign), or neither (a problem, reported).
func fluxApp(r *repo, d entryDoc, id RepositoryIdentity, repos map[string]string, problems *diagnostics) (App, *ForeignApplication, bool) {
	report := func(reason Reason, format string, args ...any) {
		problems.add(Diagnostic{Reason: reason, File: d.file, Line: d.doc.Line, Message: fmt.Sprintf(format, args...)})
	}
	var k fluxKustomization
	if err := d.doc.Node.Decode(&k); err != nil {
		ye := yamlError(d.file, err)
		problems.add(Diagnostic{Reason: ReasonInvalidApplication, File: d.file, Line: ye.Line, Message: "Flux Kustomization: " + ye.Msg})
		return App{}, nil, false
	}
	name := k.Metadata.Name
	if name == "" {
		report(ReasonInvalidApplication, "Flux Kustomization has no metadata.name; skipped")
		return App{}, nil, false
	}
	ns := fluxNamespace(k.Metadata.Namespace)
	foreign := func(reason string) (App, *ForeignApplication, bool) {
		return App{}, &ForeignApplication{Kind: "Kustomization", Name: ns + "/" + name, File: d.file, Line: d.doc.Line,
			Path: k.Spec.Path, Reason: reason}, false
	}
	ref := k.Spec.SourceRef
	switch ref.Kind {
	case "GitRepository":
	case "":
		report(ReasonInvalidApplication, "Flux Kustomization %q has no spec.sourceRef; skipped", name)
		return App{}, nil, false
	default:
		return foreign(fmt.Sprintf("its source is the %s %q, not a Git repository", ref.Kind, ref.Name))
	}
	srcKey := fluxNamespace(cmp.Or(ref.Namespace, k.Metadata.Namespace)) + "/" + ref.Name
	url, known := repos[srcKey]
	var how string
	switch {
	case known && len(id.URLs) > 0 && !matchesRepoURL(url, id.URLs):
		_, f, _ := foreign(fmt.Sprintf("its GitRepository %s points at %s, not this repository (%s, from %s)", srcKey, url, strings.Join(id.URLs, ", "), id.From))
		f.RepoURL = url
		return App{}, f, false
	case known:
		how = fmt.Sprintf("its GitRepository %s is this repository", srcKey)
	case fluxClusterFolder(d.file) != "":
		how = fmt.Sprintf("its GitRepository %s is not in the repository, and Flux's layout (clusters/<name>/) says the Kustomizations there apply this one", srcKey)
	default:
		return foreign(fmt.Sprintf("its GitRepository %s is not in this repository, and it is outside Flux's clusters/<name>/ layout, so it is taken to apply another repository", srcKey))
	}
	p := strings.TrimPrefix(path.Clean(cmp.Or(k.Spec.Path, ".")), "./")
	if msg := checkRepoPath(p); msg != "" {
		report(ReasonInvalidApplication, "Flux Kustomization %q path %q %s", name, k.Spec.Path, msg)
		return App{}, nil, false
	}
	local, inside := inCheckedFolder(r, p, id.Path)
	if !inside {
		return foreign(fmt.Sprintf("path %q is outside the checked folder %s of the repository", p, id.Path))
	}
	if !r.isDir(local) {
		report(ReasonPathMissing, "Flux Kustomization %q path %q does not exist in this repository", name, k.Spec.Path)
		return App{}, nil, false
	}
	app := App{
		Name: name, Path: local, Namespace: k.Spec.TargetNamespace,
		overrides: kustomizeOverrides{NamePrefix: k.Spec.NamePrefix, NameSuffix: k.Spec.NameSuffix, Namespace: k.Spec.TargetNamespace},
		Found: Found{Method: MethodFlux, File: d.file, Line: d.doc.Line,
			Reason: fmt.Sprintf("Flux Kustomization %s/%s applies path %q (%s)", ns, name, local, how)},
	}
	if !r.hasKustomization(local) {
		// Flux generates a kustomization over the folder's manifests and the folders
		// below that hold one.
		app.autodetect, app.Recurse, app.Lenient = true, true, true
	}
	app.ClusterScope, app.ClusterScopeReason = decideClusterScope(app.Path, nil)
	var ignored []string
	for field, n := range map[string]*yaml.Node{"postBuild": &k.Spec.PostBuild, "patches": &k.Spec.Patches,
		"images": &k.Spec.Images, "components": &k.Spec.Components, "commonMetadata": &k.Spec.CommonMetadata} {
		if n.Kind != 0 {
			ignored = append(ignored, "spec."+field)
		}
	}
	if len(ignored) > 0 {
		slices.Sort(ignored)
		report(ReasonIgnoredSetting, "Flux Kustomization %q: olmsync renders path %q without %s", name, local, strings.Join(ignored, ", "))
	}
	if k.Spec.KubeConfig.Kind != 0 {
		app.ClusterFrom = ClusterUnknown
		app.ClusterReason = "its Flux Kustomization applies it to a remote cluster (spec.kubeConfig) whose name the repository does not give"
	}
	return app, nil, true
}

// fluxClusterFolder is the <name> of the clusters/<name>/ folder a file is in, or "".
func fluxClusterFolder(file string) string {
	segs := strings.Split(path.Dir(file), "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "clusters" {
			return segs[i+1]
		}
	}
	return ""
}

// fluxCluster decides the cluster of a Kustomization's app: its clusters/<name>/ folder,
// else the cluster of an app (placed) that deploys the folder holding it.
func fluxCluster(s *repoScan, file string, placed []App) (cluster, how string, ok bool) {
	if name := fluxClusterFolder(file); name != "" {
		return name, fmt.Sprintf("its Flux Kustomization %s is in Flux's folder of cluster %q (clusters/%s/)", file, name, name), true
	}
	dir := path.Dir(file)
	for i := range placed {
		a := &placed[i]
		if a.ClusterFrom == ClusterUnknown {
			continue
		}
		if coveredFolders(s, []App{*a}).has(dir) {
			return a.Cluster, fmt.Sprintf("its Flux Kustomization %s is applied by app %q of cluster %q", file, a.Name, a.Cluster), true
		}
	}
	return "", "", false
}
