package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseWaiveAnnotation(t *testing.T) {
	tests := []struct {
		value         string
		wantWaived    []AnnotationWaiver
		wantMalformed []string
	}{
		{"", nil, nil},
		{"OP013: reviewed in OPS-12", []AnnotationWaiver{{"OP013", "reviewed in OPS-12"}}, nil},
		{"OP005, OP007: shared namespace", []AnnotationWaiver{{"OP005", "shared namespace"}, {"OP007", "shared namespace"}}, nil},
		{"OP013: reviewed: limited by config", []AnnotationWaiver{{"OP013", "reviewed: limited by config"}}, nil},
		{
			"\n  OP012: ClusterLogging lives in openshift-logging (ADR exception)\n\nACME001,OP006 : agreed\n",
			[]AnnotationWaiver{
				{"OP012", "ClusterLogging lives in openshift-logging (ADR exception)"},
				{"ACME001", "agreed"}, {"OP006", "agreed"},
			},
			nil,
		},
		{"OP001: a\r\nOP002: b", []AnnotationWaiver{{"OP001", "a"}, {"OP002", "b"}}, nil},
		{"OP013 reviewed", nil, []string{"OP013 reviewed"}},
		{"OP013:", nil, []string{"OP013:"}},
		{"OP013:   ", nil, []string{"OP013:"}},
		{": no rule", nil, []string{": no rule"}},
		{"OP 13: spaced", nil, []string{"OP 13: spaced"}},
		{"OP005,,OP007: empty entry", nil, []string{"OP005,,OP007: empty entry"}},
		{"OP001: fine\nbroken line", []AnnotationWaiver{{"OP001", "fine"}}, []string{"broken line"}},
	}
	for _, tt := range tests {
		waived, malformed := ParseWaiveAnnotation(tt.value)
		if diff := cmp.Diff(tt.wantWaived, waived); diff != "" {
			t.Errorf("ParseWaiveAnnotation(%q) waived (-want +got):\n%s", tt.value, diff)
		}
		if diff := cmp.Diff(tt.wantMalformed, malformed); diff != "" {
			t.Errorf("ParseWaiveAnnotation(%q) malformed (-want +got):\n%s", tt.value, diff)
		}
	}
}

func TestExpired(t *testing.T) {
	day := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		lastDay, now time.Time
		want         bool
	}{
		{time.Time{}, fixedNow, false},
		{day, time.Date(2026, time.March, 14, 23, 59, 59, 0, time.UTC), false},
		{day, time.Date(2026, time.March, 15, 0, 0, 0, 0, time.UTC), true},
		{day, time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC), true},
		// 01:00 on the 15th at UTC+2 is still the 14th in UTC.
		{day, time.Date(2026, time.March, 15, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)), false},
		// The time of day of the last day is ignored.
		{day.Add(20 * time.Hour), time.Date(2026, time.March, 14, 22, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		if got := expired(tt.lastDay, tt.now); got != tt.want {
			t.Errorf("expired(%s, %s) = %v, want %v", tt.lastDay, tt.now, got, tt.want)
		}
	}
}

// waived is the part of a violation the waiver tests compare.
type waived struct {
	Rule     string
	Severity Severity
	Cluster  string
	File     string
	Line     int
	Object   string
	Waived   bool
	Reason   string
	Source   WaiverSource
	Expires  string
}

func waivedOf(vs []Violation) []waived {
	out := make([]waived, 0, len(vs))
	for _, v := range vs {
		out = append(out, waived{v.Rule, v.Severity, v.Cluster, v.File, v.Line, v.Object.String(), v.Waived, v.WaiverReason, v.WaiverSource, v.WaiverExpires})
	}
	return out
}

