# The benchmark's bridge from conftest to olmsync's built-in rules (BenchmarkCheck,
# kustomize+conftest). conftest test --combine gives every rendered document as
# {"path": "<cluster>/<app>.yaml", "contents": <object>}; the rules need olmsync's policy
# input, one document per cluster (docs/policy.md). The app facts that kustomize's output
# does not carry (cluster, destination namespace, cluster-scope) come from --data, as they
# would come from the Argo CD Applications. Waivers, sources and lines are left out: the
# kustomize CLI's output has no provenance.
package main

bench := data.olmsync_bench

clusters contains app.cluster if some app in bench.apps

deny contains msg if {
	some cluster in clusters
	doc := policy_input(cluster)
	results := {r | some pkg; r := data.olmsync.rules[pkg].deny[_]} with input as doc
	some r in results
	msg := sprintf("%s: %s", [cluster, r.msg])
}

warn contains msg if {
	some cluster in clusters
	doc := policy_input(cluster)
	results := {r | some pkg; r := data.olmsync.rules[pkg].warn[_]} with input as doc
	some r in results
	msg := sprintf("%s: %s", [cluster, r.msg])
}

# documents are the rendered documents of each app's output file, grouped once.
documents[file] := docs if {
	some file, _ in bench.apps
	docs := [d.contents | some d in input; d.path == file]
}

policy_input(cluster) := {
	"apiVersion": "olmsync.dev/v1alpha1",
	"kind": "PolicyInput",
	"cluster": cluster,
	"config": bench.config,
	"apps": [app |
		some file, a in bench.apps
		a.cluster == cluster
		objects := [entry(obj, a) | some obj in documents[file]]
		app := {
			"name": a.name,
			"path": a.path,
			"namespace": a.namespace,
			"clusterScope": a.clusterScope,
			"objects": objects,
		}
	],
}

entry(obj, app) := {
	"object": obj,
	"source": {"file": "", "line": 0},
	"namespace": landing_namespace(obj, app),
	"scope": scope(obj),
}

scope(obj) := "Cluster" if {
	bench.clusterScoped[obj.kind]
} else := "Namespaced"

landing_namespace(obj, _) := "" if scope(obj) == "Cluster"

landing_namespace(obj, app) := ns if {
	scope(obj) != "Cluster"
	ns := object.get(obj.metadata, "namespace", app.namespace)
}
