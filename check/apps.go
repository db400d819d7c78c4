package check

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// Apps finds the apps of the revision a tree holds, as Run does, without building them:
// what `olmsync apps` lists.
func Apps(ctx context.Context, tree *sources.Tree, opts Options) (*render.Discovery, error) {
	return render.Discover(ctx, tree.FS, tree.Root, discoverOptions(tree, &opts))
}

// The formats of WriteApps.
const (
	AppsText = "text"
	AppsJSON = "json"
)

const entryPointWords = "found through the entry points of this repository (Argo CD Applications and ApplicationSets, Flux Kustomizations), and the kustomization roots they do not cover"

var methodWords = map[render.Method]string{
	render.MethodConfig:         "listed in " + render.ConfigFileName,
	render.MethodArgoCD:         entryPointWords,
	render.MethodApplicationSet: entryPointWords,
	render.MethodFlux:           entryPointWords,
	render.MethodKustomization:  "found as kustomization roots (no olmsync.yaml apps, no entry point of this repository)",
	render.MethodDirectory:      "found as the repository's manifests (no kustomization, no entry point of this repository)",
}

// WriteApps writes what Apps found: for people (text), per cluster, each app with its
// folder, destination namespace, whether it is the cluster-scope app and why, and where
// it was found and why; or as the Discovery's JSON.
func WriteApps(w io.Writer, d *render.Discovery, format string) error {
	switch format {
	case AppsJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	case AppsText, "":
	default:
		return fmt.Errorf("unknown output format %q: use %s or %s", format, AppsText, AppsJSON)
	}
	var b strings.Builder
	clusters := 0
	for i, a := range d.Apps {
		if i == 0 || a.Cluster != d.Apps[i-1].Cluster {
			clusters++
		}
	}
	fmt.Fprintf(&b, "%d apps in %d clusters, %s.\n", len(d.Apps), clusters, methodWords[d.Method])
	if d.Method != render.MethodConfig {
		if id := d.Repository; len(id.URLs) > 0 {
			fmt.Fprintf(&b, "This repository is %s (%s)", strings.Join(id.URLs, ", "), id.From)
		} else {
			b.WriteString("This repository's URL is unknown (no git remote, no repoURLs in " + render.ConfigFileName + ", no --repo-url)")
		}
		if d.Repository.Path != "" {
			fmt.Fprintf(&b, "; the checked folder is %s in it", d.Repository.Path)
		}
		b.WriteString(".\n")
	}
	for i, a := range d.Apps {
		switch {
		case a.Library && (i == 0 || !d.Apps[i-1].Library):
			fmt.Fprintf(&b, "\nlibrary roots: no entry point of this repository deploys them; each is checked on its own, without the placement rules (%s)\n", render.LibraryHint)
		case a.Library:
		case i == 0 || a.Cluster != d.Apps[i-1].Cluster:
			name := "the default cluster (apps with no destination cluster)"
			if a.Cluster != "" {
				name = fmt.Sprintf("cluster %q", a.Cluster)
			}
			fmt.Fprintf(&b, "\n%s\n", name)
		}
		fmt.Fprintf(&b, "  %s\n", a.Name)
		fmt.Fprintf(&b, "      path:      %s\n", a.Path)
		if a.Namespace != "" {
			fmt.Fprintf(&b, "      namespace: %s\n", a.Namespace)
		}
		if !a.Library {
			kind := "individual app"
			if a.ClusterScope {
				kind = "cluster-scope app"
			}
			fmt.Fprintf(&b, "      %s: %s\n", kind, a.ClusterScopeReason)
			cluster := a.Cluster
			switch {
			case a.ClusterFrom == render.ClusterUnknown:
				cluster = "unknown"
			case cluster == "":
				cluster = "default"
			}
			fmt.Fprintf(&b, "      cluster:   %s: %s\n", cluster, a.ClusterReason)
		}
		fmt.Fprintf(&b, "      found:     %s: %s\n", location(a.Found.File, a.Found.Line), a.Found.Reason)
	}
	if len(d.Problems) > 0 {
		b.WriteString("\nNot apps, or not rendered:\n")
		for _, p := range d.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	if len(d.Foreign) > 0 || len(d.Unused) > 0 {
		b.WriteString("\nNot checked:\n")
		for _, f := range d.Foreign {
			fmt.Fprintf(&b, "  %s: %s %q: %s\n", location(f.File, f.Line), f.Kind, f.Name, f.Reason)
		}
		for _, u := range d.Unused {
			fmt.Fprintf(&b, "  %s: %s\n", u.File, u.Reason)
		}
	}
	_, err := io.WriteString(w, escapeControls(b.String()))
	return err
}

// escapeControls replaces control characters from the repository (other than line feeds)
// with "?", so that a file or app name cannot drive a terminal or a CI log.
func escapeControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f)) {
			return r
		}
		return '?'
	}, s)
}

func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}
