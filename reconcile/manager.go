package reconcile

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/olmsync/olmsync/api/crds"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// FieldManager is the field manager of everything olmsync applies itself.
const FieldManager = "olmsync"

// InstallCRDs applies olmsync's CRDs (the ones `make generate` writes to api/crds and the
// Helm chart ships) with server-side apply, for a cluster olmsync runs in without the
// chart: a laptop's kind or k3s, `olmsync run --local`.
func InstallCRDs(ctx context.Context, c client.Client) error {
	all, err := crds.All()
	if err != nil {
		return err
	}
	for _, crd := range all {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// Options configure the manager `olmsync run` starts.
type Options struct {
	// OLM says whether the embedded OLM controllers run: embedded, external, or auto (unless
	// another OLM is detected in the cluster).
	OLM olm.Mode
	// OLMOptions configure the embedded OLM.
	OLMOptions olm.Options
	// MetricsAddr and ProbeAddr are the listen addresses of the metrics endpoint and of the
	// health probes (/healthz, /readyz); "0" turns one off.
	MetricsAddr, ProbeAddr string
	// LeaderElection makes replicas take turns through a Lease in LeaderElectionNamespace
	// (the namespace olmsync runs in), so that two never act at once.
	LeaderElection          bool
	LeaderElectionNamespace string
}

// Manager is the manager and what was decided while building it.
type Manager struct {
	ctrl.Manager
	// EmbeddedOLM says whether the embedded OLM controllers were registered.
	EmbeddedOLM bool
	// OLMFound lists what showed another OLM in the cluster, if anything did.
	OLMFound []string
}

// NewManager builds the controller manager `olmsync run` starts: the embedded OLM
// controllers (unless the mode and the cluster say otherwise, see olm.Decide), the metrics
// endpoint, the health probes and leader election. A cluster whose OLM was detected under
// --olm=auto gets a manager without the OLM controllers and an error-free Manager whose
// OLMFound says why; the caller logs it.
func NewManager(ctx context.Context, cfg *rest.Config, opts Options) (*Manager, error) {
	sch := kube.Scheme()
	reader, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return nil, fmt.Errorf("connect to the API server: %w", err)
	}
	found, err := olm.DetectOLM(ctx, reader)
	if err != nil {
		return nil, err
	}
	embedded, why := olm.Decide(opts.OLM, found)
	if why != nil {
		log.FromContext(ctx).Info(why.Error())
	}
	lease, renew, retry := 15*time.Second, 10*time.Second, 2*time.Second
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        sch,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.ProbeAddr,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              olm.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
	})
	if err != nil {
		return nil, fmt.Errorf("new manager: %w", err)
	}
	if embedded {
		if err := olm.SetupWithManager(mgr, opts.OLMOptions); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return &Manager{Manager: mgr, EmbeddedOLM: embedded, OLMFound: found}, nil
}
