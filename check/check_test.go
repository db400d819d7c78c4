package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

func TestRunPassing(t *testing.T) {
	res := run(t, writeRepo(t, passingRepo()), Options{})
	if !res.Complete() || len(res.Violations) != 0 {
		t.Fatalf("problems %v, violations %v", res.Problems, res.Violations)
	}
	if len(res.Inputs) != 1 || len(res.Inputs[0].Apps) != 2 {
		t.Fatalf("inputs: %+v", res.Inputs)
	}
	// The Subscription has no namespace: the policy input places it in the app's.
	sub := res.Inputs[0].Apps[1].Objects[0]
	if sub.Namespace != "team-a" || sub.Scope != policy.ScopeNamespaced || sub.Source != (policy.Source{File: "team-a/subscription.yaml", Line: 1}) {
		t.Errorf("subscription entry: namespace %q, scope %q, source %+v", sub.Namespace, sub.Scope, sub.Source)
	}
	if len(res.Rules) < 13 {
		t.Errorf("rule catalog has %d rules", len(res.Rules))
	}
}

func TestRunFindsViolationsPerCluster(t *testing.T) {
	// Two clusters: only cl1's cluster-scope app declares team-a's OperatorGroup, so the
	// same Subscription passes in cl1 and breaks OP005 in cl2.
	fs := passingRepo()
	fs["olmsync.yaml"] = `
apps:
- {name: cluster-scope, path: cluster-scope, cluster: cl1}
- {name: team-a, path: team-a, namespace: team-a, cluster: cl1}
- {name: team-a, path: team-a, namespace: team-a, cluster: cl2}
`
	res := run(t, writeRepo(t, fs), Options{})
	if len(res.Violations) != 1 {
		t.Fatalf("violations: %+v", res.Violations)
	}
	v := res.Violations[0]
	if v.Rule != "OP005" || v.Cluster != "cl2" || v.App != "team-a" || v.File != "team-a/subscription.yaml" || v.Line != 1 {
		t.Errorf("violation %+v", v)
	}
}

func TestPolicyConfigPerCluster(t *testing.T) {
	fs := passingRepo()
	fs["olmsync.yaml"] = configTwoApps + `
policy:
  marketplaceNamespace: marketplace
  operatorGroups:
  - {namespace: openshift-operators, name: global-operators, global: true}
  - {namespace: tools, name: tools, targetNamespaces: [tools], cluster: other}
  metaOperators: [odh]
`
	res := run(t, writeRepo(t, fs), Options{})
	want := policy.Config{
		MarketplaceNamespace:     "marketplace",
		GlobalOperatorsNamespace: "openshift-operators",
		OperatorGroups: []policy.ClusterOperatorGroup{
			{Namespace: "openshift-operators", Name: "global-operators", Global: true, TargetNamespaces: []string{}},
		},
		MetaOperators: []string{"odh"},
	}
	if diff := cmp.Diff(want, res.Inputs[0].Config); diff != "" {
		t.Errorf("config of the default cluster (-want +got):\n%s", diff)
	}

	// Groups listed for other clusters only leave this one with none, not the default.
	fs["olmsync.yaml"] = configTwoApps + "policy:\n  operatorGroups:\n  - {namespace: tools, name: tools, cluster: other}\n"
	res = run(t, writeRepo(t, fs), Options{})
	if groups := res.Inputs[0].Config.OperatorGroups; groups == nil || len(groups) != 0 {
		t.Errorf("groups of the default cluster: %#v, want none", groups)
	}
}

