package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
)

var nsCounter atomic.Int32

// uniqueNS is a fresh namespace name: envtest has no namespace controller, so a deleted
// namespace never goes away.
func uniqueNS(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%100000, nsCounter.Add(1))
}

// repo is the objects of a small OLM repository in namespace ns, with a CRD of its own
// (group g) and one of its custom resources.
func repo(t *testing.T, ns, g string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: %s}, data: {level: info}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: %s/v1, kind: Widget, metadata: {name: w, namespace: %s}, spec: {size: 3}}`, g, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: etcd, namespace: %s},
  spec: {name: etcd, channel: singlenamespace-alpha, source: community, sourceNamespace: %s}}`, ns, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: CatalogSource, metadata: {name: community, namespace: %s},
  spec: {sourceType: grpc, image: "quay.io/operatorhubio/catalog:latest"}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: %s}, spec: {targetNamespaces: [%s]}}`, ns, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: %s-reader}, rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]}`, ns)),
		crd(t, g, "Widget", "widgets"),
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)),
	}
}

// crd is a namespaced CRD of one kind with a free-form spec.
func crd(t *testing.T, group, kind, plural string) *unstructured.Unstructured {
	return obj(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: %[2]s, plural: %[3]s, singular: %[4]s, listKind: %[2]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, kind, plural, strings.ToLower(kind)))
}

func newApplier(t *testing.T, env *testenv.Env, sync string) *Applier {
	t.Helper()
	// A client of its own: the RESTMapper must learn of CRDs created during the test.
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Applier{Client: c, Owner: types.NamespacedName{Namespace: "olmsync-system", Name: sync}, CRDTimeout: 20 * time.Second}
}

type actionOf struct {
	ID     string
	Stage  Stage
	Action Action
}

func actions(res *Result) []actionOf {
	var out []actionOf
	for _, o := range res.Objects {
		out = append(out, actionOf{o.Entry.ID(), o.Stage, o.Action})
	}
	return out
}

func mustApply(t *testing.T, a *Applier, objs []*unstructured.Unstructured) *Result {
	t.Helper()
	res, err := a.Apply(context.Background(), objs)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return res
}

func get(t *testing.T, c client.Client, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := kindObj(apiVersion, kind, ns, name)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

func TestApplyInStagesThenNothingToDo(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("staged"), uniqueNS("g")+".example.com"
	a := newApplier(t, env, "platform")

	res := mustApply(t, a, repo(t, ns, g))
	want := []actionOf{
		{"_" + ns + "__Namespace", StageClusterSetup, Created},
		{"_widgets." + g + "_apiextensions.k8s.io_CustomResourceDefinition", StageClusterSetup, Created},
		{"_" + ns + "-reader_rbac.authorization.k8s.io_ClusterRole", StageClusterSetup, Created},
		{ns + "_og_operators.coreos.com_OperatorGroup", StageOLMSetup, Created},
		{ns + "_community_operators.coreos.com_CatalogSource", StageOLMSetup, Created},
		{ns + "_etcd_operators.coreos.com_Subscription", StageSubscriptions, Created},
		{ns + "_settings__ConfigMap", StageRest, Created},
		// The CRD applied in the first stage was waited for, so its custom resource went in.
		{ns + "_w_" + g + "_Widget", StageRest, Created},
	}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("first apply (-want +got):\n%s", diff)
	}
	if got := res.Applied().Len(); got != len(want) {
		t.Errorf("Applied() has %d entries, want %d", got, len(want))
	}

	cm := get(t, a.Client, "v1", "ConfigMap", ns, "settings")
	if cm.GetLabels()[olmsyncv1alpha1.SyncNameLabel] != "platform" || cm.GetLabels()[olmsyncv1alpha1.SyncNamespaceLabel] != "olmsync-system" {
		t.Errorf("labels = %v, want the Sync's name and namespace", cm.GetLabels())
	}
	if mf := cm.GetManagedFields(); len(mf) != 1 || mf[0].Manager != olmsyncv1alpha1.FieldManager || mf[0].Operation != "Apply" {
		t.Errorf("managedFields = %+v, want one server-side apply by %q", mf, olmsyncv1alpha1.FieldManager)
	}

	// Each result carries the object as the API server answered, for the health step.
	for _, o := range res.Objects {
		if o.Live == nil || o.Live.GetUID() == "" || o.Live.GetName() != o.Entry.Name {
			t.Errorf("first apply: %s has no live object: %v", o.Entry, o.Live)
		}
	}

	// The same objects again: every one Unchanged, and nothing written.
	before := cm.GetResourceVersion()
	res = mustApply(t, a, repo(t, ns, g))
	for _, o := range res.Objects {
		if o.Action != Unchanged {
			t.Errorf("second apply: %s %s (drift %v), want Unchanged", o.Entry, o.Action, o.Drift)
		}
		if o.Live == nil || o.Live.GetResourceVersion() == "" {
			t.Errorf("second apply: %s has no live object", o.Entry)
		}
	}
	if after := get(t, a.Client, "v1", "ConfigMap", ns, "settings").GetResourceVersion(); after != before {
		t.Errorf("an unchanged object was written: resourceVersion %s -> %s", before, after)
	}
}

