package extension

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
)

// TestResolveCommunityCatalog resolves a ClusterExtension of every package of the real
// community catalog (../shared/data), as a ClusterCatalog: each either resolves to a bundle
// of the package whose version no non-deprecated bundle of the package exceeds, or fails
// with OLM v1's dependency validation (OLM v1 installs no dependencies).
func TestResolveCommunityCatalog(t *testing.T) {
	c, err := catalog.LoadPath(shareddata.Path(t, "data/catalogs/community-operators"))
	if err != nil {
		t.Fatal(err)
	}
	cats := []Catalog{CatalogOf(&ClusterCatalog{ObjectMeta: metav1.ObjectMeta{Name: "operatorhubio"}}, c, nil)}
	resolved, refused := 0, 0
	for _, p := range c.Packages {
		d, _, err := Resolve(ext(p.Name), cats)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "validating bundle ") || !strings.HasSuffix(err.Error(), "which is currently not supported") {
				t.Errorf("%s: %v", p.Name, err)
			}
			refused++
			continue
		}
		resolved++
		got := p.Bundle(d.Bundle)
		if got == nil || d.Catalog != "operatorhubio" {
			t.Fatalf("%s: resolved %+v, not a bundle of the package", p.Name, d)
		}
		for _, b := range p.Bundles {
			if _, dep := p.Deprecated("olm.bundle", b.Name); !dep && b.Version.GT(got.Version) && len(channelsOf(b.Name, p.Channels)) > 0 {
				t.Errorf("%s: resolved %s %s, but %s %s is higher", p.Name, d.Bundle, got.Version, b.Name, b.Version)
			}
		}
	}
	if resolved < 200 || refused == 0 {
		t.Errorf("%d packages resolved, %d refused for dependencies: the catalog is not what the test expects", resolved, refused)
	}
	t.Logf("%d of %d packages resolved, %d refused for dependencies", resolved, len(c.Packages), refused)
}
