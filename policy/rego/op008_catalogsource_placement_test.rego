package olmsync.rules.op008_test

import data.olmsync.fixtures as f
import data.olmsync.rules.op008

test_catalog_in_marketplace_of_cluster_scope_app_passes if {
	count(op008.deny) == 0 with input as f.cluster([f.cluster_scope([f.entry(f.catalog_source("openshift-marketplace", "mine"))])])
}

test_catalog_in_individual_app_is_denied if {
	cat := f.catalog_source("openshift-marketplace", "mine")
	op008.deny == {{
		"msg": `CatalogSource "openshift-marketplace/mine" is declared in app "team-a", not in the cluster-scope app; declare CatalogSources only in the cluster-scope app`,
		"object": f.ref("team-a", cat, "openshift-marketplace"),
	}} with input as f.cluster([f.app("team-a", "team-a", [f.entry(cat)])])
}

test_catalog_outside_marketplace_is_denied if {
	cat := f.catalog_source("rapidast", "rapidast-catalog")
	op008.deny == {{
		"msg": `CatalogSource "rapidast/rapidast-catalog" is in namespace "rapidast"; CatalogSources belong in the marketplace namespace "openshift-marketplace"`,
		"object": f.ref("cluster-scope", cat, "rapidast"),
	}} with input as f.cluster([f.cluster_scope([f.entry(cat)])])
}

# Both wrong: both are reported.
test_catalog_in_individual_app_and_own_namespace_is_denied_twice if {
	bare := f.catalog_source("", "mine")
	count(op008.deny) == 2 with input as f.cluster([f.app("team-a", "team-a", [f.entry_in(bare, "team-a")])])
}

test_configured_marketplace_namespace_is_used if {
	cat := f.catalog_source("olm", "operatorhubio-catalog")
	count(op008.deny) == 0 with input as f.cluster_with({"marketplaceNamespace": "olm"}, [f.cluster_scope([f.entry(cat)])])
	count(op008.deny) == 1 with input as f.cluster([f.cluster_scope([f.entry(cat)])])
}
