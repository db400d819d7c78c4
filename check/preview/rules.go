package preview

import (
	"slices"

	"github.com/olmsync/olmsync/policy"
)

// The preview's rule IDs (docs/policy.md, "The OLM preview rules").
const (
	// RuleResolutionFailed: OLM cannot resolve the Subscription (ResolutionFailed).
	RuleResolutionFailed = "OLM001"
	// RuleCSVFails: the CSV the Subscription installs would fail an OperatorGroup check.
	RuleCSVFails = "OLM002"
	// RuleInstalledCSVFails: a CSV the cluster runs would fail once the change is applied.
	RuleInstalledCSVFails = "OLM003"
	// RuleRequirementsNotMet: the CSV would stay Pending with RequirementsNotMet.
	RuleRequirementsNotMet = "OLM004"
	// RuleNoUpgrade: the installed CSV stays although the channel has a newer head.
	RuleNoUpgrade = "OLM005"
	// RuleCatalogNotGiven: the Subscription's catalog was not given; nothing was previewed.
	RuleCatalogNotGiven = "OLM006"
	// RuleCRDUpgradeRefused: the upgrade replaces a CRD in a way OLM's CRD upgrade check refuses.
	RuleCRDUpgradeRefused = "OLM007"
	// RuleServiceAccountMissing: an OperatorGroup names a ServiceAccount that does not exist.
	RuleServiceAccountMissing = "OLM008"
	// RuleExtensionResolutionFailed: OLM v1 cannot resolve the ClusterExtension.
	RuleExtensionResolutionFailed = "OLM009"
	// RuleNoClusterCatalog: the preview knows no ClusterCatalog for a ClusterExtension.
	RuleNoClusterCatalog = "OLM010"
)

