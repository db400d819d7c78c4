package resolve

import (
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// Status is where a Subscription stands after resolution.
type Status string

const (
	// StatusResolved: OLM installs or upgrades something for the Subscription (Next).
	StatusResolved Status = "Resolved"
	// StatusUpToDate: the installed CSV is the head of the subscribed channel.
	StatusUpToDate Status = "UpToDate"
	// StatusFailed: the Subscription cannot move towards its channel head; Reason and Message
	// say why.
	StatusFailed Status = "Failed"
)

// The reasons of a Failed Subscription. The first two are OLM's ResolutionFailed reasons;
// a controller writes them as the Subscription's ResolutionFailed condition. The last two
// are olmsync's: OLM stays on the installed CSV there and writes nothing, olmsync says why.
const (
	// ReasonConstraintsNotSatisfiable: no set of bundles meets every constraint; the message
	// is OLM's "constraints not satisfiable: ..." explanation.
	ReasonConstraintsNotSatisfiable = v1alpha1.ConstraintsNotSatisfiable
	// ReasonErrorPreventedResolution: something could not be read (a catalog, a channel that
	// cannot be ordered, a dependency's semver range); the message is the error.
	ReasonErrorPreventedResolution = v1alpha1.ErrorPreventedResolution
	// ReasonUpgradeHeld: bundles that would upgrade the installed CSV exist, but taking any
	// of them would leave an API without a provider or break an installed operator, so the
	// installed CSV stays (seed 001's two "OLM must never" rules). The message explains.
	ReasonUpgradeHeld = "UpgradeHeld"
	// ReasonNoUpgradePath: the installed CSV is not the channel head, and nothing in the
	// channel replaces it, skips it or has a skipRange containing its version.
	ReasonNoUpgradePath = "NoUpgradePath"
)

// Result is the resolution of one namespace.
type Result struct {
	Namespace string `json:"namespace"`
	// Subscriptions has one entry per Subscription of the namespace, in the input order.
	Subscriptions []SubscriptionResult `json:"subscriptions"`
	// Bundles are what the namespace gets, new installs and upgrades, for Subscriptions and
	// for their dependencies, in the order resolution took them.
	Bundles []Bundle `json:"bundles,omitempty"`
	// Generated are the Subscriptions OLM creates for dependencies no Subscription tracks,
	// named <package>-<channel>-<catalog>-<catalogNamespace>.
	Generated []v1alpha1.Subscription `json:"generated,omitempty"`
	// Warnings are things resolution passed over that a person may want to know: a channel
	// of another catalog that cannot be ordered, and so offered no upgrade.
	Warnings []string `json:"warnings,omitempty"`
}

// Subscription returns the result of the named Subscription, or nil.
func (r *Result) Subscription(name string) *SubscriptionResult {
	for i := range r.Subscriptions {
		if r.Subscriptions[i].Name == name {
			return &r.Subscriptions[i]
		}
	}
	return nil
}

// SubscriptionResult is what resolution decided for one Subscription.
type SubscriptionResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Package   string `json:"package"`
	// Channel is the channel followed: spec.channel, or the package's default channel.
	Channel string `json:"channel"`
	// Source is the catalog spec.source and spec.sourceNamespace name.
	Source   CatalogKey        `json:"source"`
	Approval v1alpha1.Approval `json:"approval"`
	// Installed is status.installedCSV when that CSV exists in the namespace.
	Installed    string       `json:"installed,omitempty"`
	Resolution   Resolution   `json:"resolution"`
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// Deprecations are the catalog's olm.deprecations entries that concern the installed
	// CSV: informational conditions that block nothing.
	Deprecations []Deprecation `json:"deprecations,omitempty"`
}

// Resolution is the decision itself.
type Resolution struct {
	Status Status `json:"status"`
	// Reason is set when Status is Failed.
	Reason string `json:"reason,omitempty"`
	// Next is the CSV OLM installs next for the Subscription.
	Next string `json:"next,omitempty"`
	// NextSource is the catalog that supplies Next: the Subscription's own, or, for an
	// upgrade, another visible catalog by seed 004's order of precedence.
	NextSource *CatalogKey `json:"nextSource,omitempty"`
	// Replaces is the installed CSV that Next replaces (written into Next's spec.replaces).
	Replaces string `json:"replaces,omitempty"`
	// Head is the head of the subscribed channel in the Subscription's catalog.
	Head string `json:"head,omitempty"`
	// Path is every CSV OLM installs, one upgrade at a time, from Next on until the head
	// (or until nothing replaces the last one).
	Path    []string `json:"path,omitempty"`
	Message string   `json:"message,omitempty"`
}

// Dependency is a bundle that satisfies a dependency of what the Subscription installs (or
// has installed), directly or through another dependency.
type Dependency struct {
	// RequiredBy is the CSV that has the dependency.
	RequiredBy string `json:"requiredBy"`
	// Requirement is what it requires, in OLM's words ("providing an API with group: ...").
	Requirement string `json:"requirement"`
	Name        string `json:"name"`
	Package     string `json:"package,omitempty"`
	Channel     string `json:"channel,omitempty"`
	// Source is the catalog it comes from; nil when it is already installed.
	Source    *CatalogKey `json:"source,omitempty"`
	Installed bool        `json:"installed,omitempty"`
}

// Deprecation is one olm.deprecations entry about an installed CSV: the Subscription
// condition type OLM sets for it and its message.
type Deprecation struct {
	Condition v1alpha1.SubscriptionConditionType `json:"condition"`
	Message   string                             `json:"message"`
}

// Bundle is a bundle the namespace gets.
type Bundle struct {
	Name    string     `json:"name"`
	Package string     `json:"package"`
	Channel string     `json:"channel"`
	Version string     `json:"version,omitempty"`
	Source  CatalogKey `json:"source"`
	// Replaces is the value of the new CSV's spec.replaces: the installed CSV it upgrades,
	// or, for a new install, the catalog entry's replaces (kept even when that CSV is not on
	// the cluster, as OLM does).
	Replaces string `json:"replaces,omitempty"`
	// Subscription is the Subscription the bundle is for; empty for a dependency, which gets
	// a generated Subscription.
	Subscription string `json:"subscription,omitempty"`
	// Content is the catalog's bundle: its CSV and objects when the catalog carries them
	// (then the InstallPlan's steps are made from them), else only its image (then the plan
	// holds a bundle lookup).
	Content *catalog.Bundle `json:"-"`
}
