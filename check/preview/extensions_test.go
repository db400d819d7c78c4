package preview

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/report"
)

// clusterCatalog is a ClusterCatalog of exactly ten lines.
func clusterCatalog(name string, priority int) string {
	return "apiVersion: olm.operatorframework.io/v1\nkind: ClusterCatalog\nmetadata:\n  name: " + name + "\nspec:\n" +
		"  priority: " + itoa(priority) + "\n  source:\n    type: Image\n    image:\n      ref: quay.io/olmsync-fixtures/" + name + "-catalog:latest\n"
}

// clusterExtension is a ClusterExtension of exactly eleven lines (catalog is the
// spec.source.catalog fields after packageName, one line).
func clusterExtension(name, pkg, catalogFields string) string {
	return "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: " + name + "\nspec:\n" +
		"  namespace: etcd-system\n  serviceAccount: {name: installer}\n  source:\n    sourceType: Catalog\n    catalog:\n" +
		"      {packageName: " + pkg + catalogFields + "}\n"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// extensionRepo declares two ClusterCatalogs (operatorhub above internal) and four
// ClusterExtensions in the cluster-scope app.
func extensionRepo() files {
	return files{
		"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespaces.yaml": namespace("etcd-system"),
		"cluster-scope/catalogs.yaml":   docs(clusterCatalog("operatorhub", 0), clusterCatalog("internal", -10)),
		"cluster-scope/extensions.yaml": docs(
			clusterExtension("etcd", "etcd", `, channels: [stable], version: ">=0.9.0, <0.9.4"`), // 1
			clusterExtension("etcd-upgrade", "etcd", ", channels: [stable]"),                     // 13
			clusterExtension("backup", "etcd-backup", ""),                                        // 25
			clusterExtension("missing", "nope", ""),                                              // 37
		),
	}
}

// TestPreviewClusterExtensions: each ClusterExtension of Git is resolved against the
// ClusterCatalogs of Git, their images mapped to a fixture FBC by --catalog NAME=SRC; the
// installed bundle comes from the cluster state's status.install.bundle; OLM v1's failures
// are OLM009 on the extension's file and line.
func TestPreviewClusterExtensions(t *testing.T) {
	stateDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(stateDir, "extensions.yaml"), []byte(`apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata: {name: etcd-upgrade}
spec:
  namespace: etcd-system
  source: {sourceType: Catalog, catalog: {packageName: etcd}}
status:
  install:
    bundle: {name: etcd.v0.9.2, version: 0.9.2}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	state, err := LoadClusterState(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.ClusterExtensions) != 1 {
		t.Fatalf("state: %d ClusterExtensions", len(state.ClusterExtensions))
	}
	res, rep := checkWith(t, writeTree(t, extensionRepo()), Options{
		Catalogs: []CatalogSpec{
			{Name: "operatorhub", Source: filepath.Join("testdata", "catalog")},
			{Name: "internal", Source: filepath.Join("testdata", "catalog")},
		},
		ClusterStates: map[string]*ClusterState{"": state},
	})
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	type got struct{ Name, Status, Bundle, Catalog, Change, Edge, Message string }
	var gots []got
	for _, e := range rep.ClusterExtensions {
		r := e.Resolution
		gots = append(gots, got{e.Name, r.Status, r.Bundle, r.Catalog, r.Change, r.Edge, r.Message})
	}
	want := []got{
		{"backup", "Failed", "", "", "", "", `validating bundle "etcd-backup.v1.0.0": bundle "etcd-backup.v1.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported`},
		{"etcd", "Resolved", "etcd.v0.9.3", "operatorhub", "Install", "", ""},
		{"etcd-upgrade", "Resolved", "etcd.v0.9.4", "operatorhub", "Upgrade", "replaces etcd.v0.9.2", ""},
		{"missing", "Failed", "", "", "", "", `no bundles found for package "nope"`},
	}
	if d := cmp.Diff(want, gots); d != "" {
		t.Errorf("extensions (-want +got):\n%s", d)
	}
	const file = "cluster-scope/extensions.yaml"
	wantFindings := []olmFinding{
		{"OLM009", file, 25, "ClusterExtension backup"},
		{"OLM009", file, 37, "ClusterExtension missing"},
	}
	if d := cmp.Diff(wantFindings, olmFindings(rep)); d != "" {
		t.Errorf("OLM violations (-want +got):\n%s", d)
	}
	for _, e := range rep.ClusterExtensions {
		if e.Name != "etcd-upgrade" {
			continue
		}
		if e.Installed == nil || e.Installed.Version != "0.9.2" || e.UpgradeConstraintPolicy != "CatalogProvided" || e.ServiceAccount != "installer" {
			t.Errorf("etcd-upgrade: %+v", e)
		}
		wantCats := []report.ExtensionCatalog{
			{Name: "internal", Image: "quay.io/olmsync-fixtures/internal-catalog:latest", Priority: -10, PackageFound: true, TotalBundles: 4, MatchedBundles: 3, Best: "etcd.v0.9.4"},
			{Name: "operatorhub", Image: "quay.io/olmsync-fixtures/operatorhub-catalog:latest", PackageFound: true, TotalBundles: 4, MatchedBundles: 3, Best: "etcd.v0.9.4"},
		}
		if d := cmp.Diff(wantCats, e.Catalogs); d != "" {
			t.Errorf("etcd-upgrade's catalogs (-want +got):\n%s", d)
		}
	}

	text := previewText(t, rep)
	for _, s := range []string{
		"ClusterExtension etcd-upgrade  (cluster-scope/extensions.yaml:13)",
		"upgrades etcd.v0.9.2 → etcd.v0.9.4 0.9.4 (replaces etcd.v0.9.2) from ClusterCatalog operatorhub, channel stable, image quay.io/olmsync-fixtures/etcd-bundle:v0.9.4 [package etcd, channels stable, CatalogProvided; into namespace etcd-system]",
		"installs etcd.v0.9.3 0.9.3 from ClusterCatalog operatorhub",
		`cannot be resolved: no bundles found for package "nope"`,
		"catalogs: internal (priority -10, 2 of 4 bundles match); operatorhub (priority 0, 2 of 4 bundles match)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("text report lacks %q:\n%s", s, text)
		}
	}
	var js strings.Builder
	if err := report.Write(&js, rep, report.FormatJSON, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClusterExtensions []struct {
			Name       string `json:"name"`
			Resolution struct {
				Status, Bundle, Image string
			} `json:"resolution"`
		} `json:"clusterExtensions"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.ClusterExtensions) != 4 || doc.ClusterExtensions[1].Resolution.Bundle != "etcd.v0.9.3" ||
		doc.ClusterExtensions[1].Resolution.Image != "quay.io/olmsync-fixtures/etcd-bundle:v0.9.3" {
		t.Errorf("JSON report: %s", js.String())
	}
	var md strings.Builder
	if err := report.Write(&md, rep, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "#### OLM v1 preview") || !strings.Contains(md.String(), "❌ cannot be resolved: no bundles found for package") {
		t.Errorf("markdown report:\n%s", md.String())
	}
}

// TestPreviewClusterExtensionWithoutCatalogs: with no ClusterCatalog in Git or the
// cluster state, the extension is not previewed, and OLM010 says so.
func TestPreviewClusterExtensionWithoutCatalogs(t *testing.T) {
	repo := extensionRepo()
	delete(repo, "cluster-scope/catalogs.yaml")
	_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	if len(rep.ClusterExtensions) != 4 || rep.ClusterExtensions[0].Resolution.Status != report.ExtensionUnknown {
		t.Fatalf("extensions: %+v", rep.ClusterExtensions)
	}
	if f := olmFindings(rep); len(f) != 4 || f[0].Rule != "OLM010" || f[0].Line != 1 {
		t.Errorf("findings: %+v", f)
	}
}

// TestPreviewClusterExtensionUnknownField: a field OLM v1's API does not have is a warning
// naming the file, line and object.
func TestPreviewClusterExtensionUnknownField(t *testing.T) {
	repo := extensionRepo()
	repo["cluster-scope/extensions.yaml"] = clusterExtension("etcd", "etcd", ", chanels: [stable]")
	res, _ := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{{Name: "operatorhub", Source: filepath.Join("testdata", "catalog")}, {Name: "internal", Source: filepath.Join("testdata", "catalog")}}})
	found := false
	for _, w := range res.Warnings {
		if w.File == "cluster-scope/extensions.yaml" && w.Line == 1 && strings.Contains(w.Message, `ClusterExtension "etcd": unknown field "spec.source.catalog.chanels"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings: %+v", res.Warnings)
	}
}

