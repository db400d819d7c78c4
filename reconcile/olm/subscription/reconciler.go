package subscription

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "subscription"

// DefaultRetryInterval is how soon a namespace waiting for a catalog to load is looked at
// again (Options.RetryInterval).
const DefaultRetryInterval = 5 * time.Second

// Options are the settings of the Subscription controller.
type Options struct {
	// GlobalCatalogNamespace is the namespace whose CatalogSources every namespace sees.
	GlobalCatalogNamespace string
	// ResyncInterval is how often a settled namespace is resolved again although nothing in
	// it changed; 0 means never (catalog changes arrive as CatalogSource events).
	ResyncInterval time.Duration
	// FailedPlanRetryInterval is how long a Failed InstallPlan that wrote nothing is kept
	// before a new resolution may replace it (ReleaseFailedPlan);
	// DefaultFailedPlanRetryInterval when zero.
	FailedPlanRetryInterval time.Duration
	// RetryInterval is how soon a namespace is looked at again while a catalog it sees is
	// READY but not loaded by this process yet (awaitCatalogs); DefaultRetryInterval when
	// zero.
	RetryInterval time.Duration
	// MaxConcurrentReconciles is how many namespaces (each namespace's Subscriptions are resolved together) are reconciled at once (1 when 0).
	MaxConcurrentReconciles int
	// Plans are the versions of InstallPlans the manager's controllers wrote last (shared
	// with the InstallPlan controller, which executes a plan at the version written last
	// without reading it from the API server first): the plans this controller creates,
	// writes the steps of and approves are recorded there. Nil records nothing.
	Plans *written.Versions
}

// Catalogs is what the controller needs of the catalogs the CatalogSource controller
// loaded (catalogsource.Registry): a resolver over all of them, rebuilt when they change.
type Catalogs interface {
	Resolver() (*resolve.Resolver, uint64)
	// Loaded reports whether this process holds the content of the CatalogSource key.
	Loaded(key types.NamespacedName) bool
}

// Reconciler resolves the Subscriptions of one namespace at a time, as OLM's catalog
// operator does (its requests name a namespace, not a Subscription): it keeps their status
// in line with their catalogs, CSVs and InstallPlans, resolves them through the decision
// core, and creates one InstallPlan per Subscription that has something to install.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads what the cache's view lacks. A pass reads the namespace's
	// Subscriptions, InstallPlans and CSVs from the cache, but decides only from a view that
	// holds the plans and Subscription statuses the passes before wrote (written, Behind) and
	// the CSV of each Complete plan (the InstallPlan controller's): from an older view it
	// would make a second plan for the same resolution, or take a Complete plan whose CSV the
	// cache does not show yet for a deleted CSV. Such a pass stops; the event of what the view
	// lacks queues the namespace again. The Subscriptions are resolved together, so a pass
	// that would make or approve a plan first lists their metadata from the API server
	// (confirmSubscriptions): one the view lacks, or shows with an older spec, would be
	// resolved without its constraints (an upgrade it forbids).
	APIReader client.Reader
	Catalogs  Catalogs
	Recorder  events.EventRecorder
	Options   Options

	// written are, by namespace, the writes of its passes that the cache did not show yet at
	// its last pass.
	writtenMu sync.Mutex
	written   map[string][]Write

	// seen are the Subscriptions of each namespace at its last pass, to forget the metric
	// series of deleted ones.
	seenMu sync.Mutex
	seen   map[string][]string
}

// pass is what the steps of one namespace's reconcile hand on to each other.
type pass struct {
	namespace string
	now       metav1.Time
	// subs are the namespace's Subscriptions, changed in place by the steps; before holds
	// them as read, to write only those that changed.
	subs   []v1alpha1.Subscription
	before []v1alpha1.Subscription
	plans  []v1alpha1.InstallPlan
	csvs   []v1alpha1.ClusterServiceVersion
	groups []operatorsv1.OperatorGroup
	// catalogs are the CatalogSources the namespace sees (its own and the global ones).
	catalogs []v1alpha1.CatalogSource
	// result is the namespace's resolution, when the pass got that far.
	result *resolve.Result
	// needsPlan names the Subscriptions the resolution gave something new to install.
	needsPlan map[string]bool
	stop      bool
	// stale says the cache's view does not hold the namespace's last writes yet: the pass
	// decides and writes nothing.
	stale bool
	// requeue, when set, is how soon the namespace is looked at again (a failed plan to
	// release).
	requeue time.Duration
}

