package preview

import (
	"encoding/json"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/rbac"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

// addRBAC lays a Role, ClusterRole or binding of Git over the view's RBAC: the repository's
// manifests count as they will be applied.
func (v *view) addRBAC(app, kind string, o policy.Object) {
	st := &ClusterState{}
	data, err := json.Marshal(o.Object)
	if err == nil {
		err = st.addRBAC(kind, data)
	}
	if err != nil {
		v.warnings = append(v.warnings, report.Warning{File: o.Source.File, Line: o.Source.Line, Apps: []string{app},
			Message: fmt.Sprintf("olm preview: %s left out: %v", kind, err)})
		return
	}
	p := &v.policy
	for _, r := range st.Roles {
		r.Namespace = o.Namespace
		p.Roles = replaceNamed(p.Roles, r, func(x rbacv1.Role) bool { return x.Namespace == r.Namespace && x.Name == r.Name })
	}
	for _, r := range st.ClusterRoles {
		p.ClusterRoles = replaceNamed(p.ClusterRoles, r, func(x rbacv1.ClusterRole) bool { return x.Name == r.Name })
	}
	for _, b := range st.RoleBindings {
		b.Namespace = o.Namespace
		p.RoleBindings = replaceNamed(p.RoleBindings, b, func(x rbacv1.RoleBinding) bool { return x.Namespace == b.Namespace && x.Name == b.Name })
	}
	for _, b := range st.ClusterRoleBindings {
		p.ClusterRoleBindings = replaceNamed(p.ClusterRoleBindings, b, func(x rbacv1.ClusterRoleBinding) bool { return x.Name == b.Name })
	}
}

func replaceNamed[T any](list []T, o T, same func(T) bool) []T {
	return append(slices.DeleteFunc(list, same), o)
}

// execution is what the InstallPlan controller makes of an approved plan, as far as the
// namespace's OperatorGroup and the RBAC decide it.
type execution struct {
	// checkFailed is the Installed condition's InstallCheckFailed message: OLM's
	// service-account query failed and no step runs.
	checkFailed string
	// refused is the first step the scoped install's ServiceAccount may not execute; the
	// plan stays Installing with message.
	refused *rbac.Refusal
	message string
}

// stopsAt is the index of the first step the plan does not execute; len(steps) when none.
func (x execution) stopsAt(steps int) int {
	switch {
	case x.checkFailed != "":
		return 0
	case x.refused != nil:
		return x.refused.Step
	}
	return steps
}

// execute runs the controller's decisions over a plan of ns: OLM's service-account query
// (groups.ScopedServiceAccount over the namespace's groups as the view settles them), then,
// for a scoped install, the first step the account may not execute (rbac.FirstRefused over
// the view's RBAC), with the message the controller writes (v1alpha1.MessageRetryingExecution
// around the executor's error). When the RBAC of a live cluster could not be read, a scoped
// install is not judged and the preview says so.
func (v *view) execute(ns string, steps []v1alpha1.Step) execution {
	var ogs []operatorsv1.OperatorGroup
	for _, g := range v.groupsOf(ns) {
		ogs = append(ogs, g.og)
	}
	ref, err := groups.ScopedServiceAccount(ogs)
	if err != nil {
		return execution{checkFailed: err.Error()}
	}
	if ref == nil {
		return execution{}
	}
	if v.rbacUnread != "" {
		return execution{} // warnRBACUnread said so
	}
	refused := v.policy.FirstRefused(rbac.ServiceAccount(ref.Namespace, ref.Name), ns, steps, func(s v1alpha1.Step) bool { return v.exists(ns, s) })
	if refused == nil {
		return execution{}
	}
	return execution{refused: refused, message: fmt.Sprintf(v1alpha1.MessageRetryingExecution, refused.Err.Error())}
}

// exists says whether the view has the object of a step: a ServiceAccount, or an RBAC object.
func (v *view) exists(ns string, s v1alpha1.Step) bool {
	name := s.Resource.Name
	switch s.Resource.Kind {
	case "ServiceAccount":
		return v.serviceAccounts[ns+"/"+name] != nil
	case "Role":
		return slices.ContainsFunc(v.policy.Roles, func(r rbacv1.Role) bool { return r.Namespace == ns && r.Name == name })
	case "RoleBinding":
		return slices.ContainsFunc(v.policy.RoleBindings, func(r rbacv1.RoleBinding) bool { return r.Namespace == ns && r.Name == name })
	case "ClusterRole":
		return slices.ContainsFunc(v.policy.ClusterRoles, func(r rbacv1.ClusterRole) bool { return r.Name == name })
	case "ClusterRoleBinding":
		return slices.ContainsFunc(v.policy.ClusterRoleBindings, func(r rbacv1.ClusterRoleBinding) bool { return r.Name == name })
	}
	return false
}

// warnRBACUnread says, for a group naming a ServiceAccount, that its installs are not
// judged when the RBAC of a live cluster could not be read.
func (v *view) warnRBACUnread(g *groupEntry) {
	if v.rbacUnread == "" || g.og.Spec.ServiceAccountName == "" {
		return
	}
	v.warnings = append(v.warnings, report.Warning{Message: fmt.Sprintf(
		"olm preview: the RBAC of cluster %q could not be read (%s): whether ServiceAccount %s of OperatorGroup %s/%s may execute the InstallPlans of %s is not judged",
		v.cluster, v.rbacUnread, g.og.Spec.ServiceAccountName, g.og.Namespace, g.og.Name, g.og.Namespace)})
}

// planSteps are the steps the InstallPlan controller executes for a plan, in its order:
// status.plan as the Subscription controller writes it (resolve.NewPlan), then, for each
// bundle the catalog lists by image, the steps of its unpacked bundle, appended as the
// controller appends them. The preview knows such a bundle by its catalog entry only: its
// steps are made from the CSV the entry describes (its CSV step first, as unpacked
// bundles' steps are), without the objects only the image holds.
func planSteps(ns string, part *resolve.Result) ([]v1alpha1.Step, error) {
	plan, err := resolve.NewPlan(part)
	if err != nil || plan == nil {
		return nil, err
	}
	steps := plan.Steps
	for _, l := range plan.BundleLookups {
		i := slices.IndexFunc(part.Bundles, func(b resolve.Bundle) bool { return b.Name == l.Identifier })
		if i < 0 || part.Bundles[i].Content == nil {
			continue
		}
		b := part.Bundles[i]
		content := *b.Content
		content.CSV = csvFromBundle(b.Content, ns)
		b.Content = &content
		bs, err := resolve.BundleSteps(ns, b)
		if err != nil {
			return nil, err
		}
		steps = append(steps, bs...)
	}
	return steps, nil
}
