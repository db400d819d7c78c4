package charts

import (
	"bufio"
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ChartDir is the chart's folder in FS.
const ChartDir = "olmsync"

//go:embed all:olmsync
var files embed.FS

// FS is the chart's files, under ChartDir.
func FS() fs.FS { return files }

// Load loads the embedded chart.
func Load() (*chart.Chart, error) {
	var buffered []*loader.BufferedFile
	err := fs.WalkDir(files, ChartDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		buffered = append(buffered, &loader.BufferedFile{Name: strings.TrimPrefix(p, ChartDir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the embedded chart: %w", err)
	}
	c, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("load the embedded chart: %w", err)
	}
	return c, nil
}

// Options say what to render: the release's name and namespace, as `helm install NAME -n
// NAMESPACE` names them, and the values given (merged over the chart's values.yaml).
type Options struct {
	ReleaseName, Namespace string
	Values                 map[string]any
	// KubeVersion is the cluster's version the chart's kubeVersion constraint is checked
	// against (default: the version olmsync is built and tested with).
	KubeVersion string
}

// DefaultKubeVersion is the version the chart is rendered for when none is given.
const DefaultKubeVersion = "v1.36.0"

// Rendered is a rendered chart.
type Rendered struct {
	// Objects are every object of the chart, in helm's install order (CRDs, the
	// ServiceAccount and RBAC before the Deployment).
	Objects []*unstructured.Unstructured
	// Notes is NOTES.txt as rendered.
	Notes string
}

// Render renders the chart as `helm template` does (helm's library, the values checked
// against values.schema.json), and returns its objects in install order.
func Render(opts Options) (*Rendered, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	return RenderChart(c, opts)
}

// RenderChart renders a loaded chart (a test changes one first).
func RenderChart(c *chart.Chart, opts Options) (*Rendered, error) {
	if opts.ReleaseName == "" || opts.Namespace == "" {
		return nil, errors.New("render the chart: a release name and a namespace are needed")
	}
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(cmp.Or(opts.KubeVersion, DefaultKubeVersion))
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	caps.KubeVersion = *kv
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, kv.Version) {
		return nil, fmt.Errorf("render the chart: Kubernetes %s is not in the chart's range %s", kv.Version, c.Metadata.KubeVersion)
	}
	vals, err := chartutil.ToRenderValues(c, opts.Values, chartutil.ReleaseOptions{
		Name: opts.ReleaseName, Namespace: opts.Namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	out, err := engine.Engine{Strict: false}.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	r := &Rendered{}
	manifests := map[string]string{}
	for name, content := range out {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.Notes = strings.TrimSpace(content)
			continue
		}
		manifests[name] = content
	}
	hooks, sorted, err := releaseutil.SortManifests(manifests, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("render the chart: %s is a hook, which olmsync install does not run", hooks[0].Path)
	}
	for _, m := range sorted {
		objs, err := Decode(m.Content)
		if err != nil {
			return nil, fmt.Errorf("render the chart: %s: %w", m.Name, err)
		}
		r.Objects = append(r.Objects, objs...)
	}
	return r, nil
}

// Decode reads the objects of a multi-document YAML stream (numbers as int64 where they
// are whole, as the API machinery reads them).
func Decode(content string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(content)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if s := strings.TrimSpace(string(data)); s == "null" || s == "{}" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// YAML writes objects as one multi-document YAML stream, as `helm template` prints them.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes(), nil
}

// Values merges values as helm does with -f and --set: the files in order, then each
// --set (key=value, comma-separated, dotted paths) over them.
func Values(valueFiles map[string][]byte, fileOrder []string, set []string) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range fileOrder {
		v, err := chartutil.ReadValues(valueFiles[name])
		if err != nil {
			return nil, fmt.Errorf("values file %s: %w", name, err)
		}
		out = mergeMaps(out, v.AsMap())
	}
	for _, s := range set {
		if err := strvals.ParseInto(s, out); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return out, nil
}

// mergeMaps merges b over a, recursively for maps (helm's rule for -f files).
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bv, ok := v.(map[string]any); ok {
			if av, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(av, bv)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// CRDFiles lists the chart's copies of the generated CRDs (files/crds), sorted.
func CRDFiles() ([]string, error) {
	names, err := fs.Glob(files, path.Join(ChartDir, "files", "crds", "*.yaml"))
	sort.Strings(names)
	return names, err
}
