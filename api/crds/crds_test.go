package crds_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/api/crds"
	"github.com/olmsync/olmsync/api/operators"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// TestServerVersion guards the Makefile's -ldflags: a kube-apiserver built without them
// reports v0.0.0, and every CSV minKubeVersion check would then fail. The server is the
// Kubernetes release pinned in hack/envtest/kube-apiserver (its patch included), and that pin
// stays within one minor of the k8s.io client modules olmsync is built with, the skew
// Kubernetes supports between client-go and an API server.
func TestServerVersion(t *testing.T) {
	env := testenv.Get(t)
	got, err := env.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	v, err := semver.ParseTolerant(got)
	if err != nil {
		t.Fatalf("server version %q: %v", got, err)
	}
	pin := moduleVersion(t, "../../hack/envtest/kube-apiserver/go.mod", "k8s.io/kubernetes")
	if !v.Equals(pin) {
		t.Errorf("kube-apiserver reports %s, want v%s (the pin in hack/envtest/kube-apiserver/go.mod)", got, pin)
	}
	client := moduleVersion(t, "../../go.mod", "k8s.io/apimachinery")
	if skew := int64(client.Minor) - int64(pin.Minor); pin.Major != 1 || skew < -1 || skew > 1 {
		t.Errorf("the envtest pin v%s is more than one minor from the client modules v%s", pin, client)
	}
}

// moduleVersion reads the version of a required module from a go.mod file.
func moduleVersion(t *testing.T, goMod, path string) semver.Version {
	t.Helper()
	data, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(path) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s is not required in %s", path, goMod)
	}
	v, err := semver.ParseTolerant(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCRDsServed checks what kubectl and consoles rely on: names, short names, scope,
// categories, the status subresource, and which version of OperatorGroup and OperatorCondition
// is stored.
func TestCRDsServed(t *testing.T) {
	env := testenv.Get(t)
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	wantShort := map[string][]string{
		"ClusterServiceVersion": {"csv", "csvs"},
		"CatalogSource":         {"catsrc"},
		"Subscription":          {"sub", "subs"},
		"InstallPlan":           {"ip"},
		"OperatorGroup":         {"og"},
		"OperatorCondition":     {"condition"},
		"Sync":                  {"sy"},
	}
	wantCategory := map[string]string{"Sync": "olmsync"}
	seen := sets.New[string]()
	for _, want := range all {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: want.Name}, got); err != nil {
			t.Fatalf("CRD %s: %v", want.Name, err)
		}
		kind := got.Spec.Names.Kind
		seen.Insert(kind)
		if !established(got) {
			t.Errorf("%s is not Established", got.Name)
		}
		if got.Spec.Scope != apiextensionsv1.NamespaceScoped {
			t.Errorf("%s scope = %s, want Namespaced", got.Name, got.Spec.Scope)
		}
		if !reflect.DeepEqual(got.Spec.Names.ShortNames, wantShort[kind]) {
			t.Errorf("%s short names = %v, want %v", got.Name, got.Spec.Names.ShortNames, wantShort[kind])
		}
		category, ok := wantCategory[kind]
		if !ok {
			category = "olm"
		}
		if !reflect.DeepEqual(got.Spec.Names.Categories, []string{category}) {
			t.Errorf("%s categories = %v, want [%s]", got.Name, got.Spec.Names.Categories, category)
		}
		var storage []string
		for _, v := range got.Spec.Versions {
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("%s %s has no status subresource", got.Name, v.Name)
			}
			if v.Storage {
				storage = append(storage, v.Name)
			}
		}
		wantStorage := map[string]string{"OperatorGroup": "v1", "OperatorCondition": "v2"}[kind]
		if wantStorage == "" {
			wantStorage = "v1alpha1"
		}
		if !reflect.DeepEqual(storage, []string{wantStorage}) {
			t.Errorf("%s storage versions = %v, want [%s]", got.Name, storage, wantStorage)
		}
	}
	if !seen.Equal(sets.KeySet(wantShort)) {
		t.Errorf("CRDs for %v, want %v", sets.List(seen), sets.List(sets.KeySet(wantShort)))
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestCreateRealManifests creates every real OLM manifest of ../shared/data (and the
// fixtures of api/operators/testdata) on the API server with strict field validation, reads
// each back, and checks that the server kept every field the Go types hold. The manifests
// with fields OLM's schema has no place for must be refused, naming the field.
func TestCreateRealManifests(t *testing.T) {
	env := testenv.Get(t)
	var files []string
	files = append(files, yamlFiles(t, shareddata.Path(t, "data/manifests"), nil)...)
	files = append(files, yamlFiles(t, shareddata.Path(t, "data/catalogs/community-operators-bundles"), []byte("kind: ClusterServiceVersion"))...)
	files = append(files, yamlFiles(t, "../operators/testdata/roundtrip", nil)...)

	// The manifests whose unknown fields api/operators' round-trip test pins; the server
	// must refuse exactly these.
	refused := map[string]string{
		"olmdocs-selector-bare-labels.yaml":                           `unknown field "spec.selector.cool.io/prod"`,
		"strimzi-cluster-operator.v0.27.1.clusterserviceversion.yaml": `unknown field "spec.MinKubeVersion"`,
		"strimzi-cluster-operator.v0.28.0.clusterserviceversion.yaml": `unknown field "spec.MinKubeVersion"`,
		"subscription-typo.yaml":                                      `unknown field "spec.chanel"`,
	}
	refusedMedik8s := `unknown field "spec.com.redhat.openshift.versions"`

	crdByKind := map[string]*apiextensionsv1.CustomResourceDefinition{}
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range all {
		crdByKind[crd.Spec.Names.Kind] = crd
	}

	created := map[string]int{}
	for i, file := range files {
		for j, doc := range documents(t, file) {
			ns := fmt.Sprintf("m%03d-%d", i, j)
			createNamespace(t, env, ns)
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			u.SetNamespace(ns)
			delete(u.Object, "status")

			err := env.Client.Create(t.Context(), u, client.FieldValidation(metav1.FieldValidationStrict))
			base := filepath.Base(file)
			wantErr := refused[base]
			if hasSpecKey(u, "com.redhat.openshift.versions") {
				wantErr = refusedMedik8s
			}
			if wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), wantErr) {
					t.Errorf("%s: create error = %v, want one containing %s", file, err, wantErr)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: create: %v", file, err)
				continue
			}

			// What the Go types hold must come back from the server unchanged, once the
			// CRD's own defaults are applied (protocol: TCP, upgradeStrategy: Default...).
			defaulted, err := json.Marshal(withCRDDefaults(t, crdByKind, u))
			if err != nil {
				t.Fatal(err)
			}
			d, err := operators.Decode(defaulted)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			want := d.Object.(client.Object)
			got, err := env.Scheme.New(d.GVK)
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: u.GetName()}, got.(client.Object)); err != nil {
				t.Fatalf("%s: get: %v", file, err)
			}
			if diff := semanticDiff(spec(want), spec(got)); diff != "" {
				t.Errorf("%s: the server changed the spec (-sent +stored):\n%s", file, diff)
			}
			created[d.GVK.Version+" "+d.GVK.Kind]++
		}
	}
	for k, n := range created {
		t.Logf("created and read back %3d × %s", n, k)
	}
	for _, kind := range []string{"v1alpha1 ClusterServiceVersion", "v1alpha1 Subscription", "v1alpha1 CatalogSource", "v1alpha1 InstallPlan", "v1 OperatorGroup", "v1alpha2 OperatorGroup"} {
		if created[kind] == 0 {
			t.Errorf("no %s was created", kind)
		}
	}
}

