package operators_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/api/operators"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// TestRoundTripRealManifests decodes every real OLM manifest in ../shared/data (the
// manifests folder and every CSV of the bundle samples) plus the fixtures in testdata/,
// encodes it back, and checks that no field was lost or changed. A field the types do not
// know must be reported by Decode (UnknownFields), never dropped silently.
func TestRoundTripRealManifests(t *testing.T) {
	var files []string
	files = append(files, manifestFiles(t, shareddata.Path(t, "data/manifests"))...)
	files = append(files, csvFiles(t, shareddata.Path(t, "data/catalogs/community-operators-bundles"))...)
	files = append(files, manifestFiles(t, "testdata/roundtrip")...)

	counts := map[string]int{}
	var unknown []string
	for _, file := range files {
		for i, doc := range documents(t, file) {
			name := fmt.Sprintf("%s#%d", file, i)
			d, err := operators.Decode(doc)
			if err != nil {
				t.Errorf("%s: decode: %v", name, err)
				continue
			}
			counts[d.GVK.GroupVersion().String()+" "+d.GVK.Kind]++

			out, err := json.Marshal(d.Object)
			if err != nil {
				t.Fatalf("%s: encode: %v", name, err)
			}
			lost, added := diffJSON(t, toJSON(t, doc), out)
			for _, p := range lost {
				if !reported(d.UnknownFields, p) {
					t.Errorf("%s: field %s was lost in the round trip and Decode did not report it", name, p)
				}
			}
			for _, p := range added {
				t.Errorf("%s: field %s appeared in the round trip", name, p)
			}
			for _, u := range d.UnknownFields {
				unknown = append(unknown, shortPath(file)+": "+u)
			}
		}
	}

	kinds := slices.Sorted(maps.Keys(counts))
	for _, k := range kinds {
		t.Logf("round-tripped %3d × %s", counts[k], k)
	}
	for _, want := range []string{
		"operators.coreos.com/v1alpha1 ClusterServiceVersion",
		"operators.coreos.com/v1alpha1 Subscription",
		"operators.coreos.com/v1alpha1 CatalogSource",
		"operators.coreos.com/v1alpha1 InstallPlan",
		"operators.coreos.com/v1 OperatorGroup",
		"operators.coreos.com/v1alpha2 OperatorGroup",
	} {
		if counts[want] == 0 {
			t.Errorf("no %s was round-tripped", want)
		}
	}

	// The real data holds manifests that do not fit OLM's types, and each must be reported
	// with its path: an olm-docs example whose selector holds a label directly instead of
	// matchLabels, two strimzi CSVs that spell minKubeVersion with a capital M, and four
	// medik8s CSVs that put the com.redhat.openshift.versions annotation under spec.
	// testdata/roundtrip holds one typo of our own.
	wantUnknown := []string{
		`node-healthcheck-operator/0.3.0/manifests/node-healthcheck-operator.clusterserviceversion.yaml: unknown field "spec.com.redhat.openshift.versions"`,
		`olmdocs-selector-bare-labels.yaml: unknown field "spec.selector.cool.io/prod"`,
		`self-node-remediation/0.4.0/manifests/self-node-remediation.clusterserviceversion.yaml: unknown field "spec.com.redhat.openshift.versions"`,
		`self-node-remediation/0.5.0/manifests/self-node-remediation.clusterserviceversion.yaml: unknown field "spec.com.redhat.openshift.versions"`,
		`strimzi-kafka-operator/0.27.1/manifests/strimzi-cluster-operator.v0.27.1.clusterserviceversion.yaml: unknown field "spec.MinKubeVersion"`,
		`strimzi-kafka-operator/0.28.0/manifests/strimzi-cluster-operator.v0.28.0.clusterserviceversion.yaml: unknown field "spec.MinKubeVersion"`,
		`subscription-typo.yaml: unknown field "spec.chanel"`,
	}
	sort.Strings(unknown)
	if !slices.Equal(unknown, wantUnknown) {
		t.Errorf("unknown fields reported:\n  %s\nwant:\n  %s", strings.Join(unknown, "\n  "), strings.Join(wantUnknown, "\n  "))
	}
}

// shortPath names a file by its path below operators/ (bundles) or by its base name.
func shortPath(file string) string {
	if _, rest, ok := strings.Cut(filepath.ToSlash(file), "/operators/"); ok {
		return rest
	}
	return filepath.Base(file)
}

// reported says whether a lost path is one Decode reported as unknown.
func reported(unknown []string, path string) bool {
	for _, u := range unknown {
		if strings.Contains(u, `"`+path+`"`) || strings.HasPrefix(path, strings.TrimSuffix(strings.TrimPrefix(u, `unknown field "`), `"`)+".") {
			return true
		}
	}
	return false
}

func manifestFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no manifests in %s", dir)
	}
	return out
}

// csvFiles returns every file under dir that holds a ClusterServiceVersion, whatever its name.
func csvFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range manifestFiles(t, dir) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("kind: ClusterServiceVersion")) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no CSVs under %s", dir)
	}
	return out
}

// documents splits a YAML file into its non-empty documents.
func documents(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if s := strings.TrimSpace(string(j)); s == "null" || s == "{}" {
			continue
		}
		docs = append(docs, doc)
	}
	return docs
}

