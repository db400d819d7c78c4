package groups_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestParseAPISet(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  groups.APISet
	}{
		{"empty", "", groups.APISet{}},
		{"one", "Goose.v1alpha1.birds.com", groups.NewAPISet(groups.API{Kind: "Goose", Version: "v1alpha1", Group: "birds.com"})},
		{
			"several, unsorted, repeated",
			"Moose.v1.mammals.com,Goose.v1alpha1.birds.com,Moose.v1.mammals.com",
			groups.NewAPISet(groups.API{Kind: "Goose", Version: "v1alpha1", Group: "birds.com"}, groups.API{Kind: "Moose", Version: "v1", Group: "mammals.com"}),
		},
		{"spaces are removed", " Goose . v1 . birds.com , ", groups.NewAPISet(groups.API{Kind: "Goose", Version: "v1", Group: "birds.com"})},
		{"fewer than two dots is dropped", "Goose.v1alpha1,Moose,Duck.v1.birds.com", groups.NewAPISet(groups.API{Kind: "Duck", Version: "v1", Group: "birds.com"})},
		{"group keeps its dots", "PackageManifest.v1.packages.operators.coreos.com", groups.NewAPISet(groups.API{Kind: "PackageManifest", Version: "v1", Group: "packages.operators.coreos.com"})},
		{"core-like group", "Thing.v1.", groups.NewAPISet(groups.API{Kind: "Thing", Version: "v1", Group: ""})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, groups.ParseAPISet(tt.value)); diff != "" {
				t.Errorf("ParseAPISet(%q) (-want +got):\n%s", tt.value, diff)
			}
		})
	}
}

func TestAPISetString(t *testing.T) {
	s := groups.ParseAPISet("ServiceMonitor.v1.monitoring.coreos.com,Alertmanager.v1.monitoring.coreos.com,Prometheus.v1.monitoring.coreos.com")
	want := "Alertmanager.v1.monitoring.coreos.com,Prometheus.v1.monitoring.coreos.com,ServiceMonitor.v1.monitoring.coreos.com"
	if got := s.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (groups.APISet{}).String(); got != "" {
		t.Errorf("empty String() = %q, want \"\"", got)
	}
	var names []string
	for _, a := range s.Sorted() {
		names = append(names, a.String())
	}
	if got := strings.Join(names, ","); got != want {
		t.Errorf("Sorted() = %q, want %q", got, want)
	}
}

