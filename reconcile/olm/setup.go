package olm

import (
	"cmp"
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/csv"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
	"github.com/olmsync/olmsync/reconcile/olm/operatorcondition"
	"github.com/olmsync/olmsync/reconcile/olm/operatorgroup"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// CRDs travel as protobuf, as the built-in kinds already do (controller-runtime picks
// protobuf for the kinds of its protobuf scheme, client-go's): apiextensions.k8s.io is
// built into every API server, which serves it as protobuf, and a CRD is the largest
// object the controllers read and write — its whole schema in each watch event, each
// InstallPlan's update of it and the answer. Custom resources stay JSON, the only
// encoding the API server has for them.
func init() {
	utilruntime.Must(apiutil.AddToProtobufScheme(apiextensionsv1.AddToScheme))
}

// DefaultMaxConcurrentReconciles is how many objects each controller reconciles at once
// unless Options say otherwise (olmsync run --olm-concurrent). OLM's operators run two
// workers per queue (queueinformer's default numWorkers). Four here, measured in
// BenchmarkSteadyState on an otherwise idle two-core machine (docs/olm.md "Workers"): 500
// Subscriptions reached steady state in 51.8 s with one worker per controller, 44.9 s with
// two and 41.1-42.3 s with four, the manager's peak heap 114, 123 and 137-143 MiB (issue 18's
// bound is 150). The run is bound by the machine's CPU, the API server's most.
const DefaultMaxConcurrentReconciles = 4

// LeaderElectionID is the name of the Lease the embedded OLM's manager holds, so that of
// several replicas only one acts. Whoever builds the manager sets it with LeaderElection on.
const LeaderElectionID = "olm.olmsync.dev"

// Options configure the embedded OLM's controllers.
type Options struct {
	// DisableCopiedCSVs is OLM's OLMConfig spec.features.disableCopiedCSVs: operators of
	// global groups are not copied into every namespace (except ProtectedNamespaces), and
	// their existing copies are removed.
	DisableCopiedCSVs bool
	// ProtectedNamespaces keep copies even when copies are disabled.
	ProtectedNamespaces []string
	// ResyncInterval is how often a settled object is looked at again although nothing around
	// it changed; 0 means never.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many objects each of the CSV, InstallPlan, OperatorGroup
	// and Subscription controllers reconciles at once (the Subscription controller works a
	// namespace at a time): DefaultMaxConcurrentReconciles when 0. One object is never
	// reconciled by two workers at once (controller-runtime's queue).
	MaxConcurrentReconciles int
	// GlobalCatalogNamespace is the namespace whose CatalogSources every namespace sees (OLM's
	// catalog operator --namespace: "olm" upstream, "openshift-marketplace" on OpenShift).
	GlobalCatalogNamespace string
	// CatalogImages says how catalog and bundle images are pulled and where they are cached
	// by digest. Without a Cache, one is opened on CacheDir, bounded by ImageCacheMaxSize,
	// and shared by the catalog and bundle images.
	CatalogImages catalog.ImageOptions
	// ImageCacheMaxSize bounds the image cache opened on CatalogImages.CacheDir, in bytes
	// (0: no bound).
	ImageCacheMaxSize int64
	// BundleUnpackTimeout is how long a bundle image may take to unpack before its
	// InstallPlan fails (OLM's --bundle-unpack-timeout): 10 minutes when zero, no limit when
	// negative; an OperatorGroup's operatorframework.io/bundle-unpack-timeout annotation
	// overrides it for its namespace.
	BundleUnpackTimeout time.Duration
	// InstallPlanRetryTimeout is how long a plan whose execution fails is retried before it
	// fails (OLM's --install-plan-retry-timeout): one minute when zero.
	InstallPlanRetryTimeout time.Duration
	// FailedPlanRetryInterval is how long a Subscription keeps an InstallPlan that failed
	// having written nothing (a refused CRD update) before a new resolution makes a new plan
	// (one minute when zero).
	FailedPlanRetryInterval time.Duration
	// RetryInterval is how soon a catalog that could not be read, an InstallPlan waiting for
	// a catalog or an API, or a namespace whose Subscriptions wait for a READY catalog this
	// process has not loaded yet, is tried again (each controller's default when zero).
	RetryInterval time.Duration
	// Catalogs is the registry the CatalogSource controller fills; a new one when nil. Pass one
	// to share it with the Subscription controller or a test.
	Catalogs *catalogsource.Registry
	// Certs are the validity and rotation window of the serving certificates the CSV
	// controller makes for webhooks and API services: OLM's (730 days, rotated one day
	// before expiry) when zero. A test shortens them to see a rotation.
	Certs install.CertOptions
}

// SetupWithManager registers the ClusterServiceVersion, OperatorGroup and OperatorCondition
// controllers (the "OLM operator" half of OLM) and the CatalogSource, Subscription and InstallPlan controllers
// (of the "catalog operator" half) with the manager. The manager should run with leader election
// on (LeaderElectionID); CacheByObject narrows what it caches.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	workers := cmp.Or(opts.MaxConcurrentReconciles, DefaultMaxConcurrentReconciles)
	// What the controllers wrote that the cache may not show yet, shared by them: an
	// InstallPlan's steps and the CSV controller write the same ServiceAccounts and RBAC, and
	// the Subscription and InstallPlan controllers the same plans.
	// Only objects the cache shows are remembered: the manager's cache is narrowed by
	// CacheByObject.
	writes := written.New(mgr.GetScheme(), CacheByObject())
	err := writes.Watch(context.Background(), mgr.GetCache(), &appsv1.Deployment{},
		&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{})
	if err != nil {
		return fmt.Errorf("watch the controllers' writes: %w", err)
	}
	plans := &written.Versions{}
	err = csv.SetupWithManager(mgr, csv.Options{
		Copies: groups.CopyOptions{
			DisableCopiedCSVs:   opts.DisableCopiedCSVs,
			ProtectedNamespaces: opts.ProtectedNamespaces,
		},
		ResyncInterval:          opts.ResyncInterval,
		MaxConcurrentReconciles: workers,
		Certs:                   opts.Certs,
		RetryInterval:           opts.RetryInterval,
		Written:                 writes,
	})
	if err != nil {
		return fmt.Errorf("set up clusterserviceversion controller: %w", err)
	}
	if err := operatorgroup.SetupWithManager(mgr, operatorgroup.Options{ResyncInterval: opts.ResyncInterval, MaxConcurrentReconciles: workers, Written: writes}); err != nil {
		return fmt.Errorf("set up operatorgroup controller: %w", err)
	}
	if err := operatorcondition.SetupWithManager(mgr, writes); err != nil {
		return fmt.Errorf("set up operatorcondition controller: %w", err)
	}
	registry := opts.Catalogs
	if registry == nil {
		registry = catalogsource.NewRegistry(opts.GlobalCatalogNamespace, resolve.Options{})
	}
	images := opts.CatalogImages
	if images.Cache == nil && images.CacheDir != "" {
		if images.Cache, err = catalog.OpenImageCache(images.CacheDir, opts.ImageCacheMaxSize, 0); err != nil {
			return err
		}
	}
	err = catalogsource.SetupWithManager(mgr, registry, catalogsource.Options{Image: images, RetryInterval: opts.RetryInterval})
	if err != nil {
		return fmt.Errorf("set up catalogsource controller: %w", err)
	}
	err = installplan.SetupWithManager(mgr, registry, images, installplan.Options{
		RetryInterval: opts.RetryInterval, BundleUnpackTimeout: opts.BundleUnpackTimeout,
		ExecutionRetryTimeout: opts.InstallPlanRetryTimeout, MaxConcurrentReconciles: workers,
		Written: writes, Plans: plans,
	})
	if err != nil {
		return fmt.Errorf("set up installplan controller: %w", err)
	}
	err = subscription.SetupWithManager(mgr, registry, subscription.Options{
		GlobalCatalogNamespace:  opts.GlobalCatalogNamespace,
		ResyncInterval:          opts.ResyncInterval,
		FailedPlanRetryInterval: opts.FailedPlanRetryInterval,
		RetryInterval:           opts.RetryInterval,
		MaxConcurrentReconciles: workers,
		Plans:                   plans,
	})
	if err != nil {
		return fmt.Errorf("set up subscription controller: %w", err)
	}
	return nil
}

