package gitsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// stagedRepository adds to repository(ns) one object of every stage: a CRD and a
// ClusterRole (with the Namespace), a CatalogSource (with the OperatorGroup), a
// Subscription, and, with the ConfigMap, a custom resource of the CRD.
func stagedRepository(ns string) (map[string]string, string) {
	group := ns + ".test.olmsync.dev"
	return with(repository(ns), map[string]string{
		"cluster-scope/crd.yaml": fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group),
		"cluster-scope/clusterrole.yaml":   fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: %s-reader}\nrules: []\n", ns),
		"cluster-scope/catalogsource.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cat, namespace: %s}\nspec: {sourceType: configmap, configMap: cat}\n", ns),
		"team/subscription.yaml":           fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: widget}\nspec: {name: widget, channel: stable, source: cat, sourceNamespace: %s}\n", ns),
		"team/widget.yaml":                 fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}\n", group),
	}), group
}

// TestFirstSyncAppliesInStages: the first reconcile of a new repository applies it in four
// stages, each complete before the next begins — as the etcd revisions the objects were
// created at show — and a custom resource of a CRD in the same revision is applied once
// the CRD is established.
func TestFirstSyncAppliesInStages(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("stages")
	files, group := stagedRepository(ns)
	up := gittest.NewUpstream(t, files)
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	olm := func(version, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "operators.coreos.com", Version: version, Kind: kind}
	}
	nsGVK := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	crdGVK := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	roleGVK := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	// OLM writes statuses and the API server a CRD's conditions, which move the objects'
	// resource versions: watches see the revision each was created at.
	created := watchCreations(t, env, nsGVK, crdGVK, roleGVK, olm("v1", "OperatorGroup"), olm("v1alpha1", "CatalogSource"),
		olm("v1alpha1", "Subscription"), configMapGVK)

	createNamespace(t, env, "olmsync-stages")
	s := newSync(t, env, "olmsync-stages", ns, srv.RepoURL(), nil)
	head := up.Head(t)
	widgetGVK := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, "every object applied", func() error {
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		if !strings.HasSuffix(got.Status.LastAppliedRevision, head) || object(t, env, widgetGVK, ns, "w") == nil {
			return fmt.Errorf("lastAppliedRevision %q, conditions %+v", got.Status.LastAppliedRevision, got.Status.Conditions)
		}
		return nil
	})
	// Nothing touches a Widget after it is created.
	widgetRV, _ := strconv.ParseInt(object(t, env, widgetGVK, ns, "w").GetResourceVersion(), 10, 64)
	stages := [][]int64{
		{created(nsGVK, "", ns), created(crdGVK, "", "widgets."+group), created(roleGVK, "", ns+"-reader")},
		{created(olm("v1", "OperatorGroup"), ns, "og"), created(olm("v1alpha1", "CatalogSource"), ns, "cat")},
		{created(olm("v1alpha1", "Subscription"), ns, "widget")},
		{created(configMapGVK, ns, "settings"), widgetRV},
	}
	for i := 1; i < len(stages); i++ {
		if slices.Max(stages[i-1]) >= slices.Min(stages[i]) {
			t.Errorf("stage %d was not complete before stage %d began: revisions %v then %v", i, i+1, stages[i-1], stages[i])
		}
	}
	if n := len(got.Status.Inventory.Entries); n != 8 {
		t.Errorf("inventory has %d entries, want the 8 objects: %+v", n, got.Status.Inventory.Entries)
	}
}

// watchCreations watches the kinds from now on and returns a function giving the resource
// version each object was created at (failing the test when it was not created).
func watchCreations(t *testing.T, env *testenv.Env, gvks ...schema.GroupVersionKind) func(gvk schema.GroupVersionKind, ns, name string) int64 {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	seen := map[string]int64{}
	id := func(gvk schema.GroupVersionKind, ns, name string) string { return gvk.Kind + "/" + ns + "/" + name }
	for _, gvk := range gvks {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		w, err := wc.Watch(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer w.Stop()
			for e := range w.ResultChan() {
				if o, ok := e.Object.(*unstructured.Unstructured); ok && e.Type == watch.Added {
					rv, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
					mu.Lock()
					if _, ok := seen[id(gvk, o.GetNamespace(), o.GetName())]; !ok {
						seen[id(gvk, o.GetNamespace(), o.GetName())] = rv
					}
					mu.Unlock()
				}
			}
		}()
	}
	return func(gvk schema.GroupVersionKind, ns, name string) int64 {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		rv, ok := seen[id(gvk, ns, name)]
		if !ok {
			t.Fatalf("no creation of %s %s/%s was seen", gvk.Kind, ns, name)
		}
		return rv
	}
}

