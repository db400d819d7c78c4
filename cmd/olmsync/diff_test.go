//go:build !olmsync_light

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/metrics"
)

// diffRepository is a repository of one app in namespace ns: three ConfigMaps and a
// Secret.
func diffRepository(ns string) map[string]string {
	return map[string]string{
		"olmsync.yaml":    fmt.Sprintf("apps:\n- {name: team, path: team, namespace: %s}\n", ns),
		"team/a.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  level: info\n",
		"team/b.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  size: \"3\"\n",
		"team/c.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  colour: blue\n",
		"team/login.yaml": secretYAML("hunter2"),
	}
}

func secretYAML(password string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: login\ndata:\n  password: " +
		base64.StdEncoding.EncodeToString([]byte(password)) + "\n  user: " + base64.StdEncoding.EncodeToString([]byte("admin")) + "\n"
}

// reconcileOnce runs the Sync reconciler once for the Sync, as `olmsync run` would, and
// fails the test unless it applied the fetched revision.
func reconcileOnce(t *testing.T, c *syncCLI, key types.NamespacedName) *olmsyncv1alpha1.Sync {
	t.Helper()
	r := &gitsync.Reconciler{Client: c.env.Client, APIReader: c.env.Client, Config: c.env.Config,
		Metrics: metrics.NewRecorder(), Options: gitsync.Options{CacheDir: t.TempDir()}}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile %s: %v", key, err)
	}
	obj := c.getSync(key)
	if ready := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition); ready == nil || ready.Status != metav1.ConditionTrue {
		t.Fatalf("Sync %s after a reconcile: Ready %+v", key, ready)
	}
	return obj
}

// resourceVersions are the resourceVersions of the Sync and of the app's objects that
// exist, by kind/name.
func resourceVersions(t *testing.T, c *syncCLI, key types.NamespacedName, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{"Sync/" + key.Name: c.getSync(key).ResourceVersion}
	var cms corev1.ConfigMapList
	if err := c.env.Client.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, o := range cms.Items {
		out["ConfigMap/"+o.Name] = o.ResourceVersion
	}
	var secrets corev1.SecretList
	if err := c.env.Client.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, o := range secrets.Items {
		out["Secret/"+o.Name] = o.ResourceVersion
	}
	return out
}

// diffJSON is the part of `olmsync diff sync -o json` the test reads.
type diffJSON struct {
	Revision string
	Differs  bool
	Objects  []struct {
		Action, Kind, Name, App, Diff string
		Fields                        []string
	}
}

