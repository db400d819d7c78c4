package preview

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/olmsync/olmsync/policy"
)

// How a cluster's OLM says which namespace is its global catalog namespace.
const (
	// olmCatalogOperator is OLM's catalog-operator Deployment; its --namespace flag is the
	// global catalog namespace, "olm" when absent (OLM cmd/catalog/start.go and main.go:
	// defaultCatalogNamespace).
	olmCatalogOperator      = "catalog-operator"
	olmCatalogNamespaceFlag = "namespace"
	olmDefaultCatalogNS     = "olm"
	// olmsyncGlobalFlag is olmsync run's flag; absent, its default is policy's.
	olmsyncGlobalFlag = "global-catalog-namespace"
)

// globalCatalogNamespace is the global catalog namespace a cluster's OLM runs with, read
// from its Deployments: OLM's catalog-operator (its --namespace) when there is one — where
// OLM runs, olmsync's embedded OLM does not —, else olmsync's own Deployment (a container
// running `olmsync run`, its --global-catalog-namespace). "" when neither is found.
func globalCatalogNamespace(deployments []appsv1.Deployment) string {
	for _, d := range deployments {
		if d.Name != olmCatalogOperator {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if ns, ok := flagValue(containerArgs(c), olmCatalogNamespaceFlag); ok {
				return ns
			}
		}
		return olmDefaultCatalogNS
	}
	for _, d := range deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			args := containerArgs(c)
			if !isOlmsyncRun(args) {
				continue
			}
			if ns, ok := flagValue(args, olmsyncGlobalFlag); ok {
				return ns
			}
			return policy.DefaultMarketplaceNamespace
		}
	}
	return ""
}

func containerArgs(c corev1.Container) []string {
	return append(append([]string{}, c.Command...), c.Args...)
}

// isOlmsyncRun reports whether a container's command line is `olmsync run`.
func isOlmsyncRun(args []string) bool {
	for i, a := range args {
		if strings.HasSuffix(a, "olmsync") && i+1 < len(args) && args[i+1] == "run" {
			return true
		}
	}
	return len(args) > 0 && args[0] == "run" // the image's entrypoint is olmsync
}

// flagValue finds -name or --name, with its value after "=" or as the next argument, as
// Go's flag package and pflag read them; the last one given wins.
func flagValue(args []string, name string) (string, bool) {
	value, found := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		switch {
		case a == name && i+1 < len(args):
			value, found = args[i+1], true
			i++
		case strings.HasPrefix(a, name+"="):
			value, found = strings.TrimPrefix(a, name+"="), true
		}
	}
	return value, found
}
