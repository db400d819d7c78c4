package csv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// The field indexes the controller keeps on CSVs.
const (
	// indexCRDs indexes a CSV by the names of the CRDs it owns and requires.
	indexCRDs = "olmsync.spec.customresourcedefinitions.names"
	// indexReplaces indexes a CSV by its spec.replaces.
	indexReplaces = "olmsync.spec.replaces"
	// indexCopiedFrom indexes a copied CSV by the CSV it copies (copiedFrom).
	indexCopiedFrom = "olmsync.copiedfrom"
	// indexOwner indexes ClusterRoles and ClusterRoleBindings by the CSV their owner labels
	// name (groups.OwnerKey).
	indexOwner = "olmsync.csv.owner"
)

// copiedFrom is indexCopiedFrom's value: the namespace and name of the CSV a copy copies,
// from its olm.copiedFrom label.
func copiedFrom(obj client.Object) []string {
	from := obj.GetLabels()[v1alpha1.CopiedLabelKey]
	if from == "" {
		return nil
	}
	return []string{from + "/" + obj.GetName()}
}

// ownerCSV is indexOwner's value: the key of the CSV that owns the object, none when no CSV
// does.
func ownerCSV(obj client.Object) []string {
	return groups.OwnerKeysOf(v1alpha1.ClusterServiceVersionKind, obj.GetLabels())
}

// SetupWithManager builds the CSV controller and registers it with the manager: its field
// indexes, and its watches on CSVs, OperatorGroups, the objects CSVs own, CRDs and Namespaces.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("csv controller: discovery client: %w", err)
	}
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Discovery: dc,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Options:   opts,
	}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers the reconciler with the manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &v1alpha1.ClusterServiceVersion{}, indexCRDs, crdNames); err != nil {
		return fmt.Errorf("csv controller: index %s: %w", indexCRDs, err)
	}
	if err := indexer.IndexField(ctx, &v1alpha1.ClusterServiceVersion{}, indexReplaces, replaces); err != nil {
		return fmt.Errorf("csv controller: index %s: %w", indexReplaces, err)
	}
	if err := indexer.IndexField(ctx, &v1alpha1.ClusterServiceVersion{}, indexCopiedFrom, copiedFrom); err != nil {
		return fmt.Errorf("csv controller: index %s: %w", indexCopiedFrom, err)
	}
	for _, kind := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
		if err := indexer.IndexField(ctx, kind, indexOwner, ownerCSV); err != nil {
			return fmt.Errorf("csv controller: index %s: %w", indexOwner, err)
		}
	}
	r.indexed = true
	metrics.CSVCount.CountFrom(mgr.GetCache())
	ownedByCSV := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.ClusterServiceVersion{})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.ClusterServiceVersion{}).
		Watches(&v1alpha1.ClusterServiceVersion{}, handler.EnqueueRequestsFromMapFunc(r.neighbours),
			builder.WithPredicates(copyChanged())).
		Watches(&operatorsv1.OperatorGroup{}, r.groupEvents()).
		Watches(&operatorsv2.OperatorCondition{}, handler.EnqueueRequestsFromMapFunc(r.replacementsOf)).
		Watches(&appsv1.Deployment{}, ownedByCSV).
		Watches(&corev1.ServiceAccount{}, ownedByCSV).
		Watches(&rbacv1.Role{}, ownedByCSV).
		Watches(&rbacv1.RoleBinding{}, ownedByCSV).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(ownerByLabels)).
		Watches(&rbacv1.ClusterRoleBinding{}, handler.EnqueueRequestsFromMapFunc(ownerByLabels)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, r.crdEvents()).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.csvsTargeting),
			builder.WithPredicates(predicate.Funcs{
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				DeleteFunc:  func(event.DeleteEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.Options.MaxConcurrentReconciles)}).
		Complete(r)
}