func TestRunSortsRenderProblems(t *testing.T) {
	fs := passingRepo()
	delete(fs, "olmsync.yaml")
	fs["argocd/cluster-scope.yaml"] = application("cluster-scope", "cluster-scope", "", "https://github.com/org/apps")
	fs["argocd/team-a.yaml"] = application("team-a", "team-a", "team-a", "https://github.com/org/apps")
	fs["argocd/gone.yaml"] = application("gone", "apps/gone", "gone", "https://github.com/org/apps")
	fs["argocd/elsewhere.yaml"] = application("elsewhere", "x", "x", "https://github.com/org/other")
	fs["olmsync.yaml"] = "repoURLs: [https://github.com/org/apps]\n"
	fs["cluster-scope/kustomization.yaml"] = clusterScopeKustomization + "commonLabels: {team: platform}\n"

	res := run(t, writeRepo(t, fs), Options{})
	if len(res.Problems) != 1 || res.Problems[0].File != "argocd/gone.yaml" || res.Problems[0].Line != 1 ||
		!strings.Contains(res.Problems[0].Message, `path "apps/gone" does not exist`) {
		t.Errorf("problems: %+v", res.Problems)
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.File)
	}
	if diff := cmp.Diff([]string{"cluster-scope/kustomization.yaml"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\n%+v", diff, res.Warnings)
	}
	// The Application of another repository is neither a problem nor a warning: it is
	// listed as not checked.
	if f := res.Render.Foreign; len(f) != 1 || f[0].Name != "elsewhere" || f[0].File != "argocd/elsewhere.yaml" {
		t.Errorf("foreign: %+v", f)
	}
	if ids := ruleIDs(res); len(ids) != 0 {
		t.Errorf("violations %v", ids)
	}
}

func TestRunBrokenAppIsOneProblem(t *testing.T) {
	// team-b's kustomization is broken and no other kustomization uses it: it is both a
	// discovery problem and an app that fails; the report says it once.
	fs := files{
		"cluster-scope/kustomization.yaml": clusterScopeKustomization,
		"cluster-scope/namespace.yaml":     namespaceTeamA,
		"cluster-scope/operatorgroup.yaml": operatorGroupTeamA,
		"team-a/kustomization.yaml":        "namespace: team-a\nresources: [subscription.yaml]\n",
		"team-a/subscription.yaml":         subscriptionEtcd,
		"team-b/kustomization.yaml":        "resources:\n- [oops\n",
	}
	res := run(t, writeRepo(t, fs), Options{})
	if len(res.Problems) != 1 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	p := res.Problems[0]
	if p.App != "team-b" || p.File != "team-b/kustomization.yaml" || p.Line != 2 {
		t.Errorf("problem %+v", p)
	}
	if len(res.Inputs[0].Apps) != 2 {
		t.Errorf("the apps that rendered are checked: %d apps in the input", len(res.Inputs[0].Apps))
	}
}

