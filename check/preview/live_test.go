package preview

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/olmsync/olmsync/internal/testenv"
)

// createStateFolder creates the objects of a cluster state folder on the API server.
func createStateFolder(t *testing.T, env *testenv.Env, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no state in %s: %v", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env.Create(t, string(data))
	}
}

// TestReadClusterMatchesClusterState creates the objects of testdata/cluster-state on a
// real API server and reads them back with ReadCluster: the preview of a repository
// against the live cluster is the preview against the folder — every Subscription,
// OperatorGroup and OLM violation alike — but for the Kubernetes version, which is the
// server's. A copied CSV on the server is not read.
func TestReadClusterMatchesClusterState(t *testing.T) {
	env := testenv.Get(t)
	dir := filepath.Join("testdata", "cluster-state")
	createStateFolder(t, env, dir)
	env.Create(t, `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: etcd.v0.9.4
  namespace: team-j
  labels: {olm.copiedFrom: team-m}
spec: {displayName: etcd, version: 0.9.4, install: {strategy: deployment}}
status: {phase: Succeeded, reason: Copied}
`)

	live, err := ReadCluster(context.Background(), env.Config)
	if err != nil {
		t.Fatal(err)
	}
	version, err := env.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if live.KubeVersion != strings.TrimPrefix(version, "v") || live.KubeVersion == "" {
		t.Errorf("KubeVersion %q, the server says %q", live.KubeVersion, version)
	}
	for _, c := range live.CSVs {
		if c.Namespace == "team-j" {
			t.Errorf("the copied CSV %s/%s was read", c.Namespace, c.Name)
		}
	}
	folder, err := LoadClusterState(dir)
	if err != nil {
		t.Fatal(err)
	}
	folder.KubeVersion = live.KubeVersion
	if len(live.Namespaces) <= len(folder.Namespaces) || len(live.OperatorGroups) != len(folder.OperatorGroups) ||
		len(live.CSVs) != len(folder.CSVs) || len(live.Subscriptions) != len(folder.Subscriptions) {
		t.Errorf("live: %d namespaces, %d groups, %d CSVs, %d subscriptions; folder: %d, %d, %d, %d",
			len(live.Namespaces), len(live.OperatorGroups), len(live.CSVs), len(live.Subscriptions),
			len(folder.Namespaces), len(folder.OperatorGroups), len(folder.CSVs), len(folder.Subscriptions))
	}

	tree := writeTree(t, clusterStateRepo())
	_, fromFolder := checkWith(t, tree, Options{Catalogs: []CatalogSpec{fixtureCatalog}, ClusterStates: map[string]*ClusterState{"": folder}})
	_, fromLive := checkWith(t, tree, Options{Catalogs: []CatalogSpec{fixtureCatalog}, ClusterStates: map[string]*ClusterState{"": live}})
	if len(fromFolder.Subscriptions) != 5 || len(olmFindings(fromFolder)) != 5 {
		t.Fatalf("the folder's preview: %d subscriptions, %v", len(fromFolder.Subscriptions), olmFindings(fromFolder))
	}
	if diff := cmp.Diff(fromFolder.Subscriptions, fromLive.Subscriptions); diff != "" {
		t.Errorf("subscriptions (-folder +live):\n%s", diff)
	}
	if diff := cmp.Diff(fromFolder.OperatorGroups, fromLive.OperatorGroups); diff != "" {
		t.Errorf("operator groups (-folder +live):\n%s", diff)
	}
	if diff := cmp.Diff(fromFolder.Violations, fromLive.Violations); diff != "" {
		t.Errorf("violations (-folder +live):\n%s", diff)
	}
}

// TestReadClusterWithoutOLM reads a cluster that has no OLM CRDs: its namespaces and
// version, and none of OLM's kinds, without an error.
func TestReadClusterWithoutOLM(t *testing.T) {
	env := testenv.GetBare(t)
	st, err := ReadCluster(context.Background(), env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(st.Namespaces, func(ns corev1.Namespace) bool { return ns.Name == "kube-system" }) || st.KubeVersion == "" {
		t.Errorf("namespaces %d, version %q", len(st.Namespaces), st.KubeVersion)
	}
	if len(st.OperatorGroups)+len(st.CSVs)+len(st.Subscriptions)+len(st.CatalogSources) != 0 {
		t.Errorf("OLM objects on a cluster without OLM: %+v", st)
	}
}

// TestReadOnly: a client built on a ReadOnly config cannot write — the request never
// reaches the server — while ReadCluster needs no more than the right to list the five
// kinds (and a user without it gets an error naming the kind).
func TestReadOnly(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	c, err := client.New(ReadOnly(env.Config), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "read-only"}}
	if err := c.Create(ctx, ns); !errors.Is(err, ErrWriteRefused) {
		t.Fatalf("Create through a read-only config: %v, want ErrWriteRefused", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns); !apierrors.IsNotFound(err) {
		t.Fatalf("the namespace reached the server: %v", err)
	}

	// The rights docs/ci.md gives the preview's user.
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "olmsync-preview"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
			{APIGroups: []string{"operators.coreos.com"}, Verbs: []string{"list"},
				Resources: []string{"operatorgroups", "clusterserviceversions", "subscriptions", "catalogsources"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "olmsync-preview"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "preview"}},
	}
	for _, o := range []client.Object{reader, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	k := Kubeconfig{Path: env.UserKubeconfig(t, envtest.User{Name: "preview"})}
	if _, err := ReadKubeconfig(ctx, k); err != nil {
		t.Errorf("a user who may list: %v", err)
	}
	k = Kubeconfig{Path: env.UserKubeconfig(t, envtest.User{Name: "nobody"}), Context: "envtest"}
	_, err = ReadKubeconfig(ctx, k)
	for _, want := range []string{`kubeconfig ` + k.Path + ` (context "envtest")`, "list Namespaces", "list Subscriptions", "forbidden"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a user who may not list: error %v, want it to say %q", err, want)
		}
	}
}
