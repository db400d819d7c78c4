package preview

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// fixtureCatalog is testdata/catalog: etcd (channels alpha and stable, v0.9.4 skipping
// v0.9.3), etcd-backup (needs an EtcdCluster), cert-manager (all namespaces only),
// widgets (needs an API nobody provides), etcd-cluster-wide (all namespaces, provides
// EtcdCluster too) and future (minKubeVersion 1.99.0).
var fixtureCatalog = CatalogSpec{Name: "community-operators", Source: filepath.Join("testdata", "catalog")}

// files is a small repository: path → content.
type files = map[string]string

func writeTree(t testing.TB, fs files) *sources.Tree {
	t.Helper()
	root := t.TempDir()
	gittest.Write(t, root, fs)
	tree, err := sources.OpenWorkTree(root, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// docs joins YAML documents with "---" lines.
func docs(d ...string) string { return strings.Join(d, "---\n") }

// sub is a Subscription of exactly eleven lines, so that the n-th document of a file of
// them starts on line 1+12n.
func sub(ns, name, pkg, channel, source, approval string) string {
	return fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: %s\n  namespace: %s\n"+
		"spec:\n  name: %s\n  channel: %s\n  source: %s\n  sourceNamespace: openshift-marketplace\n  installPlanApproval: %s\n",
		name, ns, pkg, channel, source, approval)
}

func namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n"
}

// group is an OperatorGroup of exactly seven lines; targets "" makes it global.
func group(ns, name, targets string) string {
	spec := "spec: {}\n"
	if targets != "" {
		spec = "spec:\n  targetNamespaces: [" + targets + "]\n"
	}
	if targets == "" {
		spec += "# global\n"
	}
	return "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n" + spec
}

// previewRepo has one Subscription per outcome, all in the cluster-scope app's
// subscriptions.yaml (document n on line 1+11n), and etcd in the app team-a.
func previewRepo() files {
	return files{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n- {name: team-a, path: team-a, namespace: team-a}\n",
		"cluster-scope/namespaces.yaml": docs(namespace("team-a"), namespace("team-b"), namespace("team-c"),
			namespace("team-d"), namespace("team-e"), namespace("team-f"), namespace("team-h"), namespace("team-i")),
		"cluster-scope/groups.yaml": docs(
			group("team-a", "team-a", "team-a"), // line 1
			group("team-b", "team-b", "team-b"), // 9: two groups in team-b
			group("team-b", "second", "team-b"), // 17
			group("team-c", "team-c", ""),       // 25: global, etcd supports one namespace only
			group("team-d", "team-d", "team-d"), // 33
			group("team-e", "team-e", "team-d"), // 41: targets team-d too: intersects team-d's
			group("team-f", "team-f", "team-f"), // 49
			group("team-h", "team-h", "team-h"), // 57
			group("team-i", "team-i", "team-i"), // 65
		),
		"cluster-scope/subscriptions.yaml": docs(
			sub("openshift-operators", "cert-manager", "cert-manager", "stable", "community-operators", "Automatic"), // 1
			sub("team-b", "etcd", "etcd", "stable", "community-operators", "Automatic"),                              // 13
			sub("team-c", "etcd", "etcd", "stable", "community-operators", "Automatic"),                              // 25
			sub("team-d", "etcd", "etcd", "stable", "community-operators", "Automatic"),                              // 37
			sub("team-e", "etcd", "etcd", "stable", "community-operators", "Automatic"),                              // 49
			sub("team-f", "etcd-backup", "etcd-backup", "stable", "community-operators", "Automatic"),                // 61
			sub("team-g", "etcd", "etcd", "stable", "community-operators", "Automatic"),                              // 73
			sub("team-h", "etcd", "etcd", "stable", "community-operators", "Manual"),                                 // 85
			sub("team-i", "widgets", "widgets", "stable", "community-operators", "Automatic"),                        // 97
			sub("team-i", "redhat", "quay-operator", "stable", "redhat-operators", "Automatic"),                      // 109
		),
		"team-a/subscription.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: etcd\nspec:\n  name: etcd\n  channel: stable\n  source: community-operators\n  sourceNamespace: openshift-marketplace\n",
	}
}

