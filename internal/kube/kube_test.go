package kube

import (
	"os"
	"path/filepath"
	"testing"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`

// A kubeconfig names no rate limit; client-go's default of 5 requests a second would make
// a reconcile of 100 objects take a minute, so Config turns the client-side limit off.
func TestConfigLeavesThrottlingToTheServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Config(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 {
		t.Errorf("QPS = %v, want < 0 (no client-side rate limiter)", cfg.QPS)
	}
	if cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("Host = %q", cfg.Host)
	}
}
