package policy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// found is the part of a violation the engine tests compare; the Rego tests check messages.
type found struct {
	Rule     string
	Severity Severity
	Cluster  string
	App      string
	File     string
	Line     int
	Object   string
}

func foundOf(vs []Violation) []found {
	out := make([]found, 0, len(vs))
	for _, v := range vs {
		out = append(out, found{v.Rule, v.Severity, v.Cluster, v.App, v.File, v.Line, v.Object.String()})
	}
	return out
}

// adrRepository is a cluster laid out as the ADR wants it: no built-in rule fires.
func adrRepository() Input {
	return cluster("",
		clusterScopeApp(
			entry(namespaceObject("team-a"), "cluster-scope/base/core/namespaces/team-a/namespace.yaml", 1),
			entry(operatorGroup("team-a", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}),
				"cluster-scope/base/operators.coreos.com/operatorgroups/team-a/operatorgroup.yaml", 1),
			entry(subscription("openshift-operators", "cert-manager", "cert-manager"),
				"cluster-scope/base/operators.coreos.com/subscriptions/cert-manager/subscription.yaml", 1),
			entry(withSpec(manifest("operators.coreos.com/v1alpha1", "CatalogSource", "openshift-marketplace", "mine"),
				map[string]any{"sourceType": "grpc", "image": "quay.io/x/catalog:v1"}), "cluster-scope/base/catalogsource.yaml", 1),
			entry(crd("example.com", "Widget", "Namespaced"), "cluster-scope/base/crd.yaml", 1),
			entry(manifest("rbac.authorization.k8s.io/v1", "ClusterRole", "", "widget-admin"), "cluster-scope/base/clusterrole.yaml", 1),
		),
		individualApp("team-a", "team-a",
			entry(subscription("", "etcd", "etcd"), "team-a/subscription.yaml", 1),
			entry(manifest("apps/v1", "Deployment", "", "web"), "team-a/app.yaml", 1),
			entry(configMap("", "settings"), "team-a/app.yaml", 30),
			entry(manifest("example.com/v1", "Widget", "", "w"), "team-a/widget.yaml", 1),
		),
	)
}

