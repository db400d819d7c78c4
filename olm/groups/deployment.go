package groups

import (
	"maps"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// PodTemplateAnnotations returns the annotations OLM puts on the pod template of a deployment
// of the CSV's install strategy: the template's own annotations and all of the CSV's, the
// CSV's winning on a shared key (olm-behaviour 3.4). This is how olm.targetNamespaces,
// olm.operatorGroup and olm.operatorNamespace reach the operator's pods, where the downward
// API exposes them. A deployment whose template lacks them is reinstalled.
func PodTemplateAnnotations(csv *v1alpha1.ClusterServiceVersion, template map[string]string) map[string]string {
	out := make(map[string]string, len(template)+len(csv.Annotations))
	maps.Copy(out, template)
	maps.Copy(out, csv.Annotations)
	return out
}
