//go:build !olmsync_light

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// TestRunSyncsAFolder is the quick start against a real API server: `olmsync run --repo
// DIR` creates a Sync of a local repository's folder and applies its committed state;
// uncommitted changes are not seen (and the run says so); after a new commit, `olmsync
// reconcile sync --wait` returns only once that commit is applied, and `get syncs`
// shows it.
func TestRunSyncsAFolder(t *testing.T) {
	env := testenv.Get(t)
	kubeconfig := kubeconfigFile(t, env)
	syncNS := olmtest.NewNamespace(t, env, "run-repo")
	target := syncNS + "-apps"
	dir := gittest.Init(t)
	first := gittest.Commit(t, dir, map[string]string{
		"olmsync.yaml":                 fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team, path: team, namespace: %s}\n", target),
		"cluster-scope/namespace.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", target),
		"team/settings.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n",
	}, "initial")
	gittest.Write(t, dir, map[string]string{"team/draft.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: draft\n"})

	out, done := startRun(t, "--kubeconfig", kubeconfig, "--olm", "external",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--leader-election-namespace", "kube-system",
		"--repo", dir, "--sync-namespace", syncNS, "--sync-name", "quickstart")
	level := func() (string, error) {
		select {
		case err := <-done:
			return "", fmt.Errorf("olmsync run stopped: %w\n%s", err, out)
		default:
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: target, Name: "settings"}, cm); err != nil {
			return "", err
		}
		return cm.Data["level"], nil
	}
	olmtest.Eventually(t, "the committed ConfigMap applied", func() error {
		_, err := level()
		return err
	})
	if !strings.Contains(out.String(), "Sync "+syncNS+"/quickstart follows file://") {
		t.Errorf("the run does not say what it follows:\n%s", out)
	}
	if !strings.Contains(out.String(), "uncommitted changes are not seen") {
		t.Errorf("the run does not warn about the uncommitted file:\n%s", out)
	}
	olmtest.Eventually(t, "Sync Ready", func() error {
		got, err := run(t, "get", "syncs", "-n", syncNS, "--kubeconfig", kubeconfig)
		if err != nil {
			return err
		}
		if !strings.Contains(got, "main@sha1:"+first) || !strings.Contains(got, "True") {
			return fmt.Errorf("get syncs:\n%s", got)
		}
		return nil
	})
	draft := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: target, Name: "draft"}, draft); err == nil {
		t.Error("an uncommitted file was applied")
	}

	second := gittest.Commit(t, dir, map[string]string{
		"team/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n",
		"team/draft.yaml":    "",
	}, "debug")
	got, err := run(t, "reconcile", "sync", "quickstart", "-n", syncNS, "--kubeconfig", kubeconfig, "--timeout", "2m")
	if err != nil {
		t.Fatalf("reconcile sync: %v\n%s", err, got)
	}
	if !strings.Contains(got, second) {
		t.Errorf("reconcile sync does not name the applied commit %s:\n%s", second, got)
	}
	// --wait returned: the commit is applied, no polling needed.
	if l, err := level(); err != nil || l != "debug" {
		t.Errorf("after reconcile sync --wait the level is %q (%v), want debug", l, err)
	}
}
