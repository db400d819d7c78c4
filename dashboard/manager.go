package dashboard

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// OnManager builds the dashboard on the manager `olmsync run` starts (reconcile.NewManager),
// for the caller to add to it as a runnable (mgr.Add), so that the controllers do not know
// their UI: cmd wires both. Give NewManager CacheByObject() in reconcile.Options, so its
// cache holds the ReplicaSets and Pods the graph draws, stripped. cfg is the config the
// manager was built from, before its leader fence.
//
// Its reads are the manager's cache, its stream the cache's informers; its writes (the
// actions, and the token and access reviews) go past the leader fence, as the webhook
// receiver's, because it runs on every replica and only asks. A diff runs the code of
// `olmsync diff sync` with the Sync reconciler's options and git cache, reading Secrets
// past the cache (it holds only webhook keys). Upgrade graphs come from the catalogs the
// embedded OLM loaded, when it runs.
func OnManager(mgr *reconcile.Manager, cfg *rest.Config, addr string, anonymousRead bool) (*Server, error) {
	unfenced, err := client.New(cfg, client.Options{Scheme: kube.Scheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	syncs, sync := mgr.Syncs, mgr.Syncs.Options
	d := Options{
		Addr:          addr,
		AnonymousRead: anonymousRead,
		Reader:        mgr.GetClient(),
		Writer:        unfenced,
		Informers:     mgr.GetCache(),
		AppsOf:        syncs.AppsOf,
		Log:           mgr.GetLogger().WithName("dashboard"),
		Diff: func(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*diff.Report, error) {
			return diff.Sync(ctx, unfenced, obj, diff.Options{CacheDir: sync.CacheDir,
				AllowLocalSources: sync.AllowLocalSources, Check: sync.Check, Config: cfg})
		},
		File: func(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision, file string) ([]byte, error) {
			req, err := gitsync.FetchRequestOf(ctx, unfenced, obj, sync.CacheDir, sync.AllowLocalSources)
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
			return diff.Desired(ctx, unfenced, obj, revision, diff.Options{CacheDir: sync.CacheDir,
				AllowLocalSources: sync.AllowLocalSources, Check: sync.Check, Config: cfg, StrictSubstitute: sync.StrictSubstitute})
		},
	}
	if registry := mgr.Catalogs; registry != nil {
		d.Catalog = func(source types.NamespacedName) (*catalog.Catalog, bool) {
			e, ok := registry.Get(source)
			if !ok || e.Content == nil {
				return nil, false
			}
			return e.Content, true
		}
	}
	return New(d)
}