type step struct {
	name string
	run  func(ctx context.Context, p *pass) error
}

// Reconcile takes one namespace's Subscriptions a step further.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &pass{namespace: req.Namespace, now: metav1.Now()}
	steps := []step{
		{"read", r.read},
		{"catalog health", r.catalogHealth},
		{"generated", r.adoptGenerated},
		{"installplans", r.syncInstallPlans},
		{"csvs", r.syncCSVs},
		{"adopt", r.adoptInstalled},
		{"operatorgroup", r.checkOperatorGroup},
		{"catalogs loaded", r.awaitCatalogs},
		{"resolve", r.resolve},
		{"confirm", r.confirmSubscriptions},
		{"approve", r.approveWaiting},
		{"create installplans", r.createPlans},
	}
	var errs []error
	for _, s := range steps {
		if err := s.run(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			break
		}
		if p.stop {
			break
		}
	}
	if p.stale {
		return reconcile.Result{}, kerrors.NewAggregate(errs)
	}
	// Whatever the steps got to is written, also after an error: a created InstallPlan must
	// be referenced by its Subscription, or the next pass would make a second one.
	if err := r.writeStatus(ctx, p); err != nil {
		errs = append(errs, err)
	}
	if err := r.collectPlans(ctx, p); err != nil {
		errs = append(errs, err)
	}
	if err := kerrors.NewAggregate(errs); err != nil {
		return reconcile.Result{}, fmt.Errorf("namespace %s: %w", req.Namespace, err)
	}
	requeue := r.Options.ResyncInterval
	if p.requeue > 0 && (requeue == 0 || p.requeue < requeue) {
		requeue = p.requeue
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// read lists what the pass decides from, from the cache, and stops the pass when the cache
// does not show what it must (cacheBehind). A namespace without Subscriptions has nothing to
// do.
func (r *Reconciler) read(ctx context.Context, p *pass) error {
	var subs v1alpha1.SubscriptionList
	if err := r.Client.List(ctx, &subs, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	var ips v1alpha1.InstallPlanList
	if err := r.Client.List(ctx, &ips, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	var csvs v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &csvs, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	p.subs, p.plans, p.csvs = subs.Items, ips.Items, csvs.Items
	behind, err := r.cacheBehind(ctx, p)
	if err != nil || behind {
		// Nothing is decided or written from this view, not even after an error.
		p.stale, p.stop = true, true
		return err
	}
	r.forgetDeleted(p.namespace, subs.Items)
	if len(subs.Items) == 0 {
		// Nothing to do: no plan of the namespace is collected for Subscriptions it has not.
		p.subs, p.plans, p.csvs = nil, nil, nil
		p.stop = true
		return nil
	}
	slices.SortFunc(p.subs, func(a, b v1alpha1.Subscription) int { return cmp.Compare(a.Name, b.Name) })
	p.before = make([]v1alpha1.Subscription, len(p.subs))
	for i := range p.subs {
		p.subs[i].DeepCopyInto(&p.before[i])
	}
	var groups operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &groups, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	p.groups = groups.Items
	for _, ns := range r.catalogNamespaces(p.namespace) {
		var cats v1alpha1.CatalogSourceList
		if err := r.Client.List(ctx, &cats, client.InNamespace(ns)); err != nil {
			return err
		}
		p.catalogs = append(p.catalogs, cats.Items...)
	}
	return nil
}

func (r *Reconciler) catalogNamespaces(ns string) []string {
	if g := r.Options.GlobalCatalogNamespace; g != "" && g != ns {
		return []string{ns, g}
	}
	return []string{ns}
}

func (r *Reconciler) catalogHealth(_ context.Context, p *pass) error {
	for i := range p.subs {
		UpdateCatalogHealth(&p.subs[i], p.catalogs, p.now)
	}
	return nil
}

func (r *Reconciler) adoptGenerated(_ context.Context, p *pass) error {
	for i := range p.subs {
		AdoptGeneratedPlan(&p.subs[i], p.plans, p.failForward(), p.now)
	}
	return nil
}

// failForward reports whether the namespace's OperatorGroup lets OLM fail forward.
func (p *pass) failForward() bool {
	if len(p.groups) != 1 {
		return false
	}
	return resolve.FailForwardEnabled(&p.groups[0])
}

// planOf is the InstallPlan a Subscription refers to, if the pass read it.
func (p *pass) planOf(s *v1alpha1.Subscription) *v1alpha1.InstallPlan {
	if s.Status.InstallPlanRef == nil {
		return nil
	}
	for j := range p.plans {
		if p.plans[j].Name == s.Status.InstallPlanRef.Name {
			return &p.plans[j]
		}
	}
	return nil
}

// approveWaiting approves the plans olmsync now approves on a Subscription's behalf (a pin
// that moved forward).
func (r *Reconciler) approveWaiting(ctx context.Context, p *pass) error {
	for i := range p.subs {
		s := &p.subs[i]
		ip := p.planOf(s)
		a, ok := ApprovesWaitingPlan(s, ip, p.result.Subscription(s.Name))
		if !ok {
			continue
		}
		before := ip.DeepCopy()
		ip.Spec.Approved = true
		if err := r.Client.Patch(ctx, ip, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("approve installplan %s: %w", ip.Name, err)
		}
		r.wrote(p.namespace, v1alpha1.InstallPlanKind, ip)
		r.Recorder.Eventf(s, ip, corev1.EventTypeNormal, "InstallPlanApproved", "Approve", "installplan %s: %s", ip.Name, a.Why)
	}
	return nil
}

func (r *Reconciler) syncInstallPlans(_ context.Context, p *pass) error {
	for i := range p.subs {
		s := &p.subs[i]
		if s.Status.InstallPlanRef == nil {
			continue
		}
		ip := p.planOf(s)
		SyncInstallPlan(s, ip, p.now)
		after := r.Options.FailedPlanRetryInterval
		if after <= 0 {
			after = DefaultFailedPlanRetryInterval
		}
		if _, wait := ReleaseFailedPlan(s, ip, p.now, after); wait > 0 && (p.requeue == 0 || wait < p.requeue) {
			p.requeue = wait
		}
	}
	return nil
}

func (r *Reconciler) syncCSVs(_ context.Context, p *pass) error {
	for i := range p.subs {
		s := &p.subs[i]
		exists := slices.ContainsFunc(p.csvs, func(c v1alpha1.ClusterServiceVersion) bool { return c.Name == s.Status.CurrentCSV })
		ip := p.planOf(s)
		var phase v1alpha1.InstallPlanPhase
		if ip != nil {
			phase = ip.Status.Phase
		}
		SyncInstalledCSV(s, exists, phase, p.failForward(), p.now)
	}
	return nil
}

// adoptInstalled lets each Subscription that has installed nothing take the CSV of its
// package already in the namespace (AdoptInstalledCSV), and says so in an Event.
func (r *Reconciler) adoptInstalled(_ context.Context, p *pass) error {
	for i := range p.subs {
		s := &p.subs[i]
		if csv := AdoptInstalledCSV(s, p.subs, p.csvs, p.now); csv != "" {
			r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, ReasonAdoptedCSV, "Resolve",
				"clusterserviceversion %s of package %s was already installed: the subscription takes it as its installed CSV", csv, s.Spec.Package)
		}
	}
	return nil
}

// ReasonAdoptedCSV is olmsync's Event reason for a Subscription that took an installed CSV
// as its own (AdoptInstalledCSV); OLM has none, since it fails such a Subscription.
const ReasonAdoptedCSV = "AdoptedInstalledCSV"

// checkOperatorGroup stops the pass unless the namespace holds exactly one OperatorGroup,
// as OLM does, but says so on every Subscription.
func (r *Reconciler) checkOperatorGroup(_ context.Context, p *pass) error {
	if len(p.groups) == 1 {
		return nil
	}
	for i := range p.subs {
		if OperatorGroupsFailed(&p.subs[i], len(p.groups), p.now) {
			r.Recorder.Eventf(&p.subs[i], nil, corev1.EventTypeWarning, string(v1alpha1.SubscriptionResolutionFailed), "Resolve",
				"%s", Condition(&p.subs[i].Status, v1alpha1.SubscriptionResolutionFailed).Message)
		}
	}
	p.stop = true
	return nil
}

// awaitCatalogs stops a pass before it resolves while a CatalogSource the namespace sees is
// healthy (CatalogHealthy: READY) but this process has not loaded its content yet: the
// status is from the process before (olmsync restarted, another replica led). Resolving
// without it would fail the Subscriptions that use it ("no operators found"), and its load
// may change nothing in the CatalogSource's status, so no event would bring the namespace
// back: the pass asks to be run again after RetryInterval. An unhealthy catalog is resolved
// without, as OLM resolves without an unhealthy source.
func (r *Reconciler) awaitCatalogs(ctx context.Context, p *pass) error {
	for i := range p.catalogs {
		cs := &p.catalogs[i]
		if !CatalogHealthy(cs) || r.Catalogs.Loaded(client.ObjectKeyFromObject(cs)) {
			continue
		}
		log.FromContext(ctx).V(1).Info("a catalog is READY but not loaded yet; resolving when it is", "catalogsource", client.ObjectKeyFromObject(cs))
		p.requeue = cmp.Or(r.Options.RetryInterval, DefaultRetryInterval)
		p.stop = true
		return nil
	}
	return nil
}

func (r *Reconciler) resolve(ctx context.Context, p *pass) error {
	if !NeedsResolution(p.subs) {
		log.FromContext(ctx).V(1).Info("skipping resolution: every subscription waits on its installplan", "namespace", p.namespace)
		p.stop = true
		return nil
	}
	resolver, _ := r.Catalogs.Resolver()
	in := resolve.Namespace{
		Name:                  p.namespace,
		CSVs:                  p.csvs,
		ExcludeGlobalCatalogs: p.groups[0].Annotations[resolve.ExcludeGlobalCatalogsAnnotation] == "true",
		FailForward:           p.failForward(),
	}
	for i := range p.subs {
		in.Subscriptions = append(in.Subscriptions, *plans.ForResolver(&p.subs[i]))
	}
	began := time.Now()
	p.result = resolver.Resolve(in)
	took := time.Since(began)
	p.needsPlan = map[string]bool{}
	for i := range p.subs {
		s := &p.subs[i]
		res := p.result.Subscription(s.Name)
		if res == nil {
			continue
		}
		wasFailed := IsTrue(&s.Status, v1alpha1.SubscriptionResolutionFailed)
		needs, _ := ApplyResolution(s, res, p.now)
		if needs {
			p.needsPlan[s.Name] = true
		}
		if !wasFailed && IsTrue(&s.Status, v1alpha1.SubscriptionResolutionFailed) {
			c := Condition(&s.Status, v1alpha1.SubscriptionResolutionFailed)
			r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, string(v1alpha1.SubscriptionResolutionFailed), "Resolve", "%s", c.Message)
		}
	}
	// OLM times each resolution attempt: failed when it ended in an error, here when it
	// left a Subscription ResolutionFailed.
	failed := slices.ContainsFunc(p.subs, func(s v1alpha1.Subscription) bool {
		return IsTrue(&s.Status, v1alpha1.SubscriptionResolutionFailed)
	})
	metrics.ObserveResolution(took, failed)
	return nil
}

// confirmSubscriptions stops a pass that is about to act on its resolution — create a plan,
// approve one — when the namespace's Subscriptions are no longer the ones it resolved
// (SameSubscriptions), from one metadata-only list. OLM resolves a namespace's Subscriptions
// together: one the cache did not show yet, or created while the pass resolved the others
// (applied with them, a moment later), was left out, and a plan made without its constraints
// may install what it forbids; the next pass, resolving both, would make a second plan for
// the first while the first plan runs. Such a pass decides and writes nothing: the new
// Subscription's event queues the namespace again. The list is made only by passes that
// act, so not in steady state.
func (r *Reconciler) confirmSubscriptions(ctx context.Context, p *pass) error {
	if !p.acts() {
		return nil
	}
	var now metav1.PartialObjectMetadataList
	now.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.SubscriptionKind + "List"))
	if err := r.APIReader.List(ctx, &now, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	if SameSubscriptions(p.before, now.Items) {
		return nil
	}
	log.FromContext(ctx).V(1).Info("the namespace's subscriptions changed while it was resolved; their event queues it again", "namespace", p.namespace)
	p.stale, p.stop = true, true
	return nil
}

