package preview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/extension"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/rbac"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

// Where a group comes from (report.OperatorGroupPreview.Origin).
const (
	originGit     = "git"
	originCluster = "cluster"
	originConfig  = "config"
)

// gitRef locates an object in the checked revision.
type gitRef struct {
	app, file string
	line      int
	ref       policy.ObjectRef
}

// subscriptionEntry is a Subscription of the view: its spec from Git when Git declares it,
// its status (installedCSV) from the cluster.
type subscriptionEntry struct {
	sub v1alpha1.Subscription
	git *gitRef
}

// groupEntry is an OperatorGroup of the view, with status.namespaces resolved.
type groupEntry struct {
	og      operatorsv1.OperatorGroup
	origin  string
	git     *gitRef
	message string // why OLM refuses the group's spec, when it does
	// serviceAccountMissing: spec.serviceAccountName names no ServiceAccount, and OLM stops
	// syncing the group (message says so).
	serviceAccountMissing bool
	// clusterNamespaces is status.namespaces as the cluster has it, which OLM leaves as it
	// is while it does not sync the group.
	clusterNamespaces []string
}

// view is one cluster as OLM would see it once the revision is applied: the cluster's
// objects with those in Git laid over them.
type view struct {
	cluster        string
	namespaces     map[string]*corev1.Namespace
	groups         []*groupEntry
	subscriptions  []*subscriptionEntry
	csvs           []v1alpha1.ClusterServiceVersion
	catalogSources []v1alpha1.CatalogSource
	// catalogRefs are where Git declares its CatalogSources.
	catalogRefs map[resolve.CatalogKey]*gitRef
	// catalogSourcesListed: catalogSources are all the cluster has (ClusterState.CatalogSourcesListed).
	catalogSourcesListed bool
	// serviceAccounts are the cluster's and Git's, by namespace/name.
	serviceAccounts map[string]*corev1.ServiceAccount
	// policy is the cluster's RBAC objects with Git's laid over them: what a scoped
	// install's ServiceAccount may do. rbacUnread says why a live cluster's could not be read.
	policy     rbac.Policy
	rbacUnread string
	// state is the cluster state the view was made from (its CRDs and custom resources);
	// never nil.
	state *ClusterState
	// extensions and clusterCatalogs are OLM v1's (olm.operatorframework.io/v1).
	extensions      []*extensionEntry
	clusterCatalogs []*clusterCatalogEntry
	kubeVersion     string
	warnings        []report.Warning
}

// newView lays the objects of one cluster's policy input over its state. Without a state,
// the cluster has the OperatorGroups olmsync.yaml lists (policy.operatorGroups, by default
// OpenShift's global group in openshift-operators), as the placement rules assume.
func newView(in *policy.Input, state *ClusterState) *view {
	v := &view{cluster: in.Cluster, namespaces: map[string]*corev1.Namespace{}, serviceAccounts: map[string]*corev1.ServiceAccount{}, state: &ClusterState{}}
	if state != nil {
		v.addState(state)
	} else {
		for _, g := range in.Config.OperatorGroups {
			og := operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name}}
			if !g.Global {
				og.Spec.TargetNamespaces = slices.Clone(g.TargetNamespaces)
			}
			v.groups = append(v.groups, &groupEntry{og: og, origin: originConfig})
		}
	}
	for _, app := range in.Apps {
		for _, o := range app.Objects {
			v.addGit(app.Name, o)
		}
	}
	v.resolveTargets()
	return v
}

