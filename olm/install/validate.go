package install

import (
	"fmt"

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
// strategy, every deployment has a unique, non-empty name, every service account named by
// permissions or clusterPermissions is named, and every webhook names a deployment of the
// strategy (OLM would make its configuration, point it at a Service nothing serves and then
// fail to compute the deployment it expects, reinstalling forever).
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
	for _, w := range csv.Spec.WebhookDefinitions {
		if !seen[w.DeploymentName] {
			return invalid("webhook %s names deployment %q, which the install strategy does not have", w.GenerateName, w.DeploymentName)
		}
	}
	return nil
}