// acts reports whether the rest of the pass writes a plan: one to create, or one to approve.
func (p *pass) acts() bool {
	if len(p.needsPlan) > 0 {
		return true
	}
	for i := range p.subs {
		s := &p.subs[i]
		if _, ok := ApprovesWaitingPlan(s, p.planOf(s), p.result.Subscription(s.Name)); ok {
			return true
		}
	}
	return false
}

// createPlans makes one InstallPlan for each Subscription the resolution gave something new
// to install (see Split), approved as DecideApproval says.
func (r *Reconciler) createPlans(ctx context.Context, p *pass) error {
	if len(p.needsPlan) == 0 {
		return nil
	}
	parts := plans.Split(p.result, p.needsPlan)
	generation := 0
	for i := range p.subs {
		generation = max(generation, p.subs[i].Status.InstallPlanGeneration)
	}
	for i := range p.plans {
		generation = max(generation, p.plans[i].Spec.Generation)
	}
	for i := range p.subs {
		s := &p.subs[i]
		if !p.needsPlan[s.Name] {
			continue
		}
		res := p.result.Subscription(s.Name)
		part := parts[s.Name]
		if part == nil {
			// The CSV the resolution chose is already in the namespace.
			PlanCreated(s, nil, res.Resolution.Next, p.now)
			continue
		}
		plan, err := resolve.NewPlan(part)
		if err != nil {
			return fmt.Errorf("plan for subscription %s: %w", s.Name, err)
		}
		if plan == nil {
			PlanCreated(s, nil, res.Resolution.Next, p.now)
			continue
		}
		if ip := ReusablePlan(s, p.plans, plan.CSVNames); ip != nil {
			if len(ip.Status.Plan) == 0 && len(ip.Status.BundleLookups) == 0 {
				// Created, but stopped before its steps were written: write them now (the
				// InstallPlan controller leaves a Subscription's plan to this controller).
				ip.Status = installplan.New(p.namespace, ip.Spec.Generation, plan, nil).Status
				if err := r.Client.Status().Update(ctx, ip); err != nil {
					return fmt.Errorf("write the steps of installplan %s: %w", ip.Name, err)
				}
				r.wrote(p.namespace, v1alpha1.InstallPlanKind, ip)
			}
			PlanCreated(s, ip, res.Resolution.Next, p.now)
			continue
		}
		generation++
		ip := installplan.New(p.namespace, generation, plan, []*v1alpha1.Subscription{s})
		a := plans.DecideApproval(s, res)
		ip.Spec.Approval, ip.Spec.Approved = a.Approval, a.Approved
		if err := installplan.Create(ctx, r.Client, ip); err != nil {
			return fmt.Errorf("subscription %s: %w", s.Name, err)
		}
		r.wrote(p.namespace, v1alpha1.InstallPlanKind, ip)
		PlanCreated(s, ip, res.Resolution.Next, p.now)
		r.Recorder.Eventf(s, ip, corev1.EventTypeNormal, "InstallPlanCreated", "Resolve",
			"installplan %s installs %s (%s)", ip.Name, res.Resolution.Next, a.Why)
	}
	return nil
}

