package preview

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/report"
)

// crdCatalog is testdata/crd-catalog: widgets v0.1.0 (CRD widgets.example.com, v1alpha1
// retired, v1 stored) and v0.2.0 (v1alpha1 removed, spec.size at most 5).
var crdCatalog = CatalogSpec{Name: "widgets-catalog", Source: filepath.Join("testdata", "crd-catalog")}

// loadCRDState reads testdata/crd-state, changed by edit.
func loadCRDState(t *testing.T, edit func(*ClusterState)) *ClusterState {
	t.Helper()
	st, err := LoadClusterState(filepath.Join("testdata", "crd-state"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(st)
	}
	return st
}

func widgetsRepo(extra files) files {
	fs := files{
		"olmsync.yaml": "apps:\n- {name: team-w, path: team-w, namespace: team-w}\n",
		"team-w/subscription.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: widgets\n" +
			"spec:\n  name: widgets\n  channel: stable\n  source: widgets-catalog\n  sourceNamespace: openshift-marketplace\n",
	}
	for k, v := range extra {
		fs[k] = v
	}
	return fs
}

// TestLoadClusterStateCRDs: a state folder keeps CRDs with their stored versions, the
// objects of their kinds, and ServiceAccounts; other kinds (a Deployment) are dropped.
func TestLoadClusterStateCRDs(t *testing.T) {
	st := loadCRDState(t, nil)
	if len(st.CRDs) != 1 || !slices.Equal(st.CRDs[0].Status.StoredVersions, []string{"v1alpha1", "v1"}) {
		t.Fatalf("CRDs %+v", st.CRDs)
	}
	var crs []string
	for _, u := range st.CustomResources {
		crs = append(crs, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
	}
	if !slices.Equal(crs, []string{"Widget team-w/big"}) {
		t.Errorf("custom resources %v, want only the Widget", crs)
	}
	if len(st.ServiceAccounts) != 1 || st.ServiceAccounts[0].Name != "installer" || !st.CatalogSourcesListed {
		t.Errorf("service accounts %+v, catalog sources listed %v", st.ServiceAccounts, st.CatalogSourcesListed)
	}
}

// TestPreviewCRDUpgradeAgainstCluster: the upgrade to widgets.v0.2.0 is judged against the
// cluster's CRD — its status.storedVersions and its existing Widgets — not only against the
// CRD of the bundle it replaces (which alone calls it safe).
func TestPreviewCRDUpgradeAgainstCluster(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*ClusterState)
		verdict string
	}{
		// OLM pkg/controller/operators/catalog/operator.go: "error validating existing CRs against new CRD's schema for %q: %s",
		// with "error validating %s %q: updated validation is too restrictive: %v" (pkg/controller/install/... validation).
		{"a Widget the new schema refuses", nil,
			`error validating existing CRs against new CRD's schema for "widgets.example.com": error validating example.com/v1, Kind=Widget "team-w/big": updated validation is too restrictive: [].spec.size: Invalid value: 10: spec.size in body should be less than or equal to 5`},
		// OLM pkg/controller/operators/catalog/operator.go: "risk of data loss updating %q: new CRD removes version %s that is listed as a stored version on the existing CRD"
		{"a stored version removed", func(st *ClusterState) { st.CustomResources = nil },
			`risk of data loss updating "widgets.example.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD`},
		{"safe", func(st *ClusterState) {
			st.CustomResources = nil
			st.CRDs[0].Status.StoredVersions = []string{"v1"}
		}, report.CRDUpgradeSafe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := checkWith(t, writeTree(t, widgetsRepo(nil)), Options{
				Catalogs:      []CatalogSpec{crdCatalog},
				ClusterStates: map[string]*ClusterState{"": loadCRDState(t, tt.edit)},
			})
			b := broughtBy(t, rep, "team-w/widgets")
			if b == nil || len(b.CRDs) != 1 {
				t.Fatalf("brings %+v", b)
			}
			if c := b.CRDs[0]; c.Change != report.CRDChanged || c.Verdict != tt.verdict {
				t.Errorf("CRD %s: %s, verdict\n%s\nwant\n%s", c.Name, c.Change, c.Verdict, tt.verdict)
			}
			refused := slices.ContainsFunc(olmFindings(rep), func(f olmFinding) bool { return f.Rule == RuleCRDUpgradeRefused })
			if refused != (tt.verdict != report.CRDUpgradeSafe) {
				t.Errorf("OLM007 reported: %v, findings %+v", refused, olmFindings(rep))
			}
		})
	}
}

