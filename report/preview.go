package report

import (
	"cmp"
	"slices"
)

// SubscriptionPreview is what the OLM preview (`--catalog`) predicts for one Subscription
// declared in Git: what OLM resolves for it, what comes along, and the phase its CSV
// would reach. Resolution and outcome use OLM's own status strings.
type SubscriptionPreview struct {
	// Cluster, App, File and Line locate the Subscription in the checked revision.
	Cluster string `json:"cluster,omitempty"`
	App     string `json:"app"`
	File    string `json:"file"`
	Line    int    `json:"line"`

	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Package is spec.name; Channel the channel followed (spec.channel, or the package's
	// default channel when it names none).
	Package string `json:"package"`
	Channel string `json:"channel"`
	// Source and SourceNamespace name the catalog (spec.source, spec.sourceNamespace; the
	// Subscription's namespace when that is empty).
	Source          string `json:"source"`
	SourceNamespace string `json:"sourceNamespace"`
	// Approval is Automatic or Manual.
	Approval string `json:"approval"`
	// Installed is the CSV the cluster runs for the Subscription (status.installedCSV of
	// the cluster state, or what the base revision installs), when there is one.
	Installed string `json:"installed,omitempty"`

	Resolution PreviewResolution `json:"resolution"`
	// Dependencies are the bundles that come along to satisfy what the CSV requires.
	Dependencies []PreviewDependency `json:"dependencies"`
	// Outcome is the phase and reason the Subscription's CSV would reach; absent when
	// there is no CSV to speak of (nothing resolved and nothing installed).
	Outcome *PreviewOutcome `json:"outcome,omitempty"`
	// Plan is the InstallPlan made for the Subscription's next CSV; absent when the
	// resolution makes none.
	Plan *PreviewPlan `json:"plan,omitempty"`
	// End is where the controllers leave the Subscription once every plan that needs no
	// person has run and every CSV has settled in its phase; absent when the preview cannot
	// tell (nothing resolved, or a bundle it cannot see).
	End *PreviewEnd `json:"end,omitempty"`
	// Change says what the change does to the Subscription, with a base only.
	Change *SubscriptionChange `json:"change,omitempty"`
	// Brings is what the CSV the Subscription ends on brings to the cluster, read from its
	// bundle (unpacked from its image when the catalog carries only that); absent when
	// nothing is installed or upgraded.
	Brings *PreviewBrings `json:"brings,omitempty"`
}

// PreviewEnd is a Subscription's status once the controllers stop: an upgrade path stops at
// the first CSV that does not succeed, and what OLM resolves after it (often a failure:
// the CSV it was to replace is still there) is the end.
type PreviewEnd struct {
	CurrentCSV   string `json:"currentCSV,omitempty"`
	InstalledCSV string `json:"installedCSV,omitempty"`
	// Reason and Message are the ResolutionFailed condition's, when the last resolution
	// fails (ConstraintsNotSatisfiable, ErrorPreventedResolution).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Outcome is the phase, reason and message of the installed CSV.
	Outcome *PreviewOutcome `json:"outcome,omitempty"`
	// Plan is the last InstallPlan of the Subscription when it never completes: the
	// controllers stop there (a scoped install's ServiceAccount may not execute a step, or
	// the namespace's service-account check fails).
	Plan *PreviewPlanState `json:"plan,omitempty"`
}

// PreviewPlanState is where an InstallPlan stays when it never completes: its phase
// (Installing), status.message, and the Installed condition's InstallCheckFailed message.
type PreviewPlanState struct {
	Phase              string `json:"phase"`
	Message            string `json:"message,omitempty"`
	InstallCheckFailed string `json:"installCheckFailed,omitempty"`
}

// PreviewBrings is what one bundle brings: the CRDs it applies, the install modes it
// supports, the RBAC rules it asks for and the images it runs.
type PreviewBrings struct {
	CSV string `json:"csv"`
	// Image is the bundle image it was read from, by digest, when the catalog lists the
	// bundle by image only.
	Image        string              `json:"image,omitempty"`
	CRDs         []PreviewCRD        `json:"crds"`
	InstallModes []string            `json:"installModes"`
	Permissions  []PreviewPermission `json:"permissions"`
	Images       []string            `json:"images"`
	// Webhooks are the admission and conversion webhooks the CSV declares, which OLM
	// registers with the API server; APIServices the aggregated APIs it owns.
	Webhooks    []PreviewWebhook    `json:"webhooks,omitempty"`
	APIServices []PreviewAPIService `json:"apiServices,omitempty"`
	// Unseen says what the preview could not see (a bundle image it could not pull, run
	// offline): the lists are then empty, and say nothing.
	Unseen string `json:"unseen,omitempty"`
}

// PreviewWebhook is a webhook a bundle brings, scoped as OLM would register it in the
// Subscription's namespace.
type PreviewWebhook struct {
	Name string `json:"name"`
	// Type is ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook.
	Type          string   `json:"type"`
	Deployment    string   `json:"deployment"`
	Rules         []string `json:"rules"`
	FailurePolicy string   `json:"failurePolicy,omitempty"`
	// ClusterWide: the API server calls it for objects of every namespace (the namespace's
	// OperatorGroup is global) or of every CRD it converts; else Namespaces are the group's
	// target namespaces it is scoped to.
	ClusterWide bool     `json:"clusterWide"`
	Namespaces  []string `json:"namespaces,omitempty"`
	// Summary is the webhook in one line.
	Summary string `json:"summary"`
}

// PreviewAPIService is an aggregated API the CSV owns: the APIService <version>.<group>
// serving kind, and the deployment behind it.
type PreviewAPIService struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Deployment string `json:"deployment"`
}