// TestViolationGatedThenAudit: a commit that breaks a placement rule is applied but for
// the objects at fault, which the Sync reports (condition, status.violations, an Event
// naming rule, object, file and line). In audit mode they are applied and reported — and
// here OLM then finds what the rule was about.
func TestViolationGatedThenAudit(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("gate")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-gate")
	s := newSync(t, env, "olmsync-gate", ns, srv.RepoURL(), nil)
	appliedAt(t, env, s, up.Head(t))

	// A second OperatorGroup, in the team app: OP001 (only in the cluster-scope app), and
	// OP004 (one per namespace) about both groups. The ConfigMap beside it breaks nothing.
	up.Push(t, map[string]string{
		"team/operatorgroup.yaml": "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: extra\nspec:\n  targetNamespaces: [" + ns + "]\n",
		"team/more.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n",
	}, "an OperatorGroup in the wrong app")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PolicyViolationReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, `OP001 OperatorGroup "`+ns+`/extra" (team/operatorgroup.yaml:1)`) {
		t.Errorf("Ready message %q does not name rule, object, file and line", msg)
	}
	if object(t, env, operatorGroupGVK, ns, "extra") != nil {
		t.Error("the violating OperatorGroup was applied in enforce mode")
	}
	if object(t, env, operatorGroupGVK, ns, "og") == nil {
		t.Error("the OperatorGroup applied before was removed: a gated object is still desired, never pruned")
	}
	if object(t, env, configMapGVK, ns, "more") == nil {
		t.Error("the ConfigMap beside the violation was not applied")
	}
	type finding struct {
		Rule, File, Object string
		Gated              bool
	}
	var findings []finding
	for _, v := range got.Status.Violations {
		findings = append(findings, finding{v.Rule, fmt.Sprintf("%s:%d", v.File, v.Line), v.Object.Name, v.Gated})
	}
	want := []finding{
		{"OP004", "cluster-scope/operatorgroup.yaml:1", "og", true},
		{"OP001", "team/operatorgroup.yaml:1", "extra", true},
		{"OP004", "team/operatorgroup.yaml:1", "extra", true},
	}
	if diff := cmp.Diff(want, findings); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	olmtest.Eventually(t, "a Warning Event naming the rule, the object, the file and the line", func() error {
		for _, e := range syncEvents(t, env, s) {
			if strings.HasPrefix(e, "Warning PolicyViolation: ") && strings.Contains(e, "OP001") && strings.Contains(e, "team/operatorgroup.yaml:1") {
				return nil
			}
		}
		return fmt.Errorf("events: %q", syncEvents(t, env, s))
	})

	patchSpec(t, env, got, func(spec *olmsyncv1alpha1.SyncSpec) { spec.Policy.Mode = olmsyncv1alpha1.PolicyModeAudit })
	got = waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.HealthCheckFailedReason)
	if object(t, env, operatorGroupGVK, ns, "extra") == nil {
		t.Error("audit mode did not apply the violating OperatorGroup")
	}
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, "MultipleOperatorGroupsFound") {
		t.Errorf("Ready message %q does not carry OLM's reason for two groups in a namespace", msg)
	}
	if got.Status.ViolationCount != 3 || got.Status.Violations[0].Gated || !conditions.IsTrue(got, olmsyncv1alpha1.PolicyViolationCondition) {
		t.Errorf("audit mode: %d violations %+v, PolicyViolation %v", got.Status.ViolationCount, got.Status.Violations,
			conditions.Get(got, olmsyncv1alpha1.PolicyViolationCondition))
	}
}

