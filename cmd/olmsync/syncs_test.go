//go:build !olmsync_light

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// syncCLI runs the verbs on Syncs in-process as a user of the envtest API server would,
// through a kubeconfig of their own.
type syncCLI struct {
	t          *testing.T
	env        *testenv.Env
	kubeconfig string
}

func newSyncCLI(t *testing.T) *syncCLI {
	t.Helper()
	env := testenv.Get(t)
	return &syncCLI{t: t, env: env, kubeconfig: env.UserKubeconfig(t, envtest.User{Name: "olmsync-cli", Groups: []string{"system:masters"}})}
}

// run runs `olmsync args... --kubeconfig K` and returns what it wrote to standard output
// and standard error (main's error line included) and its error.
func (c *syncCLI) run(args ...string) (stdout, stderr string, err error) {
	c.t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append(args, "--kubeconfig", c.kubeconfig))
	err = cmd.ExecuteContext(context.Background())
	if err != nil {
		printError(&errOut, err)
	}
	return out.String(), errOut.String(), err
}

// createSync creates a Sync and, when status is not nil, writes it through the status
// subresource.
func (c *syncCLI) createSync(ns, name string, suspend bool, status *olmsyncv1alpha1.SyncStatus) types.NamespacedName {
	c.t.Helper()
	obj := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: "https://example.com/clusters.git", Interval: metav1.Duration{Duration: time.Minute}},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
			Suspend:  suspend,
		},
	}
	olmtest.Create(c.t, c.env, obj)
	if status != nil {
		obj.Status = *status
		if err := c.env.Client.Status().Update(context.Background(), obj); err != nil {
			c.t.Fatalf("status of Sync %s/%s: %v", ns, name, err)
		}
	}
	return client.ObjectKeyFromObject(obj)
}

func (c *syncCLI) getSync(key types.NamespacedName) *olmsyncv1alpha1.Sync {
	c.t.Helper()
	obj := &olmsyncv1alpha1.Sync{}
	if err := c.env.Client.Get(context.Background(), key, obj); err != nil {
		c.t.Fatal(err)
	}
	return obj
}

func readyCondition(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: olmsyncv1alpha1.ReadyCondition, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}

// outcome is what the test's stand-in for the reconciler writes when a reconcile ends.
type outcome struct {
	ready    *metav1.Condition // nil: Ready stays Unknown, the reconcile never ends
	revision string
}

// playReconciler plays the Sync reconciler's part for one Sync, which no controller
// reconciles in these tests: when the requestedAt annotation takes a value it has not
// handled, it writes that value to status.lastHandledReconcileAt with Ready Unknown (a
// reconcile still progressing), keeps it so for hold, then writes the outcome. The
// returned channel gets the time just before the outcome was written.
func (c *syncCLI) playReconciler(key types.NamespacedName, hold time.Duration, o outcome) <-chan time.Time {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	c.t.Cleanup(func() { cancel(); <-stopped })
	finished := make(chan time.Time, 1)
	go func() {
		defer close(stopped)
		handled := ""
		for ctx.Err() == nil {
			obj := &olmsyncv1alpha1.Sync{}
			if err := c.env.Client.Get(ctx, key, obj); err != nil {
				if ctx.Err() == nil {
					c.t.Errorf("reconciler stand-in: %v", err)
				}
				return
			}
			requested := obj.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
			if requested == "" || requested == handled {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			handled = requested
			c.writeStatus(ctx, key, func(s *olmsyncv1alpha1.SyncStatus) {
				s.LastHandledReconcileAt = requested
				apimeta.SetStatusCondition(&s.Conditions, readyCondition(metav1.ConditionUnknown, olmsyncv1alpha1.ProgressingReason, "applying stage 3 of 4"))
			})
			if o.ready == nil {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(hold):
			}
			at := time.Now() // before the write: a command that saw the outcome returned after at
			c.writeStatus(ctx, key, func(s *olmsyncv1alpha1.SyncStatus) {
				apimeta.SetStatusCondition(&s.Conditions, *o.ready)
				s.LastAppliedRevision = o.revision
			})
			select { // one outcome is read at most; the others are not waited for
			case finished <- at:
			default:
			}
		}
	}()
	return finished
}

// outcomeWritten returns the time playReconciler wrote the outcome, failing the test when
// it has not within a few seconds: the command returned before the reconcile ended.
func outcomeWritten(t *testing.T, finished <-chan time.Time) time.Time {
	t.Helper()
	select {
	case at := <-finished:
		return at
	case <-time.After(5 * time.Second):
		t.Fatal("the command returned, and the reconcile has not ended")
		return time.Time{}
	}
}

func (c *syncCLI) writeStatus(ctx context.Context, key types.NamespacedName, set func(*olmsyncv1alpha1.SyncStatus)) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := &olmsyncv1alpha1.Sync{}
		if err := c.env.Client.Get(ctx, key, obj); err != nil {
			return err
		}
		set(&obj.Status)
		return c.env.Client.Status().Update(ctx, obj)
	})
	if err != nil && ctx.Err() == nil {
		c.t.Errorf("reconciler stand-in: status of %s: %v", key, err)
	}
}