// Kinds of PreviewCRD.Change.
const (
	// CRDAdded: nothing the Subscription ran before owned the CRD.
	CRDAdded = "added"
	// CRDChanged: the CSV it ran before owned it too; the bundle's version replaces it.
	CRDChanged = "changed"
)

// PreviewCRD is a CRD a bundle applies: its served versions (the storage version marked
// with a *) and whether it is new to the Subscription.
type PreviewCRD struct {
	Name     string   `json:"name"`
	Versions []string `json:"versions"`
	Change   string   `json:"change"`
	// Verdict is, for a changed CRD whose old and new definitions the preview read, what
	// OLM's CRD upgrade check says: CRDUpgradeSafe, or why OLM would refuse the update (a
	// served or stored version removed), in OLM's words.
	Verdict string `json:"verdict,omitempty"`
}

// CRDUpgradeSafe is the verdict of a CRD update OLM's check allows.
const CRDUpgradeSafe = "safe"

// PreviewPermission is the rules one service account asks for; ClusterWide marks the
// CSV's clusterPermissions, granted on every namespace and on cluster-scoped resources.
type PreviewPermission struct {
	ServiceAccount string   `json:"serviceAccount"`
	ClusterWide    bool     `json:"clusterWide"`
	Rules          []string `json:"rules"`
}

// ID names the Subscription as messages do: "namespace/name".
func (s SubscriptionPreview) ID() string { return s.Namespace + "/" + s.Name }

// Resolution statuses. Resolved, UpToDate and Failed are the resolver's; Unknown means
// the catalog the Subscription names was not given, so nothing could be resolved.
const (
	ResolutionResolved = "Resolved"
	ResolutionUpToDate = "UpToDate"
	ResolutionFailed   = "Failed"
	ResolutionUnknown  = "Unknown"
)

// PreviewResolution is what OLM's resolver decides for the Subscription.
type PreviewResolution struct {
	// Status is Resolved, UpToDate, Failed or Unknown.
	Status string `json:"status"`
	// Reason is set when Status is Failed: ConstraintsNotSatisfiable,
	// ErrorPreventedResolution (OLM's), UpgradeHeld or NoUpgradePath (olmsync's).
	Reason string `json:"reason,omitempty"`
	// Next is the CSV OLM installs next; NextSource the catalog ("namespace/name") that
	// supplies it when that is not the Subscription's own.
	Next       string `json:"next,omitempty"`
	NextSource string `json:"nextSource,omitempty"`
	// Head is the head of the subscribed channel.
	Head string `json:"head,omitempty"`
	// Path is every CSV OLM installs, one upgrade at a time, from Next to the head.
	Path []string `json:"path"`
	// Skipped are the channel's CSVs between the installed one and the head that the path
	// leaves out (skips, skipRange).
	Skipped []string `json:"skipped,omitempty"`
	Message string   `json:"message,omitempty"`
}

// PreviewDependency is a bundle installed (or already installed) to satisfy a
// requirement of what the Subscription installs.
type PreviewDependency struct {
	Name    string `json:"name"`
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	// Source is the catalog ("namespace/name") it comes from; empty when installed.
	Source string `json:"source,omitempty"`
	// RequiredBy is the CSV that requires it, Requirement what it requires in OLM's words.
	RequiredBy  string `json:"requiredBy"`
	Requirement string `json:"requirement"`
	Installed   bool   `json:"installed,omitempty"`
}