// Rules is the catalog of the preview's rules, as the reports show them.
var Rules = []policy.Rule{
	{
		ID: RuleResolutionFailed, Title: "OLM can resolve the Subscription", Severity: policy.SeverityError,
		Kinds: []string{"Subscription"},
		Description: "OLM's resolver finds the package, channel and a CSV for the Subscription in its catalog, and every " +
			"dependency a provider, without breaking what the namespace runs. When it cannot, the Subscription gets the " +
			"condition ResolutionFailed (ConstraintsNotSatisfiable or ErrorPreventedResolution) and nothing is installed; " +
			"the message is OLM's.",
	},
	{
		ID: RuleCSVFails, Title: "The CSV a Subscription installs passes the OperatorGroup checks", Severity: policy.SeverityError,
		Kinds: []string{"Subscription"},
		Description: "The CSV OLM would install for the Subscription (or one of its dependencies) has exactly one " +
			"OperatorGroup in its namespace, supports the group's target namespaces with its install modes, and provides " +
			"no API that an intersecting group already provides. Otherwise OLM sets it Failed with NoOperatorGroup, " +
			"TooManyOperatorGroups, NoTargetNamespaces, UnsupportedOperatorGroup, InterOperatorGroupOwnerConflict or " +
			"CannotModifyStaticOperatorGroupProvidedAPIs — or, when no group (or more than one) manages the namespace, its " +
			"InstallPlan stays Installing (InstallCheckFailed) and the CSV is never created; the finding says which.",
	},
	{
		ID: RuleInstalledCSVFails, Title: "A CSV the cluster runs keeps passing the OperatorGroup checks", Severity: policy.SeverityError,
		Kinds: []string{"OperatorGroup", "Subscription"},
		Description: "A CSV already installed (in the cluster state, or by the base revision) would fail its OperatorGroup " +
			"checks once the change is applied: a group removed, a second group added, target namespaces its install " +
			"modes do not support, or an intersecting group providing its APIs. OLM then fails the running operator and, " +
			"for an API conflict, deletes its deployments. Reported on the namespace's OperatorGroup in Git, else on the " +
			"Subscription.",
	},
	{
		ID: RuleRequirementsNotMet, Title: "The CSV's requirements are met", Severity: policy.SeverityError,
		Kinds: []string{"Subscription"},
		Description: "The CSV's minKubeVersion is not above the cluster's Kubernetes version (known from --cluster-state or --kubeconfig). " +
			"Otherwise OLM leaves it Pending with RequirementsNotMet.",
	},
	{
		ID: RuleNoUpgrade, Title: "The installed CSV can move to the channel head", Severity: policy.SeverityWarning,
		Kinds: []string{"Subscription"},
		Description: "The Subscription's installed CSV is not the head of its channel, and either nothing in the channel " +
			"replaces, skips or has a skipRange holding it (NoUpgradePath) or every upgrade would leave an API without a " +
			"provider or break an installed operator (UpgradeHeld). OLM keeps the installed CSV and says nothing; olmsync " +
			"says why.",
	},
	{
		ID: RuleCatalogNotGiven, Title: "The Subscription's catalog is given to the preview", Severity: policy.SeverityWarning,
		Kinds: []string{"Subscription"},
		Description: "The catalog the Subscription names (spec.source in spec.sourceNamespace) is neither a --catalog nor in " +
			"olmsync.yaml's catalogs, so the preview cannot say what it installs. Give the catalog, or fix spec.source and " +
			"spec.sourceNamespace if they are wrong: OLM would not find it either.",
	},
	{
		ID: RuleCRDUpgradeRefused, Title: "An upgrade replaces its CRDs safely", Severity: policy.SeverityError,
		Kinds: []string{"Subscription"},
		Description: "The CSV a Subscription upgrades to owns a CRD that the running CSV owns too (or that the cluster has), and the new CRD removes " +
			"a version the old one stores (OLM refuses it: risk of data loss) or still serves (refused until it is set " +
			"served: false in an earlier upgrade). OLM fails the InstallPlan and the operator stays on the old version. " +
			"With a cluster state that holds the CRD (--cluster-state, --context), its status.storedVersions and the " +
			"existing custom resources count too: a stored version removed, or a custom resource the new schema refuses " +
			"(OLM: updated validation is too restrictive). Without one, the stored versions are taken to be the old " +
			"bundle's storage version and custom resources are not known.",
	},
	{
		ID: RuleServiceAccountMissing, Title: "An OperatorGroup's service account exists", Severity: policy.SeverityError,
		Kinds: []string{"OperatorGroup"},
		Description: "The OperatorGroup's spec.serviceAccountName names a ServiceAccount that neither the cluster state nor " +
			"Git has in the group's namespace. OLM sets the condition OperatorGroupServiceAccount (ServiceAccountNotFound) " +
			"and stops syncing the group: its target namespaces are not computed, and its operators are not installed.",
	},
	{
		ID: RuleExtensionResolutionFailed, Title: "OLM v1 can resolve the ClusterExtension", Severity: policy.SeverityError,
		Kinds: []string{"ClusterExtension"},
		Description: "OLM v1's resolver finds exactly one bundle of spec.source.catalog.packageName in the ClusterCatalogs " +
			"the extension's selector picks (Unavailable ones left out): in its channels, in its version range (Masterminds " +
			"constraints) and, with a bundle installed and upgradeConstraintPolicy CatalogProvided, a successor of the " +
			"installed bundle (replaces, skips, skipRange) or the installed bundle itself; non-deprecated bundles first, " +
			"the highest version of each catalog, the highest catalog priority across catalogs. Otherwise the " +
			"ClusterExtension stays Progressing with OLM v1's message (no bundles found, bundles in multiple catalogs " +
			"with the same priority, a dependency OLM v1 does not support), which the violation repeats.",
	},
	{
		ID: RuleNoClusterCatalog, Title: "The preview knows the ClusterCatalogs", Severity: policy.SeverityWarning,
		Kinds: []string{"ClusterExtension"},
		Description: "No ClusterCatalog is declared in Git or in the cluster state, so the preview cannot say what the " +
			"ClusterExtension installs. Declare the ClusterCatalogs in Git, or give the cluster's with --cluster-state.",
	},
}

// addRules adds the preview's rules to a rule catalog that lacks them.
func addRules(rules []policy.Rule) []policy.Rule {
	for _, r := range Rules {
		if !slices.ContainsFunc(rules, func(x policy.Rule) bool { return x.ID == r.ID }) {
			rules = append(rules, r)
		}
	}
	return rules
}
