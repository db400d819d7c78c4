package render

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Discovery is what Discover found: the config in effect, the apps and how they were found,
// and the problems that kept something from being an app.
type Discovery struct {
	// Config is olmsync.yaml with defaults filled in, or DefaultConfig() without one.
	Config *Config `json:"config"`
	// ConfigFile is "olmsync.yaml" when the repository has one, else "".
	ConfigFile string `json:"configFile,omitempty"`
	// Method is how the apps were found.
	Method Method `json:"method"`
	// Apps are ordered by cluster, cluster-scope first, then name.
	Apps []App `json:"apps"`
	// Problems are Applications and files that could not be used, each with its place.
	Problems []Diagnostic `json:"problems,omitempty"`
}

// Discover finds the apps of the repository whose root folder is root in fsys: the apps of
// olmsync.yaml; else the Argo CD Applications in the repository; else every kustomization
// that no other kustomization uses. Only a broken olmsync.yaml (a *ConfigError) or an
// unreadable root is an error; everything else is a Problem.
func Discover(fsys filesys.FileSystem, root string) (*Discovery, error) {
	r, err := newRepo(fsys, root)
	if err != nil {
		return nil, err
	}
	return discover(r)
}

func discover(r *repo) (*Discovery, error) {
	cfg, cfgNode, err := loadConfig(r.fsys, r.root)
	if err != nil {
		return nil, err
	}
	d := &Discovery{Config: cfg}
	if cfg == nil {
		d.Config = DefaultConfig()
	} else {
		d.ConfigFile = ConfigFileName
	}
	if cfg != nil && len(cfg.Apps) > 0 {
		d.Method = MethodConfig
		d.Apps = appsFromConfig(cfg, cfgNode)
		sortApps(d.Apps)
		return d, nil
	}

	scan, err := scanRepo(r)
	if err != nil {
		return nil, err
	}
	var problems diagnostics
	for _, p := range scan.problems {
		problems.add(p)
	}
	argo := findApplications(r, scan, d.Config.RepoURLs, &problems)
	if argo.ofThisRepo > 0 {
		d.Method = MethodArgoCD
		d.Apps = argo.apps
	} else {
		if argo.found > 0 {
			problems.add(Diagnostic{Reason: ReasonFallback, File: ".",
				Message: fmt.Sprintf("found %d Argo CD Application(s), none of them of this repository; apps are the kustomization roots instead", argo.found)})
		}
		d.Method = MethodKustomization
		d.Apps = kustomizationRoots(scan)
	}
	d.Apps = dropDuplicateApps(d.Apps, &problems)
	sortApps(d.Apps)
	d.Problems = problems.sorted()
	return d, nil
}

func appsFromConfig(cfg *Config, node *yaml.Node) []App {
	apps := make([]App, 0, len(cfg.Apps))
	for i, ca := range cfg.Apps {
		p := path.Clean(ca.Path)
		scope, why := decideClusterScope(p, ca.ClusterScope)
		apps = append(apps, App{
			Name:               ca.Name,
			Path:               p,
			Namespace:          ca.Namespace,
			Cluster:            ca.Cluster,
			ClusterScope:       scope,
			ClusterScopeReason: why,
			Recurse:            ca.Recurse,
			Found: Found{Method: MethodConfig, File: ConfigFileName, Line: seqItemLine(node, "apps", i),
				Reason: fmt.Sprintf("listed in %s as apps[%d]", ConfigFileName, i)},
		})
	}
	return apps
}

// dropDuplicateApps keeps the first app of each cluster and name, reporting the others.
func dropDuplicateApps(apps []App, problems *diagnostics) []App {
	seen := map[string]App{}
	out := apps[:0]
	for _, a := range apps {
		if first, dup := seen[a.ID()]; dup {
			problems.add(Diagnostic{Reason: ReasonDuplicateApp, File: a.Found.File, Line: a.Found.Line,
				Message: fmt.Sprintf("app %q is defined again in cluster %s (first in %s:%d); skipped",
					a.Name, clusterLabel(a.Cluster), first.Found.File, first.Found.Line)})
			continue
		}
		seen[a.ID()] = a
		out = append(out, a)
	}
	return out
}

