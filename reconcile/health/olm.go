package health

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

var (
	csvGVK = operatorsv1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersion")
	ipGVK  = operatorsv1alpha1.SchemeGroupVersion.WithKind("InstallPlan")
)

var olmChecks = map[schema.GroupKind]func(*unstructured.Unstructured, Lookup) Result{
	{Group: operatorsv1alpha1.GroupName, Kind: "Subscription"}:          subscription,
	{Group: operatorsv1alpha1.GroupName, Kind: "ClusterServiceVersion"}: func(o *unstructured.Unstructured, _ Lookup) Result { return csv(o) },
	{Group: operatorsv1alpha1.GroupName, Kind: "InstallPlan"}:           func(o *unstructured.Unstructured, _ Lookup) Result { return installPlan(o) },
	{Group: operatorsv1alpha1.GroupName, Kind: "CatalogSource"}:         func(o *unstructured.Unstructured, _ Lookup) Result { return catalogSource(o) },
	{Group: operatorsv1alpha1.GroupName, Kind: "OperatorGroup"}:         func(o *unstructured.Unstructured, _ Lookup) Result { return operatorGroup(o) },
}

// subscription: Healthy only at AtLatestKnown with the installed CSV Succeeded. The
// conditions OLM sets say first what stops it; a plan waiting for approval is its own
// state.
func subscription(obj *unstructured.Unstructured, lookup Lookup) Result {
	sub, err := into[operatorsv1alpha1.Subscription](obj)
	if err != nil {
		return unknown(err)
	}
	cond := func(t operatorsv1alpha1.SubscriptionConditionType) (operatorsv1alpha1.SubscriptionCondition, bool) {
		for _, c := range sub.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue {
				return c, true
			}
		}
		return operatorsv1alpha1.SubscriptionCondition{}, false
	}
	for _, t := range []operatorsv1alpha1.SubscriptionConditionType{
		operatorsv1alpha1.SubscriptionResolutionFailed,
		operatorsv1alpha1.SubscriptionInstallPlanFailed,
		operatorsv1alpha1.SubscriptionBundleUnpackFailed,
	} {
		if c, ok := cond(t); ok {
			return Result{Status: Degraded, Reason: orString(c.Reason, string(t)), Message: c.Message}
		}
	}
	if r, waiting := waitingForApproval(sub, lookup); waiting {
		return r
	}
	if sub.Status.State == operatorsv1alpha1.SubscriptionStateFailed {
		return Result{Status: Degraded, Reason: string(sub.Status.State), Message: "the upgrade failed"}
	}
	if c, ok := cond(operatorsv1alpha1.SubscriptionCatalogSourcesUnhealthy); ok {
		// Also true while a new catalog's registry starts: the CatalogSource's own health
		// tells a broken catalog from a starting one.
		return Result{Status: Progressing, Reason: orString(c.Reason, string(c.Type)), Message: c.Message}
	}
	switch sub.Status.State {
	case operatorsv1alpha1.SubscriptionStateAtLatest:
	case operatorsv1alpha1.SubscriptionStateNone:
		return Result{Status: Progressing, Message: "OLM has not resolved the Subscription yet"}
	default:
		return Result{Status: Progressing, Reason: string(sub.Status.State),
			Message: fmt.Sprintf("moving to %s", orString(sub.Status.CurrentCSV, "a new CSV"))}
	}
	name := sub.Status.InstalledCSV
	if name == "" {
		return Result{Status: Progressing, Reason: string(sub.Status.State), Message: "no CSV is installed yet"}
	}
	csvObj := lookup(csvGVK, obj.GetNamespace(), name)
	if csvObj == nil {
		return Result{Status: Progressing, Reason: string(sub.Status.State), Message: fmt.Sprintf("CSV %s is not there yet", name)}
	}
	r := csv(csvObj)
	if r.Status == Healthy {
		return Result{Status: Healthy, Reason: string(sub.Status.State), Message: fmt.Sprintf("%s is installed and Succeeded", name)}
	}
	r.Message = fmt.Sprintf("CSV %s: %s", name, r.Message)
	return r
}

// waitingForApproval: OLM says so with InstallPlanPending (reason RequiresApproval), and
// the plan itself with its phase.
func waitingForApproval(sub *operatorsv1alpha1.Subscription, lookup Lookup) (Result, bool) {
	for _, c := range sub.Status.Conditions {
		if c.Type == operatorsv1alpha1.SubscriptionInstallPlanPending && c.Status == corev1.ConditionTrue &&
			c.Reason == string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval) {
			return approvalResult(sub, planName(sub)), true
		}
	}
	if name := planName(sub); name != "" {
		if ip := lookup(ipGVK, sub.Namespace, name); ip != nil {
			if phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase"); phase == string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval) {
				return approvalResult(sub, name), true
			}
		}
	}
	return Result{}, false
}

