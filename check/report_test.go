package check

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/report"
)

func TestReportAgainstBase(t *testing.T) {
	const installPlan = "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: ip}\n"
	const clusterRole = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: etcd-admin}\nrules: []\n"
	config := configTwoApps + "- {name: team-b, path: team-b, namespace: team-b}\n"

	baseFiles := passingRepo()
	baseFiles["olmsync.yaml"] = config
	baseFiles["team-a/installplan.yaml"] = installPlan // OP010 in both revisions
	baseFiles["team-b/subscription.yaml"] = strings.ReplaceAll(subscriptionEtcd, "etcd", "cert-manager")

	headFiles := passingRepo()
	headFiles["olmsync.yaml"] = config
	headFiles["team-a/installplan.yaml"] = "# moved down a line\n" + installPlan
	headFiles["team-a/rbac.yaml"] = clusterRole // OP011, new
	headFiles["team-a/subscription.yaml"] = strings.Replace(subscriptionEtcd, "singlenamespace-alpha", "clusterwide-alpha", 1)
	headFiles["team-b/subscription.yaml"] = "apiVersion: [broken\n" // team-b fails: its Subscription is not removed

	base := run(t, writeRepo(t, baseFiles), Options{})
	head := run(t, writeRepo(t, headFiles), Options{})
	r, err := Report(head, base, ReportOptions{Tool: report.Tool{Name: "olmsync", Version: "v0.0.1"}, FailOn: report.FailOnNew})
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, v := range r.Violations {
		got = append(got, v.Rule+" "+location(v.File, v.Line)+" "+string(v.Status))
	}
	// team-b's Subscription breaks OP005 in the base (no OperatorGroup in team-b); team-b
	// does not render in the head, so whether it still does is unknown, not resolved.
	want := []string{"OP010 team-a/installplan.yaml:2 pre-existing", "OP011 team-a/rbac.yaml:1 new", "OP005 team-b/subscription.yaml:1 unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	wantChanges := []report.Change{{
		Type:   report.ChangeModified,
		Object: report.ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-a", Name: "etcd"},
		App:    "team-a",
		File:   "team-a/subscription.yaml",
		Line:   1,
		Fields: []report.FieldChange{{Path: "spec.channel", Old: "singlenamespace-alpha", New: "clusterwide-alpha"}},
	}}
	if diff := cmp.Diff(wantChanges, r.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(r.Problems) != 1 || r.Problems[0].Base || r.Problems[0].App != "team-b" || r.Problems[0].File != "team-b/subscription.yaml" ||
		r.Problems[0].Status != report.StatusNew {
		t.Errorf("problems %+v", r.Problems)
	}
	// The failure is on the app too, new: team-b rendered in the base.
	var teamB *report.App
	for i := range r.Apps {
		if r.Apps[i].Name == "team-b" {
			teamB = &r.Apps[i]
		}
	}
	if teamB == nil || teamB.Error == nil || teamB.Error.File != "team-b/subscription.yaml" || teamB.Error.Line != 1 ||
		teamB.Error.Status != report.StatusNew || !strings.Contains(teamB.Error.Message, "team-b/subscription.yaml") {
		t.Errorf("team-b in apps: %+v", teamB)
	}
	if r.Base == nil || r.Summary.New != 1 || r.Summary.PreExisting != 1 || r.Summary.Unknown != 1 || r.Summary.Result != report.ResultIncomplete {
		t.Errorf("base %v, summary %+v", r.Base, r.Summary)
	}
}

func TestReportRules(t *testing.T) {
	res := run(t, writeRepo(t, passingRepo()), Options{})
	r, err := Report(res, nil, ReportOptions{ListObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]report.Rule{}
	for _, rule := range r.Rules {
		byID[rule.ID] = rule
	}
	op7 := byID["OP007"]
	if op7.HelpURI != RulesDocumentation+"#op007" || !strings.Contains(op7.Help, "The ADR") || op7.Severity != report.SeverityError ||
		len(op7.Kinds) != 1 || op7.Kinds[0] != "Subscription" {
		t.Errorf("OP007 in the catalog: %+v", op7)
	}
	if byID["OP901"].HelpURI != RulesDocumentation+"#the-waiver-rules" {
		t.Errorf("OP901 in the catalog: %+v", byID["OP901"])
	}
	wantObjects := []report.Object{
		{App: "cluster-scope", File: "cluster-scope/namespace.yaml", Line: 1, Object: report.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "team-a"}},
		{App: "cluster-scope", File: "cluster-scope/operatorgroup.yaml", Line: 1, Object: report.ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "team-a", Name: "team-a"}},
		{App: "team-a", File: "team-a/subscription.yaml", Line: 1, Object: report.ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-a", Name: "etcd"}},
	}
	if diff := cmp.Diff(wantObjects, r.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if r.Summary.Result != report.ResultPassed || r.Summary.Apps != 2 || r.Summary.Objects != 3 {
		t.Errorf("summary %+v", r.Summary)
	}
}
