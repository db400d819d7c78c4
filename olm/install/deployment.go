package install

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

const (
	// DeploymentSpecHashLabel carries the hash of the spec a Deployment was written with; a
	// Deployment whose label differs from the CSV's current hash is rewritten.
	DeploymentSpecHashLabel = "olm.deployment-spec-hash"
	// OperatorConditionNameEnv is set in every container to the CSV's name (OLM's
	// OperatorCondition integration reads it).
	OperatorConditionNameEnv = "OPERATOR_CONDITION_NAME"
)

var deploymentType = metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"}

// Deployments returns the Deployments of a CSV's install strategy as OLM writes them
// (olm-behaviour 3.4): in the CSV's namespace, labelled with the entry's label map plus
// olm.managed, the CSV's owner labels and olm.deployment-spec-hash, owned by the CSV without
// blocking its deletion, keeping one old ReplicaSet, with the CSV's annotations laid over the
// pod template's (the CSV wins, so olm.targetNamespaces and friends reach the pods) and
// OPERATOR_CONDITION_NAME=<csv> in every container. A deployment that serves webhooks or an
// API service has its CA's olmcahash in caHashes (by deployment name): it mounts its serving
// certificate (MountCert) before its spec is hashed, as OLM writes it.
func Deployments(csv *v1alpha1.ClusterServiceVersion, caHashes map[string]string) ([]appsv1.Deployment, error) {
	specs := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	out := make([]appsv1.Deployment, 0, len(specs))
	for _, s := range specs {
		d, err := deploymentFor(csv, s, caHashes)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func deploymentFor(csv *v1alpha1.ClusterServiceVersion, s v1alpha1.StrategyDeploymentSpec, caHashes map[string]string) (appsv1.Deployment, error) {
	d := appsv1.Deployment{
		TypeMeta: deploymentType,
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.Name,
			Namespace:       csv.Namespace,
			Labels:          maps.Clone(s.Label),
			OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
		},
		Spec: *s.Spec.DeepCopy(),
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if hash, ok := caHashes[s.Name]; ok {
		MountCert(&d.Spec, SecretName(ServiceName(s.Name)), hash)
	}
	maps.Copy(d.Labels, OwnerLabels(csv))
	d.Spec.Template.Annotations = groups.PodTemplateAnnotations(csv, d.Spec.Template.Annotations)
	setEnv(&d.Spec.Template.Spec, corev1.EnvVar{Name: OperatorConditionNameEnv, Value: csv.Name})
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	hash, err := DeploymentSpecHash(d.Spec)
	if err != nil {
		return appsv1.Deployment{}, fmt.Errorf("deployment %s of csv %s/%s: %w", s.Name, csv.Namespace, csv.Name, err)
	}
	d.Labels[DeploymentSpecHashLabel] = hash
	return d, nil
}

// setEnv sets env in every container of the pod, replacing a variable of the same name.
func setEnv(pod *corev1.PodSpec, env corev1.EnvVar) {
	for i := range pod.Containers {
		c := &pod.Containers[i]
		replaced := false
		for j := range c.Env {
			if c.Env[j].Name == env.Name {
				c.Env[j] = env
				replaced = true
			}
		}
		if !replaced {
			c.Env = append(c.Env, env)
		}
	}
}

// DeploymentSpecHash is the olm.deployment-spec-hash of a Deployment spec as olmsync writes it
// (annotations and injected environment included): a short, stable hash of its JSON.
func DeploymentSpecHash(spec appsv1.DeploymentSpec) (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hash deployment spec: %w", err)
	}
	h := fnv.New32a()
	_, _ = h.Write(raw)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32())), nil
}
