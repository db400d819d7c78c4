package reconcile

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// newDashboard builds the dashboard on the manager's cache: its reads are the cache's,
// its stream the cache's informers; its writes (the actions, and the token and access
// reviews) go past the leader fence, as the webhook receiver's, because it runs on every
// replica and only asks. A diff runs the code of `olmsync diff sync` with the
// reconciler's git cache, reading Secrets past the cache (it holds only webhook keys).
func newDashboard(mgr ctrl.Manager, cfg *rest.Config, syncs *gitsync.Reconciler, registry *catalogsource.Registry, opts Options) (*dashboard.Server, error) {
	unfenced, err := client.New(cfg, client.Options{Scheme: kube.Scheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	d := dashboard.Options{
		Addr:          opts.Dashboard.Addr,
		AnonymousRead: opts.Dashboard.AnonymousRead,
		Reader:        mgr.GetClient(),
		Writer:        unfenced,
		Informers:     mgr.GetCache(),
		AppsOf:        syncs.AppsOf,
		Log:           mgr.GetLogger().WithName("dashboard"),
		Diff: func(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*diff.Report, error) {
			return diff.Sync(ctx, unfenced, obj, diff.Options{CacheDir: opts.Sync.CacheDir,
				AllowLocalSources: opts.Sync.AllowLocalSources, Check: opts.Sync.Check, Config: cfg})
		},
		File: func(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision, file string) ([]byte, error) {
			req, err := gitsync.FetchRequestOf(ctx, unfenced, obj, opts.Sync.CacheDir, opts.Sync.AllowLocalSources)
			if err != nil {
				return nil, err
			}
			tree, err := sources.OpenCached(ctx, req, revision)
			if err != nil {
				return nil, err
			}
			return tree.FS.ReadFile(tree.Abs(file))
		},
		Live: func(ctx context.Context, obj *olmsyncv1alpha1.Sync, gvk schema.GroupVersionKind, key types.NamespacedName, managed bool) (*unstructured.Unstructured, error) {
			// What the Sync applied, as the Sync applies it (its service account, its
			// cluster); what OLM made, as olmsync reads it for the tree.
			c := unfenced
			if managed {
				var err error
				if c, err = gitsync.ClientFor(ctx, cfg, unfenced, unfenced, obj); err != nil {
					return nil, err
				}
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u, c.Get(ctx, key, u)
		},
		Desired: func(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision string) ([]*render.Object, error) {
			return diff.Desired(ctx, unfenced, obj, revision, diff.Options{CacheDir: opts.Sync.CacheDir,
				AllowLocalSources: opts.Sync.AllowLocalSources, Check: opts.Sync.Check, Config: cfg, StrictSubstitute: opts.Sync.StrictSubstitute})
		},
	}
	if registry != nil {
		d.Catalog = func(source types.NamespacedName) (*catalog.Catalog, bool) {
			e, ok := registry.Get(source)
			if !ok || e.Content == nil {
				return nil, false
			}
			return e.Content, true
		}
	}
	return dashboard.New(d)
}
