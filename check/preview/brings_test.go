package preview

import (
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

// bringsRepo is a PR adding one Subscription to etcd (startingCSV-free: the channel head)
// in team-a, with its OperatorGroup.
func bringsRepo() files {
	return files{
		"olmsync.yaml":             "apps:\n- {name: team-a, path: team-a, namespace: team-a}\n",
		"team-a/group.yaml":        group("team-a", "team-a", "team-a"),
		"team-a/subscription.yaml": sub("team-a", "etcd", "etcd", "singlenamespace-alpha", "community", "Automatic"),
	}
}

func broughtBy(t *testing.T, rep *report.Report, id string) *report.PreviewBrings {
	t.Helper()
	for _, s := range rep.Subscriptions {
		if s.ID() == id {
			return s.Brings
		}
	}
	t.Fatalf("no Subscription %s in %+v", id, rep.Subscriptions)
	return nil
}

// TestPreviewBringsFromBundleImages: the catalog is an image listing the real etcd bundles
// by image only; the preview pulls the bundle the PR installs and reports its CRDs (all
// added), its install modes, its namespaced permissions and its image. Offline — the
// bundle image's registry unreachable — the preview says what it could not see, tells
// the CRDs the catalog's olm.csv.metadata lists, and the check goes on.
func TestPreviewBringsFromBundleImages(t *testing.T) {
	reg := olmtest.ServeRegistry(t)
	etcd := shareddata.Path(t, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", "etcd"))
	bc := reg.PushBundleCatalog(t, "catalogs/community:1", olmtest.BundleCatalogOptions{RepoPrefix: "bundles/"}, etcd)
	opts := Options{
		Catalogs: []CatalogSpec{{Name: "community", Source: bc.Ref}},
		Image:    reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()}),
	}
	res, rep := checkWith(t, writeTree(t, bringsRepo()), opts)
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	b := broughtBy(t, rep, "team-a/etcd")
	if b == nil || b.Unseen != "" || b.CSV != "etcdoperator.v0.9.4" || b.Image != bc.Images["etcdoperator.v0.9.4"] {
		t.Fatalf("brings %+v, want etcdoperator.v0.9.4 from %s", b, bc.Images["etcdoperator.v0.9.4"])
	}
	var crds []string
	for _, c := range b.CRDs {
		crds = append(crds, c.Name+" "+strings.Join(c.Versions, ",")+" "+c.Change)
	}
	want := []string{"etcdbackups.etcd.database.coreos.com v1beta2* added", "etcdclusters.etcd.database.coreos.com v1beta2* added", "etcdrestores.etcd.database.coreos.com v1beta2* added"}
	if !slices.Equal(crds, want) {
		t.Errorf("CRDs %q, want %q", crds, want)
	}
	if !slices.Equal(b.InstallModes, []string{"OwnNamespace", "SingleNamespace"}) || len(b.Permissions) != 1 || b.Permissions[0].ClusterWide ||
		len(b.Images) != 1 || !strings.HasPrefix(b.Images[0], "quay.io/coreos/etcd-operator@sha256:") {
		t.Errorf("brings %+v", b)
	}

	offline := reg.PushBundleCatalog(t, "catalogs/offline:1", olmtest.BundleCatalogOptions{
		RepoPrefix: "offline/",
		Edit: func(c *catalog.Catalog) {
			for _, bd := range c.Package("etcd").Bundles {
				bd.Image = "127.0.0.1:1/bundles/" + bd.Name + "@sha256:" + strings.Repeat("0", 64)
			}
		},
	}, etcd)
	opts.Catalogs = []CatalogSpec{{Name: "community", Source: offline.Ref}}
	res, rep = checkWith(t, writeTree(t, bringsRepo()), opts)
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	b = broughtBy(t, rep, "team-a/etcd")
	if b == nil || !strings.Contains(b.Unseen, "bundle etcdoperator.v0.9.4 is listed by image only (127.0.0.1:1/bundles/") ||
		!strings.Contains(b.Unseen, "its permissions and images unknown") || len(b.CRDs) != 3 || len(b.Permissions) != 0 || len(b.Images) != 0 {
		t.Errorf("offline brings %+v", b)
	}
	if s := rep.Subscriptions[0]; s.Resolution.Status != report.ResolutionResolved || s.Outcome == nil || s.Outcome.Phase != "Succeeded" {
		t.Errorf("offline, the rest of the preview stays: %+v", s)
	}
}