func approvalResult(sub *operatorsv1alpha1.Subscription, plan string) Result {
	msg := fmt.Sprintf("InstallPlan %s for %s waits for a Manual approval", orString(plan, "(unnamed)"), orString(sub.Status.CurrentCSV, "the next CSV"))
	return Result{Status: WaitingForApproval, Reason: string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval), Message: msg}
}

func planName(sub *operatorsv1alpha1.Subscription) string {
	if sub.Status.InstallPlanRef != nil {
		return sub.Status.InstallPlanRef.Name
	}
	if sub.Status.Install != nil {
		return sub.Status.Install.Name
	}
	return ""
}

// csv follows the phase; the reason says why.
func csv(obj *unstructured.Unstructured) Result {
	c, err := into[operatorsv1alpha1.ClusterServiceVersion](obj)
	if err != nil {
		return unknown(err)
	}
	r := Result{Reason: string(c.Status.Reason), Message: c.Status.Message}
	switch c.Status.Phase {
	case operatorsv1alpha1.CSVPhaseSucceeded:
		r.Status = Healthy
	case operatorsv1alpha1.CSVPhaseFailed:
		r.Status = Degraded
	case operatorsv1alpha1.CSVPhaseUnknown:
		r.Status = Unknown
	case operatorsv1alpha1.CSVPhaseNone:
		r.Status, r.Message = Progressing, "OLM has not looked at the CSV yet"
	default: // Pending, InstallReady, Installing, Replacing, Deleting
		r.Status = Progressing
	}
	if r.Reason == "" {
		r.Reason = string(c.Status.Phase)
	}
	if r.Message == "" {
		r.Message = fmt.Sprintf("phase %s", orString(string(c.Status.Phase), "none"))
	}
	return r
}

// installPlan follows the phase.
func installPlan(obj *unstructured.Unstructured) Result {
	ip, err := into[operatorsv1alpha1.InstallPlan](obj)
	if err != nil {
		return unknown(err)
	}
	phase := ip.Status.Phase
	r := Result{Reason: string(phase)}
	switch phase {
	case operatorsv1alpha1.InstallPlanPhaseComplete:
		r.Status, r.Message = Healthy, "installed"
	case operatorsv1alpha1.InstallPlanPhaseFailed:
		r.Status, r.Message = Degraded, "the install failed"
		for _, c := range ip.Status.Conditions {
			if c.Status == corev1.ConditionFalse && c.Message != "" {
				r.Message = c.Message
			}
		}
	case operatorsv1alpha1.InstallPlanPhaseRequiresApproval:
		r.Status, r.Message = WaitingForApproval, fmt.Sprintf("waits for a Manual approval of %v", ip.Spec.ClusterServiceVersionNames)
	default:
		r.Status, r.Message = Progressing, fmt.Sprintf("phase %s", orString(string(phase), "none"))
	}
	return r
}

// catalogSource follows the registry connection OLM reports; a catalog OLM could not set
// up at all says so in status.reason.
func catalogSource(obj *unstructured.Unstructured) Result {
	cs, err := into[operatorsv1alpha1.CatalogSource](obj)
	if err != nil {
		return unknown(err)
	}
	if cs.Status.Reason != "" {
		return Result{Status: Degraded, Reason: string(cs.Status.Reason), Message: cs.Status.Message}
	}
	switch cs.Spec.SourceType {
	case operatorsv1alpha1.SourceTypeConfigmap, operatorsv1alpha1.SourceTypeInternal:
		if cs.Status.ConfigMapResource != nil {
			return Result{Status: Healthy, Message: "loaded from ConfigMap " + cs.Status.ConfigMapResource.Name}
		}
	}
	if cs.Status.GRPCConnectionState == nil {
		return Result{Status: Progressing, Message: "OLM has not connected to the catalog yet"}
	}
	state := cs.Status.GRPCConnectionState.LastObservedState
	r := Result{Reason: state, Message: "registry connection " + state}
	switch state {
	case operatorsv1alpha1.ConnectionStateReady:
		r.Status = Healthy
	case operatorsv1alpha1.ConnectionStateTransientFailure, operatorsv1alpha1.ConnectionStateShutdown:
		r.Status = Degraded
	default:
		r.Status = Progressing
	}
	return r
}

// operatorGroup is Degraded while OLM reports a problem with it (two groups in one
// namespace, a missing service account), Progressing until OLM first writes its status.
func operatorGroup(obj *unstructured.Unstructured) Result {
	og, err := into[operatorsv1.OperatorGroup](obj)
	if err != nil {
		return unknown(err)
	}
	for _, c := range og.Status.Conditions {
		if (c.Type == operatorsv1.MultipleOperatorGroupCondition || c.Type == operatorsv1.OperatorGroupServiceAccountCondition) && c.Status == "True" {
			return Result{Status: Degraded, Reason: c.Reason, Message: c.Message}
		}
	}
	if og.Status.LastUpdated == nil {
		return Result{Status: Progressing, Message: "OLM has not synced the group yet"}
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("targets %d namespace(s)", len(og.Status.Namespaces))}
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
