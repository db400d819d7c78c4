package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The label names OLM gives its metrics.
const (
	LabelNamespace = "namespace"
	LabelName      = "name"
	LabelVersion   = "version"
	LabelPhase     = "phase"
	LabelReason    = "reason"
	LabelInstalled = "installed"
	LabelChannel   = "channel"
	LabelPackage   = "package"
	LabelApproval  = "approval"
	LabelOutcome   = "outcome"
)

// The values of olm_resolution_duration_seconds' outcome label (OLM's Succeeded, Failed).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)

// noVersion is the version label of a CSV without spec.version: OLM prints its zero semver.
const noVersion = "0.0.0"

// The collectors, with OLM's names and help texts.
var (
	// CSVCount is the number of CSVs in the cluster, copies left out, counted in the CSV
	// controller's cache when scraped.
	CSVCount = newCacheCount("csv_count", "Number of CSVs successfully registered",
		func() client.ObjectList { return &v1alpha1.ClusterServiceVersionList{} }, notCopied)
	// CSVSucceeded is 1 for a CSV in phase Succeeded, 0 for any other phase.
	CSVSucceeded = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "csv_succeeded",
		Help: "Successful CSV install",
	}, []string{LabelNamespace, LabelName, LabelVersion})
	// CSVAbnormal is 1 for the phase and reason of a CSV that is not Succeeded; the series of
	// its previous phase and reason is removed.
	CSVAbnormal = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "csv_abnormal",
		Help: "CSV is not installed",
	}, []string{LabelNamespace, LabelName, LabelVersion, LabelPhase, LabelReason})
	// CSVUpgradeCount counts CSVs moved to Replacing by a newer CSV.
	CSVUpgradeCount = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "csv_upgrade_count",
		Help: "Monotonic count of CSV upgrades",
	})
	// InstallPlanCount is the number of InstallPlans in the cluster, counted when scraped.
	InstallPlanCount = newCacheCount("install_plan_count", "Number of install plans",
		func() client.ObjectList { return &v1alpha1.InstallPlanList{} }, nil)
	// SubscriptionCount is the number of Subscriptions in the cluster, counted when scraped.
	SubscriptionCount = newCacheCount("subscription_count", "Number of subscriptions",
		func() client.ObjectList { return &v1alpha1.SubscriptionList{} }, nil)
	// SubscriptionSyncTotal counts the syncs of each Subscription; use SubscriptionSynced.
	SubscriptionSyncTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "subscription_sync_total",
		Help: "Monotonic count of subscription syncs",
	}, []string{LabelName, LabelInstalled, LabelChannel, LabelPackage, LabelApproval})
	// CatalogSourceCount is the number of CatalogSources in the cluster, counted when scraped.
	CatalogSourceCount = newCacheCount("catalog_source_count", "Number of catalog sources",
		func() client.ObjectList { return &v1alpha1.CatalogSourceList{} }, nil)
	// CatalogSourceReady is 1 for a CatalogSource whose connection state is READY, 0 for any
	// other; its series goes when the CatalogSource does.
	CatalogSourceReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "catalogsource_ready",
		Help: "State of a CatalogSource. 1 indicates that the CatalogSource is in a READY state. 0 indicates CatalogSource is in a Non READY state.",
	}, []string{LabelNamespace, LabelName})
	// CatalogSourceSnapshotsTotal counts the times resolution took a catalog's content anew.
	CatalogSourceSnapshotsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalog_source_snapshots_total",
		Help: "The number of times the catalog operator has requested a snapshot of data from a catalog source",
	}, []string{LabelNamespace, LabelName})
	// InstallPlanWarnings counts the InstallPlan steps whose writes the API server answered
	// with a warning (a deprecated API version, for one); use InstallPlanWarning.
	InstallPlanWarnings = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "installplan_warnings_total",
		Help: "monotonic count of resources that generated warnings when applied as part of an InstallPlan (for example, due to deprecation)",
	})
	// ResolutionDuration is how long each resolution of a namespace took, by outcome.
	ResolutionDuration = prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Name:       "olm_resolution_duration_seconds",
		Help:       "The duration of a dependency resolution attempt",
		Objectives: map[float64]float64{0.95: 0.05, 0.9: 0.01, 0.99: 0.001},
	}, []string{LabelOutcome})
)

func init() {
	ctrlmetrics.Registry.MustRegister(
		CSVCount, CSVSucceeded, CSVAbnormal, CSVUpgradeCount,
		InstallPlanCount, SubscriptionCount, SubscriptionSyncTotal, CatalogSourceCount,
		CatalogSourceReady, CatalogSourceSnapshotsTotal, ResolutionDuration, InstallPlanWarnings,
	)
}

