package rbac

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// resource is where the API server serves a kind of step.
type resource struct {
	group, resource string
	cluster         bool
}

// stepResources are the resources of the kinds an InstallPlan installs (the executor's
// installed and supported kinds), as the API server serves them. A CRD is not among them:
// it goes in with the controller's own rights.
var stepResources = map[string]resource{
	v1alpha1.ClusterServiceVersionKind: {v1alpha1.GroupName, "clusterserviceversions", false},
	v1alpha1.SubscriptionKind:          {v1alpha1.GroupName, "subscriptions", false},
	"BundleSecret":                     {"", "secrets", false},
	"Secret":                           {"", "secrets", false},
	"ServiceAccount":                   {"", "serviceaccounts", false},
	"Service":                          {"", "services", false},
	"ConfigMap":                        {"", "configmaps", false},
	"Role":                             {"rbac.authorization.k8s.io", "roles", false},
	"RoleBinding":                      {"rbac.authorization.k8s.io", "rolebindings", false},
	"ClusterRole":                      {"rbac.authorization.k8s.io", "clusterroles", true},
	"ClusterRoleBinding":               {"rbac.authorization.k8s.io", "clusterrolebindings", true},
	"PrometheusRule":                   {"monitoring.coreos.com", "prometheusrules", false},
	"ServiceMonitor":                   {"monitoring.coreos.com", "servicemonitors", false},
	"PodDisruptionBudget":              {"policy", "poddisruptionbudgets", false},
	"PriorityClass":                    {"scheduling.k8s.io", "priorityclasses", true},
	"VerticalPodAutoscaler":            {"autoscaling.k8s.io", "verticalpodautoscalers", false},
	"NetworkPolicy":                    {"networking.k8s.io", "networkpolicies", false},
	"ConsoleYAMLSample":                {"console.openshift.io", "consoleyamlsamples", true},
	"ConsoleQuickStart":                {"console.openshift.io", "consolequickstarts", true},
	"ConsoleCLIDownload":               {"console.openshift.io", "consoleclidownloads", true},
	"ConsoleLink":                      {"console.openshift.io", "consolelinks", true},
	"ConsolePlugin":                    {"console.openshift.io", "consoleplugins", true},
}

// StepError is how the InstallPlan executor says that one request of a step failed, in
// OLM's words (its StepEnsurer, pkg/controller/operators/catalog/step_ensurer.go, wrapping
// the error with pkg/errors: "<words>: <error>"). The plan's status.message then holds it
// after "retrying execution due to error: ". verb is the request: create, get or update.
func StepError(verb, kind, name string, err error) error {
	return &stepError{words: stepWords(verb, kind, name), err: err}
}

// stepError is a request of a step that failed, in OLM's words.
type stepError struct {
	words string
	err   error
}

