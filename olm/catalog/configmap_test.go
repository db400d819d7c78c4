package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/shareddata"
)

// notAList is the error sigs.k8s.io/yaml gives for a YAML value that is not a list, as this
// Go release words it.
func notAList(t *testing.T, value string) error {
	t.Helper()
	var items []json.RawMessage
	err := yaml.Unmarshal([]byte(value), &items)
	if err == nil {
		t.Fatalf("%q unmarshals as a list", value)
	}
	return err
}

// yamlList writes manifests as one YAML list, the way a ConfigMap catalog holds them.
func yamlList(t *testing.T, manifests ...string) string {
	t.Helper()
	var items []any
	for _, m := range manifests {
		var v any
		if err := yaml.Unmarshal([]byte(m), &v); err != nil {
			t.Fatal(err)
		}
		items = append(items, v)
	}
	data, err := yaml.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func configMap(crds, csvs, packages string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "catalog", Namespace: "olm"}, Data: map[string]string{ConfigMapKeyCRDs: "[]"}}
	for key, value := range map[string]string{ConfigMapKeyCRDs: crds, ConfigMapKeyCSVs: csvs, ConfigMapKeyPackages: packages} {
		if value != "" {
			cm.Data[key] = value
		}
	}
	return cm
}

func TestLoadConfigMap(t *testing.T) {
	crd := crdYAML("widgets.example.com", "v1")
	csv := func(name, version, replaces string, owned ...string) string {
		return csvYAML(name, version, replaces, nil, "", owned...)
	}
	pkgs := "- packageName: example\n  channels:\n  - name: alpha\n    currentCSV: example.v0.1.2\n  defaultChannel: alpha\n"
	tests := []struct {
		name     string
		cm       func(t *testing.T) *corev1.ConfigMap
		entries  []string
		objects  int
		problems []problemKey
	}{
		{
			name: "two versions owning one CRD",
			cm: func(t *testing.T) *corev1.ConfigMap {
				return configMap(yamlList(t, crd), yamlList(t, csv("example.v0.1.1", "0.1.1", "", "widgets.example.com"), csv("example.v0.1.2", "0.1.2", "example.v0.1.1", "widgets.example.com")), pkgs)
			},
			entries: []string{"example.v0.1.2", "example.v0.1.1"},
			objects: 1,
		},
		{
			name: "owned CRD missing from the list",
			cm: func(t *testing.T) *corev1.ConfigMap {
				return configMap("", yamlList(t, csv("example.v0.1.2", "0.1.2", "", "widgets.example.com")), pkgs)
			},
			entries:  []string{"example.v0.1.2"},
			problems: []problemKey{errorKey(CodeOwnedCRDMissing, "", "", "example.v0.1.2", "%s", "couldn't find owned CRD in crd list example.com/v1/Widget (widgets): %!s(<nil>)")},
		},
		{
			name: "one CRD twice, a CSV no channel reaches, a CSV without apiVersion and kind",
			cm: func(t *testing.T) *corev1.ConfigMap {
				bare := strings.Replace(csv("example.v0.1.2", "0.1.2", ""), "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n", "", 1)
				return configMap(yamlList(t, crd, crd), yamlList(t, bare, csv("stray.v1.0.0", "1.0.0", "")), pkgs)
			},
			entries: []string{"example.v0.1.2"},
			problems: []problemKey{
				errorKey(CodeDuplicateCRD, "", "", "", "can't add the same CRD twice in one configmap: example.com/v1/Widget (widgets)"),
				{SeverityWarning, CodeBundleNotInChannel, "", "", "stray.v1.0.0", "no channel of any package reaches this ClusterServiceVersion; it is not in the catalog"},
			},
		},
		{
			name: "keys that are no YAML lists",
			cm: func(t *testing.T) *corev1.ConfigMap {
				return configMap("not: a list", yamlList(t, csv("example.v0.1.2", "0.1.2", "")), pkgs+"- packageName: [\n")
			},
			problems: []problemKey{
				// The rest of the message is Go's encoding/json, whose wording moves with
				// the Go release (Go 1.27 names []jsontext.Value where 1.26 said
				// []json.RawMessage); what is ours is the key and "is not a YAML list".
				errorKey(CodeParse, "", "", "", "customResourceDefinitions is not a YAML list: %v", notAList(t, "not: a list")),
				errorKey(CodeParse, "", "", "", "packages is not a YAML list: error converting YAML to JSON: yaml: line 6: did not find expected node content"),
				{SeverityWarning, CodeBundleNotInChannel, "", "", "example.v0.1.2", "no channel of any package reaches this ClusterServiceVersion; it is not in the catalog"},
			},
		},
		{
			// Found by FuzzReadConfigMap (testdata/fuzz/FuzzReadConfigMap/dcdbd529c46199dd): a
			// null item of the CSV list panicked ("assignment to entry in nil map").
			name: "a null item in the CSV list",
			cm: func(t *testing.T) *corev1.ConfigMap {
				return configMap("", "-\n", "")
			},
			problems: []problemKey{
				errorKey(CodeParse, "", "", "", "couldn't find expected key packages in configmap"),
				errorKey(CodeParse, "", "", "", "decode ClusterServiceVersion: a ClusterServiceVersion must be an object, not null"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadConfigMap(tt.cm(t))
			if diff := cmp.Diff(tt.problems, keysOf(sorted(c.Problems))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tt.entries == nil {
				return
			}
			p := c.Package("example")
			if diff := cmp.Diff(tt.entries, names(p.Channel("alpha").Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got := len(p.Bundle("example.v0.1.2").Objects); got != tt.objects {
				t.Errorf("example.v0.1.2 carries %d objects, want %d", got, tt.objects)
			}
		})
	}
}

// TestConfigMapOfRealEtcd puts the real etcd package manifest into a ConfigMap catalog and
// reads it back: the same channels and bundles as the package-manifest folder.
func TestConfigMapOfRealEtcd(t *testing.T) {
	dir := shareddata.Path(t, "data/catalogs/community-operators-bundles/package-manifests/etcd")
	fromFolder, err := LoadPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	var csvs, crds []string
	for _, b := range fromFolder.Package("etcd").Bundles {
		rel, _ := filepath.Rel(dir, b.Origin.File)
		csvs = append(csvs, read(rel))
	}
	for _, f := range []string{"etcdclusters", "etcdbackups", "etcdrestores"} {
		crds = append(crds, read("0.9.4/"+f+".etcd.database.coreos.com.crd.yaml"))
	}
	var pkg any
	if err := yaml.Unmarshal([]byte(read("etcd.package.yaml")), &pkg); err != nil {
		t.Fatal(err)
	}
	pkgList, _ := yaml.Marshal([]any{pkg})
	cm := configMap(yamlList(t, crds...), yamlList(t, csvs...), string(pkgList))
	manifest, err := yaml.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		*corev1.ConfigMap
	}{metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, cm})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "etcd-catalog.yaml")
	if err := os.WriteFile(file, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	fromConfigMap, err := LoadPath(file)
	if err != nil {
		t.Fatal(err)
	}
	if fromConfigMap.Source.Format != FormatConfigMap {
		t.Errorf("format %s, want configmap", fromConfigMap.Source.Format)
	}
	if probs := fromConfigMap.Validate(); len(probs) != 0 {
		t.Errorf("problems: %v", probs)
	}
	want, got := summarize(t, fromFolder), summarize(t, fromConfigMap)
	for _, s := range []catalogSummary{want, got} {
		for _, p := range s {
			for name, facts := range p.Bundles {
				// The folders carry their own copies of the CRDs; the ConfigMap one copy.
				p.Bundles[name] = dropFacts(facts, "olm.gvk ")
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConfigMap catalog differs from the folder (-folder +configmap):\n%s", diff)
	}
}

func dropFacts(facts []string, prefix string) []string {
	var out []string
	for _, f := range facts {
		if !strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out
}

// TestLoadConfigMapMissingKey: a ConfigMap catalog without packages, clusterServiceVersions
// or customResourceDefinitions is an error with operator-registry's words, as its ConfigMapLoader
// refuses it (vendor/github.com/operator-framework/operator-registry/pkg/sqlite/configmap.go
// :66, :106 and :163 in OLM's tree: "couldn't find expected key %s in configmap"), not a catalog
// with warnings.
func TestLoadConfigMapMissingKey(t *testing.T) {
	csv := csvYAML("example.v0.1.2", "0.1.2", "", nil, "")
	pkgs := "- packageName: example\n  channels:\n  - name: alpha\n    currentCSV: example.v0.1.2\n  defaultChannel: alpha\n"
	tests := []struct {
		name string
		cm   *corev1.ConfigMap
		want []string
	}{
		{"no packages", configMap("", yamlList(t, csv), ""), []string{"couldn't find expected key packages in configmap"}},
		{"no clusterServiceVersions", configMap("", "", pkgs), []string{"couldn't find expected key clusterServiceVersions in configmap"}},
		// :66: the loader returns at once without customResourceDefinitions.
		{"no customResourceDefinitions", func() *corev1.ConfigMap {
			cm := configMap("[]", yamlList(t, csv), pkgs)
			delete(cm.Data, ConfigMapKeyCRDs)
			return cm
		}(), []string{"couldn't find expected key customResourceDefinitions in configmap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadConfigMap(tt.cm)
			var got []string
			for _, p := range c.Problems {
				if p.Severity == SeverityError && strings.Contains(p.Message, "expected key") {
					got = append(got, p.Message)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall problems: %+v", diff, c.Problems)
			}
		})
	}
}

// TestPopulateError: what OLM's configmap-server stops on, in its words
// (operator-registry cmd/configmap-server/main.go:124 before 5b59270e: "error loading
// manifests from configmap: %s" around Populate's error; utilerrors.NewAggregate writes one
// error as itself and several as "[a, b]"). Problems the loader does not check (a graph
// note, an unknown field) leave the catalog served.
func TestPopulateError(t *testing.T) {
	crd := crdYAML("widgets.example.com", "v1")
	csv := csvYAML("example.v0.1.2", "0.1.2", "", nil, "", "widgets.example.com")
	pkgs := "- packageName: example\n  channels:\n  - name: alpha\n    currentCSV: example.v0.1.2\n  defaultChannel: alpha\n"
	tests := []struct {
		name string
		cm   *corev1.ConfigMap
		want string
	}{
		{"complete", configMap(yamlList(t, crd), yamlList(t, csv), pkgs), ""},
		{"no packages", configMap(yamlList(t, crd), yamlList(t, csv), ""),
			"error loading manifests from configmap: couldn't find expected key packages in configmap"},
		// :146, :163: the CSV list is checked before the packages key is looked for.
		{"owned CRD missing and no packages", configMap("", yamlList(t, csv), ""),
			"error loading manifests from configmap: [couldn't find owned CRD in crd list example.com/v1/Widget (widgets): %!s(<nil>), couldn't find expected key packages in configmap]"},
		// :66: without customResourceDefinitions the loader stops at once.
		{"no customResourceDefinitions, no packages", func() *corev1.ConfigMap {
			cm := configMap("", yamlList(t, csv), "")
			delete(cm.Data, ConfigMapKeyCRDs)
			return cm
		}(), "error loading manifests from configmap: couldn't find expected key customResourceDefinitions in configmap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadConfigMap(tt.cm)
			var got string
			if err := c.PopulateError(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("PopulateError() = %q, want %q\nproblems: %+v", got, tt.want, c.Problems)
			}
		})
	}
	if err := ReadFBC(strings.NewReader(etcdJSON), "catalog.json").PopulateError(); err != nil {
		t.Errorf("an FBC catalog has no populate error, got %v", err)
	}
}
