package install

import (
	"fmt"
	"strings"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// InvalidStrategyError says why a CSV's install strategy cannot be executed. The CSV fails with
// reason InvalidInstallStrategy and the message "install strategy invalid: <Error()>".
type InvalidStrategyError struct {
	Namespace, Name string
	// Problem is what is wrong, without the CSV's name (the status is on the CSV already).
	Problem string
}

func (e *InvalidStrategyError) Error() string { return e.Problem }

// Validate checks that olmsync can execute a CSV's install strategy: it is OLM's "deployment"
// strategy, every deployment has a unique, non-empty name, and every service account named by
// permissions or clusterPermissions is named. Webhooks and owned APIServices are refused: OLM
// serves them with certificates it generates, which olmsync does not do yet (docs/olm.md), and
// an operator installed without them would fail in ways far harder to see than this.
func Validate(csv *v1alpha1.ClusterServiceVersion) error {
	invalid := func(format string, args ...any) error {
		return &InvalidStrategyError{Namespace: csv.Namespace, Name: csv.Name, Problem: fmt.Sprintf(format, args...)}
	}
	strategy := csv.Spec.InstallStrategy
	if strategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		return invalid("unsupported strategy %q: only %q is known", strategy.StrategyName, v1alpha1.InstallStrategyNameDeployment)
	}
	seen := map[string]bool{}
	for i, d := range strategy.StrategySpec.DeploymentSpecs {
		switch {
		case d.Name == "":
			return invalid("deployments[%d] has no name", i)
		case seen[d.Name]:
			return invalid("deployment %q is listed twice", d.Name)
		}
		seen[d.Name] = true
	}
	for _, perms := range [][]v1alpha1.StrategyDeploymentPermissions{strategy.StrategySpec.Permissions, strategy.StrategySpec.ClusterPermissions} {
		for _, p := range perms {
			if p.ServiceAccountName == "" {
				return invalid("a permissions entry has no serviceAccountName")
			}
		}
	}
	if len(csv.Spec.WebhookDefinitions) > 0 {
		return invalid("webhookdefinitions are not supported by olmsync yet (%s)", webhookNames(csv))
	}
	if len(csv.Spec.APIServiceDefinitions.Owned) > 0 {
		return invalid("owned apiservicedefinitions are not supported by olmsync yet (%s)", apiServiceNames(csv))
	}
	return nil
}

func webhookNames(csv *v1alpha1.ClusterServiceVersion) string {
	names := make([]string, 0, len(csv.Spec.WebhookDefinitions))
	for _, w := range csv.Spec.WebhookDefinitions {
		names = append(names, w.GenerateName)
	}
	return strings.Join(names, ", ")
}

func apiServiceNames(csv *v1alpha1.ClusterServiceVersion) string {
	names := make([]string, 0, len(csv.Spec.APIServiceDefinitions.Owned))
	for _, a := range csv.Spec.APIServiceDefinitions.Owned {
		names = append(names, a.APIServiceName())
	}
	return strings.Join(names, ", ")
}
