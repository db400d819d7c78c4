package diff

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("fixture: %v\n%s", err, manifest)
	}
	return u
}

var (
	settings = inventory.Entry{Namespace: "team", Name: "settings", Kind: "ConfigMap", Version: "v1"}
	extra    = inventory.Entry{Namespace: "team", Name: "extra", Kind: "ConfigMap", Version: "v1"}
	old      = inventory.Entry{Namespace: "team", Name: "old", Kind: "ConfigMap", Version: "v1"}
	kept     = inventory.Entry{Namespace: "team", Name: "kept", Kind: "ConfigMap", Version: "v1"}
	vanished = inventory.Entry{Namespace: "team", Name: "vanished", Kind: "ConfigMap", Version: "v1"}
	plan     = inventory.Entry{Namespace: "team", Name: "ip", Group: "operators.coreos.com", Kind: "InstallPlan", Version: "v1alpha1"}
	widget   = inventory.Entry{Namespace: "team", Name: "w", Group: "example.com", Kind: "Widget", Version: "v1"}
	sub      = inventory.Entry{Namespace: "team", Name: "etcd", Group: "operators.coreos.com", Kind: "Subscription", Version: "v1alpha1"}
)

const (
	liveSettings  = "{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: team, resourceVersion: '7', uid: u1, managedFields: [{manager: kubectl}]}, data: {level: debug, size: '3'}}"
	afterSettings = "{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: team, resourceVersion: '7', uid: u1, managedFields: [{manager: olmsync}]}, data: {level: info, size: '3'}}"
)