// fields splits each line of a table on its runs of spaces, so that rows compare
// without their padding.
func fields(table string) []string {
	var rows []string
	for line := range strings.SplitSeq(strings.TrimSpace(table), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	return rows
}

// TestGetSyncs lists Syncs as a table (one namespace, every namespace, one by name), as
// JSON and YAML, and says so on standard error when there are none.
func TestGetSyncs(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "get-syncs")
	other := olmtest.NewNamespace(t, c.env, "get-syncs-other") // sorts after ns, whatever their numbers
	empty := olmtest.NewNamespace(t, c.env, "get-syncs")
	c.createSync(ns, "platform", false, &olmsyncv1alpha1.SyncStatus{
		LastAppliedRevision: "main@sha1:4f1b2c3d",
		Conditions:          []metav1.Condition{readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:4f1b2c3d")},
	})
	c.createSync(ns, "teams", true, &olmsyncv1alpha1.SyncStatus{
		Conditions: []metav1.Condition{readyCondition(metav1.ConditionFalse, olmsyncv1alpha1.SuspendedReason, "reconciliation is\nsuspended")},
	})
	c.createSync(ns, "new", false, nil)
	c.createSync(other, "edge", false, &olmsyncv1alpha1.SyncStatus{
		LastAppliedRevision: "v1.2.0@sha1:9e8d7c6b",
		Conditions:          []metav1.Condition{readyCondition(metav1.ConditionFalse, olmsyncv1alpha1.ApplyFailedReason, "Subscription edge/etcd refused")},
	})

	t.Run("table", func(t *testing.T) {
		out, stderr, err := c.run("get", "syncs", "-n", ns)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		want := []string{
			"NAME REVISION SUSPENDED READY MESSAGE",
			"new false Unknown waiting to be reconciled",
			"platform main@sha1:4f1b2c3d false True Applied revision: main@sha1:4f1b2c3d",
			"teams true False reconciliation is suspended",
		}
		if diff := cmp.Diff(want, fields(out)); diff != "" {
			t.Errorf("get syncs -n %s (-want +got):\n%s", ns, diff)
		}
	})

	t.Run("all namespaces", func(t *testing.T) {
		out, stderr, err := c.run("get", "syncs", "-A")
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		rows := fields(out)
		var got []string
		for _, row := range rows[1:] {
			if strings.HasPrefix(row, ns+" ") || strings.HasPrefix(row, other+" ") {
				got = append(got, row)
			}
		}
		want := []string{
			"NAMESPACE NAME REVISION SUSPENDED READY MESSAGE",
			ns + " new false Unknown waiting to be reconciled",
			ns + " platform main@sha1:4f1b2c3d false True Applied revision: main@sha1:4f1b2c3d",
			ns + " teams true False reconciliation is suspended",
			other + " edge v1.2.0@sha1:9e8d7c6b false False Subscription edge/etcd refused",
		}
		if diff := cmp.Diff(want, append(rows[:1:1], got...)); diff != "" {
			t.Errorf("get syncs -A (-want +got):\n%s", diff)
		}
	})

	t.Run("json", func(t *testing.T) {
		out, stderr, err := c.run("get", "syncs", "-n", ns, "-o", "json")
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var list olmsyncv1alpha1.SyncList
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if list.APIVersion != "olmsync.dev/v1alpha1" || list.Kind != "SyncList" {
			t.Errorf("list is %s %s", list.APIVersion, list.Kind)
		}
		var got []string
		for _, s := range list.Items {
			got = append(got, fmt.Sprintf("%s %s/%s suspend=%t revision=%s managedFields=%d", s.Kind, s.Namespace, s.Name, s.Spec.Suspend, s.Status.LastAppliedRevision, len(s.ManagedFields)))
		}
		want := []string{
			"Sync " + ns + "/new suspend=false revision= managedFields=0",
			"Sync " + ns + "/platform suspend=false revision=main@sha1:4f1b2c3d managedFields=0",
			"Sync " + ns + "/teams suspend=true revision= managedFields=0",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("get syncs -o json (-want +got):\n%s", diff)
		}
	})

	t.Run("one by name as yaml", func(t *testing.T) {
		out, stderr, err := c.run("get", "syncs", "edge", "-n", other, "-o", "yaml")
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var obj olmsyncv1alpha1.Sync
		if err := yaml.UnmarshalStrict([]byte(out), &obj); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		ready := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition)
		if obj.Kind != "Sync" || obj.Name != "edge" || ready == nil || ready.Reason != olmsyncv1alpha1.ApplyFailedReason {
			t.Errorf("get syncs edge -o yaml:\n%s", out)
		}
	})

	t.Run("the default namespace", func(t *testing.T) {
		olmtest.EnsureNamespace(t, c.env, defaultSyncNamespace)
		name := "default-" + ns
		c.createSync(defaultSyncNamespace, name, false, nil)
		out, stderr, err := c.run("get", "syncs", name)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if got := fields(out); len(got) != 2 || !strings.HasPrefix(got[1], name+" false Unknown") {
			t.Errorf("get syncs %s:\n%s", name, out)
		}
	})

	t.Run("none", func(t *testing.T) {
		out, stderr, err := c.run("get", "syncs", "-n", empty)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if out != "" || stderr != "no Syncs found in namespace "+empty+"\n" {
			t.Errorf("stdout %q, stderr %q", out, stderr)
		}
	})

	t.Run("a name across all namespaces", func(t *testing.T) {
		_, stderr, err := c.run("get", "syncs", "platform", "-A")
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(stderr, "cannot be read by name across all namespaces") {
			t.Errorf("err %v, stderr %q", err, stderr)
		}
	})

	t.Run("bad output format", func(t *testing.T) {
		_, stderr, err := c.run("get", "syncs", "-n", ns, "-o", "xml")
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(stderr, `-o "xml": want table, wide, json, yaml`) {
			t.Errorf("err %v, stderr %q", err, stderr)
		}
	})
}

