package compare_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/check/preview"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// seed makes the generated cases; a failure names it with the case's index.
const seed = 16

// generatedCases is how many cases the generator makes.
const generatedCases = 110

// convergence bounds how long the controllers may take to reach the previewed outcome; a
// case that has not reached it then fails with what was last seen. It is a deadline for
// convergence, not a timed assertion.
const convergence = 4 * time.Minute

// compareCase is one input walked through both the preview and the controllers.
type compareCase struct {
	name       string
	namespaces []string // the first holds the catalog, the groups and the Subscriptions
	bundles    []olmtest.Bundle
	groups     []operatorsv1.OperatorGroup
	subs       []v1alpha1.Subscription
	// image is the catalog image serving the bundles as a file-based catalog, for a case
	// whose bundles need what only FBC holds (olm.package.required); "" for a ConfigMap
	// catalog.
	image  string
	byFBC  bool
	images catalog.ImageOptions
	// scoped is the ServiceAccount the group of a scoped install names ("" for none);
	// granted gives it every right in the namespace (a Role and RoleBinding), else it has
	// none.
	scoped  string
	granted bool
}

// outcome is what is compared, field by field.
type outcome struct {
	Subscriptions map[string]subOutcome
	// Groups are each OperatorGroup's status.namespaces.
	Groups map[string][]string
}

type subOutcome struct {
	// ResolutionFailed is "<reason>: <message>" of the condition when True.
	ResolutionFailed string
	CurrentCSV       string
	InstalledCSV     string
	// Plan is the first InstallPlan made for the Subscription.
	Plan *plan
	// CSV is the phase and reason of the CSV the Subscription ends on ("" when none).
	CSV string
}

type plan struct {
	Approval v1alpha1.Approval
	Approved bool
	Phase    v1alpha1.InstallPlanPhase
	CSVNames []string
	// Message is status.message of a plan that stays Installing (a scoped install's
	// refused step).
	Message string
}

// TestPreviewMatchesControllers previews every generated case and applies it to the API
// server with the embedded OLM's controllers, then compares the two outcomes.
func TestPreviewMatchesControllers(t *testing.T) {
	env := testenv.Get(t)
	version, err := env.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	reg := olmtest.ServeRegistry(t)
	images := reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})
	olmtest.StartManager(t, env, olm.Options{DisableCopiedCSVs: true, MaxConcurrentReconciles: 4, GlobalCatalogNamespace: globalCatalogNamespace, CatalogImages: images})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	cases := generate(seed, generatedCases)
	for i := range cases {
		if c := &cases[i]; c.byFBC {
			c.image, _ = reg.PushCatalog(t, "compare/"+c.name+":1", olmtest.FBC(t, c.bundles))
			c.images = reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})
		}
	}
	// The generated cases and the examples run side by side (each group is parallel): the
	// examples' own control planes start while the cases run. The summary is logged once
	// both are done.
	t.Run("generated", func(t *testing.T) {
		t.Parallel()
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				runCase(t, env, strings.TrimPrefix(version, "v"), c, fmt.Sprintf("seed %d, case %d", seed, i))
			})
		}
	})
	t.Run("examples", func(t *testing.T) {
		t.Parallel()
		for _, ex := range examples {
			t.Run(ex.dir, func(t *testing.T) {
				t.Parallel()
				runExample(t, env, strings.TrimPrefix(version, "v"), ex)
			})
		}
	})
	fast, fbc, scoped, granted, webhooks := 0, 0, 0, 0, 0
	for _, c := range cases {
		if slices.ContainsFunc(c.bundles, func(b olmtest.Bundle) bool { return len(b.Webhooks) > 0 }) {
			webhooks++
		}
		if c.scoped != "" {
			scoped++
			if c.granted {
				granted++
			}
		}
		if slices.ContainsFunc(c.bundles, func(b olmtest.Bundle) bool { return slices.Contains(b.Channels, "fast") }) {
			fast++
		}
		if c.byFBC {
			fbc++
		}
	}
	t.Cleanup(func() {
		t.Logf("%d generated cases (%d with a channel fast, %d with a file-based catalog and olm.package.required, %d scoped installs of which %d granted, %d with webhooks) and %d examples in %s",
			len(cases), fast, fbc, scoped, granted, webhooks, len(examples), time.Since(began).Round(time.Second))
		t.Logf("CSV outcomes of the cases with webhooks: %v", webhookOutcomes.n)
	})
}