func TestRunBrokenConfig(t *testing.T) {
	fs := passingRepo()
	fs["olmsync.yaml"] = "apps:\n- {name: a, path: a}\n- {name: a, path: b}\n"
	res := run(t, writeRepo(t, fs), Options{})
	if res.Render != nil || len(res.Problems) != 1 || res.Problems[0].File != "olmsync.yaml" || res.Problems[0].Line != 3 {
		t.Errorf("render %v, problems %+v", res.Render, res.Problems)
	}
	r, err := Report(res, nil, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if report.ExitCode(r, report.FailOnAll) != report.ExitIncomplete {
		t.Errorf("exit code %d", report.ExitCode(r, report.FailOnAll))
	}
}

func TestRunUserRules(t *testing.T) {
	const channels = `
package acme.channels

import data.olmsync.lib

deny contains result if {
	some [i, j] in lib.olm.Subscription
	app := input.apps[i]
	entry := app.objects[j]
	entry.object.spec.channel != "stable"
	result := {"msg": "use the stable channel", "object": lib.ref(app, entry), "rule": "ACME001"}
}
`
	const broken = "package acme.broken\n\ndeny contains msg if {\n\tmsg := nope(input)\n}\n"
	tests := []struct {
		name         string
		repoRules    string
		cliRules     files
		folderRules  string // a rule folder of the repository the caller names (a Sync's spec.policy.rules)
		wantIDs      []string
		wantProblems []string
	}{
		{"rules listed in olmsync.yaml", channels, nil, "", []string{"ACME001"}, nil},
		{"rules given by the caller", "", files{"acme/channels.rego": channels}, "", []string{"ACME001"}, nil},
		{"a rule folder of the repository the caller names", "", nil, channels, []string{"ACME001"}, nil},
		{"a rule that does not compile", broken, nil, "", nil, []string{"policies/acme.rego:4"}},
		{"a named rule folder that does not compile", "", nil, broken, nil, []string{"more/rules/acme.rego:4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := passingRepo()
			// An InstallPlan breaks OP010: the built-in rules must report it in every case.
			fs["team-a/installplan.yaml"] = "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: ip}\nspec: {approval: Automatic, approved: true, clusterServiceVersionNames: [etcd.v1]}\n"
			if tt.repoRules != "" {
				fs["olmsync.yaml"] = configTwoApps + "policy:\n  rules: [policies]\n"
				fs["policies/acme.rego"] = tt.repoRules
			}
			var opts Options
			if tt.folderRules != "" {
				// Not listed in olmsync.yaml: found only because the caller names the folder.
				fs["more/rules/acme.rego"] = tt.folderRules
				opts.RuleFolders = []string{"more/rules"}
			}
			if tt.cliRules != nil {
				dir := t.TempDir()
				writeFiles(t, dir, tt.cliRules)
				opts.Policies = []policy.PolicySource{policy.Dir(dir)}
			}
			res := run(t, writeRepo(t, fs), opts)
			want := append([]string{"OP010"}, tt.wantIDs...)
			if diff := cmp.Diff(want, ruleIDs(res)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			var problems []string
			for _, p := range res.Problems {
				problems = append(problems, location(p.File, p.Line))
				if !strings.Contains(p.Message, "undefined function nope") {
					t.Errorf("problem message %q", p.Message)
				}
			}
			if diff := cmp.Diff(tt.wantProblems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunWaiversFromConfig(t *testing.T) {
	fs := passingRepo()
	fs["team-a/installplan.yaml"] = "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: ip}\n"
	fs["olmsync.yaml"] = configTwoApps + `
waivers:
- rule: OP010
  object: {kind: InstallPlan, namespace: team-a, name: ip}
  reason: migrating (OPS-1)
- rule: OP001
  object: {kind: OperatorGroup, namespace: team-b, name: nothing}
  reason: stale
`
	res := run(t, writeRepo(t, fs), Options{})
	var got []string
	for _, v := range res.Violations {
		got = append(got, v.Rule+" "+location(v.File, v.Line)+" waived="+map[bool]string{true: "yes", false: "no"}[v.Waived])
	}
	// The unused waiver is reported where it is written (OP901).
	want := []string{"OP901 olmsync.yaml:9 waived=no", "OP010 team-a/installplan.yaml:1 waived=yes"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// stage is a Stage for tests: it adds a violation about the first object it finds, and a
// section that adds a warning to the report.
type stage struct {
	err error
}

func (s *stage) Name() string { return "test-stage" }

func (s *stage) Run(_ context.Context, res *Result) (Section, error) {
	if s.err != nil {
		return nil, s.err
	}
	res.Rules = append(res.Rules, policy.Rule{ID: "OLM001", Title: "test", Severity: policy.SeverityError})
	res.Violations = append(res.Violations, policy.Violation{Rule: "OLM001", Severity: policy.SeverityError,
		Message: "would not resolve", App: "team-a", File: "team-a/subscription.yaml", Line: 1})
	return section{}, nil
}

type section struct{}

func (section) AddTo(r *report.Report) {
	r.Warnings = append(r.Warnings, report.Warning{Message: "from the stage"})
}

func TestStages(t *testing.T) {
	tree := writeRepo(t, passingRepo())
	res := run(t, tree, Options{Stages: []Stage{&stage{}}})
	r, err := Report(res, nil, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) != 1 || r.Violations[0].Rule != "OLM001" || len(r.Warnings) != 1 || r.Summary.Result != report.ResultFailed {
		t.Errorf("report: violations %+v, warnings %+v, result %s", r.Violations, r.Warnings, r.Summary.Result)
	}

	res = run(t, tree, Options{Stages: []Stage{&stage{err: errors.New("catalog unreachable")}}})
	if len(res.Problems) != 1 || res.Problems[0].Message != "test-stage: catalog unreachable" {
		t.Errorf("problems %+v", res.Problems)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, writeRepo(t, passingRepo()), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func application(name, path, namespace, repoURL string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ` + name + `
  namespace: argocd
spec:
  destination: {server: "https://kubernetes.default.svc", namespace: "` + namespace + `"}
  source: {repoURL: "` + repoURL + `", path: "` + path + `", targetRevision: main}
`
}