// TestReconcileSyncWaits: reconcile sync sets the annotation, waits while the Sync has
// handled it but is still Ready=Unknown, and reports Ready's message and the revision
// once Ready is True.
func TestReconcileSyncWaits(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "reconcile-sync")
	key := c.createSync(ns, "platform", false, nil)
	hold := 2 * syncPollInterval // long enough for the command to read Ready=Unknown
	finished := c.playReconciler(key, hold, outcome{
		ready:    new(readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:0a1b2c")),
		revision: "main@sha1:0a1b2c",
	})

	out, stderr, err := c.run("reconcile", "sync", "platform", "-n", ns, "--timeout", "30s")
	returned := time.Now()
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr)
	}
	if at := outcomeWritten(t, finished); returned.Before(at) {
		t.Errorf("the command returned at %s, before Ready was set True at %s:\n%s", returned, at, out)
	}
	want := fmt.Sprintf("Sync %s is ready: Applied revision: main@sha1:0a1b2c\napplied revision main@sha1:0a1b2c\n", key)
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	obj := c.getSync(key)
	requested := obj.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
	if _, err := time.Parse(time.RFC3339Nano, requested); err != nil {
		t.Errorf("annotation %s=%q: %v", olmsyncv1alpha1.ReconcileRequestAnnotation, requested, err)
	}
	if !strings.Contains(stderr, "requested at "+requested) {
		t.Errorf("stderr does not name the request %q:\n%s", requested, stderr)
	}
}