// TestPreviewBringsCatalogMetadata: the fixture catalog lists its bundles by images no
// registry serves, with olm.csv.metadata: the preview says it could not read the image,
// and still tells the CRDs and install modes the metadata holds.
func TestPreviewBringsCatalogMetadata(t *testing.T) {
	_, rep := checkWith(t, writeTree(t, previewRepo()), Options{
		Catalogs: []CatalogSpec{fixtureCatalog},
		// No registry reachable: the preview must not wait for one.
		Image: catalog.ImageOptions{Transport: refuseAll{}},
	})
	b := broughtBy(t, rep, "team-a/etcd")
	if b == nil || b.CSV != "etcd.v0.9.4" || b.Image != "" || len(b.CRDs) == 0 || len(b.InstallModes) == 0 ||
		!strings.Contains(b.Unseen, "which could not be read") || !strings.Contains(b.Unseen, "its permissions and images unknown") {
		t.Errorf("brings %+v", b)
	}
}

type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("offline")
}

// TestPreviewBringsUpgrade: the cluster runs etcdoperator.v0.9.2 (a cluster state); the
// Subscription upgrades to v0.9.4, whose three CRDs the running CSV owns: "changed", and
// OLM's CRD upgrade check, run on both bundles' CRDs (each pulled from its image), finds
// the update safe.
func TestPreviewBringsUpgrade(t *testing.T) {
	reg := olmtest.ServeRegistry(t)
	etcd := shareddata.Path(t, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", "etcd"))
	bc := reg.PushBundleCatalog(t, "catalogs/community:1", olmtest.BundleCatalogOptions{RepoPrefix: "bundles/"}, etcd)
	state := &ClusterState{
		Subscriptions: []v1alpha1.Subscription{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "etcd"},
			Spec: v1alpha1.SubscriptionSpec{Package: "etcd", Channel: "singlenamespace-alpha", CatalogSource: "community",
				CatalogSourceNamespace: "openshift-marketplace"},
			Status: v1alpha1.SubscriptionStatus{InstalledCSV: "etcdoperator.v0.9.2", State: v1alpha1.SubscriptionStateAtLatest},
		}},
		CSVs: []v1alpha1.ClusterServiceVersion{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "etcdoperator.v0.9.2"},
			Spec: v1alpha1.ClusterServiceVersionSpec{
				InstallModes: []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true}, {Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true}},
				CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: []v1alpha1.CRDDescription{
					{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}},
			},
			Status: v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonInstallSuccessful},
		}},
	}
	_, rep := checkWith(t, writeTree(t, bringsRepo()), Options{
		Catalogs:      []CatalogSpec{{Name: "community", Source: bc.Ref}},
		Image:         reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()}),
		ClusterStates: map[string]*ClusterState{"": state},
	})
	b := broughtBy(t, rep, "team-a/etcd")
	if b == nil || b.CSV != "etcdoperator.v0.9.4" || len(b.CRDs) != 3 {
		t.Fatalf("brings %+v", b)
	}
	for _, c := range b.CRDs {
		if c.Change != report.CRDChanged || c.Verdict != report.CRDUpgradeSafe {
			t.Errorf("crd %+v: want changed, safe", c)
		}
	}
}

// TestCRDVerdict: OLM's check on the CRDs of two bundles: the same versions are safe; a
// removed storage version of the old bundle is OLM's data-loss refusal; a removed served
// version olmsync's refusal.
func TestCRDVerdict(t *testing.T) {
	crd := func(versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"}}
		c.Spec.Group, c.Spec.Names = "example.com", apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"}
		c.Spec.Versions = versions
		return c
	}
	v := func(name string, served, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: served, Storage: storage}
	}
	tests := []struct {
		name     string
		old, new *apiextensionsv1.CustomResourceDefinition
		want     string
	}{
		{"same", crd(v("v1", true, true)), crd(v("v1", true, true)), "safe"},
		{"new version", crd(v("v1", true, true)), crd(v("v1", true, false), v("v2", true, true)), "safe"},
		{"stored version removed", crd(v("v1", false, true)), crd(v("v2", true, true)),
			`risk of data loss updating "widgets.example.com": new CRD removes version v1 that is listed as a stored version on the existing CRD`},
		{"served version removed", crd(v("v1", true, false), v("v2", true, true)), crd(v("v2", true, true)),
			`refusing to update "widgets.example.com": new CRD removes version v1 that the existing CRD serves (set served: false on it first, and remove it in a later upgrade)`},
		{"unknown", nil, crd(v("v1", true, true)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := crdVerdict(tt.old, tt.new); got != tt.want {
				t.Errorf("verdict %q, want %q", got, tt.want)
			}
		})
	}
}