// TestPreviewClusterExtensionBaseIsInstalled: in a pull request, what the base revision's
// ClusterExtension resolves to is taken as installed where the cluster state does not say:
// widening the version range at the head is then an upgrade from the base's bundle along a
// catalog edge, and an unchanged extension stays.
func TestPreviewClusterExtensionBaseIsInstalled(t *testing.T) {
	catalogs := []CatalogSpec{
		{Name: "operatorhub", Source: filepath.Join("testdata", "catalog")},
		{Name: "internal", Source: filepath.Join("testdata", "catalog")},
	}
	repo := func(etcdRange string) files {
		return files{
			"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
			"cluster-scope/namespaces.yaml": namespace("etcd-system"),
			"cluster-scope/catalogs.yaml":   docs(clusterCatalog("operatorhub", 0), clusterCatalog("internal", -10)),
			"cluster-scope/extensions.yaml": docs(
				clusterExtension("etcd", "etcd", `, channels: [stable], version: "`+etcdRange+`"`),
				clusterExtension("etcd-same", "etcd", `, channels: [stable], version: ">=0.9.0, <0.9.4"`),
			),
		}
	}
	stage := New(Options{Catalogs: catalogs})
	base, err := check.Run(context.Background(), writeTree(t, repo(">=0.9.0, <0.9.4")), check.Options{Stages: []check.Stage{stage}})
	if err != nil {
		t.Fatal(err)
	}
	_, rep := checkWith(t, writeTree(t, repo(">=0.9.0")), Options{Catalogs: catalogs, Base: base.Sections[0].(*Section)})
	type got struct{ Name, Installed, Bundle, Change, Edge string }
	var gots []got
	for _, e := range rep.ClusterExtensions {
		g := got{Name: e.Name, Bundle: e.Resolution.Bundle, Change: e.Resolution.Change, Edge: e.Resolution.Edge}
		if e.Installed != nil && e.Installed.FromBase {
			g.Installed = e.Installed.Name
		}
		gots = append(gots, g)
	}
	want := []got{
		{"etcd", "etcd.v0.9.3", "etcd.v0.9.4", "Upgrade", "skips etcd.v0.9.3"},
		{"etcd-same", "etcd.v0.9.3", "etcd.v0.9.3", "Stay", ""},
	}
	if d := cmp.Diff(want, gots); d != "" {
		t.Errorf("extensions (-want +got):\n%s", d)
	}
}