// TestReconcileSyncNotReady: a reconcile that ends with Ready=False exits 1, prints the
// reason and the message, and no error line.
func TestReconcileSyncNotReady(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "reconcile-sync")
	key := c.createSync(ns, "platform", false, nil)
	c.playReconciler(key, 0, outcome{
		ready: new(readyCondition(metav1.ConditionFalse, olmsyncv1alpha1.ApplyFailedReason, "Subscription team-a/etcd: admission webhook denied the request")),
	})

	out, stderr, err := c.run("reconcile", "sync", "platform", "-n", ns, "--timeout", "30s")
	if err == nil || exitCode(err) != exitFindings {
		t.Fatalf("err %v, want exit %d\n%s%s", err, exitFindings, out, stderr)
	}
	want := fmt.Sprintf("Sync %s is not ready: ApplyFailed: Subscription team-a/etcd: admission webhook denied the request\n", key)
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(stderr, "Error:") {
		t.Errorf("an error line beside the findings:\n%s", stderr)
	}
}

// TestReconcileSuspendedSync: a suspended Sync is refused, and not annotated.
func TestReconcileSuspendedSync(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "reconcile-sync")
	key := c.createSync(ns, "platform", true, nil)
	_, stderr, err := c.run("reconcile", "sync", "platform", "-n", ns, "--timeout", "10s")
	if err == nil || exitCode(err) != exitUsage {
		t.Fatalf("err %v, want exit %d", err, exitUsage)
	}
	want := fmt.Sprintf("Error: cannot reconcile Sync %s: it is suspended; resume it first (olmsync resume sync platform -n %s)\n", key, ns)
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if v, ok := c.getSync(key).Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]; ok {
		t.Errorf("a suspended Sync was annotated: %q", v)
	}
}

