//go:build !olmsync_light

package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
	"github.com/olmsync/olmsync/reconcile/receiver"
	"github.com/olmsync/olmsync/sources"
)

type runOptions struct {
	kubeconfig, context     string
	olmMode                 string
	globalCatalogNamespace  string
	metricsAddr, probeAddr  string
	webhookAddr             string
	dashboardAddr           string
	dashboardAnonymousRead  bool
	webhook                 receiver.Options
	webhookReadTimeout      time.Duration
	leaderElect             bool
	leaderElectionNamespace string
	leaseTimings            reconcile.Timings
	watchLabelSelector      string
	disableCopiedCSVs       bool
	catalogCache            string
	imageCacheMaxSize       int64
	bundleUnpackTimeout     time.Duration
	installPlanRetryTimeout time.Duration
	plainHTTPRegistries     bool
	installCRDs             bool
	kubeAPIQPS              float32
	kubeAPIBurst            int
	// the Sync reconciler
	gitCache          string
	allowLocalSources bool
	strictSubstitute  bool
	concurrent        int
	concurrentFetches int
	olmConcurrent     int
	limits            limitFlags
	jitter            jitter.IntervalOptions
	zap               zap.Options
	// a Sync from flags
	sync syncFlags
	// a control plane of its own
	local    bool
	localDir string
}

func newRunCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the controllers: Syncs from Git through the placement rules into the cluster, and the embedded OLM",
		Long: `run starts olmsync's controller manager against the cluster of --kubeconfig (or the
in-cluster config): the Sync reconciler, which fetches each Sync's repository, renders and
checks its apps as olmsync check does, applies what passes the placement rules and prunes
what is gone; the webhook receiver (/hooks/<namespace>/<sync>); and the embedded OLM
controllers — CatalogSources, Subscriptions, InstallPlans, ClusterServiceVersions,
OperatorGroups — with a metrics endpoint, health probes and leader election, until it is
interrupted.

--olm decides whether the embedded OLM runs: "embedded" always, "external" never (the
cluster's OLM handles OLM's kinds), "auto" (the default) unless another OLM is detected
(its Deployments olm-operator or catalog-operator, or the CRDs only OLM installs).

--repo creates (or updates) a Sync of that repository before the controllers start: a URL,
or a folder of a local git repository (its committed state, followed on its current
branch; local sources are then allowed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use")
	f.StringVar(&o.olmMode, "olm", string(olm.ModeAuto), "embedded, external or auto: whether the embedded OLM controllers run")
	f.StringVar(&o.globalCatalogNamespace, "global-catalog-namespace", policy.DefaultMarketplaceNamespace, "namespace whose CatalogSources every namespace sees: the embedded OLM's, and the one every Sync's placement rules take over olmsync.yaml's policy.marketplaceNamespace (the default is olmsync check's; upstream OLM's own is olm)")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `metrics endpoint address ("0" turns it off)`)
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", `health probe address ("0" turns it off)`)
	f.BoolVar(&o.leaderElect, "leader-elect", false, "take turns with other replicas through a Lease, so that only one acts (default: on in a cluster, off elsewhere)")
	f.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the namespace olmsync runs in; kube-system outside a cluster)")
	f.DurationVar(&o.leaseTimings.LeaseDuration, "leader-election-lease-duration", reconcile.DefaultTimings.LeaseDuration, "how long a lease not renewed holds: another replica takes it after this")
	f.DurationVar(&o.leaseTimings.RenewDeadline, "leader-election-renew-deadline", reconcile.DefaultTimings.RenewDeadline, "how long the leader may go without renewing its lease before it writes nothing more and steps down (less than the lease duration)")
	f.DurationVar(&o.leaseTimings.RetryPeriod, "leader-election-retry-period", reconcile.DefaultTimings.RetryPeriod, "how often the lease is renewed, or tried for by a waiting replica")
	f.StringVar(&o.watchLabelSelector, "watch-label-selector", "", `reconcile only the Syncs this label selector matches (e.g. "sharding.olmsync.dev/key in (shard1)"), so that several olmsync deployments split a cluster's Syncs; each shard takes a lease of its own`)
	f.BoolVar(&o.disableCopiedCSVs, "disable-copied-csvs", false, "do not copy the CSVs of operators watching all namespaces into every namespace (OLM's disableCopiedCSVs)")
	f.StringVar(&o.catalogCache, "catalog-cache", "", "folder caching pulled catalog and bundle images by digest (default: none)")
	f.Int64Var(&o.imageCacheMaxSize, "image-cache-max-size", 2<<30, "bytes the --catalog-cache folder may hold; the least recently used images go first (0: no bound)")
	f.DurationVar(&o.installPlanRetryTimeout, "install-plan-retry-timeout", installplan.DefaultExecutionRetryTimeout, "how long after its first attempt an InstallPlan whose execution fails is tried again before it fails (OLM's flag)")
	f.DurationVar(&o.bundleUnpackTimeout, "bundle-unpack-timeout", installplan.DefaultBundleUnpackTimeout, "how long a bundle image may take to unpack before its InstallPlan fails (OLM's flag; an OperatorGroup's operatorframework.io/bundle-unpack-timeout overrides it; 0: no limit)")
	f.BoolVar(&o.plainHTTPRegistries, "allow-plain-http-registries", false, "let catalog and bundle images be pulled over plain HTTP (default: HTTPS only, on loopback and private addresses too)")
	f.BoolVar(&o.installCRDs, "install-crds", false, "apply olmsync's CRDs before starting (a cluster without the Helm chart)")
	f.StringVar(&o.webhookAddr, "webhook-bind-address", ":9292", `webhook receiver address, serving /hooks/<namespace>/<sync> ("0" turns it off)`)
	f.StringVar(&o.dashboardAddr, "dashboard-addr", "", `dashboard address, serving the dashboard and its API /api/v1/ ("" turns it off; with --local, 127.0.0.1:9400 unless set)`)
	f.BoolVar(&o.dashboardAnonymousRead, "dashboard-anonymous-read", false, "let dashboard requests without a bearer token read every Sync and its objects (writes always need a token a TokenReview accepts and a SubjectAccessReview allows; with --local, on unless set)")
	f.IntVar(&o.webhook.RatePerMinute, "webhook-rate-limit", receiver.DefaultRatePerMinute, "webhook requests one client address may make a minute (in bursts of 20); more are answered 429 before anything is read (negative: no limit)")
	f.DurationVar(&o.webhookReadTimeout, "webhook-read-timeout", receiver.DefaultTimeouts.Read, "time the webhook receiver gives a client to send a whole request, body included")
	f.DurationVar(&o.webhook.ReplayWindow, "webhook-replay-window", receiver.DefaultReplayWindow, "how long a verified webhook delivery is remembered (its delivery ID and body): the same delivery again within it asks for nothing")
	f.Float32Var(&o.kubeAPIQPS, "kube-api-qps", 0, "client-side limit of requests per second to the API server (default: none; the server's priority and fairness throttle)")
	f.IntVar(&o.kubeAPIBurst, "kube-api-burst", 0, "client-side burst of requests to the API server, with --kube-api-qps")
	f.StringVar(&o.gitCache, "git-cache", "", "folder keeping the fetched repositories, so a restart still has the last good revisions (default: the user's cache folder, olmsync/git)")
	f.BoolVar(&o.allowLocalSources, "allow-local-sources", false, "let Syncs use file:// URLs, which read olmsync's own filesystem")
	f.BoolVar(&o.strictSubstitute, "strict-substitute", false, "fail a Sync's build when spec.postBuild leaves a ${var} with no value and no default (Flux's StrictPostBuildSubstitutions)")
	f.IntVar(&o.concurrent, "concurrent", 4, "how many Syncs are reconciled at once")
	f.IntVar(&o.concurrentFetches, "concurrent-fetches", gitsync.DefaultMaxConcurrentFetches, "fetch slots for Syncs' repositories, apart from the reconciles: a fetch holds one for 10s at most; at most a quarter as many fetches run per git server, and a slow lane of a quarter as many slots serves the Syncs whose last fetch took 10s or more")
	f.IntVar(&o.olmConcurrent, "olm-concurrent", olm.DefaultMaxConcurrentReconciles, "how many objects each controller of the embedded OLM (CSVs, InstallPlans, OperatorGroups; Subscriptions a namespace at a time) reconciles at once")
	o.limits.registerTimeout(f)
	f.StringVar(&o.limits.memoryLimit, "memory-limit", defaultMemoryLimit,
		`the memory the Syncs' builds may use together (a Kubernetes quantity; "0": only the container's limit): each of the --concurrent builds may read the YAML a share of it holds, and a build past it fails (BuildFailed) instead of the process`)
	o.jitter.BindFlags(f) // --interval-jitter-percentage, 5 by default, as Flux's controllers
	// --zap-log-level (info, debug, or a number), --zap-encoder, --zap-devel, ...: the
	// logging flags of every controller-runtime manager.
	zapFlags := goflag.NewFlagSet("zap", goflag.ContinueOnError)
	o.zap.BindFlags(zapFlags)
	f.AddGoFlagSet(zapFlags)
	o.sync.register(f)
	f.BoolVar(&o.local, "local", false, "start a control plane of its own on loopback (the pinned etcd and kube-apiserver `make envtest` builds) and run against it, CRDs installed; no kubelet, so operators' Deployments never become available")
	f.StringVar(&o.localDir, "local-dir", filepath.Join(".olmsync", "local"), "with --local: the folder keeping the control plane's state (etcd's data, a kubeconfig for kubectl) across runs")
	if !localSupported {
		_ = f.MarkHidden("local")
		_ = f.MarkHidden("local-dir")
	}
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command) error {
	mode, err := olm.ParseMode(o.olmMode)
	if err != nil {
		return err
	}
	if err := validTimings(o.leaseTimings); err != nil {
		return err
	}
	if o.concurrentFetches < 1 {
		return fmt.Errorf("--concurrent-fetches=%d: want 1 or more", o.concurrentFetches)
	}
	if o.olmConcurrent < 1 {
		return fmt.Errorf("--olm-concurrent=%d: want 1 or more", o.olmConcurrent)
	}
	shard, err := labels.Parse(o.watchLabelSelector)
	if err != nil {
		return fmt.Errorf("--watch-label-selector: %w", err)
	}
	if err := o.jitter.SetGlobalJitter(jitterRand()); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap), zap.WriteTo(cmd.ErrOrStderr())))
	ctx := cmd.Context()
	if o.local {
		if o.kubeconfig != "" || o.context != "" {
			return errors.New("--local starts its own control plane: drop --kubeconfig and --context")
		}
		kubeconfig, stop, err := startLocal(ctx, o.localDir, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: stop the local control plane: %v\n", err)
			}
		}()
		o.kubeconfig, o.installCRDs = kubeconfig, true
		o.localDashboard(cmd)
	}
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	if o.installCRDs {
		if err := reconcile.InstallCRDs(ctx, c); err != nil {
			return err
		}
	}
	gitCache := gitCacheDir(o.gitCache)
	if o.sync.repo != "" {
		if err := warnUncommitted(&o.sync); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: %v\n", err)
		}
		sync, local, err := o.sync.apply(ctx, c)
		if err != nil {
			return err
		}
		o.allowLocalSources = o.allowLocalSources || local
		fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: Sync %s/%s follows %s\n", sync.Namespace, sync.Name, describeSource(sync))
	}
	o.leaderElect = leaderElection(cmd.Flags().Changed("leader-elect"), o.leaderElect, inCluster())
	leaseNamespace := o.leaderElectionNamespace
	if leaseNamespace == "" && !inCluster() {
		// In a cluster, the manager finds its own namespace; elsewhere (a laptop) it needs one
		// that every cluster has.
		leaseNamespace = "kube-system"
	}
	buildChecks, err := o.buildChecks(cmd)
	if err != nil {
		return err
	}
	mgr, err := reconcile.NewManager(ctx, cfg, reconcile.Options{
		OLM: mode,
		OLMOptions: olm.Options{
			GlobalCatalogNamespace:  o.globalCatalogNamespace,
			DisableCopiedCSVs:       o.disableCopiedCSVs,
			CatalogImages:           catalog.ImageOptions{CacheDir: o.catalogCache, Insecure: o.plainHTTPRegistries},
			ImageCacheMaxSize:       o.imageCacheMaxSize,
			BundleUnpackTimeout:     unpackTimeout(o.bundleUnpackTimeout),
			InstallPlanRetryTimeout: o.installPlanRetryTimeout,
			MaxConcurrentReconciles: o.olmConcurrent,
		},
		MetricsAddr:             o.metricsAddr,
		ProbeAddr:               o.probeAddr,
		WebhookAddr:             o.webhookAddr,
		Webhook:                 o.webhook,
		WebhookTimeouts:         receiver.Timeouts{Read: o.webhookReadTimeout},
		CacheByObject:           o.dashboardCache(),
		LeaderElection:          o.leaderElect,
		LeaderElectionNamespace: leaseNamespace,
		LeaderElectionTimings:   o.leaseTimings,
		WatchLabelSelector:      shard,
		Sync: gitsync.Options{
			CacheDir:                gitCache,
			AllowLocalSources:       o.allowLocalSources,
			StrictSubstitute:        o.strictSubstitute,
			MaxConcurrentReconciles: o.concurrent,
			MaxConcurrentFetches:    o.concurrentFetches,
			Check:                   buildChecks,
		},
	})
	if err != nil {
		return err
	}
	if err := o.addDashboard(mgr, cfg); err != nil {
		return err
	}
	if mgr.EmbeddedOLM {
		fmt.Fprintln(cmd.ErrOrStderr(), "olmsync: the embedded OLM runs (CatalogSources, Subscriptions, InstallPlans, CSVs, OperatorGroups)")
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: the embedded OLM does not run (--olm=%s; found: %v): OLM's kinds are left to the cluster's OLM\n", mode, mgr.OLMFound)
	}
	err = mgr.Start(ctx)
	if errors.Is(err, reconcile.ErrLeaseLost) {
		// Another replica leads: this one ends cleanly, and (in a Deployment) starts again
		// as a candidate. The manager logged it, at info.
		return nil
	}
	return err
}