// repoScan is what one walk of the repository collects.
type repoScan struct {
	// kustomizations are the readable kustomizations, by folder.
	kustomizations []*kustomization
	// broken are folders whose kustomization could not be read.
	broken []string
	// brokenFiles are the files of those kustomizations.
	brokenFiles map[string]string
	// referenced are folders another kustomization uses as a resource, base, component,
	// generator, transformer or validator.
	referenced map[string]bool
	// patchFiles are files kustomizations use as patches: they hold partial objects.
	patchFiles map[string]bool
	// argoFiles are YAML files that mention argoproj.io.
	argoFiles []string
	problems  []Diagnostic
}

func scanRepo(r *repo) (*repoScan, error) {
	s := &repoScan{referenced: map[string]bool{}, patchFiles: map[string]bool{}, brokenFiles: map[string]string{}}
	var dirs []string
	err := r.walkRepo(func(rel string, isDir bool) error {
		if isDir {
			dirs = append(dirs, rel)
			return nil
		}
		if isManifestName(rel) {
			data, err := r.readFile(rel)
			if err == nil && bytes.Contains(data, []byte("argoproj.io")) {
				s.argoFiles = append(s.argoFiles, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk repository: %w", err)
	}
	for _, dir := range dirs {
		k, err := r.kustomizationAt(dir)
		if err != nil {
			s.broken = append(s.broken, dir)
			s.brokenFiles[dir] = errorFile(err, dir)
			s.problems = append(s.problems, problemFromError(err, dir))
			continue
		}
		if k == nil {
			continue
		}
		s.kustomizations = append(s.kustomizations, k)
		s.noteReferences(r, k)
	}
	return s, nil
}

// noteReferences records the folders and patch files kustomization k uses.
func (s *repoScan) noteReferences(r *repo, k *kustomization) {
	dirRefs := slices.Concat(k.K.Resources, k.Legacy.Bases, k.K.Components, k.K.Generators, k.K.Transformers, k.K.Validators)
	for _, ref := range dirRefs {
		if p, ok := join(k.Dir, ref); ok && !isRemoteBase(ref) && r.isDir(p) {
			s.referenced[p] = true
		}
	}
	notePatch := func(ref string) {
		if p, ok := join(k.Dir, ref); ok && ref != "" && !strings.Contains(ref, "\n") {
			s.patchFiles[p] = true
		}
	}
	for _, psm := range k.Legacy.PatchesStrategicMerge {
		notePatch(string(psm))
	}
	for _, p := range slices.Concat(k.K.Patches, k.Legacy.PatchesJson6902) {
		notePatch(p.Path)
	}
}

// kustomizationRoots are the kustomizations no other kustomization uses. Components are
// never roots: kustomize cannot build one alone. A kustomization that cannot be read is a
// root, so that its error is reported against an app.
func kustomizationRoots(s *repoScan) []App {
	var apps []App
	add := func(dir, file string) {
		scope, why := decideClusterScope(dir, nil)
		apps = append(apps, App{
			Name: dir, Path: dir, ClusterScope: scope, ClusterScopeReason: why,
			Found: Found{Method: MethodKustomization, File: file,
				Reason: "kustomization root: no other kustomization uses this folder as a resource, base or component"},
		})
	}
	for _, k := range s.kustomizations {
		if s.referenced[k.Dir] || k.K.Kind == types.ComponentKind {
			continue
		}
		add(k.Dir, k.File)
	}
	for _, dir := range s.broken {
		if !s.referenced[dir] {
			add(dir, s.brokenFiles[dir])
		}
	}
	return apps
}

// isManifestName reports whether a file name is one olmsync reads manifests from.
func isManifestName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// errorFile is the file an error names, else dir.
func errorFile(err error, dir string) string {
	var ye *YAMLError
	if errors.As(err, &ye) {
		return ye.File
	}
	return dir
}

func problemFromError(err error, dir string) Diagnostic {
	var ye *YAMLError
	if errors.As(err, &ye) {
		return Diagnostic{Reason: ReasonUnreadable, File: ye.File, Line: ye.Line, Message: ye.Msg}
	}
	return Diagnostic{Reason: ReasonUnreadable, File: dir, Message: err.Error()}
}