// CatalogSourceState sets catalogsource_ready of a CatalogSource from its connection state,
// as OLM does at each connection state change: 1 for READY, 0 otherwise.
func CatalogSourceState(namespace, name, state string) {
	v := 0.0
	if state == v1alpha1.ConnectionStateReady {
		v = 1
	}
	CatalogSourceReady.WithLabelValues(namespace, name).Set(v)
}

// ForgetCatalogSource removes the catalogsource_ready series of a deleted CatalogSource.
func ForgetCatalogSource(namespace, name string) {
	CatalogSourceReady.DeleteLabelValues(namespace, name)
}

// ObserveResolution records one resolution's duration under its outcome.
func ObserveResolution(d time.Duration, failed bool) {
	outcome := OutcomeSucceeded
	if failed {
		outcome = OutcomeFailed
	}
	ResolutionDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// CSVVersion is the version label of a CSV's series: spec.version as OLM prints it (a leading
// "v" dropped, missing parts filled in), "0.0.0" when unset, and as written when it does not
// parse.
func CSVVersion(csv *v1alpha1.ClusterServiceVersion) string {
	if csv.Spec.Version == "" {
		return noVersion
	}
	v, err := csv.Spec.Version.Semver()
	if err != nil {
		return string(csv.Spec.Version)
	}
	return v.String()
}

// EmitCSV records a CSV's status write, as OLM does: the csv_abnormal series of its previous
// phase and reason (before) is removed, csv_succeeded is set to 1 or 0, and a CSV that is not
// Succeeded gets a csv_abnormal series for its new phase and reason. Copies are not recorded.
// before may be nil for a CSV seen for the first time.
func EmitCSV(before, after *v1alpha1.ClusterServiceVersion) {
	if after == nil || after.Status.Reason == v1alpha1.CSVReasonCopied {
		return
	}
	if before != nil {
		CSVAbnormal.DeleteLabelValues(before.Namespace, before.Name, CSVVersion(before),
			string(before.Status.Phase), string(before.Status.Reason))
	}
	version := CSVVersion(after)
	if after.Status.Phase == v1alpha1.CSVPhaseSucceeded {
		CSVSucceeded.WithLabelValues(after.Namespace, after.Name, version).Set(1)
		return
	}
	CSVSucceeded.WithLabelValues(after.Namespace, after.Name, version).Set(0)
	CSVAbnormal.WithLabelValues(after.Namespace, after.Name, version,
		string(after.Status.Phase), string(after.Status.Reason)).Set(1)
}

// ForgetCSV removes every csv_succeeded and csv_abnormal series of a deleted CSV, whatever its
// version, phase and reason were.
func ForgetCSV(namespace, name string) {
	match := prometheus.Labels{LabelNamespace: namespace, LabelName: name}
	CSVSucceeded.DeletePartialMatch(match)
	CSVAbnormal.DeletePartialMatch(match)
}

// subscriptionLabels are the label values a Subscription's subscription_sync_total series was
// last counted under, keyed by namespace/name.
var (
	subscriptionLabelsMu sync.Mutex
	subscriptionLabels   = map[string][]string{}
)

// SubscriptionSynced counts one sync of a Subscription under OLM's labels (name, installed CSV,
// channel, package and the raw spec.installPlanApproval). When any of them changed since the
// last sync, the old series is removed first, as OLM does, so each Subscription has one series.
func SubscriptionSynced(sub *v1alpha1.Subscription) {
	values := []string{sub.Name, sub.Status.InstalledCSV, sub.Spec.Channel, sub.Spec.Package, string(sub.Spec.InstallPlanApproval)}
	key := sub.Namespace + "/" + sub.Name
	subscriptionLabelsMu.Lock()
	defer subscriptionLabelsMu.Unlock()
	if old, ok := subscriptionLabels[key]; ok && !slices.Equal(old, values) {
		SubscriptionSyncTotal.DeleteLabelValues(old...)
	}
	subscriptionLabels[key] = values
	SubscriptionSyncTotal.WithLabelValues(values...).Inc()
}

// ForgetSubscription removes the subscription_sync_total series of a deleted Subscription.
func ForgetSubscription(namespace, name string) {
	key := namespace + "/" + name
	subscriptionLabelsMu.Lock()
	defer subscriptionLabelsMu.Unlock()
	if old, ok := subscriptionLabels[key]; ok {
		SubscriptionSyncTotal.DeleteLabelValues(old...)
		delete(subscriptionLabels, key)
	}
}