// catalogNamespaceForChecks is the global catalog namespace the Syncs' placement rules
// take when the flag is given; without it the manager gives them the embedded OLM's, and
// with another OLM in charge each repository's olmsync.yaml decides.
func (o *runOptions) catalogNamespaceForChecks(cmd *cobra.Command) map[string]string {
	if !cmd.Flags().Changed("global-catalog-namespace") {
		return nil
	}
	return map[string]string{"": o.globalCatalogNamespace}
}

// dashboardOn: --dashboard-addr "" or "0" turns the dashboard off.
func (o *runOptions) dashboardOn() bool { return o.dashboardAddr != "" && o.dashboardAddr != "0" }

// dashboardCache is what the dashboard reads through the manager's cache, narrowed.
func (o *runOptions) dashboardCache() map[client.Object]cache.ByObject {
	if !o.dashboardOn() {
		return nil
	}
	return dashboard.CacheByObject()
}

// addDashboard adds the dashboard to the manager as a runnable, on every replica.
func (o *runOptions) addDashboard(mgr *reconcile.Manager, cfg *rest.Config) error {
	if !o.dashboardOn() {
		return nil
	}
	d, err := dashboard.OnManager(mgr, cfg, o.dashboardAddr, o.dashboardAnonymousRead)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return mgr.Add(d)
}