// TestSkippedGeneratorPrunesNothing: a commit that removes an object and adds a generator
// needing a plugin that is off (a ksops Secret generator) leaves its app incomplete: Ready
// says PluginSkipped naming the generator, its file and line, and nothing is applied or
// pruned, so the removed object and whatever the generator made before stay.
func TestSkippedGeneratorPrunesNothing(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("plugin")
	up := gittest.NewUpstream(t, with(repository(ns), map[string]string{
		"team/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
	}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-plugin")
	s := newSync(t, env, "olmsync-plugin", ns, srv.RepoURL(), nil)
	appliedAt(t, env, s, up.Head(t))

	skipped := up.Push(t, map[string]string{
		"team/extra.yaml":         "",
		"team/kustomization.yaml": "resources:\n- configmap.yaml\ngenerators:\n- secrets.yaml\n",
		"team/secrets.yaml":       "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: team-secrets\n",
	}, "remove extra, generate the team's Secrets with ksops")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PluginSkippedReason)
	c := conditions.Get(got, olmsyncv1alpha1.BuildFailedCondition)
	if c == nil || c.Reason != olmsyncv1alpha1.PluginSkippedReason || !strings.Contains(c.Message, skipped) ||
		!strings.Contains(c.Message, "team/secrets.yaml:1") || !strings.Contains(c.Message, `generator ksops "team-secrets" (viaduct.ai/v1)`) {
		t.Errorf("BuildFailed = %+v, want PluginSkipped naming the revision, team/secrets.yaml:1 and the generator", c)
	}
	if object(t, env, configMapGVK, ns, "extra") == nil {
		t.Fatal("an app incomplete for a skipped generator pruned an object")
	}
	if !hasEntry(got, ns+"_extra__ConfigMap") {
		t.Errorf("the inventory lost the object it did not prune: %+v", got.Status.Inventory)
	}
}

// TestSlowRuleIsStopped: a rule of spec.policy.rules that loops is stopped at the
// policy timeout (`olmsync run --policy-timeout`); BuildFailed names the rule and its file,
// and the revision is neither applied nor pruned.
func TestSlowRuleIsStopped(t *testing.T) {
	env := testenv.Get(t)
	slow, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "hostile", "slow", "slow.rego"))
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, env, managerOptions{policyTimeout: 300 * time.Millisecond})
	ns := uniqueNS("slowrule")
	up := gittest.NewUpstream(t, with(repository(ns), map[string]string{"rules/slow.rego": string(slow)}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-slowrule")
	s := newSync(t, env, "olmsync-slowrule", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Policy.Rules = []olmsyncv1alpha1.RuleFolder{"rules"}
	})
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, "rules/slow.rego") || !strings.Contains(msg, "rule ACME667 (acme.slow) did not finish within the policy timeout of 300ms") {
		t.Errorf("Ready message %q names neither the rule nor its file", msg)
	}
	if object(t, env, configMapGVK, ns, "settings") != nil {
		t.Error("a revision whose rule was stopped was applied")
	}
}