func crdNames(obj client.Object) []string {
	csv, ok := obj.(*v1alpha1.ClusterServiceVersion)
	if !ok || groups.IsCopied(csv) {
		return nil
	}
	set := map[string]bool{}
	for _, d := range slices.Concat(csv.Spec.CustomResourceDefinitions.Owned, csv.Spec.CustomResourceDefinitions.Required) {
		set[d.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func replaces(obj client.Object) []string {
	csv, ok := obj.(*v1alpha1.ClusterServiceVersion)
	if !ok || groups.IsCopied(csv) || csv.Spec.Replaces == "" {
		return nil
	}
	return []string{csv.Spec.Replaces}
}

// copyChanged lets through every event of a CSV, and of a copy only its creation, deletion or a
// change to anything but its status: a copy's parent rewrites a copy that was tampered with,
// not every time it has mirrored the parent's status.
func copyChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			csv, ok := e.ObjectNew.(*v1alpha1.ClusterServiceVersion)
			if !ok || !groups.IsCopied(csv) {
				return true
			}
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				!maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
				!maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		},
	}
}

// neighbours maps a CSV to the CSVs whose sync depends on it: the CSV it replaces and those that
// replace it (the replacement moves through both), and, for a copy, its parent. The CSV it
// replaces only when the cache holds it: an operator installed at its channel head replaces a
// CSV that was never installed, and each event of it would sync that name for nothing (a CSV
// the cache does not show yet is synced by its own creation's event).
func (r *Reconciler) neighbours(ctx context.Context, obj client.Object) []reconcile.Request {
	csv, ok := obj.(*v1alpha1.ClusterServiceVersion)
	if !ok {
		return nil
	}
	if groups.IsCopied(csv) {
		parent := csv.Annotations[operatorsv1.OperatorGroupNamespaceAnnotationKey]
		if parent == "" {
			parent = csv.Labels[v1alpha1.CopiedLabelKey]
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: parent, Name: csv.Name}}}
	}
	var out []reconcile.Request
	if csv.Spec.Replaces != "" {
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: csv.Namespace, Name: csv.Spec.Replaces}, &v1alpha1.ClusterServiceVersion{})
		if !apierrors.IsNotFound(err) {
			out = append(out, request(csv.Namespace, csv.Spec.Replaces))
		}
	}
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(csv.Namespace), client.MatchingFields{indexReplaces: csv.Name}); err != nil {
		log.FromContext(ctx).Error(err, "list csvs replacing", "csv", csv.Name)
		return out
	}
	for i := range list.Items {
		out = append(out, request(list.Items[i].Namespace, list.Items[i].Name))
	}
	return out
}

// replacementsOf maps an OperatorCondition to the CSVs that replace the CSV of its name: the
// ones its Upgradeable condition holds back in Pending.
func (r *Reconciler) replacementsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{indexReplaces: obj.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "list csvs replacing", "csv", obj.GetName())
		return nil
	}
	set := map[types.NamespacedName]bool{}
	addLocal(set, list.Items)
	return requests(set)
}

// groupEvents queues, for an event of an OperatorGroup, the CSVs of its namespace, and the
// CSVs anywhere that provide an API its olm.providedAPIs lists and whose group intersects it
// (seed 000: they are requeued, so that a conflict the group's change resolved is noticed;
// OLM requeues every provider, cluster-wide). A group whose targets do not intersect this
// one's is not read by the intersection check of its CSVs (groups.Conflicts), so its CSVs
// have nothing to notice; an update's old and new targets both count. An update that changed
// neither olm.providedAPIs nor the targets queues the namespace's CSVs only. In
// BenchmarkSteadyState, where each of 100 namespaces has its own group and each API is
// provided in ten namespaces, every group update queued about fifty CSVs, 8,300 of the CSV
// controller's 11,000 reconciles, all but the namespace's five for nothing.
func (r *Reconciler) groupEvents() handler.EventHandler {
	all := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if og, ok := obj.(*operatorsv1.OperatorGroup); ok {
			for _, req := range r.csvsOfGroup(ctx, og, og) {
				q.Add(req)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, e.Object, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			older, ok1 := e.ObjectOld.(*operatorsv1.OperatorGroup)
			newer, ok2 := e.ObjectNew.(*operatorsv1.OperatorGroup)
			if !ok1 || !ok2 {
				return
			}
			if providedAPIsOrTargetsChanged(older, newer) {
				for _, req := range r.csvsOfGroup(ctx, older, newer) {
					q.Add(req)
				}
				return
			}
			for _, req := range r.csvsInNamespace(ctx, newer.Namespace) {
				q.Add(req)
			}
		},
	}
}

