package preview

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// settleRepo is namespace team-a with one OperatorGroup targeting it, the given
// Subscriptions, and a ConfigMap catalog "cat" in team-a of the given bundles.
func settleRepo(t *testing.T, bundles []olmtest.Bundle, subs ...string) files {
	t.Helper()
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cat"},
		Data:       olmtest.ConfigMapData(t, bundles),
	}
	data, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	repo := files{
		"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\npolicy:\n  operatorGroups: []\n",
		"cluster-scope/namespaces.yaml": namespace("team-a"),
		"cluster-scope/groups.yaml":     group("team-a", "og", "team-a"),
		"cluster-scope/subs.yaml":       docs(subs...),
		"catalog/cat.yaml":              string(data),
	}
	return repo
}

func catSub(name, pkg, approval, startingCSV string) string {
	s := "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: " + name + "\n  namespace: team-a\n" +
		"spec:\n  name: " + pkg + "\n  channel: stable\n  source: cat\n  sourceNamespace: team-a\n  installPlanApproval: " + approval + "\n"
	if startingCSV != "" {
		s += "  startingCSV: " + startingCSV + "\n"
	}
	return s
}

func settled(t *testing.T, bundles []olmtest.Bundle, subs ...string) (map[string]report.SubscriptionPreview, []policy.Violation) {
	t.Helper()
	out, violations, _ := settledOn(t, nil, bundles, subs...)
	return out, violations
}