// TestDiffSync applies a repository with the Sync reconciler, then pushes a commit that
// changes a ConfigMap and the Secret, adds a ConfigMap and removes one: olmsync diff sync
// says so object by object, masks the Secret, exits 1 and writes nothing. On a clean state
// — before the commit, and after a reconcile of it — it exits 0.
func TestDiffSync(t *testing.T) {
	c := newSyncCLI(t)
	syncNS := olmtest.NewNamespace(t, c.env, "diff-syncs")
	appNS := olmtest.NewNamespace(t, c.env, "diff-team")
	up := gittest.NewUpstream(t, diffRepository(appNS))
	server := gittest.Serve(t, up, gittest.ServerOptions{})
	sync := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: "team"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: server.RepoURL(), Interval: metav1.Duration{Duration: time.Minute}},
			Prune:    true,
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	olmtest.Create(t, c.env, sync)
	key := client.ObjectKeyFromObject(sync)
	applied := reconcileOnce(t, c, key)
	cache := t.TempDir()
	diffArgs := []string{"diff", "sync", "team", "-n", syncNS, "--git-cache", cache}

	// In step: exit 0, every object unchanged.
	out, errOut, err := c.run(diffArgs...)
	wantExit(t, err, 0)
	if !strings.Contains(out, "4 unchanged: no differences") || errOut != "" {
		t.Errorf("diff of a Sync in step:\n%s\nstandard error:\n%s", out, errOut)
	}

	before := resourceVersions(t, c, key, appNS)
	commit := up.Push(t, map[string]string{
		"team/a.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  level: debug\n",
		"team/d.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  shape: round\n",
		"team/c.yaml":     "",
		"team/login.yaml": secretYAML("correct horse"),
	}, "change a and the password, add d, remove c")

	out, errOut, err = c.run(diffArgs...)
	wantExit(t, err, exitFindings)
	if errOut != "" {
		t.Errorf("standard error of a diff that found differences: %s", errOut)
	}
	for _, want := range []string{
		"Sync " + syncNS + "/team at main@sha1:" + commit + " (last applied: " + applied.Status.LastAppliedRevision + "), policy enforce, prune on",
		fmt.Sprintf(`changed    ConfigMap "%s/a" (app team): data.level`, appNS),
		"    -  level: info",
		"    +  level: debug",
		fmt.Sprintf(`changed    Secret "%s/login" (app team): data.password`, appNS),
		"    -  password: '*** (before)'",
		"    +  password: '*** (after)'",
		"       user: '***'",
		fmt.Sprintf(`unchanged  ConfigMap "%s/b" (app team)`, appNS),
		fmt.Sprintf(`created    ConfigMap "%s/d" (app team)`, appNS),
		fmt.Sprintf(`pruned     ConfigMap "%s/c"`, appNS),
		"1 created, 2 changed, 1 pruned, 1 unchanged: the cluster differs from the revision",
	} {
		if !containsLine(out, want) {
			t.Errorf("diff output has no line %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"hunter2", "correct horse", "admin", base64.StdEncoding.EncodeToString([]byte("hunter2")),
		base64.StdEncoding.EncodeToString([]byte("correct horse")), base64.StdEncoding.EncodeToString([]byte("admin"))} {
		if strings.Contains(out, secret) {
			t.Errorf("diff output shows the Secret's value %q:\n%s", secret, out)
		}
	}

	out, _, err = c.run(append(diffArgs, "-o", "json")...)
	wantExit(t, err, exitFindings)
	var report diffJSON
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, o := range report.Objects {
		got[o.Kind+"/"+o.Name] = o.Action
	}
	want := map[string]string{"ConfigMap/a": "changed", "Secret/login": "changed", "ConfigMap/b": "unchanged", "ConfigMap/d": "created", "ConfigMap/c": "pruned"}
	if diff := cmp.Diff(want, got); diff != "" || !report.Differs || !strings.HasSuffix(report.Revision, commit) {
		t.Errorf("-o json: revision %s, differs %t, actions (-want +got):\n%s", report.Revision, report.Differs, diff)
	}

	// Nothing was written: every object and the Sync as they were, d not created, c not deleted.
	if diff := cmp.Diff(before, resourceVersions(t, c, key, appNS)); diff != "" {
		t.Errorf("the diff changed the cluster: resourceVersions (-before +after):\n%s", diff)
	}

	// The reconcile does what the diff said; after it, the diff is clean again.
	reconcileOnce(t, c, key)
	after := resourceVersions(t, c, key, appNS)
	for _, k := range []string{"ConfigMap/a", "Secret/login", "ConfigMap/d"} {
		if after[k] == "" || after[k] == before[k] {
			t.Errorf("the reconcile did not write %s, which the diff said it would change or create", k)
		}
	}
	if after["ConfigMap/b"] != before["ConfigMap/b"] || after["ConfigMap/c"] != "" {
		t.Errorf("after the reconcile: b %s (was %s), c %q (want it pruned)", after["ConfigMap/b"], before["ConfigMap/b"], after["ConfigMap/c"])
	}
	out, _, err = c.run(diffArgs...)
	wantExit(t, err, 0)
	if !strings.Contains(out, "4 unchanged: no differences") {
		t.Errorf("diff after the reconcile:\n%s", out)
	}
}

// TestDiffSyncUnreachable: a Sync whose git server does not answer cannot be diffed; the
// command exits 2 naming the URL.
func TestDiffSyncUnreachable(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "diff-unreachable")
	url := "http://" + testenv.FreeAddr(t) + "/project.git" // nothing listens there
	olmtest.Create(t, c.env, &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: url, Interval: metav1.Duration{Duration: time.Minute}},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	})
	out, errOut, err := c.run("diff", "sync", "gone", "-n", ns, "--git-cache", t.TempDir())
	wantExit(t, err, exitUsage)
	if out != "" || !strings.Contains(errOut, "Error: diff Sync "+ns+"/gone: fetch: ") || !strings.Contains(errOut, url) {
		t.Errorf("output %q, standard error %q: want nothing, and an error naming %s", out, errOut, url)
	}

	_, errOut, err = c.run("diff", "sync", "missing", "-n", ns)
	wantExit(t, err, exitUsage)
	if !strings.Contains(errOut, `no Sync "missing" in namespace `+ns) {
		t.Errorf("standard error %q", errOut)
	}
}

