//go:build !olmsync_light

package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
)

// TestUnknownKindIsUsageError: a verb given a kind it does not act on (flux's
// `kustomizations`, a typo) fails with exit 2 and names the kinds it knows, instead of
// printing its help and exiting 0; so does a verb given no kind. No API server is read.
func TestUnknownKindIsUsageError(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"get", "kustomizations"}, `unknown kind "kustomizations" for olmsync get: want syncs`},
		{[]string{"suspend", "kustomization", "platform"}, `unknown kind "kustomization" for olmsync suspend: want sync`},
		{[]string{"reconcile", "syncz", "platform"}, `unknown kind "syncz" for olmsync reconcile: want sync`},
		{[]string{"tree", "ks", "platform"}, `unknown kind "ks" for olmsync tree: want sync`},
		{[]string{"export", "helmreleases"}, `unknown kind "helmreleases" for olmsync export: want sync`},
		{[]string{"get"}, `olmsync get needs a kind: syncs`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := run(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if code := exitCode(err); code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if strings.Contains(out, "Usage:") {
				t.Errorf("printed the help instead of an error:\n%s", out)
			}
		})
	}
	// The short name and the plural work as the kind in every verb.
	for _, args := range [][]string{{"get", "sy", "--help"}, {"suspend", "syncs", "--help"}, {"tree", "sy", "--help"}} {
		if out, err := run(t, args...); err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("olmsync %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestSyncCRDShortNameAndColumns reads, as kubectl does, the short name from discovery
// and the columns of `kubectl get sy` from the API server's Table: Ready, Status (the
// Ready condition's message) and Revision without -o wide, as a Flux Kustomization has.
func TestSyncCRDShortNameAndColumns(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "sync-columns")
	c.createSync(ns, "platform", false, &olmsyncv1alpha1.SyncStatus{
		LastAppliedRevision: "main@sha1:4f1b2c3d",
		Conditions:          []metav1.Condition{readyCondition(metav1.ConditionFalse, olmsyncv1alpha1.ApplyFailedReason, "Subscription team-a/etcd refused")},
	})

	dc, err := discovery.NewDiscoveryClientForConfig(c.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := dc.ServerResourcesForGroupVersion(olmsyncv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	var shortNames []string
	for _, r := range resources.APIResources {
		if r.Name == "syncs" {
			shortNames = r.ShortNames
		}
	}
	if diff := cmp.Diff([]string{"sy"}, shortNames); diff != "" {
		t.Errorf("short names of syncs (-want +got):\n%s", diff)
	}

	cfg := rest.CopyConfig(c.env.Config)
	cfg.GroupVersion = &schema.GroupVersion{Group: olmsyncv1alpha1.SchemeGroupVersion.Group, Version: olmsyncv1alpha1.SchemeGroupVersion.Version}
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(c.env.Scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().Namespace(ns).Resource("syncs").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := yaml.Unmarshal(body, &table); err != nil {
		t.Fatal(err)
	}
	var columns, wide []string
	cells := map[string]any{}
	for i, col := range table.ColumnDefinitions {
		if col.Priority == 0 {
			columns = append(columns, col.Name)
			cells[col.Name] = table.Rows[0].Cells[i]
		} else {
			wide = append(wide, col.Name)
		}
	}
	if diff := cmp.Diff([]string{"Name", "Ready", "Status", "Revision", "Age"}, columns); diff != "" {
		t.Errorf("columns of kubectl get sy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"URL", "Suspended"}, wide); diff != "" {
		t.Errorf("columns of -o wide only (-want +got):\n%s", diff)
	}
	want := map[string]any{"Name": "platform", "Ready": "False", "Status": "Subscription team-a/etcd refused", "Revision": "main@sha1:4f1b2c3d"}
	for name, v := range want {
		if cells[name] != v {
			t.Errorf("column %s: %v, want %v", name, cells[name], v)
		}
	}
}

// TestGetSyncsWide: -o wide adds the source's URL, ref and path before the message.
func TestGetSyncsWide(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "get-wide")
	c.createSync(ns, "platform", false, &olmsyncv1alpha1.SyncStatus{
		LastAppliedRevision: "main@sha1:4f1b2c3d",
		Conditions:          []metav1.Condition{readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:4f1b2c3d")},
	})
	key := types.NamespacedName{Namespace: ns, Name: "pinned"}
	olmtest.Create(t, c.env, &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source: olmsyncv1alpha1.GitSource{
				URL: "ssh://git@example.com/clusters.git", Interval: metav1.Duration{Duration: time.Minute},
				Ref: &olmsyncv1alpha1.GitRef{SemVer: ">=1.2.0 <2.0.0"},
			},
			Path:     "clusters/prod",
			Interval: metav1.Duration{Duration: time.Minute},
		},
	})
	out, stderr, err := c.run("get", "syncs", "-n", ns, "-o", "wide")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := []string{
		"NAME REVISION SUSPENDED READY URL REF PATH MESSAGE",
		"pinned false Unknown ssh://git@example.com/clusters.git semver:>=1.2.0 <2.0.0 clusters/prod waiting to be reconciled",
		"platform main@sha1:4f1b2c3d false True https://example.com/clusters.git HEAD ./ Applied revision: main@sha1:4f1b2c3d",
	}
	if diff := cmp.Diff(want, fields(out)); diff != "" {
		t.Errorf("get syncs -o wide (-want +got):\n%s", diff)
	}
	if _, _, err := c.run("get", "syncs", "-n", ns, "-o", "yaml", "--watch"); err == nil || exitCode(err) != exitUsage {
		t.Errorf("-o yaml --watch: %v, want a usage error", err)
	}
}

// lockedBuffer is a bytes.Buffer a command writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestGetSyncsWatch: get --watch prints the table, then one row per change of what the
// table shows (a change of a field it does not show prints nothing), a deleted Sync's
// row, and returns without error when cancelled.
func TestGetSyncsWatch(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "get-watch")
	key := c.createSync(ns, "platform", false, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	cmd := newRootCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"get", "syncs", "-n", ns, "--watch", "--kubeconfig", c.kubeconfig})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	waitFor := func(row string) {
		t.Helper()
		olmtest.Eventually(t, "the row "+row, func() error {
			if !slices.Contains(fields(out.String()), row) {
				return fmt.Errorf("output so far:\n%s%s", out.String(), errOut.String())
			}
			return nil
		})
	}
	waitFor("platform false Unknown waiting to be reconciled")
	c.writeStatus(ctx, key, func(s *olmsyncv1alpha1.SyncStatus) {
		s.LastFetchedRevision = "main@sha1:77aa" // not in the table: no row
	})
	c.writeStatus(ctx, key, func(s *olmsyncv1alpha1.SyncStatus) {
		s.LastAppliedRevision = "main@sha1:77aa"
		apimeta := readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:77aa")
		s.Conditions = []metav1.Condition{apimeta}
	})
	waitFor("platform main@sha1:77aa false True Applied revision: main@sha1:77aa")
	if err := c.env.Client.Delete(ctx, c.getSync(key)); err != nil {
		t.Fatal(err)
	}
	waitFor("platform main@sha1:77aa false True deleted")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("get --watch, cancelled: %v\n%s", err, errOut.String())
	}
	want := []string{
		"NAME REVISION SUSPENDED READY MESSAGE",
		"platform false Unknown waiting to be reconciled",
		"platform main@sha1:77aa false True Applied revision: main@sha1:77aa",
		"platform main@sha1:77aa false True deleted",
	}
	if diff := cmp.Diff(want, fields(out.String())); diff != "" {
		t.Errorf("get syncs --watch (-want +got):\n%s", diff)
	}
}