// TestPreviewMissingCatalogSource: with a cluster state that lists its CatalogSources, a
// Subscription naming one that neither the cluster nor Git has (nor --catalog gives) is
// OLM's resolution failure, not "not previewed".
func TestPreviewMissingCatalogSource(t *testing.T) {
	repo := widgetsRepo(files{"team-w/gone.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: gone\n" +
		"spec:\n  name: gone\n  channel: stable\n  source: gone-catalog\n  sourceNamespace: openshift-marketplace\n"})
	_, rep := checkWith(t, writeTree(t, repo), Options{
		Catalogs:      []CatalogSpec{crdCatalog},
		ClusterStates: map[string]*ClusterState{"": loadCRDState(t, nil)},
	})
	var got *report.SubscriptionPreview
	for i := range rep.Subscriptions {
		if rep.Subscriptions[i].Name == "gone" {
			got = &rep.Subscriptions[i]
		}
	}
	// OLM pkg/controller/registry/resolver/resolver.go:261:
	// fmt.Sprintf("no operators found from catalog %s in namespace %s referenced by subscription %s", ...),
	// explained by the solver after the Subscription's existence.
	const want = "constraints not satisfiable: no operators found from catalog gone-catalog in namespace openshift-marketplace referenced by subscription gone, subscription gone exists"
	if got == nil || got.Resolution.Status != "Failed" || got.Resolution.Reason != "ConstraintsNotSatisfiable" || got.Resolution.Message != want {
		t.Fatalf("Subscription gone: %+v", got)
	}
	if !slices.ContainsFunc(olmFindings(rep), func(f olmFinding) bool { return f.Rule == RuleResolutionFailed && strings.Contains(f.Object, "gone") }) {
		t.Errorf("no OLM001 for gone: %+v", olmFindings(rep))
	}
}