// TestJudgeCRDs: a changed CRD that OLM's upgrade check refuses is an OLM007 error on the
// Subscription's file and line; safe, added or unjudged CRDs are not.
func TestJudgeCRDs(t *testing.T) {
	refusal := `risk of data loss updating "widgets.example.com": new CRD removes version v1 that is listed as a stored version on the existing CRD`
	at := &gitRef{app: "team-a", file: "team-a/sub.yaml", line: 3}
	sp := &report.SubscriptionPreview{Namespace: "team-a", Name: "widgets", Brings: &report.PreviewBrings{CSV: "widget.v2.0.0", CRDs: []report.PreviewCRD{
		{Name: "widgets.example.com", Change: report.CRDChanged, Verdict: refusal},
		{Name: "gadgets.example.com", Change: report.CRDChanged, Verdict: report.CRDUpgradeSafe},
		{Name: "gizmos.example.com", Change: report.CRDChanged},
		{Name: "doodads.example.com", Change: report.CRDAdded},
	}}}
	p := &clusterPreview{name: "alpha"}
	p.judgeCRDs(at, sp)
	p.judgeCRDs(nil, sp) // a Subscription only the cluster has: nothing in Git to point at
	if len(p.violations) != 1 {
		t.Fatalf("violations %+v, want one", p.violations)
	}
	v := p.violations[0]
	want := "Subscription team-a/widgets: the upgrade to widget.v2.0.0 replaces CRD widgets.example.com, which OLM refuses: " + refusal
	if v.Rule != RuleCRDUpgradeRefused || v.Severity != policy.SeverityError || v.File != "team-a/sub.yaml" || v.Line != 3 || v.Message != want {
		t.Errorf("violation %+v", v)
	}
}

// TestPreviewCertManagerWebhooks is issue 31's report: a Subscription to cert-manager, from its
// real bundles served as images, in a namespace with a global group. The preview's outcome is
// the controller's (Succeeded / InstallSucceeded: TestRealOperatorsWithWebhooks installs the
// same bundle), and what it brings lists its two webhooks, called out as cluster-wide (the
// group targets every namespace). In a namespace whose group targets only itself the same
// bundle's webhooks would be scoped to it, and cert-manager, AllNamespaces only, fails its
// install modes there.
func TestPreviewCertManagerWebhooks(t *testing.T) {
	reg := olmtest.ServeRegistry(t)
	dir := shareddata.Path(t, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", "cert-manager"))
	bc := reg.PushBundleCatalog(t, "catalogs/cert-manager:1", olmtest.BundleCatalogOptions{RepoPrefix: "bundles/"}, dir)
	repo := files{
		"olmsync.yaml":         "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/a.yaml": docs(namespace("cert-manager"), group("cert-manager", "global", ""), sub("cert-manager", "cert-manager", "cert-manager", "stable", "community", "Automatic")),
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{
		Catalogs: []CatalogSpec{{Name: "community", Source: bc.Ref}},
		Image:    reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()}),
	})
	s := rep.Subscriptions[0]
	if s.Outcome == nil || s.Outcome.CSV != "cert-manager.v1.14.2" || s.Outcome.Phase != "Succeeded" || s.Outcome.Reason != "InstallSucceeded" {
		t.Fatalf("outcome %+v, want cert-manager.v1.14.2 Succeeded/InstallSucceeded", s.Outcome)
	}
	b := s.Brings
	if b == nil || len(b.Webhooks) != 2 {
		t.Fatalf("brings %+v: want cert-manager's two webhooks", b)
	}
	want := []string{
		"CLUSTER-WIDE validating webhook validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE,UPDATE cert-manager.io/v1,acme.cert-manager.io/v1 */*",
		"CLUSTER-WIDE mutating webhook mutate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE cert-manager.io/v1 certificaterequests",
	}
	for i, w := range b.Webhooks {
		if !w.ClusterWide || w.Summary != want[i] || w.Deployment != "cert-manager-webhook" {
			t.Errorf("webhook %d: %+v, want summary %q", i, w, want[i])
		}
	}

	scoped := files{
		"olmsync.yaml":         "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/a.yaml": docs(namespace("cert-manager"), group("cert-manager", "own", "cert-manager"), sub("cert-manager", "cert-manager", "cert-manager", "stable", "community", "Automatic")),
	}
	_, rep = checkWith(t, writeTree(t, scoped), Options{
		Catalogs: []CatalogSpec{{Name: "community", Source: bc.Ref}},
		Image:    reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()}),
	})
	s = rep.Subscriptions[0]
	if s.Outcome == nil || s.Outcome.Reason != "UnsupportedOperatorGroup" || s.Brings == nil || len(s.Brings.Webhooks) != 2 ||
		s.Brings.Webhooks[0].ClusterWide || !slices.Equal(s.Brings.Webhooks[0].Namespaces, []string{"cert-manager"}) ||
		!strings.HasSuffix(s.Brings.Webhooks[0].Summary, "; in namespaces cert-manager") {
		t.Errorf("in an OwnNamespace group: outcome %+v, webhooks %+v", s.Outcome, s.Brings)
	}
}