// TestSuspendResumeAll: --all suspends, then resumes and asks a reconcile of, every Sync
// of the namespace and of no other; -A every Sync of every namespace; a NAME with --all,
// or neither, is a usage error.
func TestSuspendResumeAll(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "suspend-all")
	other := olmtest.NewNamespace(t, c.env, "suspend-all-other")
	keys := []types.NamespacedName{c.createSync(ns, "a", false, nil), c.createSync(ns, "b", false, nil)}
	untouched := c.createSync(other, "c", false, nil)

	out, stderr, err := c.run("suspend", "sync", "--all", "-n", ns)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := fmt.Sprintf("Sync %s suspended\nSync %s suspended\n", keys[0], keys[1]); out != want {
		t.Errorf("suspend --all:\n%s\nwant:\n%s", out, want)
	}
	for _, key := range keys {
		if !c.getSync(key).Spec.Suspend {
			t.Errorf("Sync %s was not suspended", key)
		}
	}
	if c.getSync(untouched).Spec.Suspend {
		t.Errorf("Sync %s of another namespace was suspended", untouched)
	}

	out, stderr, err = c.run("resume", "sync", "--all", "-n", ns, "--wait=false")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var want strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&want, "Sync %s resumed\n", key)
	}
	for _, key := range keys {
		obj := c.getSync(key)
		at := obj.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
		if obj.Spec.Suspend || at == "" {
			t.Errorf("Sync %s: suspend %t, reconcile requested at %q", key, obj.Spec.Suspend, at)
		}
		fmt.Fprintf(&want, "reconcile of Sync %s requested at %s\n", key, at)
	}
	if out != want.String() {
		t.Errorf("resume --all --wait=false:\n%s\nwant:\n%s", out, want.String())
	}

	if _, stderr, err := c.run("suspend", "sync", "--all", "-A"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, key := range append(keys, untouched) {
		if !c.getSync(key).Spec.Suspend {
			t.Errorf("suspend --all -A: Sync %s was not suspended", key)
		}
	}

	for _, args := range [][]string{
		{"suspend", "sync", "a", "--all", "-n", ns},
		{"suspend", "sync", "-n", ns},
		{"resume", "sync", "a", "-A"},
	} {
		if _, _, err := c.run(args...); err == nil || exitCode(err) != exitUsage {
			t.Errorf("olmsync %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// olmChain creates, in ns, a Subscription whose status names an InstallPlan and an
// installed CSV, the InstallPlan, the CSV with two Deployments of which only the first
// exists, as OLM would have left them.
func olmChain(t *testing.T, c *syncCLI, ns string) {
	t.Helper()
	ctx := context.Background()
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd"},
		Spec:       operatorsv1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: "etcd", Channel: "stable"},
	}
	olmtest.Create(t, c.env, sub)
	sub.Status.InstalledCSV = "etcd.v0.9.4"
	sub.Status.CurrentCSV = "etcd.v0.9.4"
	sub.Status.InstallPlanRef = &corev1.ObjectReference{Namespace: ns, Name: "install-x7k2p", Kind: "InstallPlan", APIVersion: "operators.coreos.com/v1alpha1"}
	sub.Status.LastUpdated = metav1.Now()
	if err := c.env.Client.Status().Update(ctx, sub); err != nil {
		t.Fatal(err)
	}
	c.env.Create(t, fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: InstallPlan
metadata: {namespace: %[1]s, name: install-x7k2p}
spec: {clusterServiceVersionNames: [etcd.v0.9.4], approval: Automatic, approved: true}
---
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {namespace: %[1]s, name: etcd.v0.9.4}
spec:
  displayName: etcd
  install:
    strategy: deployment
    spec:
      deployments:
      - name: etcd-operator
        spec: {selector: {matchLabels: {app: etcd}}, template: {metadata: {labels: {app: etcd}}, spec: {containers: [{name: etcd, image: etcd}]}}}
      - name: etcd-backup
        spec: {selector: {matchLabels: {app: backup}}, template: {metadata: {labels: {app: backup}}, spec: {containers: [{name: backup, image: backup}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {namespace: %[1]s, name: etcd-operator}
spec: {selector: {matchLabels: {app: etcd}}, template: {metadata: {labels: {app: etcd}}, spec: {containers: [{name: etcd, image: etcd}]}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: %[1]s, name: settings}
`, ns))
}

// inventorySync creates a Sync whose inventory holds a Namespace, a ConfigMap, a
// Subscription and an OperatorGroup.
func inventorySync(t *testing.T, c *syncCLI, syncNS, ns string) types.NamespacedName {
	t.Helper()
	return c.createSync(syncNS, "platform", false, &olmsyncv1alpha1.SyncStatus{
		Inventory: &olmsyncv1alpha1.ResourceInventory{Entries: []olmsyncv1alpha1.ResourceRef{
			{ID: "_" + ns + "__Namespace", Version: "v1"},
			{ID: ns + "_etcd_operators.coreos.com_Subscription", Version: "v1alpha1"},
			{ID: ns + "_og_operators.coreos.com_OperatorGroup", Version: "v1"},
			{ID: ns + "_settings__ConfigMap", Version: "v1"},
		}},
	})
}

// TestTreeSync: the inventory as a tree, with OLM's chain below the Subscription:
// InstallPlan, CSV, the CSV's Deployments; a missing object says so.
func TestTreeSync(t *testing.T) {
	c := newSyncCLI(t)
	syncNS := olmtest.NewNamespace(t, c.env, "tree-sync")
	ns := olmtest.NewNamespace(t, c.env, "tree-team")
	olmChain(t, c, ns)
	inventorySync(t, c, syncNS, ns)

	out, stderr, err := c.run("tree", "sync", "platform", "-n", syncNS)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := fmt.Sprintf(`Sync/%[2]s/platform
├── Namespace/%[1]s
├── Subscription/%[1]s/etcd
│   └── InstallPlan/%[1]s/install-x7k2p
│       └── ClusterServiceVersion/%[1]s/etcd.v0.9.4
│           ├── Deployment/%[1]s/etcd-operator
│           └── Deployment/%[1]s/etcd-backup (not found)
├── OperatorGroup/%[1]s/og
└── ConfigMap/%[1]s/settings
`, ns, syncNS)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("tree sync (-want +got):\n%s", diff)
	}
}

// TestEvents: the Events of the Syncs and of every object of their trees, oldest first;
// not those of other objects; --for one Sync's.
func TestEvents(t *testing.T) {
	c := newSyncCLI(t)
	syncNS := olmtest.NewNamespace(t, c.env, "events-sync")
	ns := olmtest.NewNamespace(t, c.env, "events-team")
	olmChain(t, c, ns)
	inventorySync(t, c, syncNS, ns)
	c.createSync(syncNS, "quiet", false, nil)

	base := time.Now().Add(-time.Hour)
	event := func(i int, obj corev1.ObjectReference, typ, reason, message string) {
		t.Helper()
		evNS := obj.Namespace
		if evNS == "" {
			evNS = metav1.NamespaceDefault
		}
		at := metav1.NewTime(base.Add(time.Duration(i) * time.Minute))
		olmtest.Create(t, c.env, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: evNS, Name: fmt.Sprintf("%s.%d", obj.Name, i)},
			InvolvedObject: obj, Type: typ, Reason: reason, Message: message,
			FirstTimestamp: at, LastTimestamp: at, Count: 1,
			Source: corev1.EventSource{Component: "olmsync"},
		})
	}
	event(3, corev1.ObjectReference{Kind: "Sync", Namespace: syncNS, Name: "platform"}, "Normal", "ReconciliationSucceeded", "Applied revision: main@sha1:77aa")
	event(1, corev1.ObjectReference{Kind: "InstallPlan", Namespace: ns, Name: "install-x7k2p"}, "Normal", "Installing", "installing etcd.v0.9.4")
	event(2, corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: "etcd-operator"}, "Normal", "ScalingReplicaSet", "Scaled up replica set etcd-operator-6d4f to 1")
	event(4, corev1.ObjectReference{Kind: "Sync", Namespace: syncNS, Name: "quiet"}, "Warning", "FetchFailed", "clone: repository not found")
	event(5, corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "unrelated"}, "Normal", "Other", "not in any tree")
	event(6, corev1.ObjectReference{Kind: "Namespace", Name: ns}, "Normal", "Created", "namespace created")

	noAge := func(out string) []string {
		var rows []string
		for i, row := range fields(out) {
			if i == 0 {
				rows = append(rows, row)
				continue
			}
			_, rest, _ := strings.Cut(row, " ") // LAST SEEN: "59m", "58m"…
			rows = append(rows, rest)
		}
		return rows
	}
	out, stderr, err := c.run("events", "-n", syncNS)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := []string{
		"LAST SEEN TYPE REASON OBJECT MESSAGE",
		"Normal Installing InstallPlan/" + ns + "/install-x7k2p installing etcd.v0.9.4",
		"Normal ScalingReplicaSet Deployment/" + ns + "/etcd-operator Scaled up replica set etcd-operator-6d4f to 1",
		"Normal ReconciliationSucceeded Sync/" + syncNS + "/platform Applied revision: main@sha1:77aa",
		"Warning FetchFailed Sync/" + syncNS + "/quiet clone: repository not found",
		"Normal Created Namespace/" + ns + " namespace created",
	}
	if diff := cmp.Diff(want, noAge(out)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := fields(out)[1]; !strings.HasPrefix(got, "59m ") && !strings.HasPrefix(got, "60m ") {
		t.Errorf("the oldest Event's LAST SEEN: %q, want 59m", got)
	}

	out, stderr, err = c.run("events", "-n", syncNS, "--for", "Sync/quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if diff := cmp.Diff(append(want[:1:1], want[4]), noAge(out)); diff != "" {
		t.Errorf("events --for Sync/quiet (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"Kustomization/quiet", "quiet", "Sync/"} {
		if _, _, err := c.run("events", "-n", syncNS, "--for", bad); err == nil || !strings.Contains(err.Error(), "want Sync/NAME") {
			t.Errorf("--for %s: %v", bad, err)
		}
	}
}

// TestExportSync: export prints the Sync without anything the cluster wrote, and what it
// prints, applied after the Sync is deleted, makes the same Sync; --all prints each.
func TestExportSync(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "export-sync")
	obj := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "platform",
			Labels: map[string]string{"team": "platform"},
			Annotations: map[string]string{
				"owner":               "sre",
				lastAppliedAnnotation: `{"spec":{}}`,
				olmsyncv1alpha1.ReconcileRequestAnnotation: "2026-11-25T10:00:00Z",
			},
		},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source: olmsyncv1alpha1.GitSource{
				URL: "https://example.com/clusters.git", Interval: metav1.Duration{Duration: time.Minute},
				Ref: &olmsyncv1alpha1.GitRef{Branch: "main"},
			},
			Path: "clusters/prod", Prune: true, Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	olmtest.Create(t, c.env, obj)
	obj.Status = olmsyncv1alpha1.SyncStatus{LastAppliedRevision: "main@sha1:77aa", Conditions: []metav1.Condition{
		readyCondition(metav1.ConditionTrue, olmsyncv1alpha1.ReconciliationSucceededReason, "Applied revision: main@sha1:77aa")}}
	if err := c.env.Client.Status().Update(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	c.createSync(ns, "second", false, nil)

	out, stderr, err := c.run("export", "sync", "platform", "-n", ns)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := fmt.Sprintf(`---
apiVersion: olmsync.dev/v1alpha1
kind: Sync
metadata:
  annotations:
    owner: sre
  labels:
    team: platform
  name: platform
  namespace: %s
spec:
  interval: 10m0s
  path: clusters/prod
  policy:
    mode: enforce
  prune: true
  pruneOptions:
    operators: Delete
  source:
    interval: 1m0s
    ref:
      branch: main
    url: https://example.com/clusters.git
`, ns)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("export sync (-want +got):\n%s", diff)
	}

	before := c.getSync(client.ObjectKeyFromObject(obj))
	if err := c.env.Client.Delete(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	again := &olmsyncv1alpha1.Sync{}
	if err := yaml.UnmarshalStrict([]byte(strings.TrimPrefix(out, "---\n")), again); err != nil {
		t.Fatal(err)
	}
	olmtest.Create(t, c.env, again)
	after := c.getSync(client.ObjectKeyFromObject(obj))
	if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
		t.Errorf("the re-applied export's spec (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"owner": "sre"}, after.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	out, stderr, err = c.run("export", "sync", "--all", "-n", ns)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if n := strings.Count(out, "---\n"); n != 2 || !strings.Contains(out, "name: second\n") || !strings.Contains(out, "name: platform\n") {
		t.Errorf("export sync --all: %d documents:\n%s", n, out)
	}
}

// TestCreateSync: create --export prints the Sync and creates nothing; create creates it
// as printed; create again updates its spec; a URL with a password is refused by the
// API server's validation and named.
func TestCreateSync(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "create-sync")
	args := []string{"create", "sync", "platform", "-n", ns, "--url", "https://example.com/clusters.git",
		"--branch", "main", "--path", "clusters/prod", "--interval", "5m", "--prune", "--app", "team-a,team-b"}

	out, stderr, err := c.run(append(args, "--export")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := fmt.Sprintf(`---
apiVersion: olmsync.dev/v1alpha1
kind: Sync
metadata:
  name: platform
  namespace: %s
spec:
  apps:
  - team-a
  - team-b
  interval: 5m0s
  path: clusters/prod
  prune: true
  source:
    interval: 1m0s
    ref:
      branch: main
    url: https://example.com/clusters.git
`, ns)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("create sync --export (-want +got):\n%s", diff)
	}
	list := &olmsyncv1alpha1.SyncList{}
	if err := c.env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Fatalf("--export created %d Syncs (%v)", len(list.Items), err)
	}

	out, stderr, err = c.run(args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	key := types.NamespacedName{Namespace: ns, Name: "platform"}
	if out != fmt.Sprintf("Sync %s created\n", key) {
		t.Errorf("create: %q", out)
	}
	printed := &olmsyncv1alpha1.Sync{}
	if err := yaml.UnmarshalStrict([]byte(strings.TrimPrefix(want, "---\n")), printed); err != nil {
		t.Fatal(err)
	}
	created := c.getSync(key)
	printed.Spec.Policy.Mode = olmsyncv1alpha1.PolicyModeEnforce               // the CRD's defaults
	printed.Spec.PruneOptions.Operators = olmsyncv1alpha1.PruneOperatorsDelete // likewise
	if diff := cmp.Diff(printed.Spec, created.Spec); diff != "" {
		t.Errorf("created spec (-printed +created):\n%s", diff)
	}

	c.writeStatus(context.Background(), key, func(s *olmsyncv1alpha1.SyncStatus) { s.LastAppliedRevision = "main@sha1:77aa" })
	out, stderr, err = c.run("create", "sync", "platform", "-n", ns, "--url", "https://example.com/clusters.git", "--tag", "v1.4.0", "--policy-mode", "audit")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if out != fmt.Sprintf("Sync %s updated\n", key) {
		t.Errorf("create again: %q", out)
	}
	updated := c.getSync(key)
	if updated.Spec.Source.Ref.Tag != "v1.4.0" || updated.Spec.Source.Ref.Branch != "" || updated.Spec.Policy.Mode != olmsyncv1alpha1.PolicyModeAudit || updated.Spec.Prune {
		t.Errorf("updated spec: %+v", updated.Spec)
	}
	if updated.Status.LastAppliedRevision != "main@sha1:77aa" {
		t.Errorf("the update lost the status: %+v", updated.Status)
	}

	_, _, err = c.run("create", "sync", "leaky", "-n", ns, "--url", "https://user:hunter2@example.com/clusters.git")
	if err == nil || !strings.Contains(err.Error(), "must not carry credentials") || strings.Contains(sanitized(err), "hunter2") {
		t.Errorf("a URL with a password: %v", err)
	}
	for _, bad := range [][]string{{"--policy-mode", "strict", "--url", "https://example.com/x.git"}, {"--branch", "main"}} {
		if _, _, err := c.run(append([]string{"create", "sync", "x", "-n", ns, "--export"}, bad...)...); err == nil || exitCode(err) != exitUsage {
			t.Errorf("create %v: %v, want a usage error", bad, err)
		}
	}
}

// sanitized is the error line main prints.
func sanitized(err error) string {
	var b bytes.Buffer
	printError(&b, err)
	return b.String()
}

// TestCompletion runs cobra's __complete as a shell does: Sync names from the API server
// for every verb on one Sync, -o's formats, namespaces for -n, Sync/NAME for events --for.
func TestCompletion(t *testing.T) {
	c := newSyncCLI(t)
	ns := olmtest.NewNamespace(t, c.env, "complete")
	c.createSync(ns, "platform", false, nil)
	c.createSync(ns, "payments", false, nil)
	c.createSync(ns, "teams", false, nil)

	complete := func(args ...string) []string {
		t.Helper()
		cmd := newRootCommand()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"__complete"}, args...))
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("__complete %v: %v\n%s", args, err, errOut.String())
		}
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	const noFiles = ":4" // cobra.ShellCompDirectiveNoFileComp
	for _, verb := range [][]string{{"get", "syncs"}, {"reconcile", "sync"}, {"suspend", "sync"}, {"resume", "sy"}, {"tree", "sync"}, {"export", "sync"}, {"diff", "sync"}} {
		got := complete(append(verb, "--kubeconfig", c.kubeconfig, "-n", ns, "p")...)
		if diff := cmp.Diff([]string{"payments", "platform", noFiles}, got); diff != "" {
			t.Errorf("%v: (-want +got):\n%s", verb, diff)
		}
	}
	if got := complete("reconcile", "sync", "platform", "--kubeconfig", c.kubeconfig, "-n", ns, ""); !cmp.Equal([]string{noFiles}, got) {
		t.Errorf("a second name: %v", got)
	}
	if diff := cmp.Diff([]string{"table", "wide", "json", "yaml", noFiles}, complete("get", "syncs", "-o", "")); diff != "" {
		t.Errorf("-o (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ns, noFiles}, complete("get", "syncs", "--kubeconfig", c.kubeconfig, "-n", ns)); diff != "" {
		t.Errorf("-n (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Sync/teams", noFiles}, complete("events", "--kubeconfig", c.kubeconfig, "-n", ns, "--for", "Sync/t")); diff != "" {
		t.Errorf("events --for (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"enforce", "audit", noFiles}, complete("create", "sync", "x", "--policy-mode", "")); diff != "" {
		t.Errorf("--policy-mode (-want +got):\n%s", diff)
	}
}

// TestRefString: the REF column of -o wide says which revision a source follows in one word.
func TestRefString(t *testing.T) {
	const sha = "4f1b2c3d4f1b2c3d4f1b2c3d4f1b2c3d4f1b2c3d"
	tests := []struct {
		ref  *olmsyncv1alpha1.GitRef
		want string
	}{
		{nil, "HEAD"},
		{&olmsyncv1alpha1.GitRef{}, "HEAD"},
		{&olmsyncv1alpha1.GitRef{Branch: "main"}, "main"},
		{&olmsyncv1alpha1.GitRef{Branch: "main", Commit: sha}, "main@" + sha},
		{&olmsyncv1alpha1.GitRef{Commit: sha}, "commit:" + sha},
		{&olmsyncv1alpha1.GitRef{Tag: "v1.4.0"}, "tag:v1.4.0"},
		{&olmsyncv1alpha1.GitRef{SemVer: ">=1.2.0 <2.0.0"}, "semver:>=1.2.0 <2.0.0"},
	}
	for _, tt := range tests {
		if got := refString(tt.ref); got != tt.want {
			t.Errorf("refString(%+v) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}