func patchSpec(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync, edit func(*olmsyncv1alpha1.SyncSpec)) {
	t.Helper()
	base := s.DeepCopy()
	edit(&s.Spec)
	if err := env.Client.Patch(context.Background(), s, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenRenderPrunesNothing: a commit that removes a file and breaks the render of
// the same app prunes nothing and names the file; the fix that follows prunes the removed
// object.
func TestBrokenRenderPrunesNothing(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("prune")
	up := gittest.NewUpstream(t, with(repository(ns), map[string]string{
		"team/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
	}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-prune")
	s := newSync(t, env, "olmsync-prune", ns, srv.RepoURL(), nil)
	appliedAt(t, env, s, up.Head(t))

	broken := up.Push(t, map[string]string{
		"team/extra.yaml":         "",
		"team/kustomization.yaml": "resources:\n- configmap.yaml\n- missing.yaml\n",
	}, "remove extra, break the kustomization")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, "team/kustomization.yaml") || !strings.Contains(msg, broken) {
		t.Errorf("BuildFailed message %q names neither the kustomization nor the revision", msg)
	}
	if object(t, env, configMapGVK, ns, "extra") == nil {
		t.Fatal("a broken render pruned an object")
	}
	if !hasEntry(got, ns+"_extra__ConfigMap") {
		t.Errorf("the inventory lost the object it did not prune: %+v", got.Status.Inventory)
	}
	var team *olmsyncv1alpha1.AppStatus
	for i := range got.Status.Apps {
		if got.Status.Apps[i].Name == "team" {
			team = &got.Status.Apps[i]
		}
	}
	if team == nil || team.Sync != olmsyncv1alpha1.SyncStatusUnknown || !strings.Contains(team.Message, "missing.yaml") {
		t.Errorf("app team: %+v, want Unknown with the render error", team)
	}

	fixed := up.Push(t, map[string]string{"team/kustomization.yaml": ""}, "fix")
	appliedAt(t, env, s, fixed)
	olmtest.Eventually(t, "extra pruned", func() error {
		if object(t, env, configMapGVK, ns, "extra") != nil {
			return fmt.Errorf("ConfigMap %s/extra is still there", ns)
		}
		return nil
	})
	if got, _ = getSync(env, s); hasEntry(got, ns+"_extra__ConfigMap") {
		t.Errorf("the pruned object is still in the inventory")
	}
}

func hasEntry(s *olmsyncv1alpha1.Sync, id string) bool {
	if s.Status.Inventory == nil {
		return false
	}
	return slices.ContainsFunc(s.Status.Inventory.Entries, func(e olmsyncv1alpha1.ResourceRef) bool { return e.ID == id })
}

// TestDriftCorrected: a field changed by hand is put back at the drift-correction
// interval, and an object deleted by hand comes back at once.
func TestDriftCorrected(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("drift")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-drift")
	s := newSync(t, env, "olmsync-drift", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Interval = metav1.Duration{Duration: 2 * time.Second}
	})
	appliedAt(t, env, s, up.Head(t))

	cm := object(t, env, configMapGVK, ns, "settings")
	if err := unstructured.SetNestedField(cm.Object, "debug", "data", "level"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "data.level put back", func() error {
		level, _, _ := unstructured.NestedString(object(t, env, configMapGVK, ns, "settings").Object, "data", "level")
		if level != "info" {
			return fmt.Errorf("data.level is %q", level)
		}
		return nil
	})

	if err := env.Client.Delete(context.Background(), object(t, env, configMapGVK, ns, "settings")); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the deleted ConfigMap back", func() error {
		if object(t, env, configMapGVK, ns, "settings") == nil {
			return fmt.Errorf("not there")
		}
		return nil
	})
}

// TestServerGoneKeepsLastRevision: when the git server goes away the Sync says so, and
// keeps the last applied revision applied from the cache: an object deleted by hand comes
// back; nothing is pruned.
func TestServerGoneKeepsLastRevision(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("gone")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-gone")
	s := newSync(t, env, "olmsync-gone", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Interval = metav1.Duration{Duration: 2 * time.Second}
	})
	before := appliedAt(t, env, s, up.Head(t))

	srv.Close()
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.GitUnreachableReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, "the last applied revision "+before.Status.LastAppliedRevision+" stays applied") {
		t.Errorf("Ready message %q does not say the last revision stays", msg)
	}
	if err := env.Client.Delete(context.Background(), object(t, env, configMapGVK, ns, "settings")); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the deleted ConfigMap back from the cached revision", func() error {
		if object(t, env, configMapGVK, ns, "settings") == nil {
			return fmt.Errorf("not there")
		}
		return nil
	})
	got, _ = getSync(env, s)
	if diff := cmp.Diff(before.Status.Inventory, got.Status.Inventory); diff != "" {
		t.Errorf("the inventory changed while the server was away (-before +after):\n%s", diff)
	}
	if got.Status.LastAppliedRevision != before.Status.LastAppliedRevision {
		t.Errorf("lastAppliedRevision %q, want %q", got.Status.LastAppliedRevision, before.Status.LastAppliedRevision)
	}
}

// TestPathReadsOnlyItsFolder: a Sync of a folder reads the folder's olmsync.yaml and apps,
// whatever is broken beside it.
func TestPathReadsOnlyItsFolder(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("path")
	files := map[string]string{"olmsync.yaml": "apps: [\n"} // broken at the root
	for k, v := range repository(ns) {
		files["clusters/prod/"+k] = v
	}
	up := gittest.NewUpstream(t, files)
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-path")
	s := newSync(t, env, "olmsync-path", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) { spec.Path = "./clusters/prod" })
	appliedAt(t, env, s, up.Head(t))

	missing := newSync(t, env, "olmsync-path", ns+"-missing", srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) { spec.Path = "clusters/staging" })
	got := waitReady(t, env, missing, metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, `folder "clusters/staging" not found in main@sha1:`) {
		t.Errorf("Ready message %q", msg)
	}
}

