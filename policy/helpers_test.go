package policy

import (
	"context"
	"testing"
	"time"
)

// Builders for the Go tests' inputs: manifests as render produces them (maps), object
// entries with a file and line, and apps.

func manifest(apiVersion, kind, namespace, name string) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
}

func withSpec(m map[string]any, spec any) map[string]any {
	m["spec"] = spec
	return m
}

func annotated(m map[string]any, key, value string) map[string]any {
	meta := m["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[key] = value
	return m
}

func operatorGroup(namespace, name string, spec any) map[string]any {
	return withSpec(manifest("operators.coreos.com/v1", "OperatorGroup", namespace, name), spec)
}

func subscription(namespace, name, pkg string) map[string]any {
	return withSpec(manifest("operators.coreos.com/v1alpha1", "Subscription", namespace, name), map[string]any{
		"channel": "stable", "name": pkg, "source": "community-operators", "sourceNamespace": "openshift-marketplace",
	})
}

func namespaceObject(name string) map[string]any { return manifest("v1", "Namespace", "", name) }

func configMap(namespace, name string) map[string]any {
	return manifest("v1", "ConfigMap", namespace, name)
}

func entry(m map[string]any, file string, line int) Object {
	return Object{Object: m, Source: Source{File: file, Line: line}}
}

func clusterScopeApp(objects ...Object) App {
	return App{Name: "cluster-scope", Path: "cluster-scope/overlays/prod", ClusterScope: true, Objects: objects}
}

func individualApp(name, namespace string, objects ...Object) App {
	return App{Name: name, Path: "apps/" + name, Namespace: namespace, Objects: objects}
}

func cluster(name string, apps ...App) Input {
	return Input{Cluster: name, Apps: apps}
}

// fixedNow is the "now" of waiver expiry in the tests.
var fixedNow = time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)

func newEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	e, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func evaluate(t testing.TB, e *Engine, clusters ...Input) []Violation {
	t.Helper()
	vs, err := e.Evaluate(context.Background(), clusters...)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return vs
}
