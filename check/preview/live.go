package preview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/olm/extension"
)

// RESTConfig loads the kubeconfig's context, made read-only (ReadOnly).
func (k Kubeconfig) RESTConfig() (*rest.Config, error) {
	cfg, err := kube.Config(k.Path, k.Context)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", k, err)
	}
	return ReadOnly(cfg), nil
}

// ReadKubeconfig reads the state of the cluster a kubeconfig's context names (ReadCluster).
// Every error names the kubeconfig and the context.
func ReadKubeconfig(ctx context.Context, k Kubeconfig) (*ClusterState, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	st, err := ReadCluster(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("read the cluster of %s at %s: %w", k, cfg.Host, err)
	}
	return st, nil
}

// ErrWriteRefused is what a request other than a read meets on a read-only config.
var ErrWriteRefused = errors.New("olmsync only reads the cluster")

// ReadOnly returns a copy of cfg through which only reads (GET and HEAD requests) reach
// the API server: any other request fails with ErrWriteRefused before it leaves the
// process, whatever client is built on it. The preview never writes, and this makes it a
// property of the connection rather than of the code that happens to use it.
func ReadOnly(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnlyTransport{next: rt} })
	return cfg
}

type readOnlyTransport struct{ next http.RoundTripper }

func (t readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("%w: refused %s %s", ErrWriteRefused, req.Method, req.URL.Path)
	}
	return t.next.RoundTrip(req)
}

// lister is all ReadCluster does with the cluster besides asking its version: list
// objects. It is handed no client that could write.
type lister interface {
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// pageSize bounds one list response: a cluster with thousands of CSVs is read in pages
// rather than in one response the API server has to build in memory.
const pageSize = 500

// ReadCluster reads what the preview needs of a live cluster into a ClusterState: the
// same kinds a --cluster-state folder holds — Namespaces (with their labels),
// OperatorGroups, ClusterServiceVersions, Subscriptions (with status.installedCSV),
// CatalogSources (all of them: CatalogSourcesListed), CustomResourceDefinitions, the
// custom resources of the CRDs a CSV owns (at most maxCustomResources per version),
// ServiceAccounts (their names), Roles, ClusterRoles and their bindings — the server's Kubernetes version, for minKubeVersion, and
// the global catalog namespace the cluster's OLM (or olmsync) runs with
// (globalCatalogNamespace). It only lists (ReadOnly makes cfg refuse anything else). A
// cluster without OLM's CRDs has none of OLM's kinds, which is no error; a cluster that
// cannot be reached, or that refuses a list, is. Copied CSVs (label olm.copiedFrom), which
// OLM's resolver and the preview leave out, are not read: on a cluster with global
// operators they are most of the CSVs.
func ReadCluster(ctx context.Context, cfg *rest.Config) (*ClusterState, error) {
	cfg = ReadOnly(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	st := &ClusterState{CatalogSourcesListed: true}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	version, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("get the server version: %w", err)
	}
	st.KubeVersion = strings.TrimPrefix(version.GitVersion, "v")
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return nil, err
	}
	if err := st.list(ctx, c); err != nil {
		return nil, err
	}
	if err := st.listCustomResources(ctx, c); err != nil {
		return nil, err
	}
	if err := st.listRBAC(ctx, c); err != nil {
		return nil, err
	}
	if err := st.listOLMv1(ctx, c); err != nil {
		return nil, err
	}
	var deployments []appsv1.Deployment
	for _, sel := range []client.ListOption{
		client.MatchingFields{"metadata.name": olmCatalogOperator},
		client.MatchingLabels{"app.kubernetes.io/part-of": "olmsync"},
	} {
		if err := listAll(ctx, c, "Deployments", &appsv1.DeploymentList{}, func(l *appsv1.DeploymentList) {
			deployments = append(deployments, l.Items...)
		}, sel); err != nil {
			return nil, err
		}
	}
	st.GlobalCatalogNamespace = globalCatalogNamespace(deployments)
	return st, nil
}

// list reads each kind, page by page.
func (st *ClusterState) list(ctx context.Context, c lister) error {
	notCopied, err := labels.NewRequirement(v1alpha1.CopiedLabelKey, selection.DoesNotExist, nil)
	if err != nil {
		return err
	}
	return errors.Join(
		listAll(ctx, c, "Namespaces", &corev1.NamespaceList{}, func(l *corev1.NamespaceList) {
			st.Namespaces = append(st.Namespaces, l.Items...)
		}),
		listAll(ctx, c, "OperatorGroups", &operatorsv1.OperatorGroupList{}, func(l *operatorsv1.OperatorGroupList) {
			st.OperatorGroups = append(st.OperatorGroups, l.Items...)
		}),
		listAll(ctx, c, "ClusterServiceVersions", &v1alpha1.ClusterServiceVersionList{}, func(l *v1alpha1.ClusterServiceVersionList) {
			st.CSVs = append(st.CSVs, l.Items...)
		}, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*notCopied)}),
		listAll(ctx, c, "Subscriptions", &v1alpha1.SubscriptionList{}, func(l *v1alpha1.SubscriptionList) {
			st.Subscriptions = append(st.Subscriptions, l.Items...)
		}),
		listAll(ctx, c, "CatalogSources", &v1alpha1.CatalogSourceList{}, func(l *v1alpha1.CatalogSourceList) {
			st.CatalogSources = append(st.CatalogSources, l.Items...)
		}),
		listAll(ctx, c, "CustomResourceDefinitions", &apiextensionsv1.CustomResourceDefinitionList{}, func(l *apiextensionsv1.CustomResourceDefinitionList) {
			st.CRDs = append(st.CRDs, l.Items...)
		}),
		// Names are all an OperatorGroup's service account needs: metadata only.
		listAll(ctx, c, "ServiceAccounts", serviceAccountMetadata(), func(l *metav1.PartialObjectMetadataList) {
			for _, m := range l.Items {
				st.ServiceAccounts = append(st.ServiceAccounts, corev1.ServiceAccount{ObjectMeta: m.ObjectMeta})
			}
		}),
	)
}