func (v *view) addState(st *ClusterState) {
	for i := range st.Namespaces {
		v.namespaces[st.Namespaces[i].Name] = st.Namespaces[i].DeepCopy()
	}
	for i := range st.OperatorGroups {
		og := st.OperatorGroups[i].DeepCopy()
		v.groups = append(v.groups, &groupEntry{og: *og, origin: originCluster, clusterNamespaces: og.Status.Namespaces})
	}
	for i := range st.ServiceAccounts {
		sa := st.ServiceAccounts[i].DeepCopy()
		v.serviceAccounts[sa.Namespace+"/"+sa.Name] = sa
	}
	v.policy = rbac.Policy{
		Roles: slices.Clone(st.Roles), ClusterRoles: slices.Clone(st.ClusterRoles),
		RoleBindings: slices.Clone(st.RoleBindings), ClusterRoleBindings: slices.Clone(st.ClusterRoleBindings),
	}
	v.rbacUnread = st.RBACUnread
	v.catalogSourcesListed = st.CatalogSourcesListed
	v.state = st
	for _, name := range st.CustomResourcesCut {
		v.warnings = append(v.warnings, report.Warning{Message: fmt.Sprintf(
			"olm preview: the custom resources of CRD %s on cluster %q were read only in part (more than %d of a version, or not allowed to list them): an upgrade of the CRD is checked against those read",
			name, v.cluster, maxCustomResources)})
	}
	for i := range st.Subscriptions {
		v.subscriptions = append(v.subscriptions, &subscriptionEntry{sub: *st.Subscriptions[i].DeepCopy()})
	}
	for i := range st.CSVs {
		v.csvs = append(v.csvs, *st.CSVs[i].DeepCopy())
	}
	v.catalogSources = slices.Clone(st.CatalogSources)
	v.kubeVersion = st.KubeVersion
	v.addV1State(st)
}

// addGit lays one rendered object over the view. A Subscription from Git keeps the
// cluster's status (what it has installed); an OperatorGroup keeps the olm.providedAPIs
// OLM wrote on it. An OLM object that does not decode is left out with a warning: the
// placement rules and the API server report what is wrong with it.
func (v *view) addGit(app string, o policy.Object) {
	apiVersion, _ := o.Object["apiVersion"].(string)
	kind, _ := o.Object["kind"].(string)
	if apiVersion == "v1" && kind == "Namespace" {
		v.addNamespace(o)
		return
	}
	if apiVersion == "v1" && kind == "ServiceAccount" {
		md, _ := o.Object["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" && o.Namespace != "" {
			v.serviceAccounts[o.Namespace+"/"+name] = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: name}}
		}
		return
	}
	group, _, _ := cutGroup(apiVersion)
	if apiVersion == rbacv1.SchemeGroupVersion.String() && isRBACKind(kind) {
		v.addRBAC(app, kind, o)
		return
	}
	if group == extension.Group {
		v.addV1(app, o)
		return
	}
	if group != "operators.coreos.com" {
		return
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return
	}
	obj, err := decodeOLM(data)
	if err != nil {
		v.warnings = append(v.warnings, report.Warning{File: o.Source.File, Line: o.Source.Line, Apps: []string{app},
			Message: fmt.Sprintf("olm preview: %s left out: %v", kind, err)})
		return
	}
	ref := &gitRef{app: app, file: o.Source.File, line: o.Source.Line}
	switch x := obj.(type) {
	case *v1alpha1.Subscription:
		x.Namespace = o.Namespace
		ref.ref = policy.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: x.Namespace, Name: x.Name}
		v.addSubscription(x, ref)
	case *operatorsv1.OperatorGroup:
		x.Namespace = o.Namespace
		ref.ref = policy.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: x.Namespace, Name: x.Name}
		v.addGroup(x, ref)
	case *v1alpha1.ClusterServiceVersion:
		x.Namespace = o.Namespace
		v.csvs = slices.DeleteFunc(v.csvs, func(c v1alpha1.ClusterServiceVersion) bool {
			return c.Namespace == x.Namespace && c.Name == x.Name
		})
		v.csvs = append(v.csvs, *x)
	case *v1alpha1.CatalogSource:
		x.Namespace = o.Namespace
		if v.catalogRefs == nil {
			v.catalogRefs = map[resolve.CatalogKey]*gitRef{}
		}
		v.catalogRefs[resolve.CatalogKey{Name: x.Name, Namespace: x.Namespace}] = ref
		v.catalogSources = slices.DeleteFunc(v.catalogSources, func(c v1alpha1.CatalogSource) bool {
			return c.Namespace == x.Namespace && c.Name == x.Name
		})
		v.catalogSources = append(v.catalogSources, *x)
	}
}

func (v *view) addNamespace(o policy.Object) {
	data, err := json.Marshal(o.Object)
	if err != nil {
		return
	}
	var ns corev1.Namespace
	if json.Unmarshal(data, &ns) != nil || ns.Name == "" {
		return
	}
	v.namespaces[ns.Name] = &ns
}