// webhookOutcomes counts the previewed CSV outcomes of the cases with webhooks, by phase and
// reason, for the test's summary: it says which of OLM's webhook rules the cases reached.
var webhookOutcomes = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func runCase(t *testing.T, env *testenv.Env, kubeVersion string, c compareCase, id string) {
	want := previewOutcome(t, kubeVersion, c)
	if slices.ContainsFunc(c.bundles, func(b olmtest.Bundle) bool { return len(b.Webhooks) > 0 }) {
		webhookOutcomes.Lock()
		for _, s := range want.Subscriptions {
			if s.CSV != "" {
				webhookOutcomes.n[s.CSV]++
			}
		}
		webhookOutcomes.Unlock()
	}
	apply(t, env, c)
	converge(t, id, want, func() outcome { return observe(t, env, c, want) }, describe(c))
}

// converge waits until the controllers show the preview's outcome, and fails with the last
// difference once the convergence deadline has passed.
func converge(t *testing.T, id string, want outcome, observe func() outcome, what string) {
	t.Helper()
	deadline := time.Now().Add(convergence)
	for {
		diff := cmp.Diff(want, observe())
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the controllers did not reach the preview's outcome (-preview +controllers):\n%s\ncase: %s", id, diff, what)
		}
		time.Sleep(time.Second)
	}
}