// olm plays OLM: it writes status and its own annotations and labels, the way OLM's
// controllers do (updates under their own field manager).
func olm(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	og := get(t, c, "operators.coreos.com/v1", "OperatorGroup", ns, "og")
	ann := og.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["olm.providedAPIs"] = "EtcdCluster.v1beta2.etcd.database.coreos.com"
	og.SetAnnotations(ann)
	if err := c.Update(ctx, og, client.FieldOwner("olm")); err != nil {
		t.Fatalf("olm: update OperatorGroup: %v", err)
	}
	og = get(t, c, "operators.coreos.com/v1", "OperatorGroup", ns, "og")
	_ = unstructured.SetNestedStringSlice(og.Object, []string{ns}, "status", "namespaces")
	_ = unstructured.SetNestedField(og.Object, "2026-01-01T00:00:00Z", "status", "lastUpdated")
	if err := c.Status().Update(ctx, og, client.FieldOwner("olm")); err != nil {
		t.Fatalf("olm: update OperatorGroup status: %v", err)
	}

	sub := get(t, c, "operators.coreos.com/v1alpha1", "Subscription", ns, "etcd")
	labels := sub.GetLabels()
	labels["operators.coreos.com/etcd."+ns] = ""
	sub.SetLabels(labels)
	if err := c.Update(ctx, sub, client.FieldOwner("olm")); err != nil {
		t.Fatalf("olm: update Subscription: %v", err)
	}
	sub = get(t, c, "operators.coreos.com/v1alpha1", "Subscription", ns, "etcd")
	_ = unstructured.SetNestedField(sub.Object, "AtLatestKnown", "status", "state")
	_ = unstructured.SetNestedField(sub.Object, "etcdoperator.v0.9.4", "status", "installedCSV")
	_ = unstructured.SetNestedField(sub.Object, "2026-01-01T00:00:00Z", "status", "lastUpdated")
	if err := c.Status().Update(ctx, sub, client.FieldOwner("olm")); err != nil {
		t.Fatalf("olm: update Subscription status: %v", err)
	}
	nsObj := get(t, c, "v1", "Namespace", "", ns)
	labels = nsObj.GetLabels()
	labels["olm.operatorgroup.uid/1b7e"] = ""
	nsObj.SetLabels(labels)
	if err := c.Update(ctx, nsObj, client.FieldOwner("olm")); err != nil {
		t.Fatalf("olm: update Namespace: %v", err)
	}
}

func TestWhatOLMWritesIsNotDrift(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("olmwrites"), uniqueNS("g")+".example.com"
	a := newApplier(t, env, "platform")
	objs := repo(t, ns, g)
	// Git sets the annotation OLM rewrites: OLM's value must still not count as drift.
	for _, o := range objs {
		if o.GetKind() == "OperatorGroup" {
			o.SetAnnotations(map[string]string{"olm.providedAPIs": ""})
		}
	}
	mustApply(t, a, objs)
	olm(t, a.Client, ns)

	res := mustApply(t, a, objs)
	for _, o := range res.Objects {
		if o.Action != Unchanged {
			t.Errorf("after OLM's writes: %s %s (drift %v), want Unchanged", o.Entry, o.Action, o.Drift)
		}
	}
	// And OLM's writes are still there: olmsync took none of them away.
	sub := get(t, a.Client, "operators.coreos.com/v1alpha1", "Subscription", ns, "etcd")
	if state, _, _ := unstructured.NestedString(sub.Object, "status", "state"); state != "AtLatestKnown" {
		t.Errorf("Subscription status.state = %q after apply, want OLM's AtLatestKnown", state)
	}
	if _, ok := sub.GetLabels()["operators.coreos.com/etcd."+ns]; !ok {
		t.Errorf("OLM's label on the Subscription is gone: %v", sub.GetLabels())
	}
}

