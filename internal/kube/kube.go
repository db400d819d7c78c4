// Package kube holds what every part of olmsync that talks to an API server shares: the
// scheme of the kinds it reads and writes, and loading a kubeconfig the way kubectl does.
// The controllers (`olmsync run`), the read-only cluster view of `olmsync check` and the
// test control plane all use it, so that they agree on both.
package kube

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/api/operators"
)

// Scheme returns a scheme with the built-in kinds, CRDs, OLM's operators.coreos.com and
// olmsync.dev.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operators.AddToScheme(s))
	utilruntime.Must(olmsyncv1alpha1.AddToScheme(s))
	return s
}

// Config loads a kubeconfig with kubectl's rules: path when given, else $KUBECONFIG, else
// ~/.kube/config, else the in-cluster config; context empty means the current context.
//
// A kubeconfig sets no client-side rate limit, and client-go then allows 5 requests a
// second: a Sync of 100 objects would take a minute to apply. As controller-runtime's own
// loader does, the limit is turned off (QPS -1) and throttling is left to the API
// server's priority and fairness; callers may set QPS and Burst again.
func Config(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg, nil
}