// TestPreviewOperatorGroupServiceAccount: an OperatorGroup of Git naming a ServiceAccount
// that neither the cluster state nor Git has is OLM008 with OLM's condition message; the
// account in the state, or in Git, passes.
func TestPreviewOperatorGroupServiceAccount(t *testing.T) {
	og := func(sa string) string {
		return "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: team-s\n  namespace: team-s\nspec:\n  targetNamespaces: [team-s]\n  serviceAccountName: " + sa + "\n"
	}
	tests := []struct {
		name string
		repo files
		want []string
	}{
		{"missing", files{"team-w/og.yaml": og("deployer")}, []string{"OLM008 team-w/og.yaml:1"}},
		{"in the cluster", files{"team-w/og.yaml": og("installer")}, nil},
		{"in Git", files{"team-w/og.yaml": og("deployer") + "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n  namespace: team-s\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := checkWith(t, writeTree(t, widgetsRepo(tt.repo)), Options{
				Catalogs:      []CatalogSpec{crdCatalog},
				ClusterStates: map[string]*ClusterState{"": loadCRDState(t, nil)},
			})
			var got []string
			for _, v := range rep.Violations {
				if v.Rule == RuleServiceAccountMissing {
					got = append(got, fmt.Sprintf("%s %s:%d", v.Rule, v.File, v.Line))
					// OLM pkg/lib/scoped/syncer.go:90: fmt.Sprintf("ServiceAccount %s not found", serviceAccountName)
					if !strings.Contains(v.Message, "ServiceAccount deployer not found") {
						t.Errorf("message %q", v.Message)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			for _, g := range rep.OperatorGroups {
				if g.Name == "team-s" && (g.Message != "") != (tt.want != nil) {
					t.Errorf("group %+v", g)
				}
			}
		})
	}
}

// TestGlobalCatalogNamespace: how the global catalog namespace is read from a cluster's
// Deployments.
func TestGlobalCatalogNamespace(t *testing.T) {
	dep := func(ns, name string, command, args []string) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Command: command, Args: args}}
		return d
	}
	tests := []struct {
		name string
		deps []appsv1.Deployment
		want string
	}{
		{"none", nil, ""},
		// OLM deploy/chart/templates/0000_50_olm_08-catalog-operator.deployment.yaml: args '--namespace', {{ .Values.catalog_namespace }}
		{"OLM's catalog operator", []appsv1.Deployment{dep("olm", "catalog-operator", []string{"/bin/catalog"}, []string{"--namespace", "operators-global"})}, "operators-global"},
		{"OLM's catalog operator, -namespace=", []appsv1.Deployment{dep("openshift-operator-lifecycle-manager", "catalog-operator", []string{"/bin/catalog", "-namespace=openshift-marketplace"}, nil)}, "openshift-marketplace"},
		// OLM cmd/catalog/main.go:32: defaultCatalogNamespace = "olm"
		{"OLM's catalog operator, its default", []appsv1.Deployment{dep("olm", "catalog-operator", []string{"/bin/catalog"}, []string{"--debug"})}, "olm"},
		{"olmsync's chart", []appsv1.Deployment{dep("olmsync-system", "olmsync", nil, []string{"run", "--olm=auto", "--global-catalog-namespace=olm"})}, "olm"},
		{"olmsync, its default", []appsv1.Deployment{dep("olmsync-system", "olmsync", []string{"/usr/local/bin/olmsync", "run"}, nil)}, "openshift-marketplace"},
		{"OLM wins over olmsync", []appsv1.Deployment{
			dep("olmsync-system", "olmsync", nil, []string{"run", "--global-catalog-namespace", "olm"}),
			dep("olm", "catalog-operator", nil, []string{"--namespace", "marketplace"})}, "marketplace"},
		{"another Deployment", []appsv1.Deployment{dep("x", "web", []string{"nginx"}, []string{"--namespace", "x"})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := globalCatalogNamespace(tt.deps); got != tt.want {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}

// TestPreviewWarnsOfCatalogsItWasNotGiven: a CatalogSource of Git that a namespace with
// Subscriptions sees (in the global catalog namespace, or its own), whose content the preview
// was not given, is a warning naming the fact the preview lacks, where Git declares it; a
// catalog no such namespace sees, or one whose content was given, is not.
func TestPreviewWarnsOfCatalogsItWasNotGiven(t *testing.T) {
	catsrc := func(ns, name string) string {
		return "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
			"\nspec:\n  sourceType: grpc\n  image: registry.example.com/" + name + ":v1\n"
	}
	tests := []struct {
		name string
		repo files
		want string // the warning's file, or "" for none
	}{
		{"global, not given", files{"team-w/internal.yaml": catsrc("openshift-marketplace", "internal")}, "team-w/internal.yaml"},
		{"the namespace's own, not given", files{"team-w/own.yaml": catsrc("team-w", "own")}, "team-w/own.yaml"},
		{"another namespace's", files{"team-w/other.yaml": catsrc("elsewhere", "other")}, ""},
		{"given", files{"team-w/widgets.yaml": catsrc("openshift-marketplace", "widgets-catalog")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := checkWith(t, writeTree(t, widgetsRepo(tt.repo)), Options{
				Catalogs:      []CatalogSpec{crdCatalog},
				ClusterStates: map[string]*ClusterState{"": loadCRDState(t, nil)},
			})
			var got []report.Warning
			for _, w := range rep.Warnings {
				if strings.Contains(w.Message, "its content was not given") {
					got = append(got, w)
				}
			}
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("warnings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].File != tt.want || got[0].Line != 1 ||
				!strings.Contains(got[0].Message, "is seen by the Subscriptions of team-w") ||
				!strings.Contains(got[0].Message, "fails every Subscription of those namespaces") {
				t.Fatalf("warnings %+v, want one at %s:1 naming team-w", got, tt.want)
			}
		})
	}
}
