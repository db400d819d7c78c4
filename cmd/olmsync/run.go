package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/catalog"
)

type runOptions struct {
	kubeconfig, context     string
	olmMode                 string
	globalCatalogNamespace  string
	metricsAddr, probeAddr  string
	leaderElect             bool
	leaderElectionNamespace string
	disableCopiedCSVs       bool
	catalogCache            string
	installCRDs             bool
}

func newRunCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the controllers: the embedded OLM against a cluster",
		Long: `run starts olmsync's controller manager against the cluster of --kubeconfig (or the
in-cluster config): the embedded OLM controllers — CatalogSources, Subscriptions,
InstallPlans, ClusterServiceVersions, OperatorGroups — with a metrics endpoint, health
probes and leader election, until it is interrupted.

--olm decides whether the embedded OLM runs: "embedded" always, "external" never (the
cluster's OLM handles OLM's kinds), "auto" (the default) unless another OLM is detected
(its Deployments olm-operator or catalog-operator, or the CRDs only OLM installs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use")
	f.StringVar(&o.olmMode, "olm", string(olm.ModeAuto), "embedded, external or auto: whether the embedded OLM controllers run")
	f.StringVar(&o.globalCatalogNamespace, "global-catalog-namespace", "olm", "namespace whose CatalogSources every namespace sees (openshift-marketplace on OpenShift)")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `metrics endpoint address ("0" turns it off)`)
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", `health probe address ("0" turns it off)`)
	f.BoolVar(&o.leaderElect, "leader-elect", true, "take turns with other replicas through a Lease, so that only one acts")
	f.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the namespace olmsync runs in; kube-system outside a cluster)")
	f.BoolVar(&o.disableCopiedCSVs, "disable-copied-csvs", false, "do not copy the CSVs of operators watching all namespaces into every namespace (OLM's disableCopiedCSVs)")
	f.StringVar(&o.catalogCache, "catalog-cache", "", "folder caching pulled catalog images by digest (default: none)")
	f.BoolVar(&o.installCRDs, "install-crds", false, "apply olmsync's CRDs before starting (a cluster without the Helm chart)")
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command) error {
	mode, err := olm.ParseMode(o.olmMode)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(cmd.ErrOrStderr())))
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if o.installCRDs {
		c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
		if err != nil {
			return err
		}
		if err := reconcile.InstallCRDs(ctx, c); err != nil {
			return err
		}
	}
	leaseNamespace := o.leaderElectionNamespace
	if leaseNamespace == "" && !inCluster() {
		// In a cluster, the manager finds its own namespace; elsewhere (a laptop) it needs one
		// that every cluster has.
		leaseNamespace = "kube-system"
	}
	mgr, err := reconcile.NewManager(ctx, cfg, reconcile.Options{
		OLM: mode,
		OLMOptions: olm.Options{
			GlobalCatalogNamespace: o.globalCatalogNamespace,
			DisableCopiedCSVs:      o.disableCopiedCSVs,
			CatalogImages:          catalog.ImageOptions{CacheDir: o.catalogCache},
		},
		MetricsAddr:             o.metricsAddr,
		ProbeAddr:               o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionNamespace: leaseNamespace,
	})
	if err != nil {
		return err
	}
	if mgr.EmbeddedOLM {
		fmt.Fprintln(cmd.ErrOrStderr(), "olmsync: the embedded OLM runs (CatalogSources, Subscriptions, InstallPlans, CSVs, OperatorGroups)")
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "olmsync: the embedded OLM does not run (--olm=%s; found: %v): OLM's kinds are left to the cluster's OLM\n", mode, mgr.OLMFound)
	}
	return mgr.Start(ctx)
}

// inCluster reports whether olmsync runs in a pod (its service account's namespace is
// mounted).
func inCluster() bool {
	_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	return err == nil
}

// restConfig reads --kubeconfig/--context the way kubectl does, falling back to the
// in-cluster config.
func (o *runOptions) restConfig() (*rest.Config, error) {
	cfg, err := kube.Config(o.kubeconfig, o.context)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	return cfg, nil
}