func (e *stepError) Error() string { return e.words + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// IsStepError reports whether err already says, in OLM's words, which request of which step
// failed (StepError): it is not to be worded again.
func IsStepError(err error) bool {
	var se *stepError
	return errors.As(err, &se)
}

// stepWords are OLM's StepEnsurer's words for a failed request of a step, per kind: the
// Ensure function of the kind, else EnsureUnstructuredObject. OLM's Update helpers of the
// RBAC kinds read the object first, so a failed read of one is worded as its update.
func stepWords(verb, kind, name string) string {
	switch kind {
	case "ClusterServiceVersion": // EnsureClusterServiceVersion: create only
		return "error creating csv " + name
	case "Subscription": // EnsureSubscription: create only
		return "error creating subscription " + name
	case "Secret": // EnsureBundleSecret
		return "error updating secret: " + name
	case "Service": // EnsureService
		return "error updating service: " + name
	case "ConfigMap": // EnsureConfigMap
		return "error updating configmap: " + name
	case "ServiceAccount": // EnsureServiceAccount
		switch verb {
		case "create":
			return "error creating service account: " + name
		case "get":
			return "error getting older version of service account: " + name
		}
		return "error updating service account: " + name
	case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
		if verb == "create" {
			return "error creating " + strings.ToLower(kind) + " " + name
		}
		return "error updating " + strings.ToLower(kind) + " " + name
	}
	switch verb { // EnsureUnstructuredObject
	case "create":
		return "error creating unstructured object " + name
	case "get":
		return "error getting unstructured object " + name
	}
	return "error updating unstructured object " + name
}

// Refusal is the first step of a plan the executor's user may not execute.
type Refusal struct {
	// Step is its index in the plan.
	Step int
	// Err is the executor's error: StepError around the API server's Forbidden.
	Err error
}

// FirstRefused walks a plan's steps in the executor's order, as u executes them in
// namespace, and returns the first step u may not execute, nil when u may execute every
// one. For each step the executor creates the object, and when it exists (exists says,
// as far as the caller knows) gets and updates it — but a CSV or a Subscription, which it
// leaves as they are; the API server authorizes a create before it looks for the object,
// so a refused create is the error even for an object that exists. CRD steps, and steps
// of kinds this package does not know, are skipped: the controller applies CRDs with its
// own rights, and refuses unknown kinds for another reason.
//
// A Role, ClusterRole or binding u may create is also put to RBAC's escalation check
// (Escalation) against the RBAC of p and of the steps before it, as the API server checks
// it before it looks for the object.
func (p Policy) FirstRefused(u User, namespace string, steps []v1alpha1.Step, exists func(v1alpha1.Step) bool) *Refusal {
	for i, s := range steps {
		res, ok := stepResources[s.Resource.Kind]
		if !ok {
			continue
		}
		group := res.group
		if s.Resource.Group != "" {
			group = s.Resource.Group
		}
		ns := namespace
		if res.cluster {
			ns = ""
		}
		kind := s.Resource.Kind
		if kind == "BundleSecret" {
			kind = "Secret"
		}
		verbs := []string{"create"}
		if kind != v1alpha1.ClusterServiceVersionKind && kind != v1alpha1.SubscriptionKind && exists != nil && exists(s) {
			verbs = append(verbs, "get", "update")
		}
		for _, verb := range verbs {
			req := Request{Verb: verb, Group: group, Resource: res.resource, Namespace: ns}
			if verb != "create" {
				req.Name = s.Resource.Name
			}
			if d := p.Authorize(u, req); !d.Allowed {
				return &Refusal{Step: i, Err: StepError(verb, kind, s.Resource.Name, Forbidden(u, req, d))}
			}
			if verb != "create" {
				continue
			}
			obj, err := rbacObject(kind, s.Resource.Manifest, ns)
			if err == nil && obj != nil {
				err = p.Escalation(u, ns, obj)
			}
			if err != nil {
				return &Refusal{Step: i, Err: StepError(verb, kind, s.Resource.Name, err)}
			}
			p = p.with(obj)
		}
	}
	return nil
}

// rbacObject decodes the manifest of a step of an RBAC kind, in namespace; nil for other
// kinds.
func rbacObject(kind, manifest, namespace string) (any, error) {
	var obj interface{ SetNamespace(string) }
	switch kind {
	case "Role":
		obj = &rbacv1.Role{}
	case "RoleBinding":
		obj = &rbacv1.RoleBinding{}
	case "ClusterRole":
		obj = &rbacv1.ClusterRole{}
	case "ClusterRoleBinding":
		obj = &rbacv1.ClusterRoleBinding{}
	default:
		return nil, nil
	}
	if err := json.Unmarshal([]byte(manifest), obj); err != nil {
		return nil, fmt.Errorf("decode the step's manifest: %w", err)
	}
	obj.SetNamespace(namespace)
	return obj, nil
}

// with is p and an RBAC object a step created (p's lists are not written to).
func (p Policy) with(obj any) Policy {
	switch o := obj.(type) {
	case *rbacv1.Role:
		p.Roles = append(slices.Clip(p.Roles), *o)
	case *rbacv1.RoleBinding:
		p.RoleBindings = append(slices.Clip(p.RoleBindings), *o)
	case *rbacv1.ClusterRole:
		p.ClusterRoles = append(slices.Clip(p.ClusterRoles), *o)
	case *rbacv1.ClusterRoleBinding:
		p.ClusterRoleBindings = append(slices.Clip(p.ClusterRoleBindings), *o)
	}
	return p
}
