package preview

import (
	"context"
	"fmt"
	"strings"

	"github.com/olmsync/olmsync/check"
)

// Inputs are what a command line names for the preview, as the user wrote it: catalogs,
// cluster states in folders, and live clusters to read. `olmsync check` fills them from its
// flags; Load turns them into Options.
type Inputs struct {
	// Catalogs are `--catalog NAME[/NAMESPACE]=SRC` values.
	Catalogs []string
	// ClusterStates are `--cluster-state [CLUSTER=]DIR` values.
	ClusterStates []string
	// Kubeconfig is a kubeconfig file whose current context (or the Contexts) the preview
	// reads the cluster state from; "" with Contexts: $KUBECONFIG, else ~/.kube/config.
	Kubeconfig string
	// Contexts are `--context [CLUSTER=]CONTEXT` values: a context for one cluster of the
	// repository, or for every cluster without CLUSTER=.
	Contexts []string
	// GlobalCatalogNamespace, when set, is every cluster's global catalog namespace.
	GlobalCatalogNamespace string
}

// Load parses the catalogs, loads the cluster states and reads the live clusters, once:
// the base and the head of a pull request are previewed against the same state. A cluster
// gets one state at most, which is checked before a live cluster is read. Errors name the
// flag and the value they come from.
func (in Inputs) Load(ctx context.Context) (Options, error) {
	var opts Options
	for _, c := range in.Catalogs {
		spec, err := ParseCatalogFlag(c)
		if err != nil {
			return opts, err
		}
		opts.Catalogs = append(opts.Catalogs, spec)
	}
	given := map[string]bool{}
	claim := func(flag, value, cluster string) error {
		if !given[cluster] {
			given[cluster] = true
			return nil
		}
		if cluster == "" {
			return fmt.Errorf("%s %s: a second state for every cluster; give one of --cluster-state DIR and --kubeconfig/--context without CLUSTER=", flag, value)
		}
		return fmt.Errorf("%s %s: a second state for cluster %q", flag, value, cluster)
	}
	live := in.liveClusters()
	for _, cs := range in.ClusterStates {
		cluster, _ := SplitCluster(cs)
		if err := claim("--cluster-state", cs, cluster); err != nil {
			return opts, err
		}
	}
	for _, l := range live {
		if err := claim(l.flag, l.value, l.cluster); err != nil {
			return opts, err
		}
	}
	if len(given) > 0 {
		opts.ClusterStates = map[string]*ClusterState{}
	}
	for _, cs := range in.ClusterStates {
		cluster, dir := SplitCluster(cs)
		state, err := LoadClusterState(dir)
		if err != nil {
			return opts, fmt.Errorf("--cluster-state: %w", err)
		}
		opts.ClusterStates[cluster] = state
	}
	for _, l := range live {
		state, err := ReadKubeconfig(ctx, l.kubeconfig)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", l.flag, err)
		}
		opts.ClusterStates[l.cluster] = state
	}
	return opts, nil
}

// GlobalCatalogNamespaces are the clusters' global catalog namespaces for the placement
// rules (check.Options.GlobalCatalogNamespaces): GlobalCatalogNamespace for every cluster,
// else what each cluster whose state was read runs with; a cluster with neither takes
// olmsync.yaml's.
func (in Inputs) GlobalCatalogNamespaces(opts Options) map[string]string {
	if in.GlobalCatalogNamespace != "" {
		return map[string]string{"": in.GlobalCatalogNamespace}
	}
	out := map[string]string{}
	for cluster, st := range opts.ClusterStates {
		if st.GlobalCatalogNamespace != "" {
			out[cluster] = st.GlobalCatalogNamespace
		}
	}
	return out
}

// liveCluster is a cluster of the repository whose state is read from a live cluster.
type liveCluster struct {
	cluster     string
	kubeconfig  Kubeconfig
	flag, value string // for errors
}

// liveClusters are the clusters Contexts name, each read through Kubeconfig (or the
// default kubeconfig files); without Contexts, Kubeconfig's current context is the state
// of every cluster.
func (in Inputs) liveClusters() []liveCluster {
	if len(in.Contexts) == 0 {
		if in.Kubeconfig == "" {
			return nil
		}
		return []liveCluster{{kubeconfig: Kubeconfig{Path: in.Kubeconfig}, flag: "--kubeconfig", value: in.Kubeconfig}}
	}
	out := make([]liveCluster, 0, len(in.Contexts))
	for _, c := range in.Contexts {
		cluster, name := SplitCluster(c)
		out = append(out, liveCluster{cluster: cluster, kubeconfig: Kubeconfig{Path: in.Kubeconfig, Context: name}, flag: "--context", value: c})
	}
	return out
}

// SplitCluster splits a [CLUSTER=]VALUE flag.
func SplitCluster(s string) (cluster, value string) {
	if name, rest, ok := strings.Cut(s, "="); ok {
		return name, rest
	}
	return "", s
}

// SectionOf is the OLM preview of a checked revision, or nil: what Options.Base takes
// when the head is checked after its base.
func SectionOf(res *check.Result) *Section {
	for _, s := range res.Sections {
		if p, ok := s.(*Section); ok {
			return p
		}
	}
	return nil
}
