# Builders for the Rego unit tests: input documents, apps, object entries and manifests,
# shaped exactly as the Go side builds them (docs/policy.md, "The input document").
package olmsync.fixtures

file := "apps/example.yaml"

default_config := {
	"marketplaceNamespace": "openshift-marketplace",
	"globalOperatorsNamespace": "openshift-operators",
	"operatorGroups": [{"namespace": "openshift-operators", "name": "global-operators", "global": true}],
	"metaOperators": [],
}

# cluster is the input document of one cluster with the default config.
cluster(apps) := {
	"apiVersion": "olmsync.dev/v1alpha1",
	"kind": "PolicyInput",
	"cluster": "",
	"config": default_config,
	"apps": apps,
}

# cluster_with is cluster with some config fields replaced.
cluster_with(config, apps) := object.union(cluster(apps), {"config": object.union(default_config, config)})

cluster_scope(objects) := {
	"name": "cluster-scope",
	"path": "cluster-scope/overlays/prod",
	"namespace": "",
	"clusterScope": true,
	"objects": objects,
}

app(n, ns, objects) := {
	"name": n,
	"path": concat("/", ["apps", n]),
	"namespace": ns,
	"clusterScope": false,
	"objects": objects,
}

# entry wraps a manifest as an object entry whose namespace is its metadata.namespace.
entry(obj) := entry_in(obj, object.get(obj.metadata, "namespace", ""))

# entry_in wraps a manifest as an object entry with the given effective namespace, as for a
# manifest without metadata.namespace that takes its app's destination namespace.
entry_in(obj, ns) := {
	"object": obj,
	"source": {"file": file, "line": 1},
	"namespace": ns,
	"scope": scope(obj),
}

scope(obj) := "Cluster" if obj.kind in {"Namespace", "ClusterRole", "CustomResourceDefinition"}

else := "Namespaced"

# ref is the object of a rule result for obj in app app_name, in namespace ns.
ref(app_name, obj, ns) := {
	"app": app_name,
	"apiVersion": obj.apiVersion,
	"kind": obj.kind,
	"namespace": ns,
	"name": obj.metadata.name,
}

meta(ns, n) := {"name": n} if ns == ""

meta(ns, n) := {"name": n, "namespace": ns} if ns != ""

operator_group(ns, n, spec) := {
	"apiVersion": "operators.coreos.com/v1",
	"kind": "OperatorGroup",
	"metadata": meta(ns, n),
	"spec": spec,
}

subscription(ns, n, pkg) := {
	"apiVersion": "operators.coreos.com/v1alpha1",
	"kind": "Subscription",
	"metadata": meta(ns, n),
	"spec": {
		"channel": "stable",
		"name": pkg,
		"source": "community-operators",
		"sourceNamespace": "openshift-marketplace",
	},
}

catalog_source(ns, n) := {
	"apiVersion": "operators.coreos.com/v1alpha1",
	"kind": "CatalogSource",
	"metadata": meta(ns, n),
	"spec": {"sourceType": "grpc", "image": "quay.io/example/catalog:v1"},
}

csv(ns, n) := {
	"apiVersion": "operators.coreos.com/v1alpha1",
	"kind": "ClusterServiceVersion",
	"metadata": meta(ns, n),
	"spec": {"displayName": n, "version": "1.0.0"},
}

install_plan(ns, n) := {
	"apiVersion": "operators.coreos.com/v1alpha1",
	"kind": "InstallPlan",
	"metadata": meta(ns, n),
	"spec": {"approval": "Automatic", "approved": true, "clusterServiceVersionNames": ["example.v1.0.0"]},
}

namespace(n) := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}

cluster_role(n) := {
	"apiVersion": "rbac.authorization.k8s.io/v1",
	"kind": "ClusterRole",
	"metadata": {"name": n},
	"rules": [],
}

config_map(ns, n) := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(ns, n), "data": {}}

# own_scope_app is an app whose cluster is unknown (a kustomization root nothing places).
own_scope_app(n, ns, objects) := object.union(app(n, ns, objects), {"ownScope": true})