// providedAPIsOrTargetsChanged reports whether an update of a group changed what other
// groups' CSVs read of it: its olm.providedAPIs, or the targets its intersection is judged on.
func providedAPIsOrTargetsChanged(older, newer *operatorsv1.OperatorGroup) bool {
	key := operatorsv1.OperatorGroupProvidedAPIsAnnotationKey
	return older.Annotations[key] != newer.Annotations[key] || !slices.Equal(older.Status.Namespaces, newer.Status.Namespaces)
}

// csvsOfGroup maps a group, as it was (older) and is (newer), to the CSVs of its namespace and
// to the CSVs of the groups it intersects (then or now) that provide an API it lists (then or
// now). A provider in a namespace without exactly one group is queued too: which group it
// belongs to is for its own sync to say.
func (r *Reconciler) csvsOfGroup(ctx context.Context, older, newer *operatorsv1.OperatorGroup) []reconcile.Request {
	set := map[types.NamespacedName]bool{}
	for _, req := range r.csvsInNamespace(ctx, newer.Namespace) {
		set[req.NamespacedName] = true
	}
	groupsOf := map[string][]operatorsv1.OperatorGroup{} // by namespace, listed once
	intersects := func(namespace string) bool {
		ogs, ok := groupsOf[namespace]
		if !ok {
			var list operatorsv1.OperatorGroupList
			if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
				log.FromContext(ctx).Error(err, "list operatorgroups", "namespace", namespace)
			}
			ogs = list.Items
			groupsOf[namespace] = ogs
		}
		return len(ogs) != 1 || groups.GroupsIntersect(older, &ogs[0]) || groups.GroupsIntersect(newer, &ogs[0])
	}
	apis := groups.GroupProvidedAPIs(older).Union(groups.GroupProvidedAPIs(newer))
	for api := range apis {
		var providers v1alpha1.ClusterServiceVersionList
		if err := r.Client.List(ctx, &providers, client.MatchingLabels{api.LabelKey(): groups.ProvidedAPILabelValue}, client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "list csvs providing an api", "api", api.String())
			continue
		}
		for i := range providers.Items {
			c := &providers.Items[i]
			if c.Namespace != newer.Namespace && !groups.IsCopied(c) && intersects(c.Namespace) {
				set[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}] = true
			}
		}
	}
	return requests(set)
}

// csvsInNamespace are the CSVs of a namespace that are not copies.
func (r *Reconciler) csvsInNamespace(ctx context.Context, namespace string) []reconcile.Request {
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list csvs", "namespace", namespace)
		return nil
	}
	set := map[types.NamespacedName]bool{}
	addLocal(set, list.Items)
	return requests(set)
}

// csvsOfCRD maps a CRD to the CSVs that own or require it.
func (r *Reconciler) csvsOfCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.MatchingFields{indexCRDs: obj.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list csvs of crd", "crd", obj.GetName())
		return nil
	}
	set := map[types.NamespacedName]bool{}
	addLocal(set, list.Items)
	return requests(set)
}