func TestAPISetOperations(t *testing.T) {
	a, b := groups.ParseAPISet("A.v1.g,B.v1.g"), groups.ParseAPISet("B.v1.g,C.v1.g")
	tests := []struct {
		name string
		got  groups.APISet
		want string
	}{
		{"union", a.Union(b), "A.v1.g,B.v1.g,C.v1.g"},
		{"intersection", a.Intersection(b), "B.v1.g"},
		{"difference", a.Difference(b), "A.v1.g"},
		{"union with nil", groups.APISet(nil).Union(b), "B.v1.g,C.v1.g"},
	}
	for _, tt := range tests {
		if got := tt.got.String(); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	if a.IsSubset(b) || !groups.ParseAPISet("B.v1.g").IsSubset(b) || !(groups.APISet{}).IsSubset(a) {
		t.Error("IsSubset is wrong")
	}
	if a.String() != "A.v1.g,B.v1.g" {
		t.Errorf("operations changed their receiver: %q", a.String())
	}
}

func TestProvidedAPIs(t *testing.T) {
	c := csv("ops", "c",
		etcdCluster,
		ownsCRD("etcdbackups.etcd.database.coreos.com", "v1beta2", "EtcdBackup"),
		ownsAPIService("packages.operators.coreos.com", "v1", "PackageManifest", "packagemanifests"),
		// Required CRDs are not provided.
		func(c *v1alpha1.ClusterServiceVersion) {
			c.Spec.CustomResourceDefinitions.Required = []v1alpha1.CRDDescription{{Name: "others.x.io", Version: "v1", Kind: "Other"}}
		},
	)
	got, err := groups.ProvidedAPIs(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "EtcdBackup.v1beta2.etcd.database.coreos.com,EtcdCluster.v1beta2.etcd.database.coreos.com,PackageManifest.v1.packages.operators.coreos.com"
	if got.String() != want {
		t.Errorf("ProvidedAPIs = %q, want %q", got.String(), want)
	}
}

func TestProvidedAPIsBadCRDName(t *testing.T) {
	_, err := groups.ProvidedAPIs(csv("ops", "broken.v1", ownsCRD("nodots", "v1", "Thing")))
	var e *groups.InvalidCRDNameError
	if !errors.As(err, &e) {
		t.Fatalf("ProvidedAPIs = %v, want *InvalidCRDNameError", err)
	}
	if want := `csv ops/broken.v1: owned crd "nodots": name is not <plural>.<group>`; err.Error() != want {
		t.Errorf("error = %q, want %q", err.Error(), want)
	}
}

func TestProvidedAPILabels(t *testing.T) {
	got, err := groups.ProvidedAPILabels(csv("ops", "c", etcdCluster,
		ownsAPIService("packages.operators.coreos.com", "v1", "PackageManifest", "packagemanifests")))
	if err != nil {
		t.Fatal(err)
	}
	// FNV-64a of "EtcdCluster.v1beta2.etcd.database.coreos.com" and of
	// "PackageManifest.v1.packages.operators.coreos.com", computed outside Go.
	want := map[string]string{
		"olm.api.c571d720f17289d3": "provided",
		"olm.api.4bca9f23e412d79d": "provided",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProvidedAPILabels (-want +got):\n%s", diff)
	}
}

// TestAPILabelKey checks that the key a controller selects on for an API from a group's
// olm.providedAPIs is the key ProvidedAPILabels puts on the CSVs that provide it.
func TestAPILabelKey(t *testing.T) {
	tests := map[string]struct {
		api  groups.API
		want string
	}{
		"crd":        {groups.API{Kind: "EtcdCluster", Version: "v1beta2", Group: "etcd.database.coreos.com"}, "olm.api.c571d720f17289d3"},
		"apiservice": {groups.API{Kind: "PackageManifest", Version: "v1", Group: "packages.operators.coreos.com"}, "olm.api.4bca9f23e412d79d"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.api.LabelKey(); got != tt.want {
				t.Errorf("LabelKey() = %q, want %q", got, tt.want)
			}
			for api := range groups.ParseAPISet(tt.api.String()) {
				if got := api.LabelKey(); got != tt.want {
					t.Errorf("LabelKey of the parsed %q = %q, want %q", tt.api.String(), got, tt.want)
				}
			}
		})
	}
}

// FuzzParseAPISet checks that any olm.providedAPIs value parses, and that what String writes
// back is canonical: sorted, without spaces, and parsed again into the same set.
func FuzzParseAPISet(f *testing.F) {
	for _, seed := range []string{
		"", "Goose.v1alpha1.birds.com", "A.v1.g,B.v1.g", " A . v1 . g ,,", "a.b", "...", ".,.,.",
		"Alertmanager.v1.monitoring.coreos.com,Prometheus.v1.monitoring.coreos.com",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		set := groups.ParseAPISet(value)
		out := set.String()
		if strings.Contains(out, " ") {
			t.Fatalf("String() of %q has a space: %q", value, out)
		}
		if out != "" {
			tokens := strings.Split(out, ",")
			if !slices.IsSorted(tokens) {
				t.Fatalf("String() of %q is not sorted: %q", value, out)
			}
			for _, tok := range tokens {
				if strings.Count(tok, ".") < 2 {
					t.Fatalf("String() of %q has token %q with fewer than two dots", value, tok)
				}
			}
		}
		if again := groups.ParseAPISet(out); !cmp.Equal(again, set) {
			t.Fatalf("ParseAPISet(String()) changed the set: %q -> %q -> %q", value, out, again.String())
		}
	})
}