func TestDriftIsCorrected(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("drift"), uniqueNS("g")+".example.com"
	a := newApplier(t, env, "platform")
	mustApply(t, a, repo(t, ns, g))

	// A person edits the ConfigMap and the OperatorGroup with kubectl edit.
	ctx := context.Background()
	cm := get(t, a.Client, "v1", "ConfigMap", ns, "settings")
	_ = unstructured.SetNestedField(cm.Object, "debug", "data", "level")
	if err := a.Client.Update(ctx, cm, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	og := get(t, a.Client, "operators.coreos.com/v1", "OperatorGroup", ns, "og")
	// targetNamespaces is a set: under server-side apply an element someone else adds is
	// theirs, not drift; an element of Git's that they remove is.
	_ = unstructured.SetNestedStringSlice(og.Object, []string{"default"}, "spec", "targetNamespaces")
	if err := a.Client.Update(ctx, og, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	dry, err := a.DryRun(ctx, repo(t, ns, g))
	if err != nil {
		t.Fatal(err)
	}
	// The dry run keeps the server's answer next to the live object: Git's value and the
	// person's.
	for _, o := range dry.With(Configured) {
		if o.Entry.Kind != "ConfigMap" {
			continue
		}
		after, _, _ := unstructured.NestedString(o.DryRun.Object, "data", "level")
		before, _, _ := unstructured.NestedString(o.Live.Object, "data", "level")
		if after != "info" || before != "debug" {
			t.Errorf("dry run of the ConfigMap: data.level %q live, %q after the apply; want debug, info", before, after)
		}
	}
	res := mustApply(t, a, repo(t, ns, g))
	for _, o := range res.Objects {
		if o.DryRun != nil {
			t.Errorf("Apply kept the dry-run answer of %s", o.Entry)
		}
	}
	for _, r := range []*Result{dry, res} {
		got := map[string][]string{}
		for _, o := range r.With(Configured) {
			got[o.Entry.ID()] = o.Drift
		}
		want := map[string][]string{
			ns + "_settings__ConfigMap":                   {"data.level"},
			ns + "_og_operators.coreos.com_OperatorGroup": {"spec.targetNamespaces"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("configured (dry run %v) (-want +got):\n%s", r.DryRun, diff)
		}
		if n := len(r.With(Unchanged)); n != 6 {
			t.Errorf("dry run %v: %d unchanged, want 6", r.DryRun, n)
		}
	}
	if level, _, _ := unstructured.NestedString(get(t, a.Client, "v1", "ConfigMap", ns, "settings").Object, "data", "level"); level != "info" {
		t.Errorf("data.level = %q after apply, want Git's %q", level, "info")
	}
	targets, _, _ := unstructured.NestedStringSlice(get(t, a.Client, "operators.coreos.com/v1", "OperatorGroup", ns, "og").Object, "spec", "targetNamespaces")
	if !slices.Contains(targets, ns) {
		t.Errorf("targetNamespaces = %v after apply, want Git's %q back", targets, ns)
	}
	if res := mustApply(t, a, repo(t, ns, g)); len(res.With(Unchanged)) != len(res.Objects) {
		t.Errorf("after correcting drift: %v, want all Unchanged", actions(res))
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("dryrun"), uniqueNS("g")+".example.com"
	a := newApplier(t, env, "platform")
	res, err := a.DryRun(context.Background(), repo(t, ns, g))
	if err != nil {
		t.Fatal(err)
	}
	if !res.DryRun {
		t.Error("Result.DryRun = false")
	}
	// Nothing exists yet, so nothing can be dry-run applied against the API server's
	// schema either: everything would be created, the custom resource waits for its CRD.
	wantCreated := 7
	if got := len(res.With(Created)); got != wantCreated {
		t.Errorf("dry run: %v, want %d Created", actions(res), wantCreated)
	}
	if w := res.With(Waiting); len(w) != 1 || w[0].Entry.Kind != "Widget" {
		t.Errorf("dry run waiting = %v, want the Widget", w)
	}
	ns0 := kindObj("v1", "Namespace", "", ns)
	if err := a.Client.Get(context.Background(), client.ObjectKeyFromObject(ns0), ns0); err == nil {
		t.Errorf("dry run created namespace %s", ns)
	}
}

func TestCustomResourceWaitsForTheOperatorsCRD(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("waitcrd"), uniqueNS("op")+".example.com"
	a := newApplier(t, env, "platform")
	objs := []*unstructured.Unstructured{
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: %s}, spec: {targetNamespaces: [%s]}}`, ns, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: gizmo, namespace: %s},
  spec: {name: gizmo, source: community, sourceNamespace: olm}}`, ns)),
		// The operator the Subscription installs brings the Gizmo CRD; it is not in Git.
		obj(t, fmt.Sprintf(`{apiVersion: %s/v1, kind: Gizmo, metadata: {name: gz, namespace: %s}, spec: {color: blue}}`, g, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: after, namespace: %s}}`, ns)),
	}
	res := mustApply(t, a, objs)
	waiting := res.With(Waiting)
	if len(waiting) != 1 || waiting[0].Entry.Kind != "Gizmo" || waiting[0].Reason != olmsyncv1alpha1.WaitingForCRDReason {
		t.Fatalf("waiting = %+v, want the Gizmo with reason WaitingForCRD", waiting)
	}
	if !strings.Contains(waiting[0].Message, "waits for its CustomResourceDefinition") {
		t.Errorf("message = %q", waiting[0].Message)
	}
	if n := len(res.With(Created)); n != 4 {
		t.Errorf("created %d, want the other 4: a waiting object holds nothing up: %v", n, actions(res))
	}
	if res.Applied().Has(waiting[0].Entry) {
		t.Error("a waiting object is in Applied()")
	}

	// The operator installs its CRD (as OLM would, from the CSV's bundle).
	crdObj := crd(t, g, "Gizmo", "gizmos")
	if err := a.Client.Create(context.Background(), crdObj); err != nil {
		t.Fatal(err)
	}
	a.waitForCRDs(context.Background(), []*unstructured.Unstructured{crdObj})
	res = mustApply(t, a, objs)
	if got := res.With(Created); len(got) != 1 || got[0].Entry.Kind != "Gizmo" {
		t.Errorf("after the CRD arrived: %v, want the Gizmo created", actions(res))
	}
}

func TestUnknownKindWithoutSubscriptionFails(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("nokind")
	a := newApplier(t, env, "platform")
	res := mustApplyAllowingFailures(t, a, []*unstructured.Unstructured{
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: nowhere.example.com/v1, kind: Ghost, metadata: {name: g, namespace: %s}}`, ns)),
	})
	failed := res.With(Failed)
	if len(failed) != 1 || failed[0].Entry.Kind != "Ghost" || failed[0].Reason != olmsyncv1alpha1.ApplyFailedReason {
		t.Fatalf("failed = %+v, want the Ghost with reason ApplyFailed", failed)
	}
	var applyErr *Error
	if err := res.Err(); !errors.As(err, &applyErr) || !strings.Contains(err.Error(), `Ghost "`+ns+`/g"`) {
		t.Errorf("Err() = %v, want an *Error naming the Ghost", err)
	}
}

