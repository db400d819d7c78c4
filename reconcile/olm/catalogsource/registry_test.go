package catalogsource

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
)

// content is a catalog with one package holding the named bundles.
func content(bundles ...string) *catalog.Catalog {
	p := &catalog.Package{Name: "p"}
	for _, b := range bundles {
		p.Bundles = append(p.Bundles, &catalog.Bundle{Name: b, Package: "p"})
	}
	return &catalog.Catalog{Packages: []*catalog.Package{p}}
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func TestRegistryCatalogs(t *testing.T) {
	r := NewRegistry("olm", resolve.Options{})
	broken := errors.New("pull image x: unreachable")
	r.Set(key("team", "own"), Entry{Content: content("a.v1")})
	r.Set(key("olm", "global"), Entry{Content: content("a.v1"), Err: broken})
	r.Set(key("olm", "never"), Entry{Err: broken})
	r.Set(key("other", "hidden"), Entry{Content: content("a.v1")})

	var got []string
	for _, c := range r.Visible("team") {
		s := c.Namespace + "/" + c.Name
		if c.Err != nil {
			s += " (error)"
		}
		got = append(got, s)
	}
	want := []string{"olm/global", "olm/never (error)", "team/own"}
	if len(got) != len(want) {
		t.Fatalf("Visible = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Visible = %v, want %v (a stale catalog serves its content; one never loaded gives its error)", got, want)
		}
	}
}

func TestRegistryResolverIsRebuiltOnChange(t *testing.T) {
	r := NewRegistry("", resolve.Options{})
	a, revA := r.Resolver()
	b, revB := r.Resolver()
	if a != b || revA != revB {
		t.Error("the resolver was rebuilt without a change")
	}
	r.Set(key("ns", "c"), Entry{Content: content("a.v1")})
	c, revC := r.Resolver()
	if c == a || revC == revA {
		t.Error("the resolver was not rebuilt after a change")
	}
	r.Delete(key("ns", "missing"))
	if _, rev := r.Resolver(); rev != revC {
		t.Error("deleting a missing entry moved the revision")
	}
}

func TestRegistryFindBundle(t *testing.T) {
	r := NewRegistry("olm", resolve.Options{})
	r.Set(key("olm", "global-high"), Entry{Content: content("a.v1", "b.v1"), Priority: 10})
	r.Set(key("olm", "global-low"), Entry{Content: content("c.v1")})
	r.Set(key("team", "own"), Entry{Content: content("a.v1")})
	r.Set(key("team", "named"), Entry{Content: content("a.v1")})
	r.Set(key("other", "hidden"), Entry{Content: content("d.v1")})
	tests := []struct {
		csv    string
		source types.NamespacedName
		want   string
		found  bool
	}{
		{"a.v1", key("team", "named"), "team/named", true},
		{"a.v1", types.NamespacedName{}, "team/named", true}, // own namespace first, then by name
		{"b.v1", types.NamespacedName{}, "olm/global-high", true},
		{"c.v1", key("team", "own"), "olm/global-low", true},
		{"d.v1", types.NamespacedName{}, "", false},
	}
	for _, tt := range tests {
		b, from, ok := r.FindBundle("team", tt.csv, tt.source)
		if ok != tt.found || (ok && (from.String() != tt.want || b.Name != tt.csv)) {
			t.Errorf("FindBundle(%s, %s) = %v, %v; want %s, %v", tt.csv, tt.source, from, ok, tt.want, tt.found)
		}
	}
}