// TestCompute classifies what each of the reconciler's steps would do, object by object.
func TestCompute(t *testing.T) {
	type row struct {
		Action  Action
		Object  string
		App     string
		Message string
		Fields  []string
		Rules   []string
	}
	live, after := obj(t, liveSettings), obj(t, afterSettings)
	applied := []apply.ObjectResult{
		{Entry: settings, Action: apply.Configured, Drift: []string{"data.level"}, Live: live, DryRun: after},
		{Entry: extra, Action: apply.Created},
		{Entry: sub, Action: apply.Unchanged},
		{Entry: widget, Action: apply.Waiting, Message: `Widget "team/w" waits for its CustomResourceDefinition: the API server does not serve example.com/v1, Kind=Widget yet`},
	}
	refused := apply.ObjectResult{Entry: extra, Action: apply.Failed, Message: `ConfigMap "team/extra": admission webhook said no`}
	skipped := apply.ObjectResult{Entry: widget, Action: apply.Skipped, Message: `Widget "team/w" not applied: an earlier stage failed`}
	gated := []GatedObject{{Entry: plan, Violations: []policy.Violation{
		{Rule: "OP010", Severity: policy.SeverityError, Message: "InstallPlans are OLM's to create", File: "team/installplan.yaml", Line: 1},
	}}}
	apps := map[string]string{settings.ID(): "team", extra.ID(): "team", sub.ID(): "ops", widget.ID(): "team", plan.ID(): "team"}
	pruned := []apply.PruneResult{
		{Entry: kept, Action: apply.Kept, Message: `ConfigMap "team/kept" kept: olmsync.dev/prune is "disabled"`},
		{Entry: old, Action: apply.Deleted, Message: `ConfigMap "team/old" would be deleted`},
		{Entry: vanished, Action: apply.Gone, Message: `ConfigMap "team/vanished" was already gone`},
	}
	stale := []inventory.Entry{kept, old, vanished}

	tests := []struct {
		name      string
		in        Input
		wantPrune bool
		want      []row
	}{{
		name: "changed, created, unchanged, waiting, gated, pruned and left",
		in:   Input{Applied: applied, Gated: gated, Apps: apps, Stale: stale, Prune: true, Pruned: pruned},
		want: []row{
			{Action: Changed, Object: `ConfigMap "team/settings"`, App: "team", Fields: []string{"data.level"}},
			{Action: Created, Object: `ConfigMap "team/extra"`, App: "team"},
			{Action: Unchanged, Object: `Subscription "team/etcd"`, App: "ops"},
			{Action: Waiting, Object: `Widget "team/w"`, App: "team", Message: "waits for its CustomResourceDefinition: the API server does not serve example.com/v1, Kind=Widget yet"},
			{Action: Gated, Object: `InstallPlan "team/ip"`, App: "team", Rules: []string{"OP010"}},
			{Action: Left, Object: `ConfigMap "team/kept"`, Message: `kept: olmsync.dev/prune is "disabled"`},
			{Action: Pruned, Object: `ConfigMap "team/old"`},
		},
		wantPrune: true,
	}, {
		name: "prune off: what is no longer rendered is left, unchecked",
		in:   Input{Applied: applied[1:2], Apps: apps, Stale: stale, Prune: false},
		want: []row{
			{Action: Created, Object: `ConfigMap "team/extra"`, App: "team"},
			{Action: Left, Object: `ConfigMap "team/kept"`, Message: "prune is off (spec.prune: false)"},
			{Action: Left, Object: `ConfigMap "team/old"`, Message: "prune is off (spec.prune: false)"},
			{Action: Left, Object: `ConfigMap "team/vanished"`, Message: "prune is off (spec.prune: false)"},
		},
	}, {
		name: "an object refused: the later stages skipped, nothing pruned",
		in:   Input{Applied: []apply.ObjectResult{refused, skipped}, Stale: []inventory.Entry{old}, Prune: true},
		want: []row{
			{Action: Failed, Object: `ConfigMap "team/extra"`, Message: "admission webhook said no"},
			{Action: Skipped, Object: `Widget "team/w"`, Message: "not applied: an earlier stage failed"},
			{Action: Left, Object: `ConfigMap "team/old"`, Message: "not pruned while an object is refused"},
		},
	}, {
		name: "a deletion the API server would refuse",
		in: Input{Stale: []inventory.Entry{old}, Prune: true, Pruned: []apply.PruneResult{
			{Entry: old, Action: apply.PruneFailed, Message: `delete ConfigMap "team/old": forbidden`}}},
		want:      []row{{Action: Failed, Object: `ConfigMap "team/old"`, Message: `delete ConfigMap "team/old": forbidden`}},
		wantPrune: true,
	}, {
		name: "a prune spec.pruneOptions refuses: every stale object left, saying why",
		in: Input{Applied: applied[2:3], Apps: apps, Stale: []inventory.Entry{old, vanished}, Prune: true,
			Refused: "prune refused: the revision would delete all 2 objects of the Sync; set spec.pruneOptions.allowEmpty to allow it"},
		want: []row{
			{Action: Unchanged, Object: `Subscription "team/etcd"`, App: "ops"},
			{Action: Left, Object: `ConfigMap "team/old"`, Message: "prune refused: the revision would delete all 2 objects of the Sync; set spec.pruneOptions.allowEmpty to allow it"},
			{Action: Left, Object: `ConfigMap "team/vanished"`, Message: "prune refused: the revision would delete all 2 objects of the Sync; set spec.pruneOptions.allowEmpty to allow it"},
		},
	}, {
		name:      "nothing stale: no prune",
		in:        Input{Applied: applied[2:3], Prune: true},
		want:      []row{{Action: Unchanged, Object: `Subscription "team/etcd"`}},
		wantPrune: false,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.PruneRuns(); got != tt.wantPrune {
				t.Errorf("PruneRuns() = %t, want %t", got, tt.wantPrune)
			}
			objs, err := Compute(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, o := range objs {
				r := row{Action: o.Action, Object: o.String(), App: o.App, Message: o.Message, Fields: o.Fields}
				for _, v := range o.Violations {
					r.Rules = append(r.Rules, v.Rule)
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeChangedHasADiff: a changed object carries the unified diff of the live
// object and the dry-run apply's answer.
func TestComputeChangedHasADiff(t *testing.T) {
	objs, err := Compute(Input{Applied: []apply.ObjectResult{
		{Entry: settings, Action: apply.Configured, Drift: []string{"data.level"}, Live: obj(t, liveSettings), DryRun: obj(t, afterSettings)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `--- live
+++ after apply
@@ -1,6 +1,6 @@
 apiVersion: v1
 data:
-  level: debug
+  level: info
   size: "3"
 kind: ConfigMap
 metadata:
`
	if diff := cmp.Diff(want, objs[0].Diff); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}

// TestUnified: the diff leaves out what Drift leaves out, and never shows a Secret's value.
func TestUnified(t *testing.T) {
	tests := []struct {
		name, live, after string
		want              []string // lines the diff has
		not               []string // strings it must not have
	}{{
		name:  "server-written metadata and status are left out",
		live:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, uid: u1, resourceVersion: '1', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: a}]}, data: {k: a}, status: {x: 1}}`,
		after: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, uid: u1, resourceVersion: '1', generation: 2, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: b}]}, data: {k: b}, status: {x: 2}}`,
		want:  []string{"-  k: a", "+  k: b"},
		not:   []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "status"},
	}, {
		name:  "an annotation OLM rewrites is left out",
		live:  `{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: ns, annotations: {olm.providedAPIs: A}}, spec: {targetNamespaces: [ns]}}`,
		after: `{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: ns, annotations: {olm.providedAPIs: B}}, spec: {targetNamespaces: [ns, m]}}`,
		want:  []string{"+  - m"},
		not:   []string{"providedAPIs"},
	}, {
		name: "a Secret: which values changed, never what they are",
		live: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns, labels: {a: '1'},
		        annotations: {kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"b2xk"}}', note: visible}},
		        data: {password: b2xk, user: YWRtaW4=, gone: eA==}}`,
		after: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns, labels: {a: '2'},
		        annotations: {kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"bmV3"}}', note: visible}},
		        data: {password: bmV3, user: YWRtaW4=, token: dG9r}}`,
		want: []string{`-  gone: '***'`, `-  password: '*** (before)'`, `+  password: '*** (after)'`, `+  token: '***'`, `   user: '***'`,
			`-    kubectl.kubernetes.io/last-applied-configuration: '*** (before)'`, `     note: visible`, `-    a: "1"`, `+    a: "2"`},
		not: []string{"b2xk", "bmV3", "YWRtaW4=", "dG9r", "eA=="},
	}, {
		name:  "a Secret's stringData is masked too",
		live:  `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {password: old}}`,
		after: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {password: new}}`,
		want:  []string{`-  password: '*** (before)'`, `+  password: '*** (after)'`},
		not:   []string{"old", "new"},
	}, {
		name:  "a ConfigMap's values are shown",
		live:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {password: old}}`,
		after: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {password: new}}`,
		want:  []string{"-  password: old", "+  password: new"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, after := obj(t, tt.live), obj(t, tt.after)
			liveCopy := live.DeepCopy()
			got, err := Unified(live, after)
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			for l := range strings.SplitSeq(got, "\n") {
				lines[l] = true
			}
			for _, w := range tt.want {
				if !lines[w] {
					t.Errorf("diff has no line %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("diff shows %q:\n%s", n, got)
				}
			}
			if diff := cmp.Diff(liveCopy.Object, live.Object); diff != "" {
				t.Errorf("Unified changed the live object (-before +after):\n%s", diff)
			}
		})
	}
}

// TestReport: the summary, the exit decision and both formats.
func TestReport(t *testing.T) {
	tests := []struct {
		name        string
		objs        []Object
		wantDiffers bool
		wantSummary string
	}{
		{"nothing", nil, false, "no objects: no differences"},
		{"unchanged and left", []Object{{Action: Unchanged}, {Action: Left}, {Action: Unchanged}}, false, "1 left, 2 unchanged: no differences"},
		{"one changed", []Object{{Action: Unchanged}, {Action: Changed}}, true, "1 changed, 1 unchanged: the cluster differs from the revision"},
		{"gated", []Object{{Action: Gated}}, true, "1 gated: the cluster differs from the revision"},
		{"waiting", []Object{{Action: Waiting}}, true, "1 waiting: the cluster differs from the revision"},
		{"pruned", []Object{{Action: Pruned}}, true, "1 pruned: the cluster differs from the revision"},
		{"failed", []Object{{Action: Failed}}, true, "1 failed: the cluster differs from the revision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReport(tt.objs)
			if r.Differs != tt.wantDiffers {
				t.Errorf("Differs = %t, want %t", r.Differs, tt.wantDiffers)
			}
			if got := r.summaryLine(); got != tt.wantSummary {
				t.Errorf("summary %q, want %q", got, tt.wantSummary)
			}
		})
	}
}

func TestReportFormats(t *testing.T) {
	objs, err := Compute(Input{
		Applied: []apply.ObjectResult{
			{Entry: settings, Action: apply.Configured, Drift: []string{"data.level"}, Live: obj(t, liveSettings), DryRun: obj(t, afterSettings)},
			{Entry: extra, Action: apply.Created},
		},
		Gated: []GatedObject{{Entry: plan, Violations: []policy.Violation{
			{Rule: "OP010", Message: "InstallPlans are OLM's to create", File: "team/installplan.yaml", Line: 1}}}},
		Apps:  map[string]string{settings.ID(): "team", extra.ID(): "team", plan.ID(): "team"},
		Stale: []inventory.Entry{old}, Prune: true,
		Pruned: []apply.PruneResult{{Entry: old, Action: apply.Deleted}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(objs)
	r.Sync, r.Revision, r.LastAppliedRevision, r.PolicyMode, r.Prune = "olmsync-system/platform", "main@sha1:2222", "main@sha1:1111", "enforce", true
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `Sync olmsync-system/platform at main@sha1:2222 (last applied: main@sha1:1111), policy enforce, prune on
changed    ConfigMap "team/settings" (app team): data.level
    --- live
    +++ after apply
    @@ -1,6 +1,6 @@
     apiVersion: v1
     data:
    -  level: debug
    +  level: info
       size: "3"
     kind: ConfigMap
     metadata:
created    ConfigMap "team/extra" (app team)
gated      InstallPlan "team/ip" (app team)
    OP010 (team/installplan.yaml:1): InstallPlans are OLM's to create
pruned     ConfigMap "team/old"

1 created, 1 changed, 1 pruned, 1 gated: the cluster differs from the revision
`
	if diff := cmp.Diff(want, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}

	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Sync    string
		Differs bool
		Summary map[string]int
		Objects []struct {
			Action, APIVersion, Kind, Namespace, Name, App, Diff string
			Fields                                               []string
			Violations                                           []Violation
		}
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Sync != r.Sync || !back.Differs || len(back.Objects) != 4 {
		t.Fatalf("JSON: %s", data)
	}
	if diff := cmp.Diff(map[string]int{"created": 1, "changed": 1, "pruned": 1, "gated": 1}, back.Summary); diff != "" {
		t.Errorf("JSON summary (-want +got):\n%s", diff)
	}
	ch, ip := back.Objects[0], back.Objects[2]
	if ch.Action != "changed" || ch.APIVersion != "v1" || ch.Namespace != "team" || ch.App != "team" ||
		!strings.Contains(ch.Diff, "+  level: info") || !cmp.Equal(ch.Fields, []string{"data.level"}) {
		t.Errorf("JSON changed object: %+v", ch)
	}
	if ip.APIVersion != "operators.coreos.com/v1alpha1" || len(ip.Violations) != 1 || ip.Violations[0].File != "team/installplan.yaml" {
		t.Errorf("JSON gated object: %+v", ip)
	}
}

// TestChanges: the fields of a changed object, each added, removed or changed, with what
// Drift leaves out left out and a Secret's values masked; Compute sets them.
func TestChanges(t *testing.T) {
	tests := []struct {
		name, live, after string
		want              []FieldChange
		not               []string // strings the changes must not hold
	}{{
		name: "added, removed and changed fields; server-written ones left out",
		live: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, resourceVersion: '1', labels: {keep: a, gone: x}},
		        data: {level: debug, size: '3'}, status: {x: 1}}`,
		after: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, resourceVersion: '2', labels: {keep: a, app.kubernetes.io/name: w}},
		        data: {level: info, size: '3', extra: {a: 1}}, status: {x: 2}}`,
		want: []FieldChange{
			{Path: "data.extra", Change: FieldAdded, After: map[string]any{"a": float64(1)}},
			{Path: "data.level", Change: FieldChanged, Live: "debug", After: "info"},
			{Path: "metadata.labels.app.kubernetes.io/name", Change: FieldAdded, After: "w"},
			{Path: "metadata.labels.gone", Change: FieldRemoved, Live: "x"},
		},
	}, {
		name:  "a list is compared as a whole",
		live:  `{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: ns}, spec: {targetNamespaces: [ns]}}`,
		after: `{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: ns}, spec: {targetNamespaces: [ns, m]}}`,
		want:  []FieldChange{{Path: "spec.targetNamespaces", Change: FieldChanged, Live: []any{"ns"}, After: []any{"ns", "m"}}},
	}, {
		name:  "a Secret: which values changed, never what they are",
		live:  `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, data: {password: b2xk, gone: eA==}, stringData: {user: admin}}`,
		after: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, data: {password: bmV3, token: dG9r}, stringData: {user: root}}`,
		want: []FieldChange{
			{Path: "data.gone", Change: FieldRemoved, Live: Mask},
			{Path: "data.password", Change: FieldChanged, Live: MaskBefore, After: MaskAfter},
			{Path: "data.token", Change: FieldAdded, After: Mask},
			{Path: "stringData.user", Change: FieldChanged, Live: MaskBefore, After: MaskAfter},
		},
		not: []string{"b2xk", "bmV3", "dG9r", "eA==", "admin", "root"},
	}, {
		name:  "no change",
		live:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, uid: a}, data: {k: v}}`,
		after: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, uid: b}, data: {k: v}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Changes(obj(t, tt.live), obj(t, tt.after))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			data, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.not {
				if strings.Contains(string(data), n) {
					t.Errorf("changes show %q: %s", n, data)
				}
			}
		})
	}
	objs, err := Compute(Input{Applied: []apply.ObjectResult{
		{Entry: settings, Action: apply.Configured, Drift: []string{"data.level"}, Live: obj(t, liveSettings), DryRun: obj(t, afterSettings)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []FieldChange{{Path: "data.level", Change: FieldChanged, Live: "debug", After: "info"}}; !cmp.Equal(want, objs[0].Changes) {
		t.Errorf("Compute's changes %+v, want %+v", objs[0].Changes, want)
	}
}