// TestDiffSyncGatedAndWaiting: a Sync never reconciled, whose repository has an
// InstallPlan (OP010) and a custom resource whose CRD it renders too. In enforce mode the
// InstallPlan is gated, naming the rule; the custom resource waits for its CRD; the rest
// would be created; nothing is. In audit mode the InstallPlan would be created too.
func TestDiffSyncGatedAndWaiting(t *testing.T) {
	c := newSyncCLI(t)
	syncNS := olmtest.NewNamespace(t, c.env, "diff-gated")
	appNS := olmtest.NewNamespace(t, c.env, "diff-gated-team")
	group := appNS + ".example.com"
	up := gittest.NewUpstream(t, map[string]string{
		"olmsync.yaml": fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team, path: team, namespace: %s}\n", appNS),
		"cluster-scope/crd.yaml": fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group),
		"team/widget.yaml":      fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {size: 1}\n", group),
		"team/configmap.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  level: info\n",
		"team/installplan.yaml": installPlanYAML,
	})
	server := gittest.Serve(t, up, gittest.ServerOptions{})
	sync := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: "team"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: server.RepoURL(), Interval: metav1.Duration{Duration: time.Minute}},
			Prune:    true,
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	olmtest.Create(t, c.env, sync)
	diffArgs := []string{"diff", "sync", "team", "-n", syncNS, "--git-cache", t.TempDir()}

	out, _, err := c.run(diffArgs...)
	wantExit(t, err, exitFindings)
	for _, want := range []string{
		fmt.Sprintf(`created    CustomResourceDefinition "widgets.%s" (app cluster-scope)`, group),
		fmt.Sprintf(`created    ConfigMap "%s/a" (app team)`, appNS),
		fmt.Sprintf(`waiting    Widget "%s/w" (app team): waits for its CustomResourceDefinition: the API server does not serve %s/v1, Kind=Widget yet`, appNS, group),
		fmt.Sprintf(`gated      InstallPlan "%s/ip" (app team)`, appNS),
		"2 created, 1 gated, 1 waiting: the cluster differs from the revision",
	} {
		if !containsLine(out, want) {
			t.Errorf("diff output has no line %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "    OP010 (team/installplan.yaml:1): ") {
		t.Errorf("the gated InstallPlan's rule is not named:\n%s", out)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.env.Client.Get(context.Background(), client.ObjectKey{Name: "widgets." + group}, crd); !apierrors.IsNotFound(err) {
		t.Errorf("the diff created the CRD, or it cannot be read: %v", err)
	}

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"policy":{"mode":"audit"}}}`))
	if err := c.env.Client.Patch(context.Background(), sync, patch); err != nil {
		t.Fatal(err)
	}
	out, _, err = c.run(append(diffArgs, "-o", "json")...)
	wantExit(t, err, exitFindings)
	var report diffJSON
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, o := range report.Objects {
		got[o.Kind] = o.Action
	}
	want := map[string]string{"CustomResourceDefinition": "created", "ConfigMap": "created", "Widget": "waiting", "InstallPlan": "created"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit mode: actions (-want +got):\n%s", diff)
	}
}

// containsLine reports whether text has a line that is want.
func containsLine(text, want string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if line == want {
			return true
		}
	}
	return false
}
