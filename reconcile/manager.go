package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"time"

	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/olmsync/olmsync/api/crds"
	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/metrics"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/receiver"
)

// FieldManager is the field manager of everything olmsync applies itself.
const FieldManager = "olmsync"

// InstallCRDs applies olmsync's CRDs (the ones `make generate` writes to api/crds and the
// Helm chart ships) with server-side apply, for a cluster olmsync runs in without the
// chart: a laptop's kind or k3s, `olmsync run --local`. It returns once every one is
// established: the controllers started next index and watch their kinds at once.
func InstallCRDs(ctx context.Context, c client.Client) error {
	all, err := crds.All()
	if err != nil {
		return err
	}
	for _, crd := range all {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range all {
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// Options configure the manager `olmsync run` starts.
type Options struct {
	// OLM says whether the embedded OLM controllers run: embedded, external, or auto (unless
	// another OLM is detected in the cluster).
	OLM olm.Mode
	// OLMOptions configure the embedded OLM.
	OLMOptions olm.Options
	// MetricsAddr and ProbeAddr are the listen addresses of the metrics endpoint and of the
	// health probes (/healthz, /readyz); "0" turns one off.
	MetricsAddr, ProbeAddr string
	// LeaderElection makes replicas take turns through a Lease in LeaderElectionNamespace
	// (the namespace olmsync runs in), so that two never act at once: every write of the
	// manager is fenced by the lease (a replica that did not renew it within the renew
	// deadline writes nothing), and Start ends with ErrLeaseLost when it is lost.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaderElectionTimings are the lease's durations; the zero value is DefaultTimings.
	LeaderElectionTimings Timings
	// WatchLabelSelector, when set, limits the Syncs this manager sees (its cache, the
	// Sync reconciler, the webhook receiver) to those it matches, as Flux's
	// --watch-label-selector shards a cluster's objects between several controllers. The
	// lease is then one of the shard's own (LeaseName), so that shards lead side by side.
	WatchLabelSelector labels.Selector
	// Sync configures the Sync reconciler.
	Sync gitsync.Options
	// Logger, when set, is the manager's and its controllers' logger (default: ctrl.Log).
	Logger logr.Logger
	// WebhookAddr is the listen address of the webhook receiver (/hooks/<namespace>/<sync>);
	// "" or "0" turns it off. It runs on every replica: it only asks for a reconcile.
	WebhookAddr string
	// Webhook bounds what a source may ask of the receiver (rate, replays), and
	// WebhookTimeouts its connections; the zero values are the receiver's defaults.
	Webhook         receiver.Options
	WebhookTimeouts receiver.Timeouts
	// CacheByObject narrows the cache further for what the caller adds to the manager:
	// `olmsync run` gives dashboard.CacheByObject() when it adds the dashboard.
	CacheByObject map[client.Object]cache.ByObject
}

// Manager is the manager and what was decided while building it.
type Manager struct {
	ctrl.Manager
	// lease is the fenced leader lease, when leader election is on.
	lease *lease
	// Syncs is the Sync reconciler.
	Syncs *gitsync.Reconciler
	// Catalogs are the catalogs the embedded OLM's CatalogSource controller loaded; nil
	// without the embedded OLM. The dashboard draws upgrade graphs from them.
	Catalogs *catalogsource.Registry
	// EmbeddedOLM says whether the embedded OLM controllers were registered.
	EmbeddedOLM bool
	// OLMFound lists what showed another OLM in the cluster, if anything did.
	OLMFound []string
}

// NewManager builds the controller manager `olmsync run` starts: the embedded OLM
// controllers (unless the mode and the cluster say otherwise, see olm.Decide), the metrics
// endpoint, the health probes and leader election. A cluster whose OLM was detected under
// --olm=auto gets a manager without the OLM controllers and an error-free Manager whose
// OLMFound says why; the caller logs it.
func NewManager(ctx context.Context, cfg *rest.Config, opts Options) (*Manager, error) {
	sch := kube.Scheme()
	reader, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return nil, fmt.Errorf("connect to the API server: %w", err)
	}
	// Nothing to detect when the mode decides alone: a shard without the embedded OLM
	// (--olm=external) is not granted the reads detection makes.
	var found []string
	if opts.OLM != olm.ModeExternal && opts.OLM != olm.ModeEmbedded {
		if found, err = olm.DetectOLM(ctx, reader); err != nil {
			return nil, err
		}
	}
	embedded, why := olm.Decide(opts.OLM, found)
	if why != nil {
		log.FromContext(ctx).Info(why.Error())
	}
	t := opts.LeaderElectionTimings.withDefaults()
	leaseName := LeaseName(opts.WatchLabelSelector)
	mcfg := cfg
	var fence *lease
	if opts.LeaderElection {
		if fence, err = newLease(cfg, opts.LeaderElectionNamespace, leaseName, t); err != nil {
			return nil, err
		}
		// Every request of the manager — controllers, the Sync reconciler's applies and
		// prunes (impersonating configs are copies of this one), events — goes through the
		// fence; the lease's own requests use a config of their own.
		mcfg = rest.CopyConfig(cfg)
		fence.fence(mcfg)
	}
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Logger:                              opts.Logger,
		Scheme:                              sch,
		Metrics:                             metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:              opts.ProbeAddr,
		LeaderElection:                      opts.LeaderElection,
		LeaderElectionID:                    leaseName,
		LeaderElectionNamespace:             opts.LeaderElectionNamespace,
		LeaderElectionResourceLockInterface: leaseLock(fence),
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &t.LeaseDuration,
		RenewDeadline:                       &t.RenewDeadline,
		RetryPeriod:                         &t.RetryPeriod,
		// Names need not be unique across managers (tests run `olmsync run` more than once
		// in a process).
		Controller: olm.ControllerConfig(),
		// managedFields are read by nothing that reads through the cache, and are often the
		// largest part of a cached object: dropped, as Flux's controllers drop them.
		Cache: cache.Options{ByObject: cacheByObject(opts.WatchLabelSelector, embedded, opts.CacheByObject), DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return nil, fmt.Errorf("new manager: %w", err)
	}
	olmOpts := opts.OLMOptions
	if embedded && olmOpts.Catalogs == nil {
		// Shared with the dashboard (Manager.Catalogs), which draws upgrade graphs from the
		// catalogs loaded.
		olmOpts.Catalogs = catalogsource.NewRegistry(olmOpts.GlobalCatalogNamespace, resolve.Options{})
	}
	if embedded {
		if err := olm.SetupWithManager(mgr, olmOpts); err != nil {
			return nil, err
		}
	}
	syncOpts := opts.Sync
	syncOpts.Selector = opts.WatchLabelSelector
	if embedded && olmOpts.GlobalCatalogNamespace != "" && syncOpts.Check.GlobalCatalogNamespaces == nil {
		// One global catalog namespace: the placement rules of every Sync take the one
		// the embedded OLM resolves with, over olmsync.yaml's policy.marketplaceNamespace,
		// as `olmsync check` takes a live cluster's. Otherwise a Subscription could pass
		// the rules and then fail to resolve, or the other way round.
		syncOpts.Check.GlobalCatalogNamespaces = map[string]string{"": olmOpts.GlobalCatalogNamespace}
	}
	syncs, err := gitsync.SetupWithManager(mgr, syncOpts, metrics.Default())
	if err != nil {
		return nil, fmt.Errorf("set up sync controller: %w", err)
	}
	if opts.WebhookAddr != "" && opts.WebhookAddr != "0" {
		if err := mgr.GetFieldIndexer().IndexField(ctx, &olmsyncv1alpha1.Sync{}, receiver.WebhookPathIndex, receiver.IndexWebhookPath); err != nil {
			return nil, fmt.Errorf("index Syncs by webhook path: %w", err)
		}
		// The receiver runs on every replica, leader or not: its one write (the request
		// annotation) goes past the fence.
		unfenced, err := client.New(cfg, client.Options{Scheme: sch, Mapper: mgr.GetRESTMapper()})
		if err != nil {
			return nil, err
		}
		if err := mgr.Add(webhookServer(mgr, unfenced, opts)); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	m := &Manager{Manager: mgr, lease: fence, Syncs: syncs, EmbeddedOLM: embedded, OLMFound: found}
	if embedded {
		m.Catalogs = olmOpts.Catalogs
	}
	return m, nil
}

// cacheByObject narrows the manager's cache: only the webhook keys of Secrets (only the
// webhook receiver reads them through the cache), only this shard's Syncs, and, with the
// embedded OLM, only the Deployments and RBAC OLM made (olm.CacheByObject: nothing else on
// this manager reads those kinds through the cache; a Sync's health reads are live), and
// what the caller's runnables ask for (Options.CacheByObject: the dashboard's ReplicaSets
// and Pods, stripped).
func cacheByObject(shard labels.Selector, embeddedOLM bool, extra map[client.Object]cache.ByObject) map[client.Object]cache.ByObject {
	m := map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Transform: receiver.SecretCacheTransform},
	}
	if embeddedOLM {
		maps.Copy(m, olm.CacheByObject())
	}
	maps.Copy(m, extra)
	if shard != nil && !shard.Empty() {
		m[&olmsyncv1alpha1.Sync{}] = cache.ByObject{Label: shard}
	}
	return m
}

// LeaseName is the name of the leader-election Lease of a manager watching the Syncs
// selector matches: olm.LeaderElectionID for all Syncs, else that name with a hash of the
// selector (as Flux names a shard's lease), so that the replicas of one shard take turns
// and the shards run side by side.
func LeaseName(selector labels.Selector) string {
	if selector == nil || selector.Empty() {
		return olm.LeaderElectionID
	}
	return leaderelection.GenerateID(olm.LeaderElectionID, selector.String())
}

// leaseLock is the lock for ctrl.Options: nil (controller-runtime's own, unused without
// leader election) when there is no lease.
func leaseLock(l *lease) resourcelock.Interface {
	if l == nil {
		return nil
	}
	return l
}

// Start runs the manager until ctx ends. With leader election, it also ends when this
// replica no longer holds a fresh lease: the manager's context is cancelled at once
// (its writes were already fenced), the loss is logged at info — another replica leads,
// which is no error — and Start returns ErrLeaseLost.
func (m *Manager) Start(ctx context.Context) error {
	if m.lease == nil {
		return m.Manager.Start(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan struct{})
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if held, _ := m.lease.Held(); m.lease.everHeld() && !held {
					close(lost)
					cancel()
					return
				}
			}
		}
	}()
	err := m.Manager.Start(ctx)
	select {
	case <-lost:
	default:
		// controller-runtime's own word for it, when its elector noticed first.
		if err == nil || err.Error() != "leader election lost" {
			return err
		}
	}
	_, since := m.lease.Held()
	m.GetLogger().Info("leader lease lost: stopping, writing nothing more; another replica leads, or the lease could not be renewed",
		"lastRenewed", since.Round(time.Millisecond).String()+" ago")
	return ErrLeaseLost
}

// webhookServer serves the webhook receiver until the manager stops. It finds Syncs and
// their Secrets in the manager's cache (Syncs by the webhook-path index), so that a request
// costs no read of the API server, and asks for a reconcile by annotation.
func webhookServer(mgr ctrl.Manager, writer client.Client, opts Options) manager.Runnable {
	h := &receiver.Handler{
		Reader:  mgr.GetClient(),
		Trigger: receiver.RequestReconcile(writer, time.Now),
		Log:     mgr.GetLogger().WithName("receiver"),
		Options: opts.Webhook,
	}
	return webhookRunnable{receiver.NewServer(opts.WebhookAddr, h, opts.WebhookTimeouts)}
}

// webhookRunnable runs on every replica, leader or not.
type webhookRunnable struct{ srv *http.Server }

func (w webhookRunnable) NeedLeaderElection() bool { return false }

func (w webhookRunnable) Start(ctx context.Context) error {
	l, err := net.Listen("tcp", w.srv.Addr)
	if err != nil {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.srv.Shutdown(shutdown)
	}()
	if err := w.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	return nil
}