func toJSON(t *testing.T, doc []byte) []byte {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// diffJSON compares two JSON documents after removing what carries no information: nulls,
// empty objects and lists, and zero scalars ("", 0, false). A zero scalar is the value a Go
// field has when the manifest leaves it out, so `initialDelaySeconds: 0` dropped by
// omitempty, or `name: ""` written for a required string, changes nothing a reader of the
// typed object can see. It returns the paths present in a but missing or
// different in b (lost) and the paths present only in b (added).
func diffJSON(t *testing.T, a, b []byte) (lost, added []string) {
	t.Helper()
	va, vb := decodeGeneric(t, a), decodeGeneric(t, b)
	walkDiff("", prune(va), prune(vb), &lost, &added)
	return lost, added
}

func decodeGeneric(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if p := prune(e); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		// Lists are positional: an element that carries no information stays in place.
		out := make([]any, len(x))
		for i, e := range x {
			if out[i] = prune(e); out[i] == nil {
				out[i] = e
			}
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return v
	case bool:
		if !x {
			return nil
		}
		return v
	case json.Number:
		if f, err := x.Float64(); err == nil && f == 0 {
			return nil
		}
		return v
	default:
		return v
	}
}

// walkDiff records the leaf paths of a that b lacks or holds differently (lost), and the
// keys only b has (added). b is nil where a subtree is missing altogether.
func walkDiff(path string, a, b any, lost, added *[]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := a.(type) {
	case map[string]any:
		y, isMap := b.(map[string]any)
		if b != nil && !isMap {
			*lost = append(*lost, path)
			return
		}
		for k, e := range x {
			walkDiff(join(k), e, y[k], lost, added)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				*added = append(*added, join(k))
			}
		}
	case []any:
		y, isList := b.([]any)
		if b != nil && (!isList || len(x) != len(y)) {
			*lost = append(*lost, path)
			return
		}
		for i := range x {
			var f any
			if y != nil {
				f = y[i]
			}
			walkDiff(fmt.Sprintf("%s[%d]", path, i), x[i], f, lost, added)
		}
	default:
		if b == nil || !sameScalar(path, a, b) {
			*lost = append(*lost, path)
		}
	}
}

// sameScalar compares two leaves. Resource quantities compare by value, because the API
// types keep a quantity in canonical form ("0.1" comes back as "100m", 1 as "1"); and a
// number and a string with the same text are the same value for the fields where
// Kubernetes accepts both (IntOrString).
func sameScalar(path string, a, b any) bool {
	if a == b {
		return true
	}
	if isQuantityPath(path) {
		qa, errA := resource.ParseQuantity(fmt.Sprint(a))
		qb, errB := resource.ParseQuantity(fmt.Sprint(b))
		return errA == nil && errB == nil && qa.Cmp(qb) == 0
	}
	na, aNum := a.(json.Number)
	nb, bNum := b.(json.Number)
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	switch {
	case aNum && bStr:
		return string(na) == sb
	case aStr && bNum:
		return sa == string(nb)
	}
	return false
}

func isQuantityPath(path string) bool {
	return strings.Contains(path, ".limits.") || strings.Contains(path, ".requests.") ||
		strings.HasSuffix(path, ".memoryTarget") || strings.Contains(path, ".sizeLimit")
}

// TestDecodeJSONAsYAML: a manifest given as JSON (as a catalog carries its bundles'
// objects) is decoded as it is (safeyaml.JSONObject), and decodes to the object, and the
// unknown fields, that its YAML gives: every real OLM manifest of ../shared/data and of
// testdata/, each as compact and as indented JSON. Indented, a raw JSON value (a
// descriptor's value) keeps its spaces, so the object is the same once encoded.
func TestDecodeJSONAsYAML(t *testing.T) {
	var files []string
	files = append(files, manifestFiles(t, shareddata.Path(t, "data/manifests"))...)
	files = append(files, csvFiles(t, shareddata.Path(t, "data/catalogs/community-operators-bundles"))...)
	files = append(files, manifestFiles(t, "testdata/roundtrip")...)
	decoded := 0
	for _, file := range files {
		for i, doc := range documents(t, file) {
			name := fmt.Sprintf("%s#%d", file, i)
			want, err := operators.Decode(doc)
			if err != nil {
				continue // TestRoundTripRealManifests names it
			}
			compact := toJSON(t, doc)
			var indented bytes.Buffer
			if err := json.Indent(&indented, compact, "", "  "); err != nil {
				t.Fatal(err)
			}
			for n, js := range [][]byte{compact, indented.Bytes()} {
				if !safeyaml.JSONObject(js) {
					t.Fatalf("%s: safeyaml.JSONObject refuses its JSON", name)
				}
				got, err := operators.Decode(js)
				if err != nil {
					t.Errorf("%s as JSON: %v", name, err)
					continue
				}
				same := equality.Semantic.DeepEqual(got.Object, want.Object)
				if n == 1 {
					g, err1 := json.Marshal(got.Object)
					w, err2 := json.Marshal(want.Object)
					same = err1 == nil && err2 == nil && bytes.Equal(g, w)
				}
				if !same || got.GVK != want.GVK {
					t.Errorf("%s: as JSON (%s) it decodes to another object than as YAML", name, []string{"compact", "indented"}[n])
				}
				if !slices.Equal(got.UnknownFields, want.UnknownFields) {
					t.Errorf("%s: unknown fields as JSON %q, as YAML %q", name, got.UnknownFields, want.UnknownFields)
				}
			}
			decoded++
		}
	}
	if decoded == 0 {
		t.Fatal("no manifest decoded")
	}
}