// TestSuspendResumeSync: suspend sets spec.suspend and nothing else; resume unsets it,
// asks for a reconcile and waits for it; resume --wait=false only asks.
func TestSuspendResumeSync(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "suspend-sync")
	key := c.createSync(ns, "platform", false, nil)
	before := c.getSync(key)

	out, stderr, err := c.run("suspend", "sync", "platform", "-n", ns)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if out != fmt.Sprintf("Sync %s suspended\n", key) {
		t.Errorf("suspend: %q", out)
	}
	after := c.getSync(key)
	if !after.Spec.Suspend {
		t.Fatal("spec.suspend is still false")
	}
	after.Spec.Suspend = false
	if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
		t.Errorf("suspend changed more than spec.suspend (-before +after):\n%s", diff)
	}
	if len(after.Annotations) != 0 {
		t.Errorf("suspend annotated the Sync: %v", after.Annotations)
	}

	finished := c.playReconciler(key, syncPollInterval, outcome{
		ready:    new(readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:77aa")),
		revision: "main@sha1:77aa",
	})
	out, stderr, err = c.run("resume", "sync", "platform", "-n", ns, "--timeout", "1m")
	returned := time.Now()
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr)
	}
	want := fmt.Sprintf("Sync %[1]s resumed\nSync %[1]s is ready: Applied revision: main@sha1:77aa\napplied revision main@sha1:77aa\n", key)
	if out != want {
		t.Errorf("resume:\n%s\nwant:\n%s", out, want)
	}
	if at := outcomeWritten(t, finished); returned.Before(at) {
		t.Errorf("resume returned at %s, before Ready was set True at %s", returned, at)
	}
	resumed := c.getSync(key)
	if resumed.Spec.Suspend {
		t.Error("spec.suspend is still true")
	}
	first := resumed.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
	if first == "" || resumed.Status.LastHandledReconcileAt != first {
		t.Errorf("annotation %q, lastHandledReconcileAt %q", first, resumed.Status.LastHandledReconcileAt)
	}

	if _, stderr, err := c.run("suspend", "sync", "platform", "-n", ns); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out, stderr, err = c.run("resume", "sync", "platform", "-n", ns, "--wait=false")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	obj := c.getSync(key)
	second := obj.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
	if obj.Spec.Suspend || second == first || second == "" {
		t.Errorf("resume --wait=false: suspend %t, annotation %q (before %q)", obj.Spec.Suspend, second, first)
	}
	if want := fmt.Sprintf("Sync %[1]s resumed\nreconcile of Sync %[1]s requested at %s\n", key, second); out != want {
		t.Errorf("resume --wait=false:\n%s\nwant:\n%s", out, want)
	}
}

// TestSyncVerbsUnknownSync: every verb names the Sync it did not find and exits 2.
func TestSyncVerbsUnknownSync(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "no-sync")
	for _, verb := range [][]string{{"get", "syncs"}, {"reconcile", "sync"}, {"suspend", "sync"}, {"resume", "sync"}} {
		t.Run(verb[0], func(t *testing.T) {
			out, stderr, err := c.run(append(verb, "missing", "-n", ns)...)
			if err == nil || exitCode(err) != exitUsage {
				t.Fatalf("err %v, want exit %d", err, exitUsage)
			}
			if want := fmt.Sprintf("Error: no Sync \"missing\" in namespace %s\n", ns); stderr != want || out != "" {
				t.Errorf("stdout %q, stderr %q, want %q", out, stderr, want)
			}
		})
	}
}

// TestReconcileSyncTimeout: a reconcile that never ends stops the command at --timeout
// with exit 2 and an error saying what it saw last.
func TestReconcileSyncTimeout(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "reconcile-sync")
	key := c.createSync(ns, "platform", false, nil)
	c.playReconciler(key, 0, outcome{}) // handles the request, stays Ready=Unknown

	start := time.Now()
	_, stderr, err := c.run("reconcile", "sync", "platform", "-n", ns, "--timeout", "3s")
	took := time.Since(start)
	if err == nil || exitCode(err) != exitUsage {
		t.Fatalf("err %v, want exit %d", err, exitUsage)
	}
	requested := c.getSync(key).Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
	want := fmt.Sprintf("timed out after 3s waiting for Sync %s to handle the reconcile requested at %s: last handled request %s; Ready=Unknown Progressing: applying stage 3 of 4",
		key, requested, requested)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
	// It waited out its timeout (a lower bound: how much longer it took is the machine's).
	if took < 3*time.Second {
		t.Errorf("the command gave up after %s with --timeout 3s", took)
	}
	if !strings.Contains(stderr, "Error: timed out") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// flakyReader fails its first Gets with the given errors, then reads.
type flakyReader struct {
	client.Reader
	errs  []error
	calls int
}

