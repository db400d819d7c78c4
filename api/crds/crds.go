package crds

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// FS is the folder of generated CRD manifests, one CRD per file.
func FS() fs.FS { return files }

// All returns every generated CRD, sorted by file name.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), crd); err != nil {
			return nil, fmt.Errorf("crd %s: %w", path.Base(name), err)
		}
		out = append(out, crd)
	}
	return out, nil
}