// writeStatus writes the status of every Subscription the pass changed. The patch carries
// no resourceVersion: only this controller writes a Subscription's status, and the pass's
// view holds its last writes (Behind), so the difference is from the status as written; a
// change of the spec or metadata meanwhile must not make the write fail — a plan this pass
// created would be left without its reference, and once Complete no pass would take it
// back (ReusablePlan takes only a plan still running).
func (r *Reconciler) writeStatus(ctx context.Context, p *pass) error {
	var errs []error
	for i := range p.subs {
		s := &p.subs[i]
		metrics.SubscriptionSynced(s)
		if equality.Semantic.DeepEqual(p.before[i].Status, s.Status) {
			continue
		}
		err := r.Client.Status().Patch(ctx, s, client.MergeFrom(&p.before[i]))
		switch {
		case err == nil:
			r.wrote(p.namespace, v1alpha1.SubscriptionKind, s)
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("write status of subscription %s: %w", s.Name, err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// wrote remembers a write of the namespace's pass, for the next pass to wait for (Behind).
func (r *Reconciler) wrote(namespace, kind string, obj client.Object) {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	if r.written == nil {
		r.written = map[string][]Write{}
	}
	w := Write{Kind: kind, Name: obj.GetName(), ResourceVersion: obj.GetResourceVersion()}
	if kind == v1alpha1.InstallPlanKind {
		r.Options.Plans.Wrote(client.ObjectKeyFromObject(obj), w.ResourceVersion)
	}
	ws := slices.DeleteFunc(r.written[namespace], func(o Write) bool { return o.Kind == kind && o.Name == w.Name })
	r.written[namespace] = append(ws, w)
}

// cacheBehind reports whether the cache's view of the namespace (p's lists) lacks a write of
// its passes before, or the CSV of a Complete plan a Subscription refers to. What the view
// does not hold at all is asked of the API server: gone (nothing to wait for) or not in the
// cache yet. Writes the view shows are forgotten.
func (r *Reconciler) cacheBehind(ctx context.Context, p *pass) (bool, error) {
	r.writtenMu.Lock()
	writes := slices.Clone(r.written[p.namespace])
	r.writtenMu.Unlock()
	view := map[string]map[string]string{v1alpha1.SubscriptionKind: {}, v1alpha1.InstallPlanKind: {}}
	for i := range p.subs {
		view[v1alpha1.SubscriptionKind][p.subs[i].Name] = p.subs[i].ResourceVersion
	}
	for i := range p.plans {
		view[v1alpha1.InstallPlanKind][p.plans[i].Name] = p.plans[i].ResourceVersion
	}
	lag := Behind(writes, view)
	for _, w := range lag.Missing {
		obj := client.Object(&v1alpha1.Subscription{})
		if w.Kind == v1alpha1.InstallPlanKind {
			obj = &v1alpha1.InstallPlan{}
		}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: w.Name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			lag.Shown = append(lag.Shown, w)
		case err != nil:
			return false, err
		default:
			lag.Older = append(lag.Older, w)
		}
	}
	r.forgetWrites(p.namespace, lag.Shown)
	if len(lag.Older) > 0 {
		log.FromContext(ctx).V(1).Info("the cache does not show the namespace's last writes yet; their events queue it again", "writes", lag.Older)
		return true, nil
	}
	csv, err := r.missingInstalledCSV(ctx, p)
	if err != nil || csv == "" {
		return false, err
	}
	log.FromContext(ctx).V(1).Info("the cache does not show the csv of a complete installplan yet; its event queues the namespace again", "csv", csv)
	return true, nil
}

// missingInstalledCSV returns the currentCSV of a Subscription whose plan is Complete that
// the cache does not hold but the API server does (the InstallPlan controller made it
// moments ago), or "". SyncInstalledCSV would take it for deleted.
func (r *Reconciler) missingInstalledCSV(ctx context.Context, p *pass) (string, error) {
	for i := range p.subs {
		s := &p.subs[i]
		ip := p.planOf(s)
		if s.Status.CurrentCSV == "" || ip == nil || ip.Status.Phase != v1alpha1.InstallPlanPhaseComplete ||
			slices.ContainsFunc(p.csvs, func(c v1alpha1.ClusterServiceVersion) bool { return c.Name == s.Status.CurrentCSV }) {
			continue
		}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: s.Status.CurrentCSV}, &v1alpha1.ClusterServiceVersion{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return "", err
		}
		return s.Status.CurrentCSV, nil
	}
	return "", nil
}

// forgetWrites drops the namespace's writes the cache shows.
func (r *Reconciler) forgetWrites(namespace string, shown []Write) {
	if len(shown) == 0 {
		return
	}
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	ws := slices.DeleteFunc(r.written[namespace], func(w Write) bool { return slices.Contains(shown, w) })
	if len(ws) == 0 {
		delete(r.written, namespace)
		return
	}
	r.written[namespace] = ws
}

// collectPlans deletes InstallPlans beyond MaxInstallPlans (PlansToDelete).
func (r *Reconciler) collectPlans(ctx context.Context, p *pass) error {
	var errs []error
	for _, name := range PlansToDelete(p.plans, p.subs, MaxInstallPlans) {
		ip := &v1alpha1.InstallPlan{}
		ip.Namespace, ip.Name = p.namespace, name
		if err := r.Client.Delete(ctx, ip); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete installplan %s: %w", name, err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// forgetDeleted drops the metric series of Subscriptions gone since the last pass.
func (r *Reconciler) forgetDeleted(namespace string, subs []v1alpha1.Subscription) {
	names := make([]string, 0, len(subs))
	for i := range subs {
		names = append(names, subs[i].Name)
	}
	r.seenMu.Lock()
	defer r.seenMu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]string{}
	}
	for _, old := range r.seen[namespace] {
		if !slices.Contains(names, old) {
			metrics.ForgetSubscription(namespace, old)
		}
	}
	r.seen[namespace] = names
}