func (r *flakyReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.calls++
	if len(r.errs) > 0 {
		err := r.errs[0]
		r.errs = r.errs[1:]
		return err
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestWaitForSyncRetriesTransientErrors: errors that pass — a server unavailable or
// overloaded, a timeout, a refusal of the client's rate limiter — do not end the wait.
func TestWaitForSyncRetriesTransientErrors(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "wait-sync")
	const requestedAt = "2026-01-05T10:00:00.123456789Z"
	key := c.createSync(ns, "platform", false, &olmsyncv1alpha1.SyncStatus{
		LastHandledReconcileAt: requestedAt,
		Conditions:             []metav1.Condition{readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:0a1b2c")},
	})
	syncs := schema.GroupResource{Group: olmsyncv1alpha1.GroupName, Resource: "syncs"}
	r := &flakyReader{Reader: c.env.Client, errs: []error{
		apierrors.NewServiceUnavailable("etcd leader changed"),
		apierrors.NewTooManyRequests("slow down", 1),
		apierrors.NewTimeoutError("request timed out", 1),
		fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline")),
		apierrors.NewInternalError(errors.New("boom")),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obj, err := waitForSync(ctx, r, key, requestedAt, time.Minute)
	if err != nil {
		t.Fatalf("waitForSync: %v", err)
	}
	if r.calls != 6 || obj.Status.LastHandledReconcileAt != requestedAt {
		t.Errorf("%d reads, lastHandledReconcileAt %q", r.calls, obj.Status.LastHandledReconcileAt)
	}

	// A Sync gone or a read not allowed ends the wait at once.
	for _, fatal := range []error{apierrors.NewNotFound(syncs, "platform"), apierrors.NewForbidden(syncs, "platform", errors.New("RBAC"))} {
		r := &flakyReader{Reader: c.env.Client, errs: []error{fatal}}
		if _, err := waitForSync(ctx, r, key, requestedAt, time.Minute); err == nil || r.calls != 1 {
			t.Errorf("%v: err %v after %d reads", fatal, err, r.calls)
		}
	}
}

// TestWaitForSyncRateLimitedNearTheDeadline: a client whose rate limiter refuses every
// request that would wait past the deadline keeps waiting until the deadline, and then
// says it timed out and what the limiter said, rather than failing at the first refusal.
func TestWaitForSyncRateLimitedNearTheDeadline(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "wait-sync")
	key := c.createSync(ns, "platform", false, nil)
	cfg := rest.CopyConfig(c.env.Config)
	cfg.QPS, cfg.Burst = 0.1, 1 // one request, then one every ten seconds
	// The API server's mapping is taken from the shared client, so that only the reads of
	// the Sync go through the limiter.
	limited, err := client.New(cfg, client.Options{Scheme: c.env.Scheme, Mapper: c.env.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err = waitForSync(ctx, limited, key, "2026-01-05T10:00:00Z", 3*time.Second)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "timed out after 3s") || !strings.Contains(err.Error(), "rate limiter") {
		t.Errorf("err %v", err)
	}
	if !strings.Contains(err.Error(), "last handled request none; no Ready condition") {
		t.Errorf("err does not say what it saw: %v", err)
	}
	if took < 2900*time.Millisecond {
		t.Errorf("the wait gave up after %s, before its deadline", took)
	}
}

// TestWideRowRedactsTheURL: `get syncs -o wide` shows a URL as messages do, without what a
// Sync made before the CRD refused credentials may hold in its query or userinfo.
func TestWideRowRedactsTheURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://gitlab.example.com/acme/c.git?private_token=S3CRET": "https://gitlab.example.com/acme/c.git?***",
		"https://oauth2:S3CRET@gitlab.example.com/acme/c.git":        "https://gitlab.example.com/acme/c.git",
	} {
		obj := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Name: "leaky"}, Spec: olmsyncv1alpha1.SyncSpec{Source: olmsyncv1alpha1.GitSource{URL: raw}}}
		if row := (syncTable{wide: true}).row(obj, ""); strings.Contains(row, "S3CRET") || !strings.Contains(row, want+"\t") {
			t.Errorf("row %q, want the URL as %q", row, want)
		}
	}
}