// crdEvents queues, for an event of a CRD, the CSVs that own or require it (csvsOfCRD), but for
// an update that changed nothing except installed-alongside annotations only the CSVs of the
// namespaces those annotations name: an InstallPlan writes its namespace's annotation each
// time it applies the CRD, and a CSV's requirement check reads only its own namespace's
// (phase.InstalledAlongsidePrefix). Every plan of a package's ten namespaces queued the CSVs of
// all ten: 2,805 requests in a BenchmarkSteadyState run, about 2,500 of them for nothing.
func (r *Reconciler) crdEvents() handler.EventHandler {
	all := handler.EnqueueRequestsFromMapFunc(r.csvsOfCRD)
	return handler.Funcs{
		CreateFunc:  all.Create,
		DeleteFunc:  all.Delete,
		GenericFunc: all.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			namespaces, only := alongsideChange(e.ObjectOld, e.ObjectNew)
			if !only {
				all.Update(ctx, e, q)
				return
			}
			for _, req := range r.csvsOfCRD(ctx, e.ObjectNew) {
				if namespaces[req.Namespace] {
					q.Add(req)
				}
			}
		},
	}
}

// alongsideChange reports whether two versions of a CRD differ in nothing a CSV's sync reads
// but installed-alongside annotations, and the namespaces the annotations that changed name
// (their old values and their new: <namespace>/<csv>). Spec (by generation), status, labels,
// deletion and finalizers must be the same, and every other annotation.
func alongsideChange(oldObj, newObj client.Object) (map[string]bool, bool) {
	o, ok1 := oldObj.(*apiextensionsv1.CustomResourceDefinition)
	n, ok2 := newObj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok1 || !ok2 || o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels) ||
		!o.DeletionTimestamp.Equal(n.DeletionTimestamp) || !slices.Equal(o.Finalizers, n.Finalizers) ||
		!equality.Semantic.DeepEqual(o.Status, n.Status) {
		return nil, false
	}
	namespaces := map[string]bool{}
	for _, pair := range [][2]map[string]string{{o.Annotations, n.Annotations}, {n.Annotations, o.Annotations}} {
		for k, v := range pair[0] {
			other, has := pair[1][k]
			if has && other == v {
				continue
			}
			if !strings.HasPrefix(k, phase.InstalledAlongsidePrefix) {
				return nil, false
			}
			ns, _, _ := strings.Cut(v, "/")
			namespaces[ns] = true
		}
	}
	return namespaces, true
}

// csvsTargeting maps a new namespace to the CSVs of the groups that target it (all global
// groups among them), which copy themselves there.
func (r *Reconciler) csvsTargeting(ctx context.Context, obj client.Object) []reconcile.Request {
	var ogs operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &ogs, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list operatorgroups")
		return nil
	}
	set := map[types.NamespacedName]bool{}
	for i := range ogs.Items {
		og := &ogs.Items[i]
		if !groups.IsAllNamespaces(og.Status.Namespaces) && !slices.Contains(og.Status.Namespaces, obj.GetName()) {
			continue
		}
		var list v1alpha1.ClusterServiceVersionList
		if err := r.Client.List(ctx, &list, client.InNamespace(og.Namespace), client.UnsafeDisableDeepCopy); err == nil {
			addLocal(set, list.Items)
		}
	}
	return requests(set)
}

// ownerByLabels maps a cluster-scoped object to the CSV its owner labels name.
func ownerByLabels(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[groups.OwnerKindLabel] != v1alpha1.ClusterServiceVersionKind || l[groups.OwnerLabel] == "" || l[groups.OwnerNamespaceLabel] == "" {
		return nil
	}
	return []reconcile.Request{request(l[groups.OwnerNamespaceLabel], l[groups.OwnerLabel])}
}

// addLocal adds the CSVs that are not copies to set.
func addLocal(set map[types.NamespacedName]bool, csvs []v1alpha1.ClusterServiceVersion) {
	for i := range csvs {
		if !groups.IsCopied(&csvs[i]) {
			set[types.NamespacedName{Namespace: csvs[i].Namespace, Name: csvs[i].Name}] = true
		}
	}
}

func requests(set map[types.NamespacedName]bool) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(set))
	for key := range set {
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	return out
}

func request(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}