func mustApplyAllowingFailures(t *testing.T, a *Applier, objs []*unstructured.Unstructured) *Result {
	t.Helper()
	res, err := a.Apply(context.Background(), objs)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return res
}

func TestFailedStageHoldsBackTheNext(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("failstage")
	a := newApplier(t, env, "platform")
	res := mustApplyAllowingFailures(t, a, []*unstructured.Unstructured{
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)),
		// targetNamespaces must be a list: the API server refuses it.
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: %s}, spec: {targetNamespaces: %s}}`, ns, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: CatalogSource, metadata: {name: c, namespace: %s}, spec: {sourceType: grpc, image: "example.com/c:1"}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: s, namespace: %s}, spec: {name: s, source: c, sourceNamespace: %s}}`, ns, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: %s}}`, ns)),
	})
	want := []actionOf{
		{"_" + ns + "__Namespace", StageClusterSetup, Created},
		{ns + "_og_operators.coreos.com_OperatorGroup", StageOLMSetup, Failed},
		// The rest of the failing stage is still tried; later stages are not.
		{ns + "_c_operators.coreos.com_CatalogSource", StageOLMSetup, Created},
		{ns + "_s_operators.coreos.com_Subscription", StageSubscriptions, Skipped},
		{ns + "_c__ConfigMap", StageRest, Skipped},
	}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	msg := res.With(Failed)[0].Message
	if !strings.Contains(msg, "targetNamespaces") {
		t.Errorf("failure message %q does not name the field", msg)
	}
	// The object is named once, as olmsync names objects everywhere, then what failed as
	// ssa says it; not a second time in Flux's form (Kind/namespace/name).
	if want := fmt.Sprintf(`OperatorGroup "%s/og" dry-run failed: `, ns); !strings.HasPrefix(msg, want) || strings.Contains(msg, "OperatorGroup/"+ns) {
		t.Errorf("failure message %q, want it to begin %q and name the object once", msg, want)
	}
}

func TestPrune(t *testing.T) {
	env := testenv.Get(t)
	ns, g := uniqueNS("prune"), uniqueNS("g")+".example.com"
	a := newApplier(t, env, "platform")
	ctx := context.Background()
	objs := repo(t, ns, g)
	kept := obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: keep-me, namespace: %s, annotations: {olmsync.dev/prune: disabled}}}`, ns))
	adopted := obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: adopted, namespace: %s}}`, ns))
	res := mustApply(t, a, append(objs, kept, adopted))
	previous := res.Applied()

	// Another Sync takes the "adopted" ConfigMap over.
	other := newApplier(t, env, "other")
	mustApply(t, other, []*unstructured.Unstructured{adopted})

	// The next revision drops the Subscription, the Widget, its CRD and both ConfigMaps.
	var next []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Subscription", "Widget", "CustomResourceDefinition":
			continue
		}
		next = append(next, o)
	}
	desired := desiredOf(next)
	stale, err := previous.Stale(desired, inventory.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	// And one stale entry is already gone from the cluster.
	gone := inventory.Entry{Namespace: ns, Name: "vanished", Kind: "ConfigMap", Version: "v1"}
	stale = append(stale, gone)

	type outcome struct {
		Kind, Name string
		Action     PruneAction
	}
	outcomes := func(results []PruneResult) []outcome {
		var got []outcome
		for _, r := range results {
			got = append(got, outcome{r.Entry.Kind, r.Entry.Name, r.Action})
		}
		return got
	}
	// Last stage first: custom resources and ConfigMaps, then the Subscription, then the CRD.
	want := []outcome{
		{"ConfigMap", "adopted", Kept},
		{"ConfigMap", "keep-me", Kept},
		{"Widget", "w", Deleted},
		{"ConfigMap", "vanished", Gone},
		{"Subscription", "etcd", Deleted},
		{"CustomResourceDefinition", "widgets." + g, Deleted},
	}

	// A dry run says the same and deletes nothing.
	dry, err := a.DryRunPrune(ctx, stale)
	if err != nil {
		t.Fatalf("DryRunPrune: %v", err)
	}
	if diff := cmp.Diff(want, outcomes(dry)); diff != "" {
		t.Errorf("DryRunPrune() (-want +got):\n%s", diff)
	}
	for _, r := range dry {
		if r.Action == Deleted && !strings.HasSuffix(r.Message, "would be deleted") {
			t.Errorf("dry run message %q", r.Message)
		}
	}
	if w := get(t, a.Client, "operators.coreos.com/v1alpha1", "Subscription", ns, "etcd"); w.GetDeletionTimestamp() != nil {
		t.Error("the dry run began deleting the Subscription")
	}

	results, err := a.Prune(ctx, stale)
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if diff := cmp.Diff(want, outcomes(results)); diff != "" {
		t.Errorf("Prune() (-want +got):\n%s", diff)
	}
	for _, name := range []string{"keep-me", "adopted"} {
		get(t, a.Client, "v1", "ConfigMap", ns, name) // still there
	}
	sub := kindObj("operators.coreos.com/v1alpha1", "Subscription", ns, "etcd")
	if err := a.Client.Get(ctx, client.ObjectKeyFromObject(sub), sub); err == nil {
		t.Error("the pruned Subscription is still there")
	}
	// Pruning again finds everything gone or kept.
	results, err = a.Prune(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Action == Deleted && r.Entry.Kind != "CustomResourceDefinition" {
			t.Errorf("second prune deleted %s again", r.Entry)
		}
	}
}

// desiredOf is a complete desired state of objects that already carry their namespace.
func desiredOf(objs []*unstructured.Unstructured) *inventory.Desired {
	return inventory.DesiredOf(nil, appOf(objs), nil)
}

func TestPruneOrder(t *testing.T) {
	entries := []inventory.Entry{
		{Name: "ns", Kind: "Namespace", Version: "v1"},
		{Namespace: "ns", Name: "og", Group: "operators.coreos.com", Kind: "OperatorGroup", Version: "v1"},
		{Namespace: "ns", Name: "c1", Kind: "ConfigMap", Version: "v1"},
		{Name: "w.example.com", Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Version: "v1"},
		{Name: "r", Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Version: "v1"},
		{Namespace: "ns", Name: "s", Group: "operators.coreos.com", Kind: "Subscription", Version: "v1alpha1"},
		{Namespace: "ns", Name: "c2", Kind: "ConfigMap", Version: "v1"},
		{Namespace: "ns", Name: "cat", Group: "operators.coreos.com", Kind: "CatalogSource", Version: "v1alpha1"},
	}
	var got []string
	for _, e := range pruneOrder(entries) {
		got = append(got, e.Kind+"/"+e.Name)
	}
	want := []string{"ConfigMap/c1", "ConfigMap/c2", "Subscription/s", "CatalogSource/cat", "OperatorGroup/og",
		"ClusterRole/r", "CustomResourceDefinition/w.example.com", "Namespace/ns"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pruneOrder() (-want +got):\n%s", diff)
	}
}

// appOf is one rendered app holding objs, each already in its namespace.
func appOf(objs []*unstructured.Unstructured) []*render.AppResult {
	a := &render.AppResult{App: render.App{Name: "app"}}
	for _, o := range objs {
		a.Objects = append(a.Objects, &render.Object{Manifest: o, EffectiveNamespace: o.GetNamespace()})
	}
	return []*render.AppResult{a}
}

// TestStageAppliedConcurrently: the objects of a stage are applied Concurrency at a time,
// never more, and their results keep the objects' order. The API server's answers are
// held back until as many writes as allowed are in flight (or a few seconds pass), so
// that the overlap does not depend on timing.
func TestStageAppliedConcurrently(t *testing.T) {
	env := testenv.Get(t)
	for _, limit := range []int{1, 4} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			ns := uniqueNS("concurrent")
			var inFlight, most atomic.Int64
			reached := make(chan struct{})
			var once sync.Once
			cfg := rest.CopyConfig(env.Config)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.Method != http.MethodPatch || !strings.Contains(r.URL.Path, "/configmaps/") {
						return rt.RoundTrip(r)
					}
					n := inFlight.Add(1)
					defer inFlight.Add(-1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					if n >= int64(limit) {
						once.Do(func() { close(reached) })
					}
					select {
					case <-reached:
					case <-time.After(3 * time.Second):
					}
					return rt.RoundTrip(r)
				})
			})
			c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			a := &Applier{Client: c, Owner: types.NamespacedName{Namespace: "olmsync-system", Name: "concurrent"}, Concurrency: limit}
			objs := []*unstructured.Unstructured{kindObj("v1", "Namespace", "", ns)}
			for i := range 12 {
				objs = append(objs, kindObj("v1", "ConfigMap", ns, fmt.Sprintf("cm-%02d", i)))
			}
			res := mustApply(t, a, objs)
			if got := most.Load(); got != int64(limit) {
				t.Errorf("at most %d ConfigMaps were written at once, want %d", got, limit)
			}
			for i, o := range res.Objects[1:] {
				if want := fmt.Sprintf("cm-%02d", i); o.Entry.Name != want || o.Action != Created {
					t.Errorf("result %d is %s %s, want %s Created", i+1, o.Entry.Name, o.Action, want)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPruneDeletesInstalledCSV: with DeleteInstalledCSVs, a pruned Subscription takes the
// CSV it installed with it (a dry run says so and deletes nothing), unless another
// Subscription of the namespace refers to that CSV; without it, the CSV stays, as in OLM.
func TestPruneDeletesInstalledCSV(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		delete bool
		shared bool
		want   PruneAction // of the CSV; "" for no result
		// The CSV's message after ClusterServiceVersion "<ns>/etcd.v0.9.4" of Subscription
		// "<ns>/etcd", in a dry run and for real.
		dryMsg, msg string
	}{
		{name: "deleted with its Subscription", delete: true, want: Deleted, dryMsg: " would be deleted", msg: " deleted"},
		{name: "kept while another Subscription refers to it", delete: true, shared: true, want: Kept,
			dryMsg: ` kept: Subscription "etcd-2" refers to it too`, msg: ` kept: Subscription "etcd-2" refers to it too`},
		{name: "kept when the Sync keeps operators", delete: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := uniqueNS("prune-csv")
			a := newApplier(t, env, "platform")
			a.DeleteInstalledCSVs = tc.delete
			sub := obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: etcd, namespace: %s},
  spec: {name: etcd, channel: alpha, source: community, sourceNamespace: %s}}`, ns, ns))
			res := mustApply(t, a, []*unstructured.Unstructured{obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)), sub})
			// What OLM writes: the CSV, and the Subscription's installedCSV.
			csv := obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: ClusterServiceVersion, metadata: {name: etcd.v0.9.4, namespace: %s},
  spec: {displayName: etcd, install: {strategy: deployment}}}`, ns))
			if err := a.Client.Create(ctx, csv); err != nil {
				t.Fatal(err)
			}
			setInstalled := func(name string) {
				s := get(t, a.Client, "operators.coreos.com/v1alpha1", "Subscription", ns, name)
				if err := unstructured.SetNestedField(s.Object, map[string]any{"installedCSV": "etcd.v0.9.4", "lastUpdated": "2026-11-25T10:00:00Z"}, "status"); err != nil {
					t.Fatal(err)
				}
				if err := a.Client.Status().Update(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			setInstalled("etcd")
			if tc.shared {
				other := obj(t, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: etcd-2, namespace: %s},
  spec: {name: etcd, channel: alpha, source: community, sourceNamespace: %s}}`, ns, ns))
				if err := a.Client.Create(ctx, other); err != nil {
					t.Fatal(err)
				}
				setInstalled("etcd-2")
			}
			var stale []inventory.Entry
			for _, e := range res.Applied().Entries() {
				if e.Kind == "Subscription" {
					stale = append(stale, e)
				}
			}
			for _, dry := range []bool{true, false} {
				prune := a.Prune
				if dry {
					prune = a.DryRunPrune
				}
				results, err := prune(ctx, stale)
				if err != nil {
					t.Fatal(err)
				}
				var got PruneAction
				wantMsg := fmt.Sprintf(`ClusterServiceVersion "%s/etcd.v0.9.4" of Subscription "%s/etcd"`, ns, ns) + map[bool]string{true: tc.dryMsg, false: tc.msg}[dry]
				for _, r := range results {
					if r.Entry.Kind == "ClusterServiceVersion" {
						got = r.Action
						if r.With == nil || r.With.Name != "etcd" || r.Entry.Namespace != ns || r.Entry.Name != "etcd.v0.9.4" {
							t.Errorf("CSV result %+v does not name the CSV and its Subscription", r)
						}
						if r.Message != wantMsg {
							t.Errorf("dry run %t: the CSV's message %q, want %q", dry, r.Message, wantMsg)
						}
					}
				}
				if got != tc.want {
					t.Errorf("dry run %t: the CSV's outcome %q, want %q (results %+v)", dry, got, tc.want, results)
				}
				live := kindObj("operators.coreos.com/v1alpha1", "ClusterServiceVersion", ns, "etcd.v0.9.4")
				err = a.Client.Get(ctx, client.ObjectKeyFromObject(live), live)
				if deleted := client.IgnoreNotFound(err) == nil && err != nil; deleted != (!dry && tc.want == Deleted) {
					t.Errorf("dry run %t: the CSV deleted = %t, get error %v", dry, deleted, err)
				}
			}
		})
	}
}