// PreviewOutcome is the phase and reason a CSV would reach, in OLM's strings: Succeeded /
// InstallSucceeded when nothing stands in the way; Failed with an OperatorGroup reason
// (NoOperatorGroup, TooManyOperatorGroups, UnsupportedOperatorGroup,
// InterOperatorGroupOwnerConflict, ...); Pending / RequirementsNotMet; or, for a Manual
// Subscription with something to install, RequiresApproval (the InstallPlan's phase:
// no CSV exists until someone approves it).
type PreviewOutcome struct {
	// CSV is the CSV the outcome is about: Next, or the installed CSV.
	CSV     string `json:"csv"`
	Phase   string `json:"phase"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// PreviewPlan is the InstallPlan the Subscription controller makes for one Subscription's
// resolution: the CSVs it installs (the Subscription's and the dependencies that go with
// it), its approval, and the phase it reaches.
type PreviewPlan struct {
	CSVNames []string `json:"csvNames"`
	// Approval and Approved are spec.approval and spec.approved as made.
	Approval string `json:"approval"`
	Approved bool   `json:"approved"`
	// Phase is Complete when approved, RequiresApproval when it waits for a person, Failed
	// when OLM refuses a CRD update of it, Installing when it cannot go on: the
	// namespace's OperatorGroup service-account check fails (InstallCheckFailed), or the
	// ServiceAccount of a scoped install may not execute a step (Message).
	Phase string `json:"phase"`
	// Message is status.message of a plan that stays Installing: the controller's retry
	// message around the API server's refusal of a step.
	Message string `json:"message,omitempty"`
	// InstallCheckFailed is the Installed condition's message when OLM's service-account
	// query of the namespace fails (reason InstallCheckFailed): no step runs.
	InstallCheckFailed string `json:"installCheckFailed,omitempty"`
	// Why says who approves it, or why it waits.
	Why string `json:"why,omitempty"`
}

// Failed reports whether the CSV would end Failed or stuck Pending.
func (o *PreviewOutcome) Failed() bool {
	return o != nil && (o.Phase == "Failed" || o.Reason == "RequirementsNotMet")
}

// Kinds of SubscriptionChange.
const (
	// ChangeInstall: the base has no such Subscription (or it installs nothing there).
	ChangeInstall = "install"
	// ChangeUpgrade: the base runs an older CSV of the same channel.
	ChangeUpgrade = "upgrade"
	// ChangeChannelSwitch: the Subscription follows another channel than in the base.
	ChangeChannelSwitch = "channelSwitch"
	// ChangeUnchanged: the Subscription ends on the CSV the base runs.
	ChangeUnchanged = "unchanged"
)

// SubscriptionChange is what the change does to a Subscription against the base.
type SubscriptionChange struct {
	// Type is install, upgrade, channelSwitch or unchanged.
	Type string `json:"type"`
	// From is the CSV the base revision runs for it; FromChannel the base's channel when
	// it differs.
	From        string `json:"from,omitempty"`
	FromChannel string `json:"fromChannel,omitempty"`
	// To is the CSV the checked revision ends on.
	To string `json:"to,omitempty"`
}

// OperatorGroupPreview is an OperatorGroup as OLM would see it: its target namespaces,
// the APIs its members provide, and the groups it competes with.
type OperatorGroupPreview struct {
	// Cluster, App, File and Line locate the group in the checked revision; App and File
	// are empty for a group only the cluster has.
	Cluster string `json:"cluster,omitempty"`
	App     string `json:"app,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`

	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Origin is git (declared in the checked revision), cluster (the cluster state) or
	// config (olmsync.yaml's policy.operatorGroups).
	Origin string `json:"origin"`
	// TargetNamespaces are what OLM writes to status.namespaces: sorted, [""] for all
	// namespaces, [] when the group selects none.
	TargetNamespaces []string `json:"targetNamespaces"`
	// ProvidedAPIs is the olm.providedAPIs annotation once its members settle
	// (Kind.version.group, sorted as OLM sorts them).
	ProvidedAPIs []string `json:"providedAPIs"`
	// Static is spec.staticProvidedAPIs.
	Static bool `json:"static,omitempty"`
	// Conflicts are the other groups whose targets intersect this one's and that provide
	// some of the same APIs.
	Conflicts []GroupConflict `json:"conflicts"`
	// Message says why the group has no targets when OLM refuses its spec.
	Message string `json:"message,omitempty"`
}

// GroupConflict is a group that provides some of the same APIs over intersecting
// namespaces.
type GroupConflict struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	APIs      []string `json:"apis"`
}

// completePreview sorts the preview's lists and makes their inner lists non-nil.
func completePreview(r *Report) {
	for i := range r.Subscriptions {
		s := &r.Subscriptions[i]
		s.File = cleanPath(s.File)
		s.Resolution.Path = nonNil(s.Resolution.Path)
		s.Dependencies = nonNil(s.Dependencies)
		if b := s.Brings; b != nil {
			b.CRDs, b.InstallModes = nonNil(b.CRDs), nonNil(b.InstallModes)
			b.Permissions, b.Images = nonNil(b.Permissions), nonNil(b.Images)
			for j := range b.CRDs {
				b.CRDs[j].Versions = nonNil(b.CRDs[j].Versions)
			}
			for j := range b.Permissions {
				b.Permissions[j].Rules = nonNil(b.Permissions[j].Rules)
			}
		}
	}
	slices.SortStableFunc(r.Subscriptions, func(a, b SubscriptionPreview) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for i := range r.OperatorGroups {
		g := &r.OperatorGroups[i]
		g.File = cleanPath(g.File)
		g.TargetNamespaces = nonNil(g.TargetNamespaces)
		g.ProvidedAPIs = nonNil(g.ProvidedAPIs)
		g.Conflicts = nonNil(g.Conflicts)
		for j := range g.Conflicts {
			g.Conflicts[j].APIs = nonNil(g.Conflicts[j].APIs)
		}
	}
	slices.SortStableFunc(r.OperatorGroups, func(a, b OperatorGroupPreview) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
