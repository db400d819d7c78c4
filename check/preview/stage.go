package preview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/policy"
)

// Options configure the preview.
type Options struct {
	// Catalogs are the catalogs given on the command line (`--catalog`); they are added
	// to those olmsync.yaml names, and win over one of the same name and namespace.
	Catalogs []CatalogSpec
	// ClusterStates are the clusters' snapshots by cluster name; the entry "" is the
	// state of every cluster that has none of its own. A cluster without a state is
	// empty, but for the OperatorGroups olmsync.yaml says it has (policy.operatorGroups).
	ClusterStates map[string]*ClusterState
	// Base is the preview of the pull request's base revision: what it installs is taken
	// as what the cluster runs, where the cluster state says nothing, so that the preview
	// says what the change does (a first install, an upgrade path, a channel switch).
	Base *Section
	// Image configures pulling catalog images.
	Image catalog.ImageOptions
}

// Stage is the OLM preview as a step of the check. One Stage may check several revisions
// (the base and the head of a pull request): catalogs read from outside the repository
// are read once.
type Stage struct {
	opts  Options
	cache catalogCache

	mu        sync.Mutex
	resolvers map[string]*resolve.Resolver
	// bundles are the bundle images pulled, by reference, each once per check.
	bundles map[string]*unpacked
}

var _ check.Stage = (*Stage)(nil)

// New returns the preview stage.
func New(opts Options) *Stage { return &Stage{opts: opts} }

// Name names the stage in problems.
func (s *Stage) Name() string { return "olm preview" }

// Run previews every cluster of the checked revision. It does nothing when no catalog is
// named (by flag or olmsync.yaml) and no cluster state is given. A catalog that cannot be
// read is a problem of the check (the namespaces that see it cannot be resolved, as in
// OLM); everything else the preview finds is a violation or a line of its section.
func (s *Stage) Run(ctx context.Context, res *check.Result) (check.Section, error) {
	if res.Render == nil {
		return nil, nil
	}
	specs := catalogSpecs(res.Render.Config, s.opts.Catalogs)
	if len(specs) == 0 && len(s.opts.ClusterStates) == 0 {
		return nil, nil
	}
	loaded := make([]*loadedCatalog, len(specs))
	for i, spec := range specs {
		loaded[i] = s.load(ctx, res.Tree, spec)
		if loaded[i].err != nil {
			res.Problems = append(res.Problems, catalogProblem(spec, loaded[i].err))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sec := &Section{}
	for i := range res.Inputs {
		in := &res.Inputs[i]
		c := s.previewCluster(ctx, res.Tree, in, specs, loaded)
		if in.Library {
			// A library root runs on no cluster: only what OLM would refuse wherever it
			// is deployed is said of it (a package or channel the catalogs do not have),
			// and its Subscriptions are not previewed as a cluster's.
			c.violations = slices.DeleteFunc(c.violations, func(v policy.Violation) bool { return !libraryRules[v.Rule] })
			res.Violations = append(res.Violations, c.violations...)
			res.Problems = append(res.Problems, c.problems...)
			continue
		}
		sec.clusters = append(sec.clusters, c)
		res.Violations = append(res.Violations, c.violations...)
		res.Problems = append(res.Problems, c.problems...)
		res.Warnings = append(res.Warnings, c.warnings...)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	res.Rules = addRules(res.Rules)
	return sec, nil
}

// libraryRules are the preview's rules whose verdict holds wherever a library root is
// deployed: OLM cannot resolve the Subscription from the catalogs at all.
var libraryRules = map[string]bool{RuleResolutionFailed: true}

// stateFor is the cluster's snapshot, or nil for an empty cluster.
func (s *Stage) stateFor(cluster string) *ClusterState {
	if st, ok := s.opts.ClusterStates[cluster]; ok {
		return st
	}
	return s.opts.ClusterStates[""]
}

// resolver returns the Resolver of a catalog set, built once: indexing a large catalog
// costs more than resolving a namespace.
func (s *Stage) resolver(cats []resolve.Catalog, global string) *resolve.Resolver {
	var key strings.Builder
	fmt.Fprintf(&key, "%s|", global)
	for _, c := range cats {
		fmt.Fprintf(&key, "%s/%s:%d:%p:%v|", c.Namespace, c.Name, c.Priority, c.Content, c.Err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.resolvers[key.String()]; ok {
		return r
	}
	r := resolve.New(cats, resolve.Options{GlobalNamespace: global})
	if s.resolvers == nil {
		s.resolvers = map[string]*resolve.Resolver{}
	}
	s.resolvers[key.String()] = r
	return r
}