// outcome is what the tests compare of a previewed Subscription.
type outcome struct {
	Sub, Status, Reason, Next string
	Path                      []string
	Phase, CSVReason          string
	Deps                      []string
}

func outcomes(r *report.Report) []outcome {
	var out []outcome
	for _, s := range r.Subscriptions {
		o := outcome{Sub: s.ID(), Status: s.Resolution.Status, Reason: s.Resolution.Reason, Next: s.Resolution.Next, Path: s.Resolution.Path}
		if s.Outcome != nil {
			o.Phase, o.CSVReason = s.Outcome.Phase, s.Outcome.Reason
		}
		for _, d := range s.Dependencies {
			o.Deps = append(o.Deps, d.Name+" from "+d.Source)
		}
		out = append(out, o)
	}
	return out
}

// olmFinding is what the tests compare of a preview violation.
type olmFinding struct {
	Rule, File string
	Line       int
	Object     string
}

func olmFindings(r *report.Report) []olmFinding {
	var out []olmFinding
	for _, v := range r.Violations {
		if strings.HasPrefix(v.Rule, "OLM") {
			out = append(out, olmFinding{v.Rule, v.File, v.Line, v.Object.String()})
		}
	}
	return out
}

func checkWith(t testing.TB, tree *sources.Tree, opts Options) (*check.Result, *report.Report) {
	t.Helper()
	// No policy deadline: the built-in rules over the community catalog's 333 Subscriptions
	// ran past the default 5 s under -race on a loaded machine (CI, load average 30), which
	// says nothing about the preview. The deadline has tests of its own (policy, gitsync).
	res, err := check.Run(context.Background(), tree, check.Options{Stages: []check.Stage{New(opts)}, PolicyTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Report(res, nil, check.ReportOptions{FailOn: report.FailOnAll})
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
}

// TestPreviewOutcomes checks each outcome against an empty cluster (plus OpenShift's
// global group, olmsync.yaml's default), with every rule at its file and line.
func TestPreviewOutcomes(t *testing.T) {
	res, rep := checkWith(t, writeTree(t, previewRepo()), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	stable := []string{"etcd.v0.9.4"}
	succeeded := func(sub, next string) outcome {
		return outcome{Sub: sub, Status: "Resolved", Next: next, Path: []string{next}, Phase: "Succeeded", CSVReason: "InstallSucceeded"}
	}
	failed := func(sub, reason string) outcome {
		return outcome{Sub: sub, Status: "Resolved", Next: "etcd.v0.9.4", Path: stable, Phase: "Failed", CSVReason: reason}
	}
	want := []outcome{
		succeeded("openshift-operators/cert-manager", "cert-manager.v1.14.0"),
		succeeded("team-a/etcd", "etcd.v0.9.4"),
		// Not exactly one OperatorGroup: the Subscription controller resolves nothing there
		// and says why (plans.OperatorGroupsFailure); no plan, no CSV.
		{Sub: "team-b/etcd", Status: "Failed", Reason: "ErrorPreventedResolution", Path: []string{}},
		failed("team-c/etcd", "UnsupportedOperatorGroup"),
		succeeded("team-d/etcd", "etcd.v0.9.4"),
		failed("team-e/etcd", "InterOperatorGroupOwnerConflict"),
		{Sub: "team-f/etcd-backup", Status: "Resolved", Next: "etcd-backup.v1.0.0", Path: []string{"etcd-backup.v1.0.0"},
			Phase: "Succeeded", CSVReason: "InstallSucceeded", Deps: []string{"etcd.v0.9.4 from openshift-marketplace/community-operators"}},
		{Sub: "team-g/etcd", Status: "Failed", Reason: "ErrorPreventedResolution", Path: []string{}},
		{Sub: "team-h/etcd", Status: "Resolved", Next: "etcd.v0.9.4", Path: stable, Phase: "RequiresApproval", CSVReason: "RequiresApproval"},
		{Sub: "team-i/redhat", Status: "Unknown", Path: []string{}},
		{Sub: "team-i/widgets", Status: "Failed", Reason: "ConstraintsNotSatisfiable", Path: []string{}},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("subscriptions (-want +got):\n%s", diff)
	}
	const subs = "cluster-scope/subscriptions.yaml"
	wantFindings := []olmFinding{
		{"OLM001", subs, 13, "Subscription team-b/etcd"},
		{"OLM002", subs, 25, "Subscription team-c/etcd"},
		{"OLM002", subs, 49, "Subscription team-e/etcd"},
		{"OLM001", subs, 73, "Subscription team-g/etcd"},
		{"OLM001", subs, 97, "Subscription team-i/widgets"},
		{"OLM006", subs, 109, "Subscription team-i/redhat"},
	}
	if diff := cmp.Diff(wantFindings, olmFindings(rep)); diff != "" {
		t.Errorf("OLM violations (-want +got):\n%s", diff)
	}
	for _, v := range rep.Violations {
		if v.Rule == "OLM002" && v.Object.Name == "etcd" && v.Object.Namespace == "team-c" &&
			!strings.Contains(v.Message, "etcd.v0.9.4 would be Failed (UnsupportedOperatorGroup): AllNamespaces InstallModeType not supported") {
			t.Errorf("OLM002 message: %s", v.Message)
		}
		if v.Rule == "OLM001" && v.Object.Namespace == "team-g" && !strings.HasSuffix(v.Message, "(ErrorPreventedResolution): expected 1 OperatorGroup in the namespace, found 0") {
			t.Errorf("OLM001 message: %s", v.Message)
		}
		if v.Rule == "OLM001" && v.Object.Namespace == "team-i" && !strings.Contains(v.Message, "(ConstraintsNotSatisfiable): constraints not satisfiable") {
			t.Errorf("OLM001 message: %s", v.Message)
		}
	}

	groups := map[string]report.OperatorGroupPreview{}
	for _, g := range rep.OperatorGroups {
		groups[g.Namespace+"/"+g.Name] = g
	}
	if g := groups["team-d/team-d"]; !cmp.Equal(g.ProvidedAPIs, []string{"EtcdCluster.v1beta2.etcd.database.coreos.com"}) ||
		!cmp.Equal(g.TargetNamespaces, []string{"team-d"}) || g.File != "cluster-scope/groups.yaml" || g.Line != 33 || g.Origin != "git" {
		t.Errorf("team-d's group: %+v", g)
	}
	if g := groups["team-e/team-e"]; len(g.ProvidedAPIs) != 0 {
		t.Errorf("team-e's group lists %v; its etcd failed and added nothing", g.ProvidedAPIs)
	}
	if g := groups["openshift-operators/global-operators"]; g.Origin != "config" || !cmp.Equal(g.TargetNamespaces, []string{""}) ||
		!cmp.Equal(g.ProvidedAPIs, []string{"Certificate.v1.cert-manager.io"}) {
		t.Errorf("the global group: %+v", g)
	}
	if rep.Summary.Result != report.ResultFailed {
		t.Errorf("result %s", rep.Summary.Result)
	}
}

// TestPreviewAPIConflictWithGlobalGroup: an operator for all namespaces that provides
// EtcdCluster (in openshift-operators, whose global group intersects every group) takes
// the API first — new CSVs settle by namespace — so etcd in team-d fails with
// InterOperatorGroupOwnerConflict and its group lists nothing.
func TestPreviewAPIConflictWithGlobalGroup(t *testing.T) {
	repo := files{
		"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespaces.yaml": namespace("team-d"),
		"cluster-scope/groups.yaml":     group("team-d", "team-d", "team-d"),
		"cluster-scope/subscriptions.yaml": docs(
			sub("openshift-operators", "wide", "etcd-cluster-wide", "stable", "community-operators", "Automatic"),
			sub("team-d", "etcd", "etcd", "stable", "community-operators", "Automatic")),
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	want := []outcome{
		{Sub: "openshift-operators/wide", Status: "Resolved", Next: "etcd-cluster-wide.v2.0.0", Path: []string{"etcd-cluster-wide.v2.0.0"}, Phase: "Succeeded", CSVReason: "InstallSucceeded"},
		{Sub: "team-d/etcd", Status: "Resolved", Next: "etcd.v0.9.4", Path: []string{"etcd.v0.9.4"}, Phase: "Failed", CSVReason: "InterOperatorGroupOwnerConflict"},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("subscriptions (-want +got):\n%s", diff)
	}
	for _, g := range rep.OperatorGroups {
		if g.Name == "team-d" && len(g.Conflicts) != 0 {
			t.Errorf("team-d's group provides nothing, yet conflicts: %+v", g.Conflicts)
		}
		if g.Name == "global-operators" && !cmp.Equal(g.ProvidedAPIs, []string{"EtcdCluster.v1beta2.etcd.database.coreos.com"}) {
			t.Errorf("global group: %+v", g)
		}
	}
}

// TestPreviewClusterState reads a cluster state folder and checks what the change does to
// what the cluster runs: an upgrade path that skips a version, an installed CSV nothing
// replaces (OLM005), a group change that fails an installed CSV (OLM003, on the group), a
// static group's conflict (OLM003 on the Subscription, the group listing the conflict) and
// a minKubeVersion above the cluster's (OLM004).
func TestPreviewClusterState(t *testing.T) {
	state, err := LoadClusterState(filepath.Join("testdata", "cluster-state"))
	if err != nil {
		t.Fatal(err)
	}
	if state.KubeVersion != "1.30.0" || len(state.Namespaces) != 6 || len(state.OperatorGroups) != 5 || len(state.CSVs) != 4 || len(state.Subscriptions) != 4 {
		t.Fatalf("state: kube %q, %d namespaces, %d groups, %d CSVs, %d subscriptions", state.KubeVersion,
			len(state.Namespaces), len(state.OperatorGroups), len(state.CSVs), len(state.Subscriptions))
	}
	_, rep := checkWith(t, writeTree(t, clusterStateRepo()), Options{
		Catalogs:      []CatalogSpec{fixtureCatalog},
		ClusterStates: map[string]*ClusterState{"": state},
	})
	want := []outcome{
		{Sub: "team-j/future", Status: "Resolved", Next: "future.v1.0.0", Path: []string{"future.v1.0.0"}, Phase: "Pending", CSVReason: "RequirementsNotMet"},
		{Sub: "team-l/etcd", Status: "Failed", Reason: "NoUpgradePath", Path: []string{}, Phase: "Succeeded", CSVReason: "InstallSucceeded"},
		{Sub: "team-m/etcd", Status: "Failed", Reason: "ErrorPreventedResolution", Path: []string{}, Phase: "Failed", CSVReason: "TooManyOperatorGroups"},
		{Sub: "team-n/etcd", Status: "Resolved", Next: "etcd.v0.9.4", Path: []string{"etcd.v0.9.4"}, Phase: "Succeeded", CSVReason: "InstallSucceeded"},
		{Sub: "team-x/etcd", Status: "UpToDate", Path: []string{}, Phase: "Failed", CSVReason: "CannotModifyStaticOperatorGroupProvidedAPIs"},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("subscriptions (-want +got):\n%s", diff)
	}
	const subs, groups = "cluster-scope/subscriptions.yaml", "cluster-scope/groups.yaml"
	wantFindings := []olmFinding{
		{"OLM003", groups, 1, "OperatorGroup team-m/second"},
		{"OLM004", subs, 1, "Subscription team-j/future"},
		{"OLM005", subs, 13, "Subscription team-l/etcd"},
		{"OLM001", subs, 25, "Subscription team-m/etcd"},
		{"OLM003", subs, 49, "Subscription team-x/etcd"},
	}
	if diff := cmp.Diff(wantFindings, olmFindings(rep)); diff != "" {
		t.Errorf("OLM violations (-want +got):\n%s", diff)
	}
	for _, s := range rep.Subscriptions {
		if s.Name == "etcd" && s.Namespace == "team-n" {
			if !cmp.Equal(s.Resolution.Skipped, []string{"etcd.v0.9.3"}) || s.Installed != "etcd.v0.9.2" {
				t.Errorf("team-n: installed %s, skipped %v", s.Installed, s.Resolution.Skipped)
			}
			if got := previewText(t, rep); !strings.Contains(got, "upgrade path etcd.v0.9.2 → etcd.v0.9.4 (skips etcd.v0.9.3)") {
				t.Errorf("text report:\n%s", got)
			}
		}
		if s.Namespace == "team-j" && !strings.Contains(s.Outcome.Message, "minKubeVersion (1.99.0) > server version (1.30.0)") {
			t.Errorf("team-j: %+v", s.Outcome)
		}
	}
	var teamX *report.OperatorGroupPreview
	for i, g := range rep.OperatorGroups {
		if g.Name == "team-x" {
			teamX = &rep.OperatorGroups[i]
		}
	}
	wantConflicts := []report.GroupConflict{{Namespace: "team-y", Name: "team-y", APIs: []string{"EtcdCluster.v1beta2.etcd.database.coreos.com"}}}
	if teamX == nil || !teamX.Static || teamX.Origin != "cluster" || !cmp.Equal(teamX.Conflicts, wantConflicts) {
		t.Errorf("team-x's group: %+v", teamX)
	}
}

// clusterStateRepo is the repository of TestPreviewClusterState, checked against
// testdata/cluster-state.
func clusterStateRepo() files {
	return files{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/groups.yaml": docs(
			group("team-m", "second", "team-m"), // 1: a second group in team-m
			group("team-j", "team-j", "team-j"), // 9
		),
		"cluster-scope/subscriptions.yaml": docs(
			sub("team-j", "future", "future", "stable", "community-operators", "Automatic"), // 1
			sub("team-l", "etcd", "etcd", "stable", "community-operators", "Automatic"),     // 13
			sub("team-m", "etcd", "etcd", "stable", "community-operators", "Automatic"),     // 25
			sub("team-n", "etcd", "etcd", "stable", "community-operators", "Automatic"),     // 37
			sub("team-x", "etcd", "etcd", "stable", "community-operators", "Automatic"),     // 49
		),
	}
}

func previewText(t *testing.T, rep *report.Report) string {
	t.Helper()
	var b strings.Builder
	if err := report.Write(&b, rep, report.FormatText, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPreviewAgainstBase previews a pull request: the base's Subscriptions are taken as
// installed, so the head says what changes — a channel switch (alpha's head etcd.v0.9.2,
// then stable's path), a first install, an unchanged Subscription — and a group change
// that fails what the base installed (OLM003 on the group).
func TestPreviewAgainstBase(t *testing.T) {
	baseRepo := files{
		"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespaces.yaml": docs(namespace("team-a"), namespace("team-b")),
		"cluster-scope/groups.yaml":     docs(group("team-a", "team-a", "team-a"), group("team-b", "team-b", "team-b")),
		"cluster-scope/subscriptions.yaml": docs(
			sub("team-a", "etcd", "etcd", "alpha", "community-operators", "Automatic"),
			sub("team-b", "etcd", "etcd", "stable", "community-operators", "Automatic")),
	}
	headRepo := files{
		"olmsync.yaml":                  baseRepo["olmsync.yaml"],
		"cluster-scope/namespaces.yaml": baseRepo["cluster-scope/namespaces.yaml"],
		"cluster-scope/groups.yaml":     docs(group("team-a", "team-a", "team-a"), group("team-b", "team-b", "")), // team-b's turns global: line 9
		"cluster-scope/subscriptions.yaml": docs(
			sub("team-a", "etcd", "etcd", "stable", "community-operators", "Automatic"),
			sub("team-b", "etcd", "etcd", "stable", "community-operators", "Automatic"),
			sub("openshift-operators", "cert-manager", "cert-manager", "stable", "community-operators", "Automatic")),
	}
	stage := New(Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	base, err := check.Run(context.Background(), writeTree(t, baseRepo), check.Options{Stages: []check.Stage{stage}})
	if err != nil {
		t.Fatal(err)
	}
	baseSection := base.Sections[0].(*Section)
	headRes, rep := checkWith(t, writeTree(t, headRepo), Options{Catalogs: []CatalogSpec{fixtureCatalog}, Base: baseSection})
	if len(headRes.Problems) != 0 {
		t.Fatal(headRes.Problems)
	}
	type change struct{ Sub, Type, From, FromChannel, To, Installed string }
	var got []change
	for _, s := range rep.Subscriptions {
		got = append(got, change{s.ID(), s.Change.Type, s.Change.From, s.Change.FromChannel, s.Change.To, s.Installed})
	}
	want := []change{
		{"openshift-operators/cert-manager", "install", "", "", "cert-manager.v1.14.0", ""},
		{"team-a/etcd", "channelSwitch", "etcd.v0.9.2", "alpha", "etcd.v0.9.4", "etcd.v0.9.2"},
		{"team-b/etcd", "unchanged", "etcd.v0.9.4", "", "etcd.v0.9.4", "etcd.v0.9.4"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	wantFindings := []olmFinding{{"OLM003", "cluster-scope/groups.yaml", 9, "OperatorGroup team-b/team-b"}}
	if diff := cmp.Diff(wantFindings, olmFindings(rep)); diff != "" {
		t.Errorf("OLM violations (-want +got):\n%s", diff)
	}
	text := previewText(t, rep)
	for _, line := range []string{
		"channel switch alpha → stable: upgrades to etcd.v0.9.4 from community-operators, channel stable; upgrade path etcd.v0.9.2 → etcd.v0.9.4",
		"first install: installs cert-manager.v1.14.0 from community-operators, channel stable",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("text report lacks %q:\n%s", line, text)
		}
	}
}

// TestPreviewWaivers waives the OLM rules as the placement rules are waived — on the
// object with olmsync.dev/waive, and in olmsync.yaml — through check.Run: the waived
// violations stay in the report, marked, and do not fail it; the waivers used are not
// stale (OP901), while an annotation line and a config waiver that name a rule finding
// nothing on their object are.
func TestPreviewWaivers(t *testing.T) {
	annotated := strings.Replace(sub("team-c", "etcd", "etcd", "stable", "community-operators", "Automatic"), "  namespace: team-c\n",
		"  namespace: team-c\n  annotations:\n    olmsync.dev/waive: |\n      OLM002: team-c's global group is replaced in OPS-12\n      OLM042: no such rule\n", 1)
	repo := files{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n" +
			"waivers:\n" +
			"- rule: OLM001\n  object: {kind: Subscription, namespace: team-i, name: widgets}\n  reason: widgets ships its API in OPS-13\n" + // line 4
			"- rule: OLM003\n  object: {kind: OperatorGroup, namespace: team-c, name: team-c}\n  reason: nothing installed\n", // line 7
		"cluster-scope/namespaces.yaml": docs(namespace("team-c"), namespace("team-i")),
		"cluster-scope/groups.yaml":     docs(group("team-c", "team-c", ""), group("team-i", "team-i", "team-i")),
		"cluster-scope/subscriptions.yaml": docs(
			sub("team-i", "widgets", "widgets", "stable", "community-operators", "Automatic"), // 1
			annotated, // 13
		),
	}
	res, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	type finding struct {
		Rule, File string
		Line       int
		Waived     bool
		Source     report.WaiverSource
	}
	var got []finding
	for _, v := range rep.Violations {
		f := finding{Rule: v.Rule, File: v.File, Line: v.Line, Waived: v.Waived}
		if v.Waiver != nil {
			f.Source = v.Waiver.Source
		}
		got = append(got, f)
	}
	const subs = "cluster-scope/subscriptions.yaml"
	want := []finding{
		{"OP012", "cluster-scope/groups.yaml", 1, false, ""}, // team-c's global group: a warning
		{"OLM001", subs, 1, true, report.WaiverConfig},
		{"OLM002", subs, 13, true, report.WaiverAnnotation},
		{"OP012", subs, 13, false, ""}, // the annotation waives OLM002, not this
		{"OP901", subs, 13, false, ""},
		{"OP901", "olmsync.yaml", 7, false, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	for _, v := range rep.Violations {
		if v.Rule == "OP901" && v.File == subs && !strings.Contains(v.Message, "waives OLM042") {
			t.Errorf("the stale annotation waiver: %s", v.Message)
		}
	}
	if rep.Summary.Result != report.ResultPassed || rep.Summary.Waived != 2 || rep.Summary.Errors != 0 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

// TestPreviewCatalogFileInRepository: a catalog that is one file of the repository (a
// ConfigMap catalog) is read as that file, not as a folder with nothing in it.
func TestPreviewCatalogFileInRepository(t *testing.T) {
	repo := files{
		"olmsync.yaml":               "apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team-a, path: team-a, namespace: team-a}\npolicy:\n  marketplaceNamespace: olm\n  operatorGroups: []\n",
		"cluster-scope/ns.yaml":      namespace("team-a"),
		"cluster-scope/og.yaml":      group("team-a", "team-a", "team-a"),
		"team-a/subscription.yaml":   "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: widget\nspec:\n  name: widget\n  channel: stable\n  source: cat\n  sourceNamespace: olm\n",
		"catalogs/configmap.yaml":    widgetConfigMapCatalog,
		"catalogs/other/unused.yaml": "kind: nothing\n",
	}
	for _, src := range []string{"catalogs/configmap.yaml", "./catalogs/configmap.yaml"} {
		_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{{Name: "cat", Namespace: "olm", Source: src}}})
		want := []outcome{{Sub: "team-a/widget", Status: "Resolved", Next: "widget.v1.0.0", Path: []string{"widget.v1.0.0"}, Phase: "Succeeded", CSVReason: "InstallSucceeded"}}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Errorf("--catalog cat/olm=%s (-want +got):\n%s", src, diff)
		}
	}
}

// widgetConfigMapCatalog is OLM's ConfigMap catalog of one package, widget v1.0.0.
const widgetConfigMapCatalog = `apiVersion: v1
kind: ConfigMap
metadata: {name: cat, namespace: olm}
data:
  customResourceDefinitions: "[]"
  clusterServiceVersions: |
    - apiVersion: operators.coreos.com/v1alpha1
      kind: ClusterServiceVersion
      metadata: {name: widget.v1.0.0}
      spec:
        displayName: widget
        version: 1.0.0
        installModes:
        - {type: OwnNamespace, supported: true}
        - {type: SingleNamespace, supported: true}
        - {type: MultiNamespace, supported: false}
        - {type: AllNamespaces, supported: false}
        install:
          strategy: deployment
          spec:
            deployments:
            - name: widget
              spec:
                selector: {matchLabels: {app: widget}}
                template:
                  metadata: {labels: {app: widget}}
                  spec: {containers: [{name: widget, image: example.com/widget:1.0.0}]}
  packages: |
    - packageName: widget
      defaultChannel: stable
      channels: [{name: stable, currentCSV: widget.v1.0.0}]
`

// TestPreviewPlanApprovalPerSubscription: one Manual and one Automatic Subscription in a
// namespace. The Subscription controller makes one plan per Subscription, approved as its
// own Subscription says (plans.DecideApproval); the preview used to make both wait, as
// OLM's namespace-wide rule would. Also: a pin approves up to the pinned CSV.
func TestPreviewPlanApprovalPerSubscription(t *testing.T) {
	repo := files{
		"olmsync.yaml":                  "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespaces.yaml": namespace("team-a"),
		"cluster-scope/groups.yaml":     group("team-a", "team-a", "team-a"),
		"cluster-scope/subscriptions.yaml": docs(
			sub("team-a", "etcd", "etcd", "stable", "community-operators", "Manual"),
			sub("team-a", "future", "future", "stable", "community-operators", "Automatic")),
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	got := map[string]report.PreviewPlan{}
	phases := map[string]string{}
	for _, s := range rep.Subscriptions {
		if s.Plan != nil {
			got[s.Name] = *s.Plan
		}
		if s.Outcome != nil {
			phases[s.Name] = s.Outcome.Phase
		}
	}
	want := map[string]report.PreviewPlan{
		"future": {CSVNames: []string{"future.v1.0.0"}, Approval: "Automatic", Approved: true, Phase: "Complete", Why: "approved: installPlanApproval is Automatic"},
		"etcd":   {CSVNames: []string{"etcd.v0.9.4"}, Approval: "Manual", Phase: "RequiresApproval", Why: "waits for approval: installPlanApproval is Manual"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plans (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"future": "Succeeded", "etcd": "RequiresApproval"}, phases); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}
