package installplan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/rbac"
)

// ScopedClients makes, once per ServiceAccount, the client that executes the plans of a
// scoped install: olmsync's own connection impersonating the account's user and the groups
// the API server gives an account's token (rbac.ServiceAccount), so the API server grants
// exactly the account's rights. OLM uses a token of the account instead (its
// token_retriever.go); the authorization is the same and no token Secret has to exist
// (docs/olm.md). olmsync's own identity needs the impersonate verb on users and groups.
type ScopedClients struct {
	config  *rest.Config
	options client.Options

	mu      sync.Mutex
	clients map[types.NamespacedName]client.Client
}

// NewScopedClients returns the ScopedClients of a connection (its warnings handled as the
// writer's: NewWriter).
func NewScopedClients(cfg *rest.Config, options client.Options) *ScopedClients {
	return &ScopedClients{config: writerConfig(cfg), options: options, clients: map[types.NamespacedName]client.Client{}}
}

// For returns the client impersonating the ServiceAccount ref names.
func (s *ScopedClients) For(ref *corev1.ObjectReference) (client.Client, error) {
	key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[key]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(s.config)
	u := rbac.ServiceAccount(ref.Namespace, ref.Name)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.Name, Groups: u.Groups}
	c, err := client.New(cfg, s.options)
	if err != nil {
		return nil, fmt.Errorf("client for service account %s: %w", key, err)
	}
	s.clients[key] = c
	return c, nil
}

// reasonInstallCheckCleared is the reason OLM leaves on the Installed condition when the
// service-account query succeeds again after failing: corev1.ConditionUnknown, status False,
// no message (catalog operator syncInstallPlans).
const reasonInstallCheckCleared = v1alpha1.InstallPlanConditionReason(corev1.ConditionUnknown)

// queryServiceAccount is OLM's first step of an InstallPlan's sync: the service account the
// namespace's OperatorGroup names (groups.ScopedServiceAccount). It reports whether the sync
// stops there, and with what result. When the query fails, the Installed condition says why
// (InstallCheckFailed, the query's message) and the sync is tried again after the retry
// interval: a group or an account is a dependency not ready yet (OLM retries with its
// queue's backoff). A success clears that condition (status False, reason Unknown, no
// message, as OLM leaves it); a reference not yet in status.attenuatedServiceAccountRef is
// written there and the sync ends, as OLM ends it, to execute on the next one (which the
// status write brings).
func (r *Reconciler) queryServiceAccount(ctx context.Context, obj *v1alpha1.InstallPlan) (result reconcile.Result, stop bool, err error) {
	var list operatorsv1.OperatorGroupList
	// From the cache, as OLM reads them from its lister: a group's change wakes the plan.
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.Namespace)); err != nil {
		return reconcile.Result{}, true, fmt.Errorf("list operatorgroups of %s: %w", obj.Namespace, err)
	}
	ref, err := groups.ScopedServiceAccount(list.Items)
	if ogErr := (*groups.OperatorGroupError)(nil); errors.As(err, &ogErr) {
		setCondition(obj, v1alpha1.InstallPlanInstalled, corev1.ConditionFalse, v1alpha1.InstallPlanReasonInstallCheckFailed, ogErr.Message, time.Now())
		log.FromContext(ctx).Info(fmt.Sprintf("attenuated service account query failed - %v", err))
		return reconcile.Result{RequeueAfter: r.retry()}, true, nil
	}
	if c := findCondition(obj, v1alpha1.InstallPlanInstalled); c != nil && c.Reason == v1alpha1.InstallPlanReasonInstallCheckFailed {
		setCondition(obj, v1alpha1.InstallPlanInstalled, corev1.ConditionFalse, reasonInstallCheckCleared, "", time.Now())
	}
	if ref != nil && !sameRef(ref, obj.Status.AttenuatedServiceAccountRef) {
		obj.Status.AttenuatedServiceAccountRef = ref
		return reconcile.Result{}, true, nil
	}
	return reconcile.Result{}, false, nil
}

func sameRef(a, b *corev1.ObjectReference) bool {
	return b != nil && *a == *b
}

func findCondition(obj *v1alpha1.InstallPlan, t v1alpha1.InstallPlanConditionType) *v1alpha1.InstallPlanCondition {
	for i := range obj.Status.Conditions {
		if obj.Status.Conditions[i].Type == t {
			return &obj.Status.Conditions[i]
		}
	}
	return nil
}

// stepClients are the clients the executor writes a plan's steps with: CRDs with olmsync's
// own rights, as OLM applies them (its StepBuilder, with OLM's client); every other step
// with the account's when the plan is a scoped install.
func (r *Reconciler) stepClients(obj *v1alpha1.InstallPlan) (steps, crds client.Client, err error) {
	crds = r.Writer
	if crds == nil {
		crds = r.Client
	}
	ref := obj.Status.AttenuatedServiceAccountRef
	if ref == nil {
		return crds, crds, nil
	}
	if r.Scoped == nil {
		return nil, nil, fmt.Errorf("no client to execute the scoped install of service account %s/%s", ref.Namespace, ref.Name)
	}
	steps, err = r.Scoped.For(ref)
	return steps, crds, err
}