func TestBuiltinRulesThroughTheEngine(t *testing.T) {
	e := newEngine(t, Options{})
	tests := []struct {
		name string
		in   Input
		want []found
	}{
		{"the ADR's layout passes", adrRepository(), []found{}},
		{
			"an individual app with its own OperatorGroup, a Subscription elsewhere and a ClusterRole",
			cluster("",
				clusterScopeApp(entry(namespaceObject("team-a"), "cs/ns.yaml", 1)),
				individualApp("team-a", "team-a",
					entry(operatorGroup("", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}), "team-a/all.yaml", 1),
					entry(subscription("team-b", "etcd", "etcd"), "team-a/all.yaml", 9),
					entry(manifest("rbac.authorization.k8s.io/v1", "ClusterRole", "", "etcd-admin"), "team-a/all.yaml", 20),
				),
			),
			[]found{
				{"OP001", SeverityError, "", "team-a", "team-a/all.yaml", 1, `OperatorGroup "team-a/team-a"`},
				{"OP005", SeverityError, "", "team-a", "team-a/all.yaml", 9, `Subscription "team-b/etcd"`},
				{"OP007", SeverityError, "", "team-a", "team-a/all.yaml", 9, `Subscription "team-b/etcd"`},
				{"OP011", SeverityError, "", "team-a", "team-a/all.yaml", 20, `ClusterRole "etcd-admin"`},
			},
		},
		{
			"OperatorGroup shapes, target namespaces and singletons",
			cluster("",
				clusterScopeApp(
					entry(operatorGroup("multi", "multi", map[string]any{"targetNamespaces": []any{"a", "b"}}), "cs/multi.yaml", 1),
					entry(operatorGroup("lonely", "lonely", map[string]any{"targetNamespaces": []any{"lonely"}}), "cs/lonely.yaml", 1),
					entry(operatorGroup("twice", "one", nil), "cs/twice.yaml", 1),
					entry(operatorGroup("twice", "two", map[string]any{}), "cs/twice.yaml", 7),
				),
			),
			[]found{
				{"OP003", SeverityError, "", "cluster-scope", "cs/lonely.yaml", 1, `OperatorGroup "lonely/lonely"`},
				{"OP002", SeverityError, "", "cluster-scope", "cs/multi.yaml", 1, `OperatorGroup "multi/multi"`},
				{"OP004", SeverityError, "", "cluster-scope", "cs/twice.yaml", 1, `OperatorGroup "twice/one"`},
				{"OP012", SeverityWarning, "", "cluster-scope", "cs/twice.yaml", 1, `OperatorGroup "twice/one"`},
				{"OP004", SeverityError, "", "cluster-scope", "cs/twice.yaml", 7, `OperatorGroup "twice/two"`},
				{"OP012", SeverityWarning, "", "cluster-scope", "cs/twice.yaml", 7, `OperatorGroup "twice/two"`},
			},
		},
		{
			"a global Subscription in an individual app, a CatalogSource, CSVs and an InstallPlan",
			cluster("",
				clusterScopeApp(
					entry(manifest("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "openshift-operators", "etcd.v1"), "cs/csv.yaml", 1),
				),
				individualApp("team-a", "team-a",
					entry(subscription("openshift-operators", "cert-manager", "cert-manager"), "team-a/sub.yaml", 1),
					entry(manifest("operators.coreos.com/v1alpha1", "CatalogSource", "", "mine"), "team-a/catalog.yaml", 1),
					entry(manifest("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "", "etcd.v1"), "team-a/csv.yaml", 1),
					entry(manifest("operators.coreos.com/v1alpha1", "InstallPlan", "", "install-x"), "team-a/ip.yaml", 1),
				),
			),
			[]found{
				{"OP009", SeverityWarning, "", "cluster-scope", "cs/csv.yaml", 1, `ClusterServiceVersion "openshift-operators/etcd.v1"`},
				{"OP008", SeverityError, "", "team-a", "team-a/catalog.yaml", 1, `CatalogSource "team-a/mine"`},
				{"OP008", SeverityError, "", "team-a", "team-a/catalog.yaml", 1, `CatalogSource "team-a/mine"`},
				{"OP009", SeverityError, "", "team-a", "team-a/csv.yaml", 1, `ClusterServiceVersion "team-a/etcd.v1"`},
				{"OP010", SeverityError, "", "team-a", "team-a/ip.yaml", 1, `InstallPlan "team-a/install-x"`},
				{"OP006", SeverityError, "", "team-a", "team-a/sub.yaml", 1, `Subscription "openshift-operators/cert-manager"`},
				{"OP007", SeverityError, "", "team-a", "team-a/sub.yaml", 1, `Subscription "openshift-operators/cert-manager"`},
			},
		},
		{
			"a meta-operator, with the config listing it",
			Input{
				Config: Config{MetaOperators: []string{"opendatahub-operator"}},
				Apps: []App{clusterScopeApp(
					entry(subscription("openshift-operators", "opendatahub-operator", "opendatahub-operator"), "cs/odh.yaml", 2),
				)},
			},
			[]found{{"OP013", SeverityError, "", "cluster-scope", "cs/odh.yaml", 2, `Subscription "openshift-operators/opendatahub-operator"`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := foundOf(evaluate(t, e, tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClustersAreIsolated: a rule that looks across objects sees only its own cluster. The
// OperatorGroup of cl1 does not serve cl2's Subscription, and the same namespace's groups
// in two clusters are not two groups in one namespace.
func TestClustersAreIsolated(t *testing.T) {
	e := newEngine(t, Options{})
	group := func(name string) Object {
		return entry(operatorGroup("team-a", name, map[string]any{"targetNamespaces": []any{"team-a"}}), "cs/"+name+".yaml", 1)
	}
	ns := entry(namespaceObject("team-a"), "cs/ns.yaml", 1)
	cl1 := cluster("cl1", clusterScopeApp(ns, group("og-1")))
	cl2 := cluster("cl2", clusterScopeApp(ns, group("og-2")), individualApp("team-b", "team-b",
		entry(subscription("", "etcd", "etcd"), "team-b/sub.yaml", 1)))
	cl3 := cluster("cl3", individualApp("team-a", "team-a", entry(subscription("", "etcd", "etcd"), "team-a/sub.yaml", 1)))

	got := foundOf(evaluate(t, e, cl1, cl2, cl3))
	want := []found{
		{"OP005", SeverityError, "cl3", "team-a", "team-a/sub.yaml", 1, `Subscription "team-a/etcd"`},
		{"OP005", SeverityError, "cl2", "team-b", "team-b/sub.yaml", 1, `Subscription "team-b/etcd"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	// Together in one cluster, the two groups clash.
	both := cluster("", clusterScopeApp(ns, group("og-1"), group("og-2")))
	if got := foundOf(evaluate(t, e, both)); len(got) != 2 || got[0].Rule != "OP004" || got[1].Rule != "OP004" {
		t.Errorf("one cluster with both groups: %v, want OP004 twice", got)
	}
}

func TestEvaluateRefusesAClusterTwice(t *testing.T) {
	e := newEngine(t, Options{})
	_, err := e.Evaluate(context.Background(), cluster("cl1"), cluster("cl2"), cluster("cl1"))
	if err == nil || !strings.Contains(err.Error(), `cluster "cl1" is given twice`) {
		t.Fatalf("err = %v", err)
	}
}

// TestEvaluationOrderIsDeterministic shuffles clusters, apps and objects: the violations
// come out the same.
func TestEvaluationOrderIsDeterministic(t *testing.T) {
	e := newEngine(t, Options{Waivers: []Waiver{{
		Rule: "OP001", Reason: "r", Object: WaiverObject{Kind: "OperatorGroup", Namespace: "team-0", Name: "og-0"},
	}}})
	clusters := benchmarkRepository(3, 12, 5)
	want := evaluate(t, e, clusters...)
	if len(want) < 20 {
		t.Fatalf("only %d violations; the repository should break many rules", len(want))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := make([]Input, len(clusters))
		for i, c := range clusters {
			apps := make([]App, len(c.Apps))
			for j, app := range c.Apps {
				app.Objects = append([]Object(nil), app.Objects...)
				rng.Shuffle(len(app.Objects), func(a, b int) { app.Objects[a], app.Objects[b] = app.Objects[b], app.Objects[a] })
				apps[j] = app
			}
			rng.Shuffle(len(apps), func(a, b int) { apps[a], apps[b] = apps[b], apps[a] })
			c.Apps = apps
			shuffled[i] = c
		}
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if diff := cmp.Diff(want, evaluate(t, e, shuffled...)); diff != "" {
			t.Fatalf("shuffled input gives other violations (-want +got):\n%s", diff)
		}
	}
}

func TestUserRules(t *testing.T) {
	e := newEngine(t, Options{Policies: []PolicySource{examplePolicies}})
	in := func(name string) Input {
		return cluster(name,
			clusterScopeApp(entry(operatorGroup("team-a", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}), "cs/og.yaml", 1),
				entry(namespaceObject("team-a"), "cs/ns.yaml", 1)),
			individualApp("team-a", "team-a", entry(withSpec(manifest("operators.coreos.com/v1alpha1", "Subscription", "", "etcd"),
				map[string]any{"name": "etcd", "source": "community-operators", "sourceNamespace": "openshift-marketplace"}),
				"team-a/sub.yaml", 4)),
			individualApp("empty", "empty"),
		)
	}
	got := foundOf(evaluate(t, e, in("dev"), in("prod")))
	want := []found{
		{"main", SeverityError, "dev", "", "", 0, ObjectRef{}.String()},
		{"main", SeverityError, "prod", "", "", 0, ObjectRef{}.String()},
		{"ACME001", SeverityError, "dev", "team-a", "team-a/sub.yaml", 4, `Subscription "team-a/etcd"`},
		{"ACME001", SeverityError, "prod", "team-a", "team-a/sub.yaml", 4, `Subscription "team-a/etcd"`},
		{"ACME002", SeverityWarning, "prod", "team-a", "team-a/sub.yaml", 4, `Subscription "team-a/etcd"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	rule, ok := e.Rule("ACME001")
	if !ok || !rule.Custom || rule.Title != "Subscriptions name their channel" || rule.File != "policy/testdata/policies/acme/channels.rego" {
		t.Errorf("catalog entry of ACME001 = %+v, %v", rule, ok)
	}
	if rule, ok := e.Rule("main"); !ok || rule.Severity != SeverityError || !rule.Custom {
		t.Errorf("catalog entry of main = %+v, %v", rule, ok)
	}
	if _, ok := e.Rule("OP001"); !ok {
		t.Error("the built-in rules are missing from the catalog")
	}
}

// TestUserRuleObjectForms: a result may name its object by reference (what
// data.olmsync.lib.ref builds), by the object entry of the input, or by the manifest;
// each is traced back to its app, file and line.
func TestUserRuleObjectForms(t *testing.T) {
	src := PolicySource{Root: "rules", FS: fstest.MapFS{"forms.rego": {Data: []byte(`package forms

# By the entry, iterating the input as rules do.
deny contains {"rule": "ENTRY", "msg": "entry", "object": entry} if {
	some app in input.apps
	some entry in app.objects
	entry.object.metadata.name == "shared"
}

# By the manifest, without saying which app: every app declaring it.
deny contains {"rule": "MANIFEST", "msg": "manifest", "object": entry.object} if {
	some app in input.apps
	some entry in app.objects
	entry.object.metadata.name == "shared"
	app.name == "one"
}

# By reference with an app.
deny contains {"rule": "REF", "msg": "ref", "object": {"app": "two", "kind": "ConfigMap", "namespace": "ns", "name": "shared"}} if true

# By reference to nothing in the input.
deny contains {"rule": "GHOST", "msg": "ghost", "object": {"kind": "ConfigMap", "namespace": "ns", "name": "ghost"}} if true

# One object named twice with one message: by reference, and by its entry (which also
# names the same object in app two, declared from the same file).
deny contains {"rule": "TWICE", "msg": "twice", "object": {"app": "one", "kind": "ConfigMap", "namespace": "ns", "name": "shared"}} if true

deny contains {"rule": "TWICE", "msg": "twice", "object": entry} if {
	some entry in input.apps[0].objects
}

# A reference whose namespace does not match.
deny contains {"rule": "WRONGNS", "msg": "wrong namespace", "object": {"kind": "ConfigMap", "namespace": "other", "name": "shared"}} if true
`)}}}
	e := newEngine(t, Options{Policies: []PolicySource{src}})
	shared := func() map[string]any { return configMap("ns", "shared") }
	got := foundOf(evaluate(t, e, cluster("",
		individualApp("one", "ns", entry(shared(), "base/cm.yaml", 3)),
		individualApp("two", "ns", entry(shared(), "base/cm.yaml", 3)),
	)))
	cm := `ConfigMap "ns/shared"`
	want := []found{
		{"GHOST", SeverityError, "", "", "", 0, `ConfigMap "ns/ghost"`},
		{"WRONGNS", SeverityError, "", "", "", 0, `ConfigMap "other/shared"`},
		{"ENTRY", SeverityError, "", "one", "base/cm.yaml", 3, cm},
		{"ENTRY", SeverityError, "", "two", "base/cm.yaml", 3, cm},
		{"MANIFEST", SeverityError, "", "one", "base/cm.yaml", 3, cm},
		{"MANIFEST", SeverityError, "", "two", "base/cm.yaml", 3, cm},
		{"REF", SeverityError, "", "two", "base/cm.yaml", 3, cm},
		{"TWICE", SeverityError, "", "one", "base/cm.yaml", 3, cm},
		{"TWICE", SeverityError, "", "two", "base/cm.yaml", 3, cm},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestPolicyErrorsNameFileAndLine: a user's rule folder that cannot be used is an error
// naming the file and line, never a silent pass.
func TestPolicyErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			"a parse error",
			map[string]string{"acme/bad.rego": "package acme\n\ndeny contains msg if {\n\tmsg := \"x\"\n"},
			[]string{"rules/acme/bad.rego:", "rego_parse_error"},
		},
		{
			"Rego v0 syntax",
			map[string]string{"old.rego": "package old\n\ndeny[msg] {\n\tmsg := \"x\"\n}\n"},
			[]string{"rules/old.rego:3", "rego_parse_error"},
		},
		{
			"an undefined function",
			map[string]string{"a.rego": "package a\n\ndeny contains msg if {\n\tmsg := nope(input.x)\n}\n"},
			[]string{"rules/a.rego:4", "undefined function nope"},
		},
		{
			"an unsafe variable",
			map[string]string{"a.rego": "package a\n\ndeny contains msg if {\n\tx == 1\n\tmsg := \"m\"\n}\n"},
			[]string{"rules/a.rego:4", "var x is unsafe"},
		},
		{
			"a rule that depends on itself",
			map[string]string{"a.rego": "package a\n\ndeny contains x if {\n\tsome x in deny\n}\n"},
			[]string{"rules/a.rego:", "rego_recursion_error"},
		},
		{
			"http.send is not available to rules",
			map[string]string{"leak.rego": "package leak\n\ndeny contains msg if {\n\tr := http.send({\"method\": \"GET\", \"url\": \"http://example.com\"})\n\tmsg := r.body\n}\n"},
			[]string{"rules/leak.rego:4", "undefined function http.send"},
		},
		{
			"opa.runtime (the environment) is not available to rules",
			map[string]string{"env.rego": "package env\n\ndeny contains msg if {\n\tmsg := opa.runtime().env.TOKEN\n}\n"},
			[]string{"rules/env.rego:4", "undefined function opa.runtime"},
		},
		{
			"the olmsync package namespace",
			map[string]string{"mine.rego": "package olmsync.rules.op001\n\ndeny contains \"x\" if true\n"},
			[]string{"rules/mine.rego:1", `package olmsync.rules.op001: the package namespace "olmsync" is reserved`},
		},
		{
			"a built-in rule's ID",
			map[string]string{"mine.rego": "# METADATA\n# custom:\n#   id: OP005\npackage mine\n\ndeny contains \"x\" if true\n"},
			[]string{"rules/mine.rego", "rule ID OP005 is a built-in rule's"},
		},
		{
			"a folder without rules",
			map[string]string{"README.md": "no rules here", "only_test.rego": "package x_test\n"},
			[]string{"rules: no .rego files"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, content := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(content)}
			}
			_, err := New(context.Background(), Options{Policies: []PolicySource{{Root: "rules", FS: fsys}}})
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PolicyError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMissingPolicyFolder(t *testing.T) {
	_, err := New(context.Background(), Options{Policies: []PolicySource{Dir("testdata/no-such-folder")}})
	var pe *PolicyError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "testdata/no-such-folder: read policy folder") {
		t.Fatalf("err = %v", err)
	}
}

// TestUnreadableResults: results that are not deny/warn results, and rules that fail while
// they run, are errors naming the rule's file; nothing is silently dropped.
func TestUnreadableResults(t *testing.T) {
	tests := []struct {
		name, rego string
		want       []string
	}{
		{"deny is a string", `deny := "no"`, []string{"rules/r.rego: r.deny: is \"no\", want a set of results"}},
		{"a result without msg", `deny contains {"message": "x"} if true`, []string{`r.deny: result {"message":"x"} has no "msg" string`}},
		{"a result whose object is a string", `deny contains {"msg": "x", "object": "cm"} if true`, []string{`"object" is not an object`}},
		{"a result whose rule is a number", `deny contains {"msg": "x", "rule": 7} if true`, []string{`"rule" is not a string`}},
		{"a number", `warn contains 7 if true`, []string{"r.warn: result 7 is neither a message nor an object"}},
		{"an empty message", `deny contains "" if true`, []string{"r.deny: a result is an empty message"}},
		{"a conflict while evaluating", "deny contains x if {\n\tx := f(1)\n}\n\nf(a) := 1 if a == 1\n\nf(a) := 2 if a == 1",
			[]string{"rules/r.rego:", "eval_conflict_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := PolicySource{Root: "rules", FS: fstest.MapFS{"r.rego": {Data: []byte("package r\n\n" + tt.rego + "\n")}}}
			e := newEngine(t, Options{Policies: []PolicySource{src}})
			_, err := e.Evaluate(context.Background(), adrRepository())
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PolicyError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestUndefinedUserRuleHidesNothing: a user's complete deny rule that is undefined yields
// nothing, and the built-in rules still report.
func TestUndefinedUserRuleHidesNothing(t *testing.T) {
	src := PolicySource{Root: "rules", FS: fstest.MapFS{"r.rego": {Data: []byte("package r\n\ndeny := {\"x\"} if input.nothing\n")}}}
	e := newEngine(t, Options{Policies: []PolicySource{src}})
	in := cluster("", individualApp("a", "a", entry(manifest("operators.coreos.com/v1alpha1", "InstallPlan", "", "ip"), "a/ip.yaml", 1)))
	got := foundOf(evaluate(t, e, in))
	if len(got) != 1 || got[0].Rule != "OP010" {
		t.Errorf("violations = %v, want OP010 only", got)
	}
}

func ExampleEngine_Evaluate() {
	ctx := context.Background()
	engine, err := New(ctx, Options{})
	if err != nil {
		panic(err)
	}
	og := map[string]any{
		"apiVersion": "operators.coreos.com/v1",
		"kind":       "OperatorGroup",
		"metadata":   map[string]any{"name": "team-a"},
		"spec":       map[string]any{"targetNamespaces": []any{"team-a", "team-b"}},
	}
	violations, err := engine.Evaluate(ctx, Input{
		Cluster: "cl1",
		Apps: []App{{
			Name: "team-a", Path: "apps/team-a", Namespace: "team-a",
			Objects: []Object{{Object: og, Source: Source{File: "apps/team-a/operatorgroup.yaml", Line: 1}}},
		}},
	})
	if err != nil {
		panic(err)
	}
	for _, v := range violations {
		fmt.Printf("%s:%d: %s %s: %s\n", v.File, v.Line, v.Severity, v.Rule, v.Message)
	}
	// Output:
	// apps/team-a/operatorgroup.yaml:1: error OP001: OperatorGroup "team-a/team-a" is declared in app "team-a", not in the cluster-scope app; declare OperatorGroups only in the cluster-scope app
	// apps/team-a/operatorgroup.yaml:1: error OP002: OperatorGroup "team-a/team-a" names 2 target namespaces (team-a, team-b); an OperatorGroup is either global (no targetNamespaces, no selector) or names exactly one target namespace
}
