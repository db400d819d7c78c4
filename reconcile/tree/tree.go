package tree

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/health"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// Node is one object of a tree: a Sync, an app, an object of its inventory, or an object
// OLM made for one.
type Node struct {
	// APIVersion and Kind are the object's; Kind "App" is an app of the Sync, and
	// "Namespace" below an OperatorGroup one of its target namespaces.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Note says why the object could not be read ("not found", "forbidden"); empty when
	// it was, or when it was not read at all.
	Note string `json:"note,omitempty"`
	// Sync is an inventory object's sync status (Synced, OutOfSync) as status.apps says.
	Sync string `json:"sync,omitempty"`
	// Health is the object's OLM-aware health; Phase its OLM phase or state (a CSV's
	// phase, an InstallPlan's, a Subscription's state); Reason and Message OLM's own
	// strings where it has them.
	Health  string `json:"health,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// CatalogSource is, for a Subscription that could be read, the CatalogSource it
	// resolves from (spec.sourceNamespace/spec.source): OLM's one link that is no
	// ownership, so the tree names it rather than drawing it.
	CatalogSource string  `json:"catalogSource,omitempty"`
	Children      []*Node `json:"children,omitempty"`
}

func (n *Node) add(c *Node) *Node {
	n.Children = append(n.Children, c)
	return c
}

// Walk calls f on n and every node below it.
func (n *Node) Walk(f func(*Node)) {
	f(n)
	for _, c := range n.Children {
		c.Walk(f)
	}
}

// Label names the node as flux tree does: Kind/namespace/name, Kind/name when
// cluster-scoped, and the note in parentheses.
func (n *Node) Label() string {
	l := n.Kind + "/" + n.Name
	if n.Namespace != "" {
		l = n.Kind + "/" + n.Namespace + "/" + n.Name
	}
	if n.Note != "" {
		l += " (" + n.Note + ")"
	}
	return l
}

// Write draws the tree with the box-drawing branches of flux tree and tree(1).
func (n *Node) Write(w io.Writer) {
	fmt.Fprintln(w, n.Label())
	n.writeChildren(w, "")
}

func (n *Node) writeChildren(w io.Writer, prefix string) {
	for i, c := range n.Children {
		branch, next := "├── ", "│   "
		if i == len(n.Children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, prefix+branch+c.Label())
		c.writeChildren(w, prefix+next)
	}
}

// Options say what a tree shows beyond the inventory and OLM's chain.
type Options struct {
	// Apps groups the inventory below one node per app (Kind "App"), by AppOf; objects
	// AppOf does not know go below an app named "".
	Apps bool
	// AppOf maps an inventory ID to its app (gitsync.Reconciler.AppsOf); nil: none known.
	AppOf map[string]string
	// TargetNamespaces adds an OperatorGroup's target namespaces (status.namespaces)
	// below it.
	TargetNamespaces bool
	// Workloads adds below each Deployment OLM made for a CSV the ReplicaSets it owns
	// that have replicas, and below each the Pods it owns, as the reader lists them (the
	// objects' controller ownerReferences). A cluster without a controller manager has
	// none: the tree then ends at the Deployment.
	Workloads bool
}

// Build reads the objects OLM made for obj's inventory through r and returns the tree.
// Objects that cannot be read are nodes with a Note; an error means the inventory itself
// cannot be read, or ctx ended.
func Build(ctx context.Context, r client.Reader, obj *olmsyncv1alpha1.Sync, opts Options) (*Node, error) {
	b := &builder{r: r, status: statusByObject(obj), workloads: opts.Workloads}
	root := &Node{APIVersion: olmsyncv1alpha1.SchemeGroupVersion.String(), Kind: olmsyncv1alpha1.SyncKind, Namespace: obj.Namespace, Name: obj.Name}
	inv, err := inventory.FromStatus(obj.Status.Inventory)
	if err != nil {
		return nil, fmt.Errorf("read the inventory of Sync %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	apps := map[string]*Node{}
	if opts.Apps {
		for _, a := range obj.Status.Apps {
			apps[a.Name] = root.add(&Node{Kind: "App", Namespace: a.Namespace, Name: a.Name, Sync: string(a.Sync), Health: string(a.Health), Message: a.Message})
		}
	}
	for _, e := range inv.Entries() {
		parent := root
		if opts.Apps {
			name := opts.AppOf[e.ID()]
			if apps[name] == nil {
				apps[name] = root.add(&Node{Kind: "App", Name: name})
			}
			parent = apps[name]
		}
		gvk := schema.GroupVersionKind{Group: e.Group, Version: e.Version, Kind: e.Kind}
		node := parent.add(&Node{APIVersion: gvk.GroupVersion().String(), Kind: e.Kind, Namespace: e.Namespace, Name: e.Name})
		b.fromStatus(node)
		if e.Group != operatorsv1alpha1.GroupName {
			continue
		}
		key := types.NamespacedName{Namespace: e.Namespace, Name: e.Name}
		switch e.Kind {
		case "Subscription":
			b.subscriptionChain(ctx, node, key)
		case "ClusterServiceVersion":
			b.csvDeployments(ctx, node, key)
		case "InstallPlan", "CatalogSource":
			b.olmObject(ctx, node, key, newOLMObject(e.Kind))
		case operatorsv1.OperatorGroupKind:
			if opts.TargetNamespaces {
				b.operatorGroup(ctx, node, key)
			}
		}
	}
	return root, ctx.Err()
}

type objectKey struct{ kind, namespace, name string }

// builder reads the objects of one tree.
type builder struct {
	r         client.Reader
	status    map[objectKey]olmsyncv1alpha1.ResourceStatus
	workloads bool
	// rsByNamespace and podsByNamespace are each namespace's ReplicaSets and Pods,
	// listed once per tree (a CSV's Deployments share them), sorted by name.
	rsByNamespace   map[string]listed[appsv1.ReplicaSet]
	podsByNamespace map[string]listed[corev1.Pod]
}

// listed is one namespace's objects of a kind, or why they could not be listed.
type listed[T any] struct {
	items []T
	err   error
}

// statusByObject indexes the objects status.apps lists: those that are not Synced and
// Healthy. Every other applied object is.
func statusByObject(obj *olmsyncv1alpha1.Sync) map[objectKey]olmsyncv1alpha1.ResourceStatus {
	out := map[objectKey]olmsyncv1alpha1.ResourceStatus{}
	for _, a := range obj.Status.Apps {
		for _, r := range a.Resources {
			out[objectKey{r.Kind, r.Namespace, r.Name}] = r
		}
	}
	return out
}

// fromStatus gives an inventory object the sync status and health the reconciler wrote.
func (b *builder) fromStatus(n *Node) {
	if s, ok := b.status[objectKey{n.Kind, n.Namespace, n.Name}]; ok {
		n.Sync, n.Health, n.Reason, n.Message = string(s.Sync), string(s.Health), s.Reason, s.Message
		return
	}
	n.Sync, n.Health = string(olmsyncv1alpha1.SyncStatusSynced), string(health.Healthy)
}

// subscriptionChain adds below a Subscription's node the InstallPlan and the CSV OLM made
// for it, and the CSV's Deployments below the CSV: the CSV goes below the InstallPlan
// that installed it when there is one.
func (b *builder) subscriptionChain(ctx context.Context, node *Node, key types.NamespacedName) {
	sub := &operatorsv1alpha1.Subscription{}
	if !b.olmObject(ctx, node, key, sub) {
		return
	}
	if sub.Spec.CatalogSource != "" {
		node.CatalogSource = cmp.Or(sub.Spec.CatalogSourceNamespace, key.Namespace) + "/" + sub.Spec.CatalogSource
	}
	csv := sub.Status.InstalledCSV
	if csv == "" {
		csv = sub.Status.CurrentCSV
	}
	parent := node
	if ref := sub.Status.InstallPlanRef; ref != nil && ref.Name != "" {
		ns := ref.Namespace
		if ns == "" {
			ns = key.Namespace
		}
		ip := node.add(&Node{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: "InstallPlan", Namespace: ns, Name: ref.Name})
		plan := &operatorsv1alpha1.InstallPlan{}
		// The CSV goes below the plan that installs it; the installed one stays below
		// the Subscription while a newer plan (an upgrade waiting for approval) is not
		// its.
		if !b.olmObject(ctx, ip, types.NamespacedName{Namespace: ns, Name: ref.Name}, plan) || slices.Contains(plan.Spec.ClusterServiceVersionNames, csv) {
			parent = ip
		}
	}
	if csv == "" {
		return
	}
	csvNode := parent.add(&Node{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterServiceVersion", Namespace: key.Namespace, Name: csv})
	b.csvDeployments(ctx, csvNode, types.NamespacedName{Namespace: key.Namespace, Name: csv})
}

// csvDeployments reads a CSV and adds below its node the Deployments of its install strategy.
func (b *builder) csvDeployments(ctx context.Context, node *Node, key types.NamespacedName) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if !b.olmObject(ctx, node, key, csv) {
		return
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		dep := node.add(&Node{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Namespace: key.Namespace, Name: d.Name})
		obj := &appsv1.Deployment{}
		if b.olmObject(ctx, dep, types.NamespacedName{Namespace: key.Namespace, Name: d.Name}, obj) && b.workloads {
			b.replicaSets(ctx, dep, obj)
		}
	}
}

// replicaSets adds below a Deployment's node the ReplicaSets it controls that have
// replicas (the old ones a rollout scaled to zero say nothing), and below each its Pods.
func (b *builder) replicaSets(ctx context.Context, node *Node, dep *appsv1.Deployment) {
	sets := b.listReplicaSets(ctx, dep.Namespace)
	if sets.err != nil {
		node.Message = cmp.Or(node.Message, "ReplicaSets unreadable: "+string(apierrors.ReasonForError(sets.err)))
		return
	}
	for i := range sets.items {
		rs := &sets.items[i]
		if !controlledBy(rs, dep.UID) || (ptr.Deref(rs.Spec.Replicas, 0) == 0 && rs.Status.Replicas == 0) {
			continue
		}
		rsNode := node.add(&Node{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name})
		b.describe(ctx, rsNode, rs)
		pods := b.listPods(ctx, dep.Namespace)
		if pods.err != nil {
			rsNode.Message = cmp.Or(rsNode.Message, "Pods unreadable: "+string(apierrors.ReasonForError(pods.err)))
			continue
		}
		for j := range pods.items {
			pod := &pods.items[j]
			if controlledBy(pod, rs.UID) {
				b.describe(ctx, rsNode.add(&Node{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}), pod)
			}
		}
	}
}

// listReplicaSets lists a namespace's ReplicaSets, the first time it is asked.
func (b *builder) listReplicaSets(ctx context.Context, namespace string) listed[appsv1.ReplicaSet] {
	return listOnce(&b.rsByNamespace, namespace, func() ([]appsv1.ReplicaSet, error) {
		var list appsv1.ReplicaSetList
		err := b.r.List(ctx, &list, client.InNamespace(namespace))
		return list.Items, err
	}, func(rs *appsv1.ReplicaSet) string { return rs.Name })
}

// listPods lists a namespace's Pods, the first time it is asked.
func (b *builder) listPods(ctx context.Context, namespace string) listed[corev1.Pod] {
	return listOnce(&b.podsByNamespace, namespace, func() ([]corev1.Pod, error) {
		var list corev1.PodList
		err := b.r.List(ctx, &list, client.InNamespace(namespace))
		return list.Items, err
	}, func(p *corev1.Pod) string { return p.Name })
}

// listOnce returns what list gives for namespace, sorted by name, listing it the first time
// and keeping it in *byNamespace.
func listOnce[T any](byNamespace *map[string]listed[T], namespace string, list func() ([]T, error), name func(*T) string) listed[T] {
	if l, ok := (*byNamespace)[namespace]; ok {
		return l
	}
	items, err := list()
	slices.SortFunc(items, func(a, b T) int { return cmp.Compare(name(&a), name(&b)) })
	l := listed[T]{items: items, err: err}
	if *byNamespace == nil {
		*byNamespace = map[string]listed[T]{}
	}
	(*byNamespace)[namespace] = l
	return l
}

// controlledBy reports whether obj's controller ownerReference is the object uid names.
func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

// operatorGroup reads an OperatorGroup and adds below it the namespaces it targets.
func (b *builder) operatorGroup(ctx context.Context, node *Node, key types.NamespacedName) {
	og := &operatorsv1.OperatorGroup{}
	if !b.olmObject(ctx, node, key, og) {
		return
	}
	for _, ns := range og.Status.Namespaces {
		name := ns
		if name == corev1.NamespaceAll {
			name = "*" // OLM's "" is every namespace
		}
		node.add(&Node{APIVersion: "v1", Kind: "Namespace", Name: name})
	}
}

// CatalogSourceNode reads a CatalogSource through r into a node with its health and
// state, as Build reads the objects of a tree: for a Subscription's CatalogSource that
// is not in the Sync's inventory (a global catalog), which a view shows beside the tree.
func CatalogSourceNode(ctx context.Context, r client.Reader, key types.NamespacedName) *Node {
	n := &Node{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: "CatalogSource", Namespace: key.Namespace, Name: key.Name}
	b := &builder{r: r}
	b.olmObject(ctx, n, key, &operatorsv1alpha1.CatalogSource{})
	return n
}

// newOLMObject is an empty object of an OLM kind the tree reads.
func newOLMObject(kind string) client.Object {
	switch kind {
	case "InstallPlan":
		return &operatorsv1alpha1.InstallPlan{}
	case "CatalogSource":
		return &operatorsv1alpha1.CatalogSource{}
	}
	return &operatorsv1alpha1.Subscription{}
}

// olmObject reads an object of the tree into obj and sets the node's health, phase and
// reason from it; false when it could not be read (the node's Note says why). A tree
// shows what it can rather than nothing.
func (b *builder) olmObject(ctx context.Context, node *Node, key types.NamespacedName, obj client.Object) bool {
	err := b.r.Get(ctx, key, obj)
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		node.Note = "not found"
	case apierrors.IsForbidden(err):
		node.Note = "forbidden"
	default:
		node.Note = "unreadable: " + string(apierrors.ReasonForError(err))
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			node.Health = string(health.Missing)
		}
		return false
	}
	b.describe(ctx, node, obj)
	return true
}

// describe sets a node's health, phase and reason from its object.
func (b *builder) describe(ctx context.Context, node *Node, obj client.Object) {
	node.Phase, node.Reason = phaseOf(obj)
	u, err := toUnstructured(obj, node)
	if err != nil {
		node.Health, node.Message = string(health.Unknown), err.Error()
		return
	}
	h := health.Of(u, b.lookup(ctx))
	node.Health = string(h.Status)
	if node.Reason == "" && h.Reason != node.Phase {
		node.Reason = h.Reason // a reason that only repeats the phase says nothing more
	}
	if node.Message == "" || h.Status != health.Healthy {
		node.Message = h.Message
	}
}

// phaseOf is an OLM object's phase (or state) and reason, in OLM's own strings.
func phaseOf(obj client.Object) (phase, reason string) {
	switch o := obj.(type) {
	case *operatorsv1alpha1.Subscription:
		return string(o.Status.State), "" // the failing condition's reason comes from health
	case *operatorsv1alpha1.InstallPlan:
		for _, c := range o.Status.Conditions {
			if c.Type == operatorsv1alpha1.InstallPlanInstalled && c.Reason != "" {
				reason = string(c.Reason)
			}
		}
		return string(o.Status.Phase), reason
	case *operatorsv1alpha1.ClusterServiceVersion:
		return string(o.Status.Phase), string(o.Status.Reason)
	case *operatorsv1alpha1.CatalogSource:
		if o.Status.GRPCConnectionState != nil {
			return o.Status.GRPCConnectionState.LastObservedState, ""
		}
	case *corev1.Pod:
		return string(o.Status.Phase), o.Status.Reason
	}
	return "", ""
}

// toUnstructured converts a typed object for health.Of, with its apiVersion and kind.
func toUnstructured(obj client.Object, node *Node) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", node.Label(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(node.APIVersion)
	u.SetKind(node.Kind)
	return u, nil
}

// lookup reads the objects health.Of looks up (a Subscription's CSV and InstallPlan)
// through the tree's reader.
func (b *builder) lookup(ctx context.Context) health.Lookup {
	return func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
		var obj client.Object
		switch gvk.Kind {
		case "ClusterServiceVersion":
			obj = &operatorsv1alpha1.ClusterServiceVersion{}
		case "InstallPlan":
			obj = &operatorsv1alpha1.InstallPlan{}
		default:
			return nil
		}
		if err := b.r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		return u
	}
}

// EventTime is when an Event about a node last happened, whichever API wrote it (a
// series' last observation, the core API's lastTimestamp, events.k8s.io's eventTime, else
// its creation): `olmsync events` and the dashboard order Events by it.
func EventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}
