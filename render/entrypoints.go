package render

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
)

// An entry point is what a repository itself says it deploys, and where: an Argo CD
// Application, an Application an ApplicationSet generates, a Flux Kustomization whose
// source is this repository (and olmsync.yaml's apps, which replace discovery). Each is
// an app in the cluster it names. Kustomization roots no entry point deploys are library
// roots (discover.go).

// entryMarkers are strings a file must hold to be read for entry points: the API groups
// of Argo CD and Flux. Every other file is left unparsed until an app reads it.
var entryMarkers = [][]byte{[]byte("argoproj.io"), []byte("toolkit.fluxcd.io")}

// entryDoc is one document of an entry file.
type entryDoc struct {
	file string
	doc  manifestDoc
}

// entryDocs are the documents of the repository that say what it deploys, sorted by kind.
type entryDocs struct {
	applications, applicationSets []entryDoc
	fluxKustomizations            []entryDoc
	gitRepositories               []entryDoc
	projects                      map[string]appProject
	// clusterSecrets are Argo CD's declarative clusters (Secrets labelled
	// argocd.argoproj.io/secret-type: cluster).
	clusterSecrets []argoClusterSecret
}

// readEntryDocs reads the entry files of the scan. Files kustomizations use as patches are
// skipped (they hold partial objects), and so are Helm charts' files.
func readEntryDocs(r *repo, s *repoScan, problems *diagnostics) *entryDocs {
	e := &entryDocs{projects: map[string]appProject{}}
	for _, file := range s.entryFiles {
		if s.patchFiles[file] {
			continue
		}
		mf, err := r.trees(file) // Applications and the like are decoded from their trees
		if err != nil {
			if data, rerr := r.readFile(file); rerr == nil && bytes.Contains(data, []byte("{{")) {
				// A template (Helm's, or a generator's) that mentions Argo CD or Flux: not a
				// manifest until something renders it, and nothing here does.
				continue
			}
			problems.add(problemFromError(err, file))
			continue
		}
		for _, doc := range mf.Docs {
			group := groupOf(doc.APIVersion)
			d := entryDoc{file, doc}
			switch {
			case group == "argoproj.io" && doc.Kind == "Application":
				e.applications = append(e.applications, d)
			case group == "argoproj.io" && doc.Kind == "ApplicationSet":
				e.applicationSets = append(e.applicationSets, d)
			case group == "argoproj.io" && doc.Kind == "AppProject":
				if p, ok := projectOf(file, doc); ok {
					e.projects[p.name] = p
				}
			case group == "" && doc.Kind == "Secret":
				if c, ok := clusterSecretOf(file, doc); ok {
					e.clusterSecrets = append(e.clusterSecrets, c)
				}
			case group == fluxKustomizeGroup && doc.Kind == "Kustomization":
				e.fluxKustomizations = append(e.fluxKustomizations, d)
			case group == fluxSourceGroup && doc.Kind == "GitRepository":
				e.gitRepositories = append(e.gitRepositories, d)
			}
		}
	}
	return e
}

// entryResult is what the entry points of a repository yield.
type entryResult struct {
	// apps are the apps the entry points deploy.
	apps []App
	// foreign are the Applications, ApplicationSets and Flux Kustomizations of other
	// repositories.
	foreign []ForeignApplication
	// projects are the AppProjects of the repository, by name.
	projects map[string]appProject
	// clusters are the cluster names the repository gives, each with where it is named.
	clusters map[string]string
}

// findEntryPoints turns the entry documents into apps: Applications, the Applications
// each ApplicationSet generates, then Flux Kustomizations (whose cluster may be that of
// the app that applies them).
func findEntryPoints(r *repo, s *repoScan, id RepositoryIdentity, cfg *Config, opts DiscoverOptions, problems *diagnostics) entryResult {
	docs := readEntryDocs(r, s, problems)
	res := entryResult{projects: docs.projects, clusters: configClusters(cfg, opts)}
	for _, c := range docs.clusterSecrets {
		res.clusters[c.name] = fmt.Sprintf("Argo CD cluster Secret %s:%d", c.file, c.line)
	}
	for _, d := range docs.applications {
		apps, foreign := applicationApps(r, d.file, d.doc, id, problems)
		res.apps = append(res.apps, apps...)
		res.foreign = append(res.foreign, foreign...)
	}
	for _, d := range docs.applicationSets {
		apps, foreign := applicationSetApps(r, s, d, id, docs, res.clusters, problems)
		res.apps = append(res.apps, apps...)
		res.foreign = append(res.foreign, foreign...)
	}
	for _, a := range res.apps {
		if a.Cluster != "" {
			if _, ok := res.clusters[a.Cluster]; !ok {
				res.clusters[a.Cluster] = a.Found.Reason
			}
		}
	}
	flux, foreign := fluxApps(r, s, docs, id, res.apps, problems)
	res.apps = append(res.apps, flux...)
	res.foreign = append(res.foreign, foreign...)
	for _, a := range flux {
		if a.Cluster != "" {
			if _, ok := res.clusters[a.Cluster]; !ok {
				res.clusters[a.Cluster] = a.ClusterReason
			}
		}
	}
	return res
}

// configClusters are the clusters olmsync.yaml and the caller name.
func configClusters(cfg *Config, opts DiscoverOptions) map[string]string {
	out := map[string]string{}
	for _, c := range cfg.Discovery.Clusters {
		out[c] = ConfigFileName + " discovery.clusters"
	}
	for _, g := range cfg.Policy.OperatorGroups {
		if g.Cluster != "" {
			out[g.Cluster] = ConfigFileName + " policy.operatorGroups"
		}
	}
	for _, w := range cfg.Waivers {
		if w.Object.Cluster != "" {
			out[w.Object.Cluster] = ConfigFileName + " waivers"
		}
	}
	for _, c := range opts.KnownClusters {
		if c != "" {
			out[c] = cmp.Or(opts.KnownClustersFrom, "the caller")
		}
	}
	return out
}

// clusterNames lists known cluster names in order, for messages.
func clusterNames(known map[string]string) []string {
	return slices.Sorted(maps.Keys(known))
}

// argoClusterSecret is an Argo CD cluster declared as a Secret.
type argoClusterSecret struct {
	name, server string
	labels       map[string]string
	annotations  map[string]string
	file         string
	line         int
}

// clusterSecretOf reads an Argo CD cluster Secret: label argocd.argoproj.io/secret-type:
// cluster, name and server in stringData (or base64 data).
func clusterSecretOf(file string, doc manifestDoc) (argoClusterSecret, bool) {
	var sec struct {
		Metadata struct {
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"metadata"`
		StringData map[string]string `yaml:"stringData"`
		Data       map[string]string `yaml:"data"`
	}
	if doc.Node.Decode(&sec) != nil || sec.Metadata.Labels["argocd.argoproj.io/secret-type"] != "cluster" {
		return argoClusterSecret{}, false
	}
	field := func(key string) string {
		if v, ok := sec.StringData[key]; ok {
			return v
		}
		if v, ok := sec.Data[key]; ok {
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				return string(b)
			}
		}
		return ""
	}
	c := argoClusterSecret{name: field("name"), server: field("server"), labels: sec.Metadata.Labels,
		annotations: sec.Metadata.Annotations, file: file, line: doc.Line}
	if c.name == "" {
		c.name = c.server
	}
	return c, c.name != ""
}