func (v *view) addSubscription(sub *v1alpha1.Subscription, ref *gitRef) {
	for _, e := range v.subscriptions {
		if e.sub.Namespace == sub.Namespace && e.sub.Name == sub.Name {
			status := e.sub.Status
			e.sub = *sub
			e.sub.Status = status
			e.git = ref
			return
		}
	}
	sub.Status = v1alpha1.SubscriptionStatus{}
	v.subscriptions = append(v.subscriptions, &subscriptionEntry{sub: *sub, git: ref})
}

func (v *view) addGroup(og *operatorsv1.OperatorGroup, ref *gitRef) {
	og.Status = operatorsv1.OperatorGroupStatus{}
	for _, e := range v.groups {
		if e.og.Namespace != og.Namespace || e.og.Name != og.Name {
			continue
		}
		// OLM writes olm.providedAPIs; Git does not declare it.
		if apis, ok := e.og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]; ok {
			if og.Annotations == nil {
				og.Annotations = map[string]string{}
			}
			if _, set := og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]; !set {
				og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = apis
			}
		}
		e.og, e.origin, e.git = *og, originGit, ref
		e.og.Status.Namespaces = slices.Clone(e.clusterNamespaces)
		return
	}
	v.groups = append(v.groups, &groupEntry{og: *og, origin: originGit, git: ref})
}

// resolveTargets writes each group's target namespaces into its status, as OLM's
// OperatorGroup controller does before any CSV is judged.
func (v *view) resolveTargets() {
	names := slices.Sorted(maps.Keys(v.namespaces))
	namespaces := make([]corev1.Namespace, 0, len(names))
	for _, n := range names {
		namespaces = append(namespaces, *v.namespaces[n])
	}
	for _, g := range v.groups {
		v.warnRBACUnread(g)
		sa := groups.CheckServiceAccount(&g.og, v.serviceAccounts[g.og.Namespace+"/"+g.og.Spec.ServiceAccountName])
		if sa.Missing {
			// OLM stops syncing the group here: its targets stay what the cluster has.
			g.message, g.serviceAccountMissing = sa.Message, true
			g.og.Status.Namespaces = slices.Clone(g.clusterNamespaces)
			continue
		}
		g.og.Status.ServiceAccountRef = sa.Ref
		targets, err := groups.TargetNamespaces(&g.og, namespaces)
		if err != nil {
			g.message = err.Error()
			g.og.Status.Namespaces = nil
			continue
		}
		g.og.Status.Namespaces = targets
	}
	slices.SortFunc(v.groups, func(a, b *groupEntry) int {
		return cmp.Or(cmp.Compare(a.og.Namespace, b.og.Namespace), cmp.Compare(a.og.Name, b.og.Name))
	})
	slices.SortFunc(v.subscriptions, func(a, b *subscriptionEntry) int {
		return cmp.Or(cmp.Compare(a.sub.Namespace, b.sub.Namespace), cmp.Compare(a.sub.Name, b.sub.Name))
	})
}

// groupsOf are the groups of one namespace.
// subscription is the view's Subscription namespace/name, nil when there is none.
func (v *view) subscription(ns, name string) *v1alpha1.Subscription {
	for _, e := range v.subscriptions {
		if e.sub.Namespace == ns && e.sub.Name == name {
			return &e.sub
		}
	}
	return nil
}

func (v *view) groupsOf(ns string) []*groupEntry {
	var out []*groupEntry
	for _, g := range v.groups {
		if g.og.Namespace == ns {
			out = append(out, g)
		}
	}
	return out
}

// catalogSourceMissing reports whether the view knows every CatalogSource of the cluster
// and neither it nor Git has this one: OLM then fails the Subscription's resolution (the
// resolver, which is not given the catalog, says so in OLM's words).
func (v *view) catalogSourceMissing(key resolve.CatalogKey) bool {
	return v.catalogSourcesListed && !slices.ContainsFunc(v.catalogSources, func(c v1alpha1.CatalogSource) bool {
		return c.Name == key.Name && c.Namespace == key.Namespace
	})
}

// catalogPriority is spec.priority of the CatalogSource of that name, when the view has it.
func (v *view) catalogPriority(name, namespace string) int {
	for _, c := range v.catalogSources {
		if c.Name == name && c.Namespace == namespace {
			return c.Spec.Priority
		}
	}
	return 0
}

func cutGroup(apiVersion string) (group, version string, ok bool) {
	for i := range len(apiVersion) {
		if apiVersion[i] == '/' {
			return apiVersion[:i], apiVersion[i+1:], true
		}
	}
	return "", apiVersion, false
}