// generate makes n cases from the seed: one or two packages of one to three versions
// (replaces chains, skips, skipRanges; a second channel "fast" one version ahead of
// "stable"), install modes, minKubeVersion, a dependency on the other package's API or on
// an API nobody provides, a dependency on the other package within a version range (then
// the catalog is file-based, served as an image); no, one, two, global, single-target or
// multi-target OperatorGroups; Manual and Automatic Subscriptions side by side, a
// startingCSV, the default channel, the "fast" channel, and missing packages, channels,
// startingCSVs and catalogs; scoped installs whose ServiceAccount has every right in the
// namespace, or none.
func generate(seed uint64, n int) []compareCase {
	out := make([]compareCase, n)
	for i := range n {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		// more draws from a stream of their own, so that what the first stream makes stays
		// as it was when these were added
		more := rand.New(rand.NewPCG(^seed, uint64(i)))
		ns := fmt.Sprintf("cmp-%d", i)
		c := compareCase{name: fmt.Sprintf("case-%03d", i), namespaces: []string{ns, ns + "-b"}}
		group := fmt.Sprintf("c%d.example.com", i)
		apiA := olmtest.API{Group: group, Version: "v1", Kind: "Alpha"}
		apiB := olmtest.API{Group: group, Version: "v1", Kind: "Beta"}
		pkgA, pkgB := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		modes := func() []string {
			switch r.IntN(5) {
			case 0:
				return []string{"AllNamespaces"}
			case 1:
				return []string{"OwnNamespace"}
			case 2:
				return []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}
			}
			return nil
		}
		kube := func() string {
			switch r.IntN(8) {
			case 0:
				return "1.99.0"
			case 1:
				return "1.20.0"
			}
			return ""
		}
		versions := func(pkg string, n int, owns, requires []olmtest.API) []olmtest.Bundle {
			m, k := modes(), kube()
			var bs []olmtest.Bundle
			for v := range n {
				b := olmtest.Bundle{Package: pkg, Version: fmt.Sprintf("1.%d.0", v), Owns: owns, Requires: requires, InstallModes: m, MinKubeVersion: k}
				if v > 0 {
					b.Replaces = bs[v-1].Name()
				}
				if v > 1 {
					switch r.IntN(3) {
					case 0:
						b.Skips = []string{bs[v-1].Name()}
						b.Replaces = bs[v-2].Name()
					case 1:
						b.SkipRange = fmt.Sprintf(">=1.0.0 <1.%d.0", v)
					}
				}
				bs = append(bs, b)
			}
			// a second channel, "fast", one version ahead of "stable"
			if n > 1 && more.IntN(3) == 0 {
				for v := range bs {
					bs[v].Channels = []string{"stable", "fast"}
				}
				bs[n-1].Channels = []string{"fast"}
			}
			return bs
		}
		as := versions(pkgA, 1+r.IntN(3), []olmtest.API{apiA}, nil)
		var requires []olmtest.API
		switch r.IntN(6) {
		case 0, 1, 2:
			requires = []olmtest.API{apiA}
		case 3:
			requires = []olmtest.API{{Group: group, Version: "v1", Kind: "Gamma"}}
		}
		bs := versions(pkgB, 1+r.IntN(2), []olmtest.API{apiB}, requires)
		// a dependency on package a within a range (some met by no version): only a
		// file-based catalog holds it, served as an image
		if more.IntN(4) == 0 {
			c.byFBC = true
			rng := []string{">=1.0.0", "<1.1.0", ">=1.1.0 <2.0.0", ">=2.0.0"}[more.IntN(4)]
			for k := range bs {
				bs[k].RequiresPackages = []olmtest.PackageRequirement{{Package: pkgA, VersionRange: rng}}
			}
		}
		c.bundles = append(as, bs...)

		og := func(name string, targets ...string) operatorsv1.OperatorGroup {
			return operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: targets}}
		}
		// a third stream, so that what the others make stays as it was
		scoped := rand.New(rand.NewPCG(seed^0x5c09ed, uint64(i)))
		switch r.IntN(7) {
		case 0: // none
		case 1:
			c.groups = []operatorsv1.OperatorGroup{og("og"), og("second", ns)}
		case 2:
			c.groups = []operatorsv1.OperatorGroup{og("og")} // all namespaces
		case 3:
			c.groups = []operatorsv1.OperatorGroup{og("og", ns+"-b")}
		case 4:
			c.groups = []operatorsv1.OperatorGroup{og("og", ns, ns+"-b")}
		default:
			c.groups = []operatorsv1.OperatorGroup{og("og", ns)}
			// a scoped install: the group names a ServiceAccount, with every right in the
			// namespace or none
			if scoped.IntN(2) == 0 {
				c.scoped, c.granted = "installer", scoped.IntN(2) == 0
				c.groups[0].Spec.ServiceAccountName = c.scoped
			}
		}

		sub := func(name, pkg string, versions []olmtest.Bundle) v1alpha1.Subscription {
			s := v1alpha1.Subscription{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: pkg, Channel: "stable"},
			}
			if r.IntN(3) == 0 {
				s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual
			} else {
				s.Spec.InstallPlanApproval = v1alpha1.ApprovalAutomatic
			}
			switch r.IntN(16) {
			case 0:
				s.Spec.Package = "nope" + pkg
			case 1:
				s.Spec.Channel = "beta"
			case 2:
				s.Spec.StartingCSV = pkg + ".v9.9.9"
			case 3:
				s.Spec.CatalogSource = "gone"
			case 4, 5, 6:
				s.Spec.Channel = ""
			case 7, 8, 9:
				if len(versions) > 1 {
					s.Spec.StartingCSV = versions[0].Name()
				}
			}
			if s.Spec.Channel == "stable" && slices.Contains(versions[len(versions)-1].Channels, "fast") && more.IntN(2) == 0 {
				s.Spec.Channel = "fast"
			}
			return s
		}
		// webhooks on package a's bundles, from a fourth stream: a validating webhook, a
		// conversion webhook (which OLM installs only for an operator of AllNamespaces
		// alone), or two webhooks of one name (which OLM refuses)
		hooks := rand.New(rand.NewPCG(seed^0x3eb400c, uint64(i)))
		if kind := hooks.IntN(8); kind < 3 {
			w := []string{olmtest.WebhookValidating, olmtest.WebhookConversion, olmtest.WebhookRepeated}[kind]
			for k := range c.bundles[:len(as)] {
				c.bundles[k].Webhooks = []string{w}
			}
			as = c.bundles[:len(as)]
		}
		c.subs = []v1alpha1.Subscription{sub("a", pkgA, as)}
		if r.IntN(2) == 0 {
			c.subs = append(c.subs, sub("b", pkgB, bs))
		}
		out[i] = c
	}
	return out
}

