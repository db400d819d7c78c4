package install

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// progressDeadlineExceeded is the reason of a Deployment's Progressing condition once its
// progress deadline has passed.
const progressDeadlineExceeded = "ProgressDeadlineExceeded"

// DeploymentStatus judges one Deployment with OLM's readiness rules (OLM
// pkg/controller/install/status_viewer.go): it is ready when the controller has observed its
// generation, no outdated replica is left and its Available condition is True (ready replicas
// are not counted). It returns OLM's message for the state, and an error once the Deployment's
// progress deadline has passed.
func DeploymentStatus(d *appsv1.Deployment) (message string, ready bool, err error) {
	if d.Generation > d.Status.ObservedGeneration {
		return fmt.Sprintf("waiting for spec update of deployment %q to be observed...", d.Name), false, nil
	}
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil && c.Reason == progressDeadlineExceeded {
		return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
	}
	if d.Status.Replicas > d.Status.UpdatedReplicas {
		return fmt.Sprintf("deployment %q waiting for %d outdated replica(s) to be terminated", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
	}
	available := deploymentCondition(d, appsv1.DeploymentAvailable)
	if available == nil || available.Status != corev1.ConditionTrue {
		msg := fmt.Sprintf("missing condition %q", appsv1.DeploymentAvailable)
		if available != nil {
			msg = available.Message
		}
		return fmt.Sprintf("deployment %q not available: %s", d.Name, msg), false, nil
	}
	return fmt.Sprintf("deployment %q is up-to-date and available", d.Name), true, nil
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// Check says whether a CSV's install strategy is installed and healthy, given the Deployments
// that carry the CSV's owner labels (existing). It returns nil when every Deployment of the
// strategy exists, is ready, carries the CSV's annotations on its pod template and was written
// from the CSV's current spec; otherwise a *StrategyError for the first that is not, in the
// strategy's order and OLM's order of checks, with OLM's message. caHashes are the olmcahash
// of each serving deployment's CA (Deployments).
func Check(csv *v1alpha1.ClusterServiceVersion, existing []appsv1.Deployment, caHashes map[string]string) *StrategyError {
	byName := make(map[string]*appsv1.Deployment, len(existing))
	for i := range existing {
		byName[existing[i].Name] = &existing[i]
	}
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		d, ok := byName[s.Name]
		if !ok {
			return strategyErrorf(ReasonComponentMissing, "missing deployment with name=%s", s.Name)
		}
		if err := checkDeployment(csv, s, d, caHashes); err != nil {
			return err
		}
	}
	return nil
}

func checkDeployment(csv *v1alpha1.ClusterServiceVersion, s v1alpha1.StrategyDeploymentSpec, d *appsv1.Deployment, caHashes map[string]string) *StrategyError {
	reason, ready, err := DeploymentStatus(d)
	if err != nil {
		return strategyErrorf(ReasonTimeout, "deployment %s not ready before timeout: %s", d.Name, err)
	}
	if !ready {
		return strategyErrorf(ReasonWaiting, "waiting for deployment %s to become ready: %s", d.Name, reason)
	}
	if len(csv.Annotations) > 0 && d.Spec.Template.Annotations == nil {
		return strategyErrorf(ReasonAnnotationsMissing, "no annotations found on deployment")
	}
	for _, key := range sortedKeys(csv.Annotations) {
		want := csv.Annotations[key]
		got, ok := d.Spec.Template.Annotations[key]
		switch {
		case !ok:
			return strategyErrorf(ReasonAnnotationsMissing, "annotations on deployment does not contain expected key: %s", key)
		case got != want:
			return strategyErrorf(ReasonAnnotationsMissing, "unexpected annotation on deployment. Expected %s:%s, found %s:%s", key, want, key, got)
		}
	}
	existingHash, ok := d.Labels[DeploymentSpecHashLabel]
	if !ok {
		return strategyErrorf(ReasonDeploymentUpdated, "deployment %s doesn't have a spec hash, update it", d.Name)
	}
	desired, err := deploymentFor(csv, s, caHashes)
	if err != nil {
		return strategyErrorf(ReasonDeploymentUpdated, "couldn't calculate deployment spec hash: %v", err)
	}
	if want := desired.Labels[DeploymentSpecHashLabel]; existingHash != want {
		return strategyErrorf(ReasonDeploymentUpdated, "deployment changed old hash=%s, new hash=%s", existingHash, want)
	}
	return nil
}
