package policy

import (
	"context"
	"fmt"
	"testing"
)

// benchmarkRepository generates clusters shaped like the ADR's repositories: per cluster a
// cluster-scope app (a Namespace and an OperatorGroup per team, CRDs, ClusterRoles, a
// global Subscription, a CatalogSource) and apps-1 team apps (a Subscription, a
// Deployment, a Service, custom resources and ConfigMaps), objects objects in all. Some
// apps break rules on purpose (OP001, OP002, OP004, OP005, OP007, OP011, OP012), so the
// evaluation also builds violations.
func benchmarkRepository(clusters, apps, objects int) []Input {
	out := make([]Input, clusters)
	for c := range clusters {
		teams := apps - 1
		var cs []Object
		add := func(list *[]Object, m map[string]any) {
			*list = append(*list, entry(m, fmt.Sprintf("apps/%s/%s.yaml", m["kind"], metadataString(m, "name")), len(*list)+1))
		}
		add(&cs, crd("example.com", "Widget", "Namespaced"))
		add(&cs, subscription("openshift-operators", "cert-manager", "cert-manager"))
		add(&cs, manifest("operators.coreos.com/v1alpha1", "CatalogSource", "openshift-marketplace", "internal"))
		add(&cs, operatorGroup("openshift-logging", "cluster-logging", nil)) // OP012
		for i := range teams {
			team := fmt.Sprintf("team-%d", i)
			add(&cs, namespaceObject(team))
			targets := []any{team}
			if i%7 == 3 {
				targets = append(targets, "shared") // OP002
			}
			if i%11 != 5 { // else OP005 for the team's Subscription
				add(&cs, operatorGroup(team, team, map[string]any{"targetNamespaces": targets}))
			}
		}
		perApp := (objects - len(cs)) / teams
		extra := (objects - len(cs)) % teams
		list := []App{clusterScopeApp(cs...)}
		for i := range teams {
			team := fmt.Sprintf("team-%d", i)
			var objs []Object
			add(&objs, subscription("", "operator-"+team, "etcd"))
			if i%9 == 4 {
				objs[0].Object["metadata"].(map[string]any)["namespace"] = "elsewhere" // OP005, OP007
			}
			add(&objs, manifest("apps/v1", "Deployment", "", "web"))
			add(&objs, manifest("v1", "Service", "", "web"))
			if i%5 == 2 {
				add(&objs, operatorGroup("", "own", map[string]any{})) // OP001, OP004, OP012
			}
			if i%6 == 1 {
				add(&objs, manifest("rbac.authorization.k8s.io/v1", "ClusterRole", "", team+"-admin")) // OP011
			}
			n := perApp
			if i < extra {
				n++
			}
			for k := 0; len(objs) < n; k++ {
				if k%3 == 0 {
					add(&objs, manifest("example.com/v1", "Widget", "", fmt.Sprintf("w-%d", k)))
				} else {
					add(&objs, configMap("", fmt.Sprintf("cm-%d", k)))
				}
			}
			list = append(list, individualApp(team, team, objs...))
		}
		out[c] = cluster(fmt.Sprintf("cl%d", c), list...)
	}
	return out
}

func countObjects(in Input) int {
	n := 0
	for _, app := range in.Apps {
		n += len(app.Objects)
	}
	return n
}

// BenchmarkEvaluate evaluates every built-in rule over one cluster of 300 apps and 5,000
// objects, and of 1,200 apps and 20,000: input conversion, the query, and building and
// sorting the violations. The cost per object (µs/object) should not grow with the cluster:
// a rule that looks, for each object, at every other object of its kind is quadratic, and
// one cluster of hundreds of team namespaces is the ADR's shape (OP014 looked through every
// OperatorGroup for each Subscription: 193 ms for the first size and 1.87 s for 1,200
// apps, 100 and 465 ms since).
func BenchmarkEvaluate(b *testing.B) {
	for _, size := range []struct{ apps, objects int }{{300, 5000}, {1200, 20000}} {
		b.Run(fmt.Sprintf("apps=%d", size.apps), func(b *testing.B) {
			e := newEngine(b, Options{})
			in := benchmarkRepository(1, size.apps, size.objects)
			if n := countObjects(in[0]); n != size.objects {
				b.Fatalf("generated %d objects, want %d", n, size.objects)
			}
			ctx := context.Background()
			var violations int
			b.ReportAllocs()
			for b.Loop() {
				vs, err := e.Evaluate(ctx, in...)
				if err != nil {
					b.Fatal(err)
				}
				violations = len(vs)
			}
			b.ReportMetric(float64(violations), "violations")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(size.objects), "µs/object")
		})
	}
}

// BenchmarkNew makes an engine of the built-in rules: compiled, as `olmsync check` does
// once a run, and kept, as the reconciler does for every Sync and revision after its first
// (a CompileCache that holds them: the files read and hashed, nothing compiled).
func BenchmarkNew(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		cache *CompileCache
	}{{"compiled", nil}, {"kept", NewCompileCache()}} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := New(ctx, Options{Compiled: bc.cache}); err != nil { // the first: compiled
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := New(ctx, Options{Compiled: bc.cache}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
