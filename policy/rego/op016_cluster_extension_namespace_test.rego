package olmsync.rules.op016_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op016

ext := {
	"apiVersion": "olm.operatorframework.io/v1",
	"kind": "ClusterExtension",
	"metadata": {"name": "argocd"},
	"spec": {
		"namespace": "argocd",
		"serviceAccount": {"name": "argocd-installer"},
		"source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}},
	},
}

sa := {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "argocd-installer", "namespace": "argocd"}}

test_namespace_and_account_declared_in_cluster_scope_app_pass if {
	count(op016.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(ext), f.entry(f.namespace("argocd")), f.entry(sa)])])
}

test_undeclared_namespace_is_denied if {
	op016.deny == {{
		"msg": `ClusterExtension "argocd" installs into namespace "argocd", but no Namespace "argocd" is declared in the cluster-scope app; declare it there`,
		"object": f.ref("cluster-scope", ext, ""),
	}} with input as f.cluster([f.cluster_scope([f.entry(ext), f.entry(sa)])])
}

test_namespace_of_an_individual_app_is_denied if {
	op016.deny == {{
		"msg": `ClusterExtension "argocd" installs into namespace "argocd", which is declared in app "argocd", not in the cluster-scope app; declare the Namespace in the cluster-scope app`,
		"object": f.ref("cluster-scope", ext, ""),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(ext), f.entry(sa)]),
		f.app("argocd", "argocd", [f.entry(f.namespace("argocd"))]),
	])
}

test_undeclared_service_account_is_denied if {
	op016.deny == {{
		"msg": `ClusterExtension "argocd" names ServiceAccount "argocd-installer" of namespace "argocd", which is not declared in the cluster-scope app; it holds the extension's cluster-wide permissions, so declare it there`,
		"object": f.ref("cluster-scope", ext, ""),
	}} with input as f.cluster([
		f.cluster_scope([f.entry(ext), f.entry(f.namespace("argocd"))]),
		f.app("argocd", "argocd", [f.entry(sa)]),
	])
}

# OLM v1 releases that ignore spec.serviceAccount accept an extension without one.
test_no_service_account_is_fine if {
	no_sa := object.remove(ext, ["spec"])
	bare := object.union(no_sa, {"spec": {"namespace": "argocd", "source": ext.spec.source}})
	count(op016.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(bare), f.entry(f.namespace("argocd"))])])
}

# An OLM v0 kind of the same name, or another group's, is not OLM v1's.
test_other_group_is_ignored if {
	other := object.union(ext, {"apiVersion": "example.com/v1"})
	count(op016.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(other)])])
}