// LocalDashboardAddr is where `olmsync run --local` serves the dashboard unless
// --dashboard-addr says otherwise: loopback only.
const LocalDashboardAddr = "127.0.0.1:9400"

// localDashboard turns the dashboard on for --local: on loopback, where only this
// machine's users reach it, and readable without a token there (the local control plane
// is the user's own; writes still need one) unless the flags say otherwise.
func (o *runOptions) localDashboard(cmd *cobra.Command) {
	if !cmd.Flags().Changed("dashboard-addr") {
		o.dashboardAddr = LocalDashboardAddr
	}
	if !cmd.Flags().Changed("dashboard-anonymous-read") {
		o.dashboardAnonymousRead = true
	}
	if o.dashboardOn() {
		fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: the dashboard is at http://%s/ (actions need a token: kubectl --kubeconfig %s create token <service account>)\n",
			o.dashboardAddr, filepath.Join(o.localDir, "kubeconfig"))
	}
}

// validTimings refuses lease timings under which a leader could be deposed while it still
// acts: it must give up (renew deadline) before another replica may take the lease (lease
// duration), and try to renew (retry period, jittered up to 1.2 times by client-go) within
// the deadline.
func validTimings(t reconcile.Timings) error {
	if t.LeaseDuration <= 0 || t.RenewDeadline <= 0 || t.RetryPeriod <= 0 {
		return errors.New("--leader-election-lease-duration, --leader-election-renew-deadline and --leader-election-retry-period must be positive")
	}
	if t.RenewDeadline >= t.LeaseDuration {
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be less than --leader-election-lease-duration (%s)", t.RenewDeadline, t.LeaseDuration)
	}
	if t.RenewDeadline <= t.RetryPeriod*6/5 {
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be more than 1.2 times --leader-election-retry-period (%s)", t.RenewDeadline, t.RetryPeriod)
	}
	return nil
}