// TestFolderBackAtTheAppliedRevision: when a commit removes spec.path's folder the Sync
// says BuildFailed; when the branch is then reset to the revision applied before, the
// Sync is Ready at it again at once, not a drift-correction interval later.
func TestFolderBackAtTheAppliedRevision(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("folder")
	files := map[string]string{}
	for k, v := range repository(ns) {
		files["clusters/prod/"+k] = v
	}
	up := gittest.NewUpstream(t, files)
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-folder")
	s := newSync(t, env, "olmsync-folder", ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Path = "clusters/prod"
		spec.Interval = metav1.Duration{Duration: time.Hour}
	})
	good := up.Head(t)
	appliedAt(t, env, s, good)

	gittest.Git(t, up.Work, "mv", "clusters/prod", "clusters/production")
	up.Push(t, nil, "rename the folder")
	waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)

	gittest.Git(t, up.Work, "reset", "-q", "--hard", good)
	up.PushRefs(t)
	got := appliedAt(t, env, s, good)
	if c := conditions.Get(got, olmsyncv1alpha1.BuildFailedCondition); c != nil {
		t.Errorf("BuildFailed is still there: %+v", c)
	}
}

// TestReconcilerWritesOnlyStatus: the reconciler writes a Sync's status and finalizer,
// never its spec, labels or annotations.
func TestReconcilerWritesOnlyStatus(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("status-only")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-status-only")
	s := newSync(t, env, "olmsync-status-only", ns, srv.RepoURL(), nil)
	created, _ := getSync(env, s)
	got := appliedAt(t, env, s, up.Head(t))
	if diff := cmp.Diff(created.Spec, got.Spec); diff != "" {
		t.Errorf("spec changed (-created +reconciled):\n%s", diff)
	}
	if !cmp.Equal(created.Labels, got.Labels) || !cmp.Equal(created.Annotations, got.Annotations) {
		t.Errorf("labels %v → %v, annotations %v → %v", created.Labels, got.Labels, created.Annotations, got.Annotations)
	}
	if diff := cmp.Diff([]string{"olmsync.dev/finalizer"}, got.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if got.Status.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d, generation %d", got.Status.ObservedGeneration, got.Generation)
	}
}

// TestLocalSourcesOffStalls: a file:// repository while local sources are off can never
// be fetched: Stalled, and said so.
func TestLocalSourcesOffStalls(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	up := gittest.NewUpstream(t, repository("unused"))
	createNamespace(t, env, "olmsync-stalled")
	s := newSync(t, env, "olmsync-stalled", uniqueNS("local"), up.FileURL(), nil)
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.InvalidSpecReason)
	if !conditions.IsTrue(got, olmsyncv1alpha1.StalledCondition) || !strings.Contains(conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition), "--allow-local-sources") {
		t.Errorf("conditions %+v", got.Status.Conditions)
	}
	if conditions.IsTrue(got, olmsyncv1alpha1.ReconcilingCondition) {
		t.Error("a stalled Sync is still Reconciling")
	}
}

// TestSyncChecksTakeTheEmbeddedOLMsCatalogNamespace: the placement rules of a Sync hold
// CatalogSources to the namespace the embedded OLM resolves with, over the repository's
// olmsync.yaml: a CatalogSource olmsync.yaml allows but the embedded OLM would not see from
// other namespaces is a violation (OP008) naming the embedded OLM's namespace, and is not
// applied (docs/olm.md, "One global catalog namespace").
func TestSyncChecksTakeTheEmbeddedOLMsCatalogNamespace(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("globalns")
	global := ns + "-global"
	startManager(t, env, managerOptions{globalCatalogNamespace: global})
	files := with(repository(ns), map[string]string{
		"cluster-scope/catalogsource.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: community\n  namespace: %s\n"+
			"spec:\n  sourceType: configmap\n  configMap: community\n", ns),
	})
	up := gittest.NewUpstream(t, files)
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-globalns")
	s := newSync(t, env, "olmsync-globalns", ns, srv.RepoURL(), nil)
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PolicyViolationReason)
	want := fmt.Sprintf(`CatalogSources belong in the marketplace namespace %q`, global)
	found := false
	for _, v := range got.Status.Violations {
		found = found || (v.Rule == "OP008" && strings.Contains(v.Message, want))
	}
	if !found {
		t.Errorf("violations %+v: want OP008 saying %s", got.Status.Violations, want)
	}
	if object(t, env, catalogSourceGVK, ns, "community") != nil {
		t.Error("the CatalogSource the embedded OLM would not see as global was applied")
	}
}