func TestAnnotationWaivers(t *testing.T) {
	e := newEngine(t, Options{Policies: []PolicySource{examplePolicies}})
	ns := entry(namespaceObject("team-a"), "cs/ns.yaml", 1)
	og := entry(annotated(operatorGroup("team-a", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}),
		WaiveAnnotation, "op001: team-a's admins own their group (OPS-7)"), "team-a/og.yaml", 1)
	sub := entry(annotated(withSpec(manifest("operators.coreos.com/v1alpha1", "Subscription", "team-b", "etcd"), map[string]any{"name": "etcd", "source": "community-operators", "sourceNamespace": "openshift-marketplace"}),
		WaiveAnnotation, "OP005, OP007: team-b's group is created by hand\nACME001: default channel is fine\nOP012: no longer needed\nOP013 reviewed"),
		"team-a/sub.yaml", 1)
	bad := entry(configMap("", "settings"), "team-a/cm.yaml", 1)
	bad.Object["metadata"].(map[string]any)["annotations"] = map[string]any{WaiveAnnotation: 5}
	got := waivedOf(evaluate(t, e, cluster("", clusterScopeApp(ns), individualApp("team-a", "team-a", og, sub, bad))))
	const (
		ogRef  = `OperatorGroup "team-a/team-a"`
		subRef = `Subscription "team-b/etcd"`
	)
	want := []waived{
		{RuleWaiverMalformed, SeverityError, "", "team-a/cm.yaml", 1, `ConfigMap "team-a/settings"`, false, "", "", ""},
		{"OP001", SeverityError, "", "team-a/og.yaml", 1, ogRef, true, "team-a's admins own their group (OPS-7)", WaiverFromAnnotation, ""},
		{"ACME001", SeverityError, "", "team-a/sub.yaml", 1, subRef, true, "default channel is fine", WaiverFromAnnotation, ""},
		{"OP005", SeverityError, "", "team-a/sub.yaml", 1, subRef, true, "team-b's group is created by hand", WaiverFromAnnotation, ""},
		{"OP007", SeverityError, "", "team-a/sub.yaml", 1, subRef, true, "team-b's group is created by hand", WaiverFromAnnotation, ""},
		{RuleWaiverUnused, SeverityWarning, "", "team-a/sub.yaml", 1, subRef, false, "", "", ""},
		{RuleWaiverMalformed, SeverityError, "", "team-a/sub.yaml", 1, subRef, false, "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestConfigWaivers(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, time.March, d, 0, 0, 0, 0, time.UTC) }
	subObject := WaiverObject{Kind: "Subscription", Namespace: "team-b", Name: "etcd"}
	tests := []struct {
		name   string
		waiver Waiver
		want   []waived
	}{
		{
			"a waiver without expiry",
			Waiver{Rule: "OP005", Object: subObject, Reason: "group made by hand"},
			[]waived{
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, true, "group made by hand", WaiverFromConfig, ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
		{
			"a waiver whose last day is today still holds",
			Waiver{Rule: "op005", Object: subObject, Reason: "r", Expires: day(15)},
			[]waived{
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, true, "r", WaiverFromConfig, "2026-03-15"},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
		{
			"an expired waiver waives nothing and is a violation where it is written",
			Waiver{Rule: "OP005", Object: subObject, Reason: "r", Expires: day(14), Source: Source{File: "olmsync.yaml", Line: 12}},
			[]waived{
				{RuleWaiverExpired, SeverityError, "", "olmsync.yaml", 12, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
		{
			"a waiver for another namespace matches nothing",
			Waiver{Rule: "OP005", Object: WaiverObject{Kind: "Subscription", Namespace: "team-a", Name: "etcd"}, Reason: "r",
				Source: Source{File: "olmsync.yaml", Line: 3}},
			[]waived{
				{RuleWaiverUnused, SeverityWarning, "", "olmsync.yaml", 3, `Subscription "team-a/etcd"`, false, "", "", ""},
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
		{
			"a waiver for another apiVersion matches nothing",
			Waiver{Rule: "OP007", Object: WaiverObject{APIVersion: "operators.coreos.com/v1", Kind: "Subscription", Namespace: "team-b", Name: "etcd"}, Reason: "r"},
			[]waived{
				{RuleWaiverUnused, SeverityWarning, "", "", 0, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
		{
			"a waiver for one cluster",
			Waiver{Rule: "OP007", Object: WaiverObject{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-b", Name: "etcd", Cluster: "cl1"}, Reason: "r"},
			[]waived{
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, true, "r", WaiverFromConfig, ""},
			},
		},
		{
			"a waiver for a cluster that does not have the violation",
			Waiver{Rule: "OP007", Object: WaiverObject{Kind: "Subscription", Namespace: "team-b", Name: "etcd", Cluster: "cl2"}, Reason: "r"},
			[]waived{
				{RuleWaiverUnused, SeverityWarning, "cl2", "", 0, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP005", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
				{"OP007", SeverityError, "cl1", "team-a/sub.yaml", 1, `Subscription "team-b/etcd"`, false, "", "", ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, Options{Waivers: []Waiver{tt.waiver}})
			sub := entry(subscription("team-b", "etcd", "etcd"), "team-a/sub.yaml", 1)
			cl1 := cluster("cl1", individualApp("team-a", "team-a", sub))
			cl2 := cluster("cl2", individualApp("team-a", "team-a", entry(configMap("", "x"), "team-a/cm.yaml", 1)))
			got := waivedOf(evaluate(t, e, cl1, cl2))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetaOperatorWaiver is OP013's life: always reported until a waiver records the
// review; when the waiver's date passes, both the Subscription and the waiver are reported.
func TestMetaOperatorWaiver(t *testing.T) {
	in := Input{
		Config: Config{MetaOperators: []string{"opendatahub-operator"}},
		Apps: []App{clusterScopeApp(entry(subscription("openshift-operators", "opendatahub-operator", "opendatahub-operator"),
			"cluster-scope/base/odh.yaml", 1))},
	}
	review := Waiver{
		Rule:   "OP013",
		Object: WaiverObject{Kind: "Subscription", Namespace: "openshift-operators", Name: "opendatahub-operator"},
		Reason: "reviewed 2026-01-10: the DataScienceCluster CRs are admin-only",
		Source: Source{File: "olmsync.yaml", Line: 20},
	}
	for _, tt := range []struct {
		name    string
		waivers []Waiver
		now     time.Time
		want    []string
	}{
		{"no review", nil, fixedNow, []string{"OP013 waived=false"}},
		{"reviewed", []Waiver{review}, fixedNow, []string{"OP013 waived=true"}},
		{"review expired", []Waiver{withExpiry(review, 2026, time.March, 1)}, fixedNow, []string{"OP013 waived=false", "OP900 waived=false"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, Options{Waivers: tt.waivers, Now: func() time.Time { return tt.now }})
			var got []string
			for _, v := range evaluate(t, e, in) {
				got = append(got, v.Rule+" waived="+map[bool]string{true: "true", false: "false"}[v.Waived])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func withExpiry(w Waiver, y int, m time.Month, d int) Waiver {
	w.Expires = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return w
}

// TestWaiverStateIsPerEvaluation: an engine is reused across evaluations (one per commit
// in the reconciler); a waiver used in one evaluation is not "used" in the next.
func TestWaiverStateIsPerEvaluation(t *testing.T) {
	e := newEngine(t, Options{Waivers: []Waiver{{Rule: "OP010", Reason: "r", Object: WaiverObject{Kind: "InstallPlan", Namespace: "a", Name: "ip"}}}})
	withPlan := cluster("", individualApp("a", "a", entry(manifest("operators.coreos.com/v1alpha1", "InstallPlan", "", "ip"), "a/ip.yaml", 1)))
	if got := waivedOf(evaluate(t, e, withPlan)); len(got) != 1 || !got[0].Waived {
		t.Fatalf("first evaluation: %v, want the InstallPlan waived", got)
	}
	if got := waivedOf(evaluate(t, e, cluster(""))); len(got) != 1 || got[0].Rule != RuleWaiverUnused {
		t.Fatalf("second evaluation, plan removed: %v, want the waiver reported unused", got)
	}
}

func TestInvalidConfigWaivers(t *testing.T) {
	good := Waiver{Rule: "OP001", Reason: "r", Object: WaiverObject{Kind: "OperatorGroup", Namespace: "a", Name: "a"}}
	tests := []struct {
		name   string
		change func(*Waiver)
		want   string
	}{
		{"no rule", func(w *Waiver) { w.Rule = " " }, "invalid waiver 2 (olmsync.yaml:9): no rule"},
		{"no reason", func(w *Waiver) { w.Reason = "" }, "invalid waiver 2 (olmsync.yaml:9): no reason"},
		{"no object", func(w *Waiver) { w.Object = WaiverObject{} }, "invalid waiver 2 (olmsync.yaml:9): no object kind, no object name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := good
			bad.Source = Source{File: "olmsync.yaml", Line: 9}
			tt.change(&bad)
			_, err := New(context.Background(), Options{Waivers: []Waiver{good, bad}})
			if !errors.Is(err, ErrInvalidWaiver) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWaiverRulesCannotBeWaived: an annotation cannot silence the findings about waivers;
// a line waiving OP901 is itself unused.
func TestWaiverRulesCannotBeWaived(t *testing.T) {
	e := newEngine(t, Options{})
	cm := entry(annotated(configMap("", "settings"), WaiveAnnotation, "OP901: quiet please\nOP009: stale"), "a/cm.yaml", 1)
	var got []string
	for _, v := range evaluate(t, e, cluster("", individualApp("a", "a", cm))) {
		if v.Waived {
			t.Errorf("%s is waived", v.Rule)
		}
		got = append(got, v.Rule+": "+v.Message)
	}
	want := []string{
		"OP901: olmsync.dev/waive waives OP009, but OP009 reports nothing about this object; remove OP009 from the annotation",
		"OP901: olmsync.dev/waive waives OP901, but OP901 reports nothing about this object; remove OP901 from the annotation",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestWaiveLaterFindings waives violations the rules did not find — a later stage's, as
// the OLM preview of check adds them — with the same annotations and config waivers:
// Findings leaves everything unwaived, Waive waives the stage's violations on the objects
// they name, and a waiver that nothing matches is still stale.
func TestWaiveLaterFindings(t *testing.T) {
	const reason = "the team-b group is migrated in OPS-9"
	e := newEngine(t, Options{Waivers: []Waiver{
		{Rule: "OLM003", Object: WaiverObject{Kind: "OperatorGroup", Namespace: "team-b", Name: "team-b"}, Reason: "migrated",
			Source: Source{File: "olmsync.yaml", Line: 4}},
		{Rule: "OLM001", Object: WaiverObject{Kind: "Subscription", Namespace: "team-b", Name: "gone"}, Reason: "stale",
			Source: Source{File: "olmsync.yaml", Line: 8}},
	}})
	sub := entry(annotated(subscription("team-b", "etcd", "etcd"), WaiveAnnotation, "olm002: "+reason+"\nOLM999: no such rule"),
		"cs/sub.yaml", 1)
	og := entry(operatorGroup("team-b", "team-b", map[string]any{"targetNamespaces": []any{"team-b"}}), "cs/og.yaml", 1)
	ns := entry(namespaceObject("team-b"), "cs/ns.yaml", 1)
	in := cluster("cl1", clusterScopeApp(ns, og, sub))

	found, err := e.Findings(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Fatalf("the rules find %v in a clean cluster", waivedOf(found))
	}
	subRef := ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-b", Name: "etcd"}
	ogRef := ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "team-b", Name: "team-b"}
	stage := []Violation{
		{Rule: "OLM002", Severity: SeverityError, Message: "fails", Cluster: "cl1", App: "cluster-scope", File: "cs/sub.yaml", Line: 1, Object: subRef},
		{Rule: "OLM003", Severity: SeverityError, Message: "fails", Cluster: "cl1", App: "cluster-scope", File: "cs/og.yaml", Line: 1, Object: ogRef},
		// The same object in another cluster has no annotation of this input's.
		{Rule: "OLM002", Severity: SeverityError, Message: "fails", Cluster: "cl2", App: "cluster-scope", File: "cs/sub.yaml", Line: 1, Object: subRef},
	}
	got, err := e.Waive([]Input{in}, append(found, stage...))
	if err != nil {
		t.Fatal(err)
	}
	const (
		subName = `Subscription "team-b/etcd"`
		ogName  = `OperatorGroup "team-b/team-b"`
	)
	want := []waived{
		{"OLM003", SeverityError, "cl1", "cs/og.yaml", 1, ogName, true, "migrated", WaiverFromConfig, ""},
		{"OLM002", SeverityError, "cl1", "cs/sub.yaml", 1, subName, true, reason, WaiverFromAnnotation, ""},
		{"OLM002", SeverityError, "cl2", "cs/sub.yaml", 1, subName, false, "", "", ""},
		{RuleWaiverUnused, SeverityWarning, "cl1", "cs/sub.yaml", 1, subName, false, "", "", ""},
		{RuleWaiverUnused, SeverityWarning, "", "olmsync.yaml", 8, `Subscription "team-b/gone"`, false, "", "", ""},
	}
	if diff := cmp.Diff(want, waivedOf(got)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	for _, v := range got {
		if v.Rule == RuleWaiverUnused && v.File == "cs/sub.yaml" && !strings.Contains(v.Message, "waives OLM999") {
			t.Errorf("the stale annotation waiver names another rule: %s", v.Message)
		}
	}
}
