package check

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// uncheckedChanges are the files a change adds, modifies or removes that hold OLM objects
// no checked app rendered on either side: a base folder nothing includes, a folder no
// entry point deploys and no root covers, an app that failed to render at base and head.
// What the change does to them cannot be judged, and a pull request made only of such
// changes must not pass in silence: each is a warning naming the file and its OLM objects.
func uncheckedChanges(head, base *Result) []report.Warning {
	rendered := map[string]bool{}
	for _, res := range []*Result{head, base} {
		for _, in := range res.Inputs {
			for _, app := range in.Apps {
				for _, o := range app.Objects {
					rendered[o.Source.File] = true
				}
			}
		}
	}
	headFiles, baseFiles := olmFiles(head.Tree), olmFiles(base.Tree)
	var out []report.Warning
	files := maps.Clone(headFiles)
	maps.Copy(files, baseFiles)
	for _, file := range slices.Sorted(maps.Keys(files)) {
		h, inHead := headFiles[file]
		b, inBase := baseFiles[file]
		if rendered[file] || (inHead && inBase && bytes.Equal(h, b)) {
			continue // checked, or the same at both revisions: no need to parse it
		}
		var headObjects, baseObjects []string
		if inHead {
			headObjects = olmObjects(file, h)
		}
		if inBase {
			baseObjects = olmObjects(file, b)
		}
		if len(headObjects) == 0 && len(baseObjects) == 0 {
			continue // no OLM object after all (the group named in a comment, a CRD)
		}
		what, objects := "changes", headObjects
		switch {
		case len(baseObjects) == 0:
			what = "adds"
		case len(headObjects) == 0:
			what, objects = "removes", baseObjects
		}
		out = append(out, report.Warning{File: file, Unchecked: true,
			Message: fmt.Sprintf("unchecked change: this change %s %s here, which no checked app renders at either revision (nothing deploys or includes the file, or its app fails to render on both sides), so what it does was not checked",
				what, strings.Join(objects, ", ")),
			Hint: "deploy the folder through an entry point (Argo CD Application or ApplicationSet, Flux Kustomization), include it from a kustomization, or list it in " + "olmsync.yaml apps",
		})
	}
	return out
}

// olmFiles are the YAML and JSON files of a tree that may hold an OLM object: those that
// name the group (operators.coreos.com/), by repository-relative path, with their content.
// Only those a change touches and no app renders are parsed (olmObjects); files that do
// not parse are left out there: the check reports them where an app reads them.
func olmFiles(tree *sources.Tree) map[string][]byte {
	out := map[string][]byte{}
	if tree == nil {
		return out
	}
	_ = tree.FS.Walk(tree.Root, func(p string, info fs.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := tree.FS.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte("operators.coreos.com/")) {
			return nil
		}
		rel, err := filepath.Rel(tree.Root, p)
		if err != nil {
			return nil
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out
}

// olmObjects names the OLM objects of a manifest file.
func olmObjects(file string, data []byte) []string {
	docs, err := safeyaml.Documents(file, data)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range docs {
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if len(d.Content) == 0 || d.Content[0].Kind != yaml.MappingNode || d.Decode(&obj) != nil {
			continue
		}
		if strings.HasPrefix(obj.APIVersion, "operators.coreos.com/") && obj.Kind != "" {
			out = append(out, fmt.Sprintf("%s %q", obj.Kind, obj.Metadata.Name))
		}
	}
	return out
}