func describe(c compareCase) string {
	var s strings.Builder
	for _, b := range c.bundles {
		fmt.Fprintf(&s, "\n  bundle %s channels=%v replaces=%q skips=%v skipRange=%q modes=%v minKube=%q owns=%v requires=%v requiresPackages=%v webhooks=%v", b.Name(), b.InChannels(), b.Replaces, b.Skips, b.SkipRange, b.InstallModes, b.MinKubeVersion, b.Owns, b.Requires, b.RequiresPackages, b.Webhooks)
	}
	for _, g := range c.groups {
		fmt.Fprintf(&s, "\n  group %s targets=%v serviceAccountName=%q", g.Name, g.Spec.TargetNamespaces, g.Spec.ServiceAccountName)
	}
	if c.scoped != "" {
		fmt.Fprintf(&s, "\n  service account %s granted=%v", c.scoped, c.granted)
	}
	for _, sub := range c.subs {
		fmt.Fprintf(&s, "\n  subscription %s %+v", sub.Name, sub.Spec)
	}
	if c.image != "" {
		fmt.Fprintf(&s, "\n  catalog: file-based, image %s", c.image)
	}
	return s.String()
}

// previewOutcome runs `check`'s preview on the case, as a repository of its objects with
// the catalog beside it, and the cluster's version and CatalogSources as the cluster state.
func previewOutcome(t *testing.T, kubeVersion string, c compareCase) outcome {
	t.Helper()
	ns := c.namespaces[0]
	objects := []any{}
	for _, n := range c.namespaces {
		objects = append(objects, corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	for _, g := range c.groups {
		g.TypeMeta = metav1.TypeMeta{APIVersion: operatorsv1.SchemeGroupVersion.String(), Kind: operatorsv1.OperatorGroupKind}
		objects = append(objects, g)
	}
	for _, s := range c.subs {
		objects = append(objects, s)
	}
	for _, o := range scopedObjects(c) {
		objects = append(objects, o)
	}
	var docs []string
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	root := t.TempDir()
	gittest.Write(t, root, map[string]string{
		"olmsync.yaml":           "apps:\n- {name: case, path: case, clusterScope: true}\npolicy:\n  operatorGroups: []\n",
		"case/objects.yaml":      strings.Join(docs, "---\n"),
		"catalog/configmap.yaml": configMapManifest(t, ns, c.bundles),
	})
	tree, err := sources.OpenWorkTree(root, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	state := &preview.ClusterState{
		KubeVersion:          kubeVersion,
		CatalogSourcesListed: true,
		CatalogSources:       []v1alpha1.CatalogSource{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cat"}}},
	}
	cat := preview.CatalogSpec{Name: "cat", Namespace: ns, Source: filepath.Join(root, "catalog", "configmap.yaml")}
	if c.image != "" {
		cat.Source = c.image
	}
	out, _ := previewTree(t, tree, state, preview.Options{Catalogs: []preview.CatalogSpec{cat}, Image: c.images})
	return out
}

// previewTree runs `check`'s preview on a repository with the catalogs and cluster state
// given, and returns the outcome it predicts, with the check's result.
func previewTree(t *testing.T, tree *sources.Tree, state *preview.ClusterState, opts preview.Options) (outcome, *check.Result) {
	t.Helper()
	rep, res := previewReport(t, tree, state, opts)
	return clusterOutcome(rep, ""), res
}

// previewReport runs `check`'s preview on a repository, the cluster state given for every
// cluster, and returns its report with the check's result.
func previewReport(t *testing.T, tree *sources.Tree, state *preview.ClusterState, opts preview.Options) (*report.Report, *check.Result) {
	t.Helper()
	opts.ClusterStates = map[string]*preview.ClusterState{"": state}
	stage := preview.New(opts)
	res, err := check.Run(context.Background(), tree, check.Options{Stages: []check.Stage{stage}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 {
		t.Fatalf("preview problems: %+v", res.Problems)
	}
	rep, err := check.Report(res, nil, check.ReportOptions{FailOn: report.FailOnAll})
	if err != nil {
		t.Fatal(err)
	}
	return rep, res
}

// clusterOutcome is the outcome the preview predicts for one cluster of the report.
func clusterOutcome(rep *report.Report, cluster string) outcome {
	out := outcome{Subscriptions: map[string]subOutcome{}, Groups: map[string][]string{}}
	for _, s := range rep.Subscriptions {
		if s.Cluster == cluster {
			out.Subscriptions[s.Namespace+"/"+s.Name] = expected(s)
		}
	}
	for _, g := range rep.OperatorGroups {
		if g.Cluster == cluster {
			out.Groups[g.Namespace+"/"+g.Name] = g.TargetNamespaces
		}
	}
	return out
}

// expected is what the controllers should show for a previewed Subscription: its first
// InstallPlan, and where the preview says the controllers leave it (report's end).
func expected(s report.SubscriptionPreview) subOutcome {
	var o subOutcome
	if r := s.Resolution; r.Status == "Failed" && (r.Reason == string(v1alpha1.ConstraintsNotSatisfiable) || r.Reason == string(v1alpha1.ErrorPreventedResolution)) {
		o.ResolutionFailed = r.Reason + ": " + r.Message
	}
	if s.Plan != nil {
		o.Plan = &plan{Approval: v1alpha1.Approval(s.Plan.Approval), Approved: s.Plan.Approved, Phase: v1alpha1.InstallPlanPhase(s.Plan.Phase), CSVNames: s.Plan.CSVNames, Message: s.Plan.Message}
	}
	if e := s.End; e != nil {
		o.ResolutionFailed = ""
		if e.Reason != "" {
			o.ResolutionFailed = e.Reason + ": " + e.Message
		}
		o.CurrentCSV, o.InstalledCSV = e.CurrentCSV, e.InstalledCSV
		if e.Outcome != nil {
			o.CSV = e.Outcome.Phase + "/" + e.Outcome.Reason
		}
	}
	return o
}

func configMapManifest(t *testing.T, ns string, bundles []olmtest.Bundle) string {
	t.Helper()
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cat"},
		Data:       olmtest.ConfigMapData(t, bundles),
	}
	data, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// apply creates the case on the API server: namespaces, the groups, the Subscriptions,
// then the catalog. The preview sees a case's Subscriptions all at once; the test creates
// them one request after another, and on a loaded machine seconds can pass between two.
// A pass that resolved before the second existed would, as OLM's does, install for the
// first alone what the second forbids (seed 16, case 79, once in nine runs at load 25–40).
// With the catalog last, nothing resolves before every Subscription of the case exists.
func apply(t *testing.T, env *testenv.Env, c compareCase) {
	t.Helper()
	for _, n := range c.namespaces {
		olmtest.EnsureNamespace(t, env, n)
	}
	for _, o := range scopedObjects(c) {
		olmtest.Create(t, env, o)
	}
	for _, g := range c.groups {
		olmtest.Create(t, env, g.DeepCopy())
	}
	for _, s := range c.subs {
		olmtest.Create(t, env, s.DeepCopy())
	}
	if c.image != "" {
		olmtest.ImageCatalog(t, env, c.namespaces[0], "cat", c.image)
	} else {
		olmtest.ConfigMapCatalog(t, env, c.namespaces[0], "cat", c.bundles...)
	}
}

// scopedObjects are the ServiceAccount of a scoped install and, when granted, the Role and
// RoleBinding giving it every right in the namespace (envtest runs no controller-manager:
// the aggregated admin role has no rules to bind).
func scopedObjects(c compareCase) []client.Object {
	if c.scoped == "" {
		return nil
	}
	ns := c.namespaces[0]
	out := []client.Object{&corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.scoped},
	}}
	if c.granted {
		out = append(out, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.scoped},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		}, &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.scoped},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: c.scoped},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: c.scoped}},
		})
	}
	return out
}