// listRBAC reads the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, what a
// scoped install's ServiceAccount may do. A user who may not list them leaves them unread
// (RBACUnread), which the preview says, instead of failing the whole read.
func (st *ClusterState) listRBAC(ctx context.Context, c lister) error {
	err := errors.Join(
		listAll(ctx, c, "Roles", &rbacv1.RoleList{}, func(l *rbacv1.RoleList) { st.Roles = append(st.Roles, l.Items...) }),
		listAll(ctx, c, "ClusterRoles", &rbacv1.ClusterRoleList{}, func(l *rbacv1.ClusterRoleList) { st.ClusterRoles = append(st.ClusterRoles, l.Items...) }),
		listAll(ctx, c, "RoleBindings", &rbacv1.RoleBindingList{}, func(l *rbacv1.RoleBindingList) { st.RoleBindings = append(st.RoleBindings, l.Items...) }),
		listAll(ctx, c, "ClusterRoleBindings", &rbacv1.ClusterRoleBindingList{}, func(l *rbacv1.ClusterRoleBindingList) {
			st.ClusterRoleBindings = append(st.ClusterRoleBindings, l.Items...)
		}),
	)
	if err != nil && apierrors.IsForbidden(err) {
		st.Roles, st.ClusterRoles, st.RoleBindings, st.ClusterRoleBindings = nil, nil, nil, nil
		st.RBACUnread = err.Error()
		return nil
	}
	return err
}

// listOLMv1 reads OLM v1's ClusterCatalogs and ClusterExtensions (with
// status.install.bundle, what OLM v1 installed), through extension.Decode as the folders'
// are read. A cluster without OLM v1 serves neither, which is no error.
func (st *ClusterState) listOLMv1(ctx context.Context, c lister) error {
	for _, kind := range []string{extension.KindClusterCatalog, extension.KindClusterExtension} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: extension.Group, Version: extension.Version, Kind: kind + "List"})
		var decodeErr error
		err := listAll(ctx, c, kind+"s", list, func(l *unstructured.UnstructuredList) {
			for i := range l.Items {
				o := &l.Items[i]
				o.SetManagedFields(nil)
				data, err := o.MarshalJSON()
				if err == nil {
					var d *extension.Decoded
					if d, err = extension.Decode(data); err == nil {
						if d.Extension != nil {
							st.ClusterExtensions = append(st.ClusterExtensions, *d.Extension)
						} else if d.Catalog != nil {
							st.ClusterCatalogs = append(st.ClusterCatalogs, *d.Catalog)
						}
					}
				}
				if err != nil {
					decodeErr = errors.Join(decodeErr, fmt.Errorf("%s %s: %w", kind, o.GetName(), err))
				}
			}
		})
		if err := errors.Join(err, decodeErr); err != nil {
			return err
		}
	}
	return nil
}

func serviceAccountMetadata() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccountList"))
	return l
}

// listCustomResources reads the custom resources of every CRD a CSV of the state owns —
// those an upgrade can replace — once per served version, as OLM lists them for its CRD
// upgrade check.
func (st *ClusterState) listCustomResources(ctx context.Context, c lister) error {
	owned := map[string]bool{}
	for _, csv := range st.CSVs {
		for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
			owned[d.Name] = true
		}
	}
	for i := range st.CRDs {
		crd := &st.CRDs[i]
		if !owned[crd.Name] {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind}
			cut, err := st.listVersion(ctx, c, gvk)
			switch {
			case apierrors.IsForbidden(err):
				// The operators' own API groups are many; a user who may not list one
				// leaves its custom resources unknown, which the preview says.
				cut = true
			case err != nil:
				return fmt.Errorf("list %s of version %s: %w", crd.Name, v.Name, err)
			}
			if cut && !slices.Contains(st.CustomResourcesCut, crd.Name) {
				st.CustomResourcesCut = append(st.CustomResourcesCut, crd.Name)
			}
		}
	}
	return nil
}

// listVersion reads the custom resources of one version of a CRD, a page at a time, and
// stops at maxCustomResources: cut says there were more.
func (st *ClusterState) listVersion(ctx context.Context, c lister, gvk schema.GroupVersionKind) (cut bool, err error) {
	cont, n := "", 0
	for {
		page := &unstructured.UnstructuredList{}
		page.SetGroupVersionKind(gvk)
		err := c.List(ctx, page, client.Limit(min(pageSize, maxCustomResources-n)), client.Continue(cont))
		switch {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		}
		st.CustomResources = append(st.CustomResources, page.Items...)
		n += len(page.Items)
		if cont = page.GetContinue(); cont == "" {
			return false, nil
		}
		if n >= maxCustomResources {
			return true, nil
		}
	}
}

// listAll lists every object of a kind in every namespace, a page at a time, handing each
// page to add. A kind the cluster does not serve (no OLM installed) lists nothing.
func listAll[L client.ObjectList](ctx context.Context, c lister, what string, list L, add func(L), opts ...client.ListOption) error {
	cont := ""
	for {
		page := list.DeepCopyObject().(L)
		err := c.List(ctx, page, append(opts, client.Limit(pageSize), client.Continue(cont))...)
		switch {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("list %s: %w", what, err)
		}
		add(page)
		if cont = page.GetContinue(); cont == "" {
			return nil
		}
	}
}