func hasSpecKey(u *unstructured.Unstructured, key string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", key)
	return found
}

// withCRDDefaults returns a copy of u with the defaults of its CRD's schema applied, as
// the API server applies them.
func withCRDDefaults(t *testing.T, crdByKind map[string]*apiextensionsv1.CustomResourceDefinition, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	crd := crdByKind[u.GetKind()]
	if crd == nil {
		t.Fatalf("no CRD for %s", u.GetKind())
	}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != gv.Version {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			t.Fatal(err)
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			t.Fatal(err)
		}
		obj := runtime.DeepCopyJSON(u.Object)
		structuraldefaulting.Default(obj, structural)
		return obj
	}
	t.Fatalf("CRD %s has no version %s", crd.Name, gv.Version)
	return nil
}

// semanticDiff returns "" when a and b are semantically equal (quantities by value,
// times to the second), else a readable diff.
func semanticDiff(a, b any) string {
	if equality.Semantic.DeepEqual(a, b) {
		return ""
	}
	return cmp.Diff(a, b,
		cmp.Comparer(func(x, y resource.Quantity) bool { return x.Cmp(y) == 0 }),
		cmp.Comparer(func(x, y metav1.Time) bool { return x.Equal(&y) }))
}

func spec(obj any) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").Interface()
}

func status(obj any) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

// TestStatusSubresource writes each kind's status through the status subresource and checks
// that it is stored, that it does not bump the generation, and that an update of the main
// resource cannot change it.
func TestStatusSubresource(t *testing.T) {
	env := testenv.Get(t)
	for _, name := range []string{
		"csv-status.yaml", "subscription-status.yaml", "installplan.yaml",
		"catalogsource-status.yaml", "operatorgroup-status.yaml",
	} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../operators/testdata/roundtrip", name))
			if err != nil {
				t.Fatal(err)
			}
			d, err := operators.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			obj := d.Object.(client.Object)
			ns := "status-" + strings.TrimSuffix(name, ".yaml")
			createNamespace(t, env, ns)
			obj.SetNamespace(ns)
			wantStatus := reflect.ValueOf(d.Object.DeepCopyObject()).Elem().FieldByName("Status").Interface()

			if err := env.Client.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
			if !status(obj).IsZero() {
				t.Fatalf("create stored a status: %#v", status(obj).Interface())
			}
			generation := obj.GetGeneration()

			status(obj).Set(reflect.ValueOf(wantStatus))
			if err := env.Client.Status().Update(t.Context(), obj); err != nil {
				t.Fatalf("status update: %v", err)
			}
			got := obj.DeepCopyObject().(client.Object)
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if diff := semanticDiff(wantStatus, status(got).Interface()); diff != "" {
				t.Errorf("status came back changed (-want +got):\n%s", diff)
			}
			if got.GetGeneration() != generation {
				t.Errorf("status update moved generation %d -> %d", generation, got.GetGeneration())
			}

			// An update of the main resource ignores status.
			status(got).Set(reflect.Zero(status(got).Type()))
			if err := env.Client.Update(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			after := obj.DeepCopyObject().(client.Object)
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), after); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(wantStatus, status(after).Interface()) {
				t.Errorf("an update of the main resource changed status")
			}
		})
	}
}

func createNamespace(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
}

func yamlFiles(t *testing.T, dir string, mustContain []byte) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		if mustContain != nil {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !bytes.Contains(data, mustContain) {
				return nil
			}
		}
		out = append(out, p)
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
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(m) > 0 {
			docs = append(docs, doc)
		}
	}
}