// ControllerConfig is the controller configuration of every manager that runs the embedded
// OLM (olmsync run's, reconcile.NewManager, and the tests'): controller names need not be
// unique across managers (tests run more than one in a process). Every controller takes
// controller-runtime's default queue, its priority queue. Up to v0.24.1 that queue could
// deadlock on shutdown (kubernetes-sigs/controller-runtime#3538) and this configuration turned
// it off; v0.25 has the fix, and TestShutdownWithBusyQueues, which reproduced the deadlock
// within the first rounds, stops every controller of this configuration in all 100.
func ControllerConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}

// CacheByObject narrows the manager's cache to the Deployments and RBAC that OLM makes
// instead of every one in the cluster, and keeps of each CRD only what the controllers read
// (TransformCRD). Roles and RoleBindings are selected by olm.managed=true, as OLM's own
// manager selects them (cmd/olm/manager.go): those a CSV's permissions make and those an
// OperatorCondition's controller makes, which carry only that label. Deployments and
// ClusterRoleBindings are selected by olm.owner.kind=ClusterServiceVersion, ClusterRoles by
// olm.owner.kind ClusterServiceVersion or OperatorGroup. The controllers work with or without
// it: an object they need that the cache does not show is read from the API server. Use it
// only when nothing else on the manager reads other Deployments or RBAC, or CRDs' schemas,
// through the cache. Merge it into cache.Options.ByObject.
func CacheByObject() map[client.Object]cache.ByObject {
	ownedByCSV := labels.SelectorFromSet(labels.Set{groups.OwnerKindLabel: v1alpha1.ClusterServiceVersionKind})
	managed := labels.SelectorFromSet(labels.Set{groups.ManagedLabel: groups.ManagedLabelValue})
	ownedByOLM, err := labels.NewRequirement(groups.OwnerKindLabel, selection.In,
		[]string{v1alpha1.ClusterServiceVersionKind, operatorsv1.OperatorGroupKind})
	if err != nil {
		panic(err) // constant input
	}
	return map[client.Object]cache.ByObject{
		&appsv1.Deployment{}:                        {Label: ownedByCSV},
		&rbacv1.Role{}:                              {Label: managed},
		&rbacv1.RoleBinding{}:                       {Label: managed},
		&rbacv1.ClusterRoleBinding{}:                {Label: ownedByCSV},
		&rbacv1.ClusterRole{}:                       {Label: labels.NewSelector().Add(*ownedByOLM)},
		&apiextensionsv1.CustomResourceDefinition{}: {Transform: TransformCRD},
	}
}

// TransformCRD is the cache transform of CRDs: it drops what no controller reads through
// the cache — each version's OpenAPI schema and printer columns, kubectl's
// last-applied-configuration annotation, managedFields (a ByObject transform replaces the
// manager's DefaultTransform, so it drops those itself) — and keeps the names, versions
// served, annotations and conditions the CSV controller's requirement checks read. A CRD's
// schemas are most of its size, and a cluster has hundreds of CRDs; the InstallPlan
// controller, which compares schemas, reads CRDs from the API server.
func TransformCRD(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return obj, nil
	}
	delete(crd.Annotations, corev1.LastAppliedConfigAnnotation)
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Schema = nil
		crd.Spec.Versions[i].AdditionalPrinterColumns = nil
	}
	return crd, nil
}
