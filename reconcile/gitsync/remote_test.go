package gitsync_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/gitsync"
)

// TestKubeConfigAppliesToAnotherCluster: a Sync with spec.kubeConfig applies to the
// cluster its kubeconfig names (a second control plane), not to the one olmsync runs in,
// and keeps its inventory and status at home; a kubeconfig that would run a program or
// read olmsync's files is refused and nothing is applied.
func TestKubeConfigAppliesToAnotherCluster(t *testing.T) {
	env := testenv.Get(t)
	remote := testenv.Own(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("remote")
	createNamespace(t, env, ns)
	kubeconfig, err := os.ReadFile(remote.UserKubeconfig(t, envtest.User{Name: "remote-admin", Groups: []string{"system:masters"}}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, data := range map[string][]byte{
		"remote": kubeconfig,
		"exec": []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch /tmp/olmsync-pwned"]}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`),
		"token-file": []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`),
	} {
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"value": data}}); err != nil {
			t.Fatal(err)
		}
	}
	up := gittest.NewUpstream(t, teamRepo(ns, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote-settings\ndata:\n  where: remote\n"}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	// The namespace must exist on the other cluster too.
	if err := remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	s := newSync(t, env, ns, "remote", srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.KubeConfig = &olmsyncv1alpha1.KubeConfigReference{SecretRef: olmsyncv1alpha1.SecretKeyReference{Name: "remote"}}
	})
	got := appliedAt(t, env, s, up.Head(t))
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(configMapGVK)
	if err := remote.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "remote-settings"}, cm); err != nil {
		t.Fatalf("the ConfigMap is not on the other cluster: %v", err)
	}
	if object(t, env, configMapGVK, ns, "remote-settings") != nil {
		t.Error("the ConfigMap was applied to olmsync's own cluster")
	}
	if got.Status.Inventory == nil || len(got.Status.Inventory.Entries) == 0 {
		t.Error("no inventory on the Sync")
	}

	for name, want := range map[string]string{"exec": "runs a program (exec)", "token-file": "reads a file"} {
		bad := newSync(t, env, ns, "bad-"+name, srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
			s.KubeConfig = &olmsyncv1alpha1.KubeConfigReference{SecretRef: olmsyncv1alpha1.SecretKeyReference{Name: name}}
		})
		got := waitReady(t, env, bad, metav1.ConditionFalse, olmsyncv1alpha1.KubeConfigInvalidReason)
		if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, want) || !strings.Contains(msg, "the kubeconfig is refused") {
			t.Errorf("%s: Ready message %q, want it to say %q", name, msg, want)
		}
		if got.Status.LastAppliedRevision != "" {
			t.Errorf("%s: a revision was applied", name)
		}
	}
	if _, err := os.Stat("/tmp/olmsync-pwned"); err == nil {
		t.Error("the exec kubeconfig ran its program")
	}
	olmtest.Eventually(t, "the remote Sync still Ready", func() error {
		g, err := getSync(env, s)
		if err != nil {
			return err
		}
		if !conditions.IsReady(g) {
			return errors.New("not Ready")
		}
		return nil
	})

	// Deleting the Sync lets go of its client of the other cluster.
	if !gitsync.RemoteClientKept(got.UID) {
		t.Fatal("no client of the other cluster is kept for the Sync")
	}
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the Sync gone", func() error {
		switch _, err := getSync(env, s); {
		case err == nil:
			return errors.New("still there")
		case !apierrors.IsNotFound(err):
			return err
		}
		return nil
	})
	if gitsync.RemoteClientKept(got.UID) {
		t.Error("the client of the deleted Sync's other cluster is still kept")
	}
}