// leaderElection decides whether `olmsync run` takes a lease: as asked, else only in a
// cluster. Outside one (a laptop, --local) there is no other replica, and a lease lost to
// an API server that was away for longer than the renew deadline would stop olmsync with
// nothing to start it again.
func leaderElection(asked, value, inCluster bool) bool {
	if asked {
		return value
	}
	return inCluster
}

// inCluster reports whether olmsync runs in a pod (its service account's namespace is
// mounted).
func inCluster() bool {
	_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	return err == nil
}

// restConfig reads --kubeconfig/--context the way kubectl does, falling back to the
// in-cluster config, with the client-side rate limit of --kube-api-qps/--kube-api-burst
// (none unless they are set).
func (o *runOptions) restConfig() (*rest.Config, error) {
	cfg, err := kube.Config(o.kubeconfig, o.context)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	if o.kubeAPIQPS > 0 {
		cfg.QPS, cfg.Burst = o.kubeAPIQPS, max(o.kubeAPIBurst, int(o.kubeAPIQPS))
	}
	return cfg, nil
}

// unpackTimeout is --bundle-unpack-timeout as olm.Options takes it: 0 there means the
// default, a negative duration no limit.
func unpackTimeout(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}

// gitCacheDir is --git-cache, else the user's cache folder, else (a container without a
// home) the temporary folder.
func gitCacheDir(flag string) string {
	if flag != "" {
		return flag
	}
	if dir, err := sources.DefaultCacheDir(); err == nil {
		return dir
	}
	return filepath.Join(os.TempDir(), "olmsync", "git")
}

// buildChecks are the options of every Sync's build: the policy deadline, the global
// catalog namespace, and what bounds one repository's cost to the process
// (gitsync.BoundedChecks: a share of the memory ceiling's YAML budget for each concurrent
// build, users' rules in a sandbox).
func (o *runOptions) buildChecks(cmd *cobra.Command) (check.Options, error) {
	limit, err := parseMemoryLimit(o.limits.memoryLimit)
	if err != nil {
		return check.Options{}, err
	}
	return gitsync.BoundedChecks(check.Options{PolicyTimeout: o.limits.policyTimeout, GlobalCatalogNamespaces: o.catalogNamespaceForChecks(cmd)},
		limit, o.concurrent), nil
}