// observe reads what the controllers made of the case, for the CSVs the preview names.
func observe(t *testing.T, env *testenv.Env, c compareCase, want outcome) outcome {
	t.Helper()
	subs := map[string]bool{}
	for _, s := range c.subs {
		subs[s.Namespace+"/"+s.Name] = true
	}
	return observeNamespaces(t, env, c.namespaces[:1], subs, want)
}

// observeNamespaces reads the OperatorGroups and the given Subscriptions (namespace/name)
// of the namespaces, their first InstallPlans, and the CSVs the preview says they end on.
func observeNamespaces(t *testing.T, env *testenv.Env, namespaces []string, subNames map[string]bool, want outcome) outcome {
	t.Helper()
	ctx := context.Background()
	out := outcome{Subscriptions: map[string]subOutcome{}, Groups: map[string][]string{}}
	for _, ns := range namespaces {
		var ogs operatorsv1.OperatorGroupList
		var subs v1alpha1.SubscriptionList
		var ips v1alpha1.InstallPlanList
		for _, l := range []client.ObjectList{&ogs, &subs, &ips} {
			if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Logf("list: %v", err)
				return out
			}
		}
		for _, g := range ogs.Items {
			key := g.Namespace + "/" + g.Name
			out.Groups[key] = g.Status.Namespaces
			if out.Groups[key] == nil {
				out.Groups[key] = []string{}
			}
		}
		for _, s := range subs.Items {
			key := s.Namespace + "/" + s.Name
			if !subNames[key] {
				continue // one OLM generated for a dependency
			}
			var o subOutcome
			for _, cond := range s.Status.Conditions {
				if cond.Type == v1alpha1.SubscriptionResolutionFailed && cond.Status == corev1.ConditionTrue {
					o.ResolutionFailed = cond.Reason + ": " + cond.Message
				}
			}
			o.CurrentCSV, o.InstalledCSV = s.Status.CurrentCSV, s.Status.InstalledCSV
			var first *v1alpha1.InstallPlan
			for i := range ips.Items {
				ip := &ips.Items[i]
				owned := slices.ContainsFunc(ip.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == s.UID })
				if owned && (first == nil || ip.Spec.Generation < first.Spec.Generation) {
					first = ip
				}
			}
			if first != nil {
				o.Plan = &plan{Approval: first.Spec.Approval, Approved: first.Spec.Approved, Phase: first.Status.Phase,
					CSVNames: slices.Sorted(slices.Values(first.Spec.ClusterServiceVersionNames))}
				if first.Status.Phase == v1alpha1.InstallPlanPhaseInstalling {
					o.Plan.Message = first.Status.Message
				}
			}
			if w := want.Subscriptions[key]; w.InstalledCSV != "" && w.CSV != "" {
				csv := &v1alpha1.ClusterServiceVersion{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.InstalledCSV}, csv); err == nil {
					o.CSV = string(csv.Status.Phase) + "/" + string(csv.Status.Reason)
				}
			}
			out.Subscriptions[key] = o
		}
	}
	return out
}