// settledOn previews settleRepo with a base revision's section (nil for none) and returns
// the Subscriptions by name, the violations and the section.
func settledOn(t *testing.T, base *Section, bundles []olmtest.Bundle, subs ...string) (map[string]report.SubscriptionPreview, []policy.Violation, *Section) {
	t.Helper()
	repo := settleRepo(t, bundles, subs...)
	root := t.TempDir()
	gittest.Write(t, root, repo)
	tree, err := sources.OpenWorkTree(root, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	state := &ClusterState{KubeVersion: "1.36.3", CatalogSourcesListed: true,
		CatalogSources: []v1alpha1.CatalogSource{{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cat"}}}}
	res, rep := checkWith(t, tree, Options{
		Catalogs:      []CatalogSpec{{Name: "cat", Namespace: "team-a", Source: filepath.Join(root, "catalog", "cat.yaml")}},
		ClusterStates: map[string]*ClusterState{"": state},
		Base:          base,
	})
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	out := map[string]report.SubscriptionPreview{}
	for _, s := range rep.Subscriptions {
		out[s.Name] = s
	}
	return out, res.Violations, res.Sections[0].(*Section)
}

// TestPreviewAPIOfAWaitingPlan: an Automatic Subscription whose CSV requires an API that
// only a Manual Subscription's plan (waiting for approval) brings. The controllers make one
// plan per Subscription: the CSV is created without the CRD and stays Pending
// (RequirementsNotMet). The preview once judged the namespace's whole resolution as
// installed and predicted Succeeded (comparison test, seed 16 cases 1 and 89).
func TestPreviewAPIOfAWaitingPlan(t *testing.T) {
	alpha := olmtest.API{Group: "t.example.com", Version: "v1", Kind: "Alpha"}
	beta := olmtest.API{Group: "t.example.com", Version: "v1", Kind: "Beta"}
	subs, _ := settled(t, []olmtest.Bundle{
		{Package: "a", Version: "1.0.0", Owns: []olmtest.API{alpha}},
		{Package: "b", Version: "1.0.0", Owns: []olmtest.API{beta}, Requires: []olmtest.API{alpha}},
	}, catSub("a", "a", "Manual", ""), catSub("b", "b", "Automatic", ""))

	b := subs["b"]
	if b.Outcome == nil || b.Outcome.Phase != "Pending" || b.Outcome.Reason != "RequirementsNotMet" ||
		b.Outcome.Message != "one or more requirements couldn't be found: CustomResourceDefinition alphas.t.example.com: CRD is not present" {
		t.Errorf("b's outcome = %+v, want Pending/RequirementsNotMet for the missing CRD", b.Outcome)
	}
	want := &report.PreviewEnd{CurrentCSV: "b.v1.0.0", InstalledCSV: "b.v1.0.0",
		Outcome: &report.PreviewOutcome{CSV: "b.v1.0.0", Phase: "Pending", Reason: "RequirementsNotMet", Message: "one or more requirements couldn't be found"}}
	if diff := cmp.Diff(want, b.End); diff != "" {
		t.Errorf("b's end (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&report.PreviewEnd{CurrentCSV: "a.v1.0.0"}, subs["a"].End); diff != "" {
		t.Errorf("a's end (-want +got):\n%s", diff)
	}
}

// TestPreviewPathStopsAtAFailingCSV: an Automatic Subscription with a startingCSV below the
// head, every CSV of the path failing (the group targets one namespace, the CSVs support
// all namespaces only). On the cluster the first upgrade is made, the failed CSV it
// replaces stays, and the next resolution fails: that CSV is no Subscription's, as OLM
// says without fail-forward. The preview once predicted the whole path installed
// (comparison test, seed 16 cases 77 and 81).
func TestPreviewPathStopsAtAFailingCSV(t *testing.T) {
	alpha := olmtest.API{Group: "t.example.com", Version: "v1", Kind: "Alpha"}
	all := []string{"AllNamespaces"}
	subs, violations := settled(t, []olmtest.Bundle{
		{Package: "a", Version: "1.0.0", Owns: []olmtest.API{alpha}, InstallModes: all},
		{Package: "a", Version: "1.1.0", Replaces: "a.v1.0.0", Owns: []olmtest.API{alpha}, InstallModes: all},
		{Package: "a", Version: "1.2.0", Replaces: "a.v1.1.0", Owns: []olmtest.API{alpha}, InstallModes: all},
	}, catSub("a", "a", "Automatic", "a.v1.0.0"))

	end := subs["a"].End
	if end == nil {
		t.Fatal("no end")
	}
	if end.CurrentCSV != "a.v1.1.0" || end.InstalledCSV != "a.v1.1.0" || end.Outcome == nil || end.Outcome.Phase != "Failed" || end.Outcome.Reason != "UnsupportedOperatorGroup" {
		t.Errorf("end = %+v (outcome %+v), want a.v1.1.0 installed and Failed/UnsupportedOperatorGroup", end, end.Outcome)
	}
	if end.Reason != "ConstraintsNotSatisfiable" || !strings.Contains(end.Message, "clusterserviceversion a.v1.0.0 exists and is not referenced by a subscription") {
		t.Errorf("end's resolution = %s: %s, want ConstraintsNotSatisfiable naming a.v1.0.0 as no Subscription's", end.Reason, end.Message)
	}
	if !slices.ContainsFunc(violations, func(v policy.Violation) bool {
		return v.Rule == RuleResolutionFailed && strings.HasPrefix(v.Message, "Subscription team-a/a stops on a.v1.1.0: its next resolution fails (ConstraintsNotSatisfiable): constraints not satisfiable: ")
	}) {
		t.Errorf("no %s violation for the resolution after a.v1.1.0: %+v", RuleResolutionFailed, violations)
	}
}

// TestPreviewBaseEndsWhereThePathStops: a pull request's base is taken as installed where
// the controllers stop, not at the end of a path they never finish (the path of
// TestPreviewPathStopsAtAFailingCSV stops on a.v1.1.0, not a.v1.2.0).
func TestPreviewBaseEndsWhereThePathStops(t *testing.T) {
	alpha := olmtest.API{Group: "t.example.com", Version: "v1", Kind: "Alpha"}
	all := []string{"AllNamespaces"}
	bundles := []olmtest.Bundle{
		{Package: "a", Version: "1.0.0", Owns: []olmtest.API{alpha}, InstallModes: all},
		{Package: "a", Version: "1.1.0", Replaces: "a.v1.0.0", Owns: []olmtest.API{alpha}, InstallModes: all},
		{Package: "a", Version: "1.2.0", Replaces: "a.v1.1.0", Owns: []olmtest.API{alpha}, InstallModes: all},
	}
	_, _, base := settledOn(t, nil, bundles, catSub("a", "a", "Automatic", "a.v1.0.0"))
	subs, _, _ := settledOn(t, base, bundles, catSub("a", "a", "Automatic", "a.v1.0.0"))
	a := subs["a"]
	if a.Installed != "a.v1.1.0" || a.Change == nil || a.Change.From != "a.v1.1.0" {
		t.Errorf("installed %q, change %+v; want the base's a.v1.1.0, where its path stopped", a.Installed, a.Change)
	}
}