// TestTakesOverFromKubectlApply: an object first put in by `kubectl apply` (client-side:
// its fields owned by the manager kubectl-client-side-apply, the last-applied annotation
// on it) and then added to Git. As Flux does (fluxcd/pkg/ssa's cleanup), olmsync hands
// kubectl's fields over to its own manager and drops the annotation, so a key Git no
// longer has goes away; without that, kubectl would own the key forever and server-side
// apply would leave it in place.
func TestTakesOverFromKubectlApply(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("kubectl")
	a := newApplier(t, env, "platform")
	ctx := context.Background()
	mustApply(t, a, []*unstructured.Unstructured{obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")})

	byKubectl := obj(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: `+ns+`
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ConfigMap","data":{"level":"debug","old":"yes"}}'
data: {level: debug, old: "yes"}
`)
	if err := a.Client.Create(ctx, byKubectl, client.FieldOwner("kubectl-client-side-apply")); err != nil {
		t.Fatal(err)
	}

	git := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+"}\ndata: {level: info}\n")
	res := mustApply(t, a, []*unstructured.Unstructured{git})
	if o := res.Objects[0]; o.Action != Configured {
		t.Errorf("apply: %s %q, want Configured", o.Action, o.Message)
	}
	live := get(t, a.Client, "v1", "ConfigMap", ns, "settings")
	if data, _, _ := unstructured.NestedStringMap(live.Object, "data"); !maps.Equal(data, map[string]string{"level": "info"}) {
		t.Errorf("data = %v, want Git's {level: info} alone", data)
	}
	if _, ok := live.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; ok {
		t.Errorf("kubectl's last-applied annotation is still there: %v", live.GetAnnotations())
	}
	for _, m := range live.GetManagedFields() {
		if strings.HasPrefix(m.Manager, "kubectl") {
			t.Errorf("kubectl still manages fields: %s %s", m.Manager, m.Operation)
		}
	}
	if res := mustApply(t, a, []*unstructured.Unstructured{git}); res.Objects[0].Action != Unchanged {
		t.Errorf("second apply: %s %q, want Unchanged", res.Objects[0].Action, res.Objects[0].Message)
	}
}

// TestRequestsPerObject: an apply costs the requests Flux's engine makes and no more — a
// read and a dry run for an object that matches Git, and the write besides for one that
// does not; a dry run (olmsync diff) a read and a dry run. Olmsync's result (the live object before, the object after) comes from those
// answers, not from reading the object again. The requests are counted on the wire.
func TestRequestsPerObject(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("requests")
	var mu sync.Mutex
	counting := false
	var seen []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			if counting {
				verb := r.Method
				if r.URL.Query().Has("dryRun") {
					verb += " (dry run)"
				}
				seen = append(seen, verb)
			}
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	a := &Applier{Client: c, Owner: types.NamespacedName{Namespace: "olmsync-system", Name: "requests"}}
	mustApply(t, a, []*unstructured.Unstructured{kindObj("v1", "Namespace", "", ns)})
	cm := func(level string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{obj(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: %s}, data: {level: %s}}`, ns, level))}
	}
	for _, step := range []struct {
		name   string
		level  string
		dryRun bool
		action Action
		want   []string
	}{
		{"create", "info", false, Created, []string{"GET", "PATCH (dry run)", "PATCH"}},
		{"unchanged", "info", false, Unchanged, []string{"GET", "PATCH (dry run)"}},
		{"configure", "debug", false, Configured, []string{"GET", "PATCH (dry run)", "PATCH"}},
		{"dry run", "trace", true, Configured, []string{"GET", "PATCH (dry run)"}},
	} {
		mu.Lock()
		counting, seen = true, nil
		mu.Unlock()
		run := a.Apply
		if step.dryRun {
			run = a.DryRun
		}
		res, err := run(context.Background(), cm(step.level))
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		mu.Lock()
		counting = false
		got := slices.Clone(seen)
		mu.Unlock()
		o := res.Objects[0]
		if o.Action != step.action {
			t.Fatalf("%s: %s, want %s", step.name, o.Action, step.action)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", step.name, diff)
		}
		after := o.Live
		if step.dryRun {
			after = o.DryRun
			if diff := cmp.Diff([]string{"data.level"}, o.Drift); diff != "" {
				t.Errorf("%s: drift (-want +got):\n%s", step.name, diff)
			}
		}
		if level, _, _ := unstructured.NestedString(after.Object, "data", "level"); level != step.level || after.GetResourceVersion() == "" {
			t.Errorf("%s: the result's object after has level %q and resourceVersion %q, want %q and the API server's", step.name, level, after.GetResourceVersion(), step.level)
		}
	}
}

// TestContextEnds: Apply returns the context's error when it ends, before any stage or
// during the last one, with the results it has; it is the only error Apply returns.
func TestContextEnds(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("ctxends")
	objs := []*unstructured.Unstructured{
		obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns)),
		obj(t, fmt.Sprintf(`{apiVersion: nowhere.example.com/v1, kind: Ghost, metadata: {name: g, namespace: %s}}`, ns)),
	}

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	a := newApplier(t, env, "platform")
	res, err := a.Apply(ended, objs)
	if !errors.Is(err, context.Canceled) || len(res.Objects) != 0 {
		t.Errorf("an ended context: %v, %v; want context.Canceled and nothing tried", actions(res), err)
	}

	// The Ghost's kind is not served; asking whether it is promised ends the context.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.Promised = func(schema.GroupKind) bool { cancel(); return true }
	res, err = a.Apply(ctx, objs)
	if !errors.Is(err, context.Canceled) || len(res.Objects) != 2 || res.Objects[1].Action != Waiting {
		t.Errorf("a context ended in the last stage: %v, %v; want both results and context.Canceled", actions(res), err)
	}
}
