//go:build !olmsync_light

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/reconcile/receiver"
	"github.com/olmsync/olmsync/sources"
)

// defaultSyncNamespace is where the verbs on Syncs look unless -n says otherwise, as flux
// looks in flux-system.
const defaultSyncNamespace = "olmsync-system"

// syncPollInterval is how often a waiting verb reads the Sync.
const syncPollInterval = time.Second

// syncVerb is one verb on Syncs (flux's get, reconcile, suspend, resume): a parent command
// named after the verb, with one subcommand for the kind.
type syncVerb struct {
	verb, verbShort string // "get", "Display resources"
	use, short      string // "syncs [NAME]", "Show Syncs…"
	long, example   string
	aliases         []string
	args            cobra.PositionalArgs
	// list adds -A and -o; wait adds --wait and --timeout; all adds --all and -A, for a
	// verb on one Sync by NAME or on every Sync of a namespace (or of all of them).
	list, wait, all bool
	// names completes the positional argument with the names of the Syncs.
	names bool
	// flags adds the verb's own flags; complete registers their completions.
	flags    func(f *pflag.FlagSet)
	complete func(cmd *cobra.Command)
	// offline, when it says so, runs the verb without a client (create --export).
	offline func(s *syncSession) bool
	run     func(ctx context.Context, s *syncSession, args []string) error
}

// syncSession is the flags every verb on Syncs shares and, once the command runs, the
// client they make and where it writes.
type syncSession struct {
	kubeconfig, context, namespace string
	allNamespaces, all             bool
	output                         string
	watch                          bool
	wait                           bool
	timeout                        time.Duration

	config   *rest.Config
	client   client.Client
	out, err io.Writer
}

// newSyncVerbCommand builds the command of one verb on Syncs with the flags it takes.
func newSyncVerbCommand(v syncVerb) *cobra.Command {
	s := &syncSession{}
	sub := &cobra.Command{
		Use:     v.use,
		Aliases: v.aliases,
		Short:   v.short,
		Long:    v.long,
		Example: v.example,
		Args:    v.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if v.all {
				if err := s.checkAll(args); err != nil {
					return err
				}
			}
			if v.offline != nil && v.offline(s) {
				s.out, s.err = cmd.OutOrStdout(), cmd.ErrOrStderr()
				return v.run(cmd.Context(), s, args)
			}
			if err := s.connect(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			if v.wait {
				// --timeout bounds the whole verb, the requests before the wait too.
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, s.timeout)
				defer cancel()
			}
			return v.run(ctx, s, args)
		},
	}
	f := sub.Flags()
	f.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config)")
	f.StringVar(&s.context, "context", "", "kubeconfig context to use")
	f.StringVarP(&s.namespace, "namespace", "n", defaultSyncNamespace, "namespace of the Syncs")
	if v.list {
		f.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "list the Syncs of every namespace")
		f.StringVarP(&s.output, "output", "o", "table", "output format: "+strings.Join(outputFormats, ", "))
		f.BoolVarP(&s.watch, "watch", "w", false, "after listing, print each change of a Sync as it comes, until interrupted")
		_ = sub.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	}
	if v.all {
		f.BoolVar(&s.all, "all", false, "every Sync of the namespace (-n), or of every namespace with -A, instead of one by NAME")
		f.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "with --all: the Syncs of every namespace")
	}
	if v.names {
		sub.ValidArgsFunction = s.completeSyncNames
	}
	_ = sub.RegisterFlagCompletionFunc("namespace", s.completeNamespaces)
	if v.wait {
		f.BoolVar(&s.wait, "wait", true, "wait until the Sync has handled the reconcile and is Ready or failed")
		f.DurationVar(&s.timeout, "timeout", 5*time.Minute, "give up after this long, waiting included")
	}
	if v.flags != nil {
		v.flags(f)
	}
	if v.complete != nil {
		v.complete(sub)
	}
	return kindParent(v.verb, v.verbShort, sub)
}

// kindParent is the command of a verb whose subcommands are the kinds it acts on. A kind
// it does not know (`olmsync get kustomizations`) is a usage error, exit 2, naming the
// kinds it knows; cobra alone would print the help and exit 0, and a script would go on
// as if it had read something.
func kindParent(verb, short string, kinds ...*cobra.Command) *cobra.Command {
	parent := &cobra.Command{
		Use:   verb + " KIND",
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var known []string
			for _, k := range cmd.Commands() {
				if k.IsAvailableCommand() {
					known = append(known, k.Name())
				}
			}
			if len(args) == 0 {
				return fmt.Errorf("olmsync %s needs a kind: %s (see olmsync %s --help)", verb, strings.Join(known, ", "), verb)
			}
			return fmt.Errorf("unknown kind %q for olmsync %s: want %s (see olmsync %s --help)", args[0], verb, strings.Join(known, ", "), verb)
		},
	}
	parent.AddCommand(kinds...)
	return parent
}

// outputFormats are the values of get's -o.
var outputFormats = []string{"table", "wide", "json", "yaml"}

// syncAliases are the other names of the kind in every verb: kubectl's plural and
// singular, and the CRD's short name.
var syncAliases = []string{"syncs", "sy"}

// checkAll refuses a NAME with --all, and neither, before anything is read.
func (s *syncSession) checkAll(args []string) error {
	switch {
	case s.all && len(args) > 0:
		return fmt.Errorf("give a Sync's NAME or --all, not both")
	case !s.all && len(args) == 0:
		return fmt.Errorf("give a Sync's NAME, or --all for every Sync of the namespace")
	case s.allNamespaces && !s.all:
		return fmt.Errorf("-A goes with --all: a Sync is named in one namespace (-n)")
	}
	return nil
}

// listSyncs lists the Syncs of -n, or of every namespace with -A.
func (s *syncSession) listSyncs(ctx context.Context) ([]olmsyncv1alpha1.Sync, error) {
	list := &olmsyncv1alpha1.SyncList{}
	var opts []client.ListOption
	if !s.allNamespaces {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	if err := s.client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("list Syncs: %w", err)
	}
	return list.Items, nil
}

// targets are the Syncs a verb with --all acts on: the one named, or every one listed.
func (s *syncSession) targets(ctx context.Context, args []string) ([]types.NamespacedName, error) {
	if !s.all {
		obj, err := s.getSync(ctx, args[0])
		if err != nil {
			return nil, err
		}
		return []types.NamespacedName{client.ObjectKeyFromObject(obj)}, nil
	}
	syncs, err := s.listSyncs(ctx)
	if err != nil {
		return nil, err
	}
	if len(syncs) == 0 {
		if s.allNamespaces {
			return nil, errors.New("no Syncs found in any namespace")
		}
		return nil, fmt.Errorf("no Syncs found in namespace %s", s.namespace)
	}
	keys := make([]types.NamespacedName, len(syncs))
	for i := range syncs {
		keys[i] = client.ObjectKeyFromObject(&syncs[i])
	}
	return keys, nil
}

// newSyncCommands returns the verbs on Syncs, modelled on flux's for Kustomizations.
func newSyncCommands() []*cobra.Command {
	return []*cobra.Command{
		newSyncVerbCommand(syncVerb{
			verb: "get", verbShort: "Display olmsync resources",
			use: "syncs [NAME]", aliases: []string{"sync", "sy"},
			short: "Show Syncs: revision applied, suspended, Ready and its message",
			long: `Show the Syncs of a namespace (-n, default olmsync-system) or of every namespace (-A),
or one by NAME: the revision last applied, whether it is suspended, and its Ready condition's
status and message. -o wide adds the source's URL, ref and path; -o json or yaml prints the
objects. --watch then prints a row for each change of a Sync (one line per change, as flux
get --watch does; a deleted Sync's row says "deleted") until interrupted.`,
			example: `  olmsync get syncs
  olmsync get syncs -A -o wide
  olmsync get syncs --watch
  olmsync get syncs platform -n olmsync-system -o yaml`,
			args: cobra.MaximumNArgs(1), list: true, names: true,
			run: getSyncs,
		}),
		newSyncVerbCommand(syncVerb{
			verb: "reconcile", verbShort: "Reconcile olmsync resources now",
			use: "sync NAME", aliases: syncAliases, names: true,
			short: "Ask for a reconcile of a Sync now and wait for its outcome",
			long: `Set the Sync's reconcile.olmsync.dev/requestedAt annotation to the time, as the webhook does,
and (with --wait, the default) wait until the Sync has handled that request and its Ready
condition is no longer Unknown. A suspended Sync is refused.

Exit codes: 0 Ready, 1 Ready=False (its reason and message are printed), 2 errors: no such
Sync, suspended, or --timeout reached.`,
			example: `  olmsync reconcile sync platform
  olmsync reconcile sync platform -n teams --timeout 10m`,
			args: cobra.ExactArgs(1), wait: true,
			run: reconcileSync,
		}),
		newSyncVerbCommand(syncVerb{
			verb: "suspend", verbShort: "Suspend the reconciliation of olmsync resources",
			use: "sync [NAME]", aliases: syncAliases, names: true,
			short: "Stop reconciling a Sync, or every Sync with --all (spec.suspend: true)",
			example: `  olmsync suspend sync platform
  olmsync suspend sync --all -n teams
  olmsync suspend sync --all -A`,
			args: cobra.MaximumNArgs(1), all: true,
			run: suspendSyncs,
		}),
		newSyncVerbCommand(syncVerb{
			verb: "resume", verbShort: "Resume the reconciliation of olmsync resources",
			use: "sync [NAME]", aliases: syncAliases, names: true,
			short: "Reconcile a suspended Sync (or every one with --all) again, now, and wait for its outcome",
			long: `Set spec.suspend to false, ask for a reconcile as olmsync reconcile sync does, and (with
--wait, the default) wait for its outcome. With --all, every Sync of the namespace (or of
every namespace with -A) is resumed and asked to reconcile first, then each outcome is
waited for in turn. Exit codes as olmsync reconcile sync's; with --all, 1 when any Sync is
not Ready.`,
			example: `  olmsync resume sync platform
  olmsync resume sync --all -n teams --wait=false`,
			args: cobra.MaximumNArgs(1), wait: true, all: true,
			run: resumeSync,
		}),
		newDiffCommand(),
		newTreeCommand(),
		newExportCommand(),
		newCreateCommand(),
		newEventsCommand(),
	}
}

// connect builds the client from --kubeconfig and --context.
func (s *syncSession) connect(cmd *cobra.Command) error {
	cfg, err := kube.Config(s.kubeconfig, s.context)
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	s.config, s.client, s.out, s.err = cfg, c, cmd.OutOrStdout(), cmd.ErrOrStderr()
	return nil
}

func (s *syncSession) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.namespace, Name: name}
}

// getSync reads one Sync; a missing one is an error naming it.
func (s *syncSession) getSync(ctx context.Context, name string) (*olmsyncv1alpha1.Sync, error) {
	obj := &olmsyncv1alpha1.Sync{}
	key := s.key(name)
	if err := s.client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound(key)
		}
		return nil, fmt.Errorf("read Sync %s: %w", key, err)
	}
	return obj, nil
}

// notFound names the Sync that is not there, and where it was looked for.
func notFound(key types.NamespacedName) error {
	return fmt.Errorf("no Sync %q in namespace %s", key.Name, key.Namespace)
}

func getSyncs(ctx context.Context, s *syncSession, args []string) error {
	if !slices.Contains(outputFormats, s.output) {
		return fmt.Errorf("-o %q: want %s", s.output, strings.Join(outputFormats, ", "))
	}
	if s.watch && (s.output == "json" || s.output == "yaml") {
		return fmt.Errorf("--watch prints a table: -o %s goes without it", s.output)
	}
	if s.allNamespaces && len(args) > 0 {
		return errors.New("a Sync cannot be read by name across all namespaces: give -n instead of -A")
	}
	var syncs []olmsyncv1alpha1.Sync
	if len(args) > 0 {
		obj, err := s.getSync(ctx, args[0])
		if err != nil {
			return err
		}
		syncs = append(syncs, *obj)
	} else if !s.watch {
		var err error
		if syncs, err = s.listSyncs(ctx); err != nil {
			return err
		}
	}
	if s.watch {
		return s.watchSyncs(ctx, args)
	}
	if len(syncs) == 0 {
		if s.allNamespaces {
			fmt.Fprintln(s.err, "no Syncs found in any namespace")
		} else {
			fmt.Fprintf(s.err, "no Syncs found in namespace %s\n", s.namespace)
		}
		if s.output == "table" {
			return nil
		}
	}
	switch s.output {
	case "json", "yaml":
		return writeSyncObjects(s.out, syncs, len(args) > 0, s.output)
	default:
		t := syncTable{allNamespaces: s.allNamespaces, wide: s.output == "wide"}
		tw := tabwriter.NewWriter(s.out, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, t.header())
		for i := range syncs {
			fmt.Fprintln(tw, t.row(&syncs[i], ""))
		}
		return tw.Flush()
	}
}

// writeSyncObjects prints the Syncs as kubectl does: one object when one was asked for by
// name, else a list; without managed fields.
func writeSyncObjects(w io.Writer, syncs []olmsyncv1alpha1.Sync, one bool, format string) error {
	for i := range syncs {
		syncs[i].APIVersion = olmsyncv1alpha1.SchemeGroupVersion.String()
		syncs[i].Kind = olmsyncv1alpha1.SyncKind
		syncs[i].ManagedFields = nil
	}
	var v any = &olmsyncv1alpha1.SyncList{
		TypeMeta: metav1.TypeMeta{APIVersion: olmsyncv1alpha1.SchemeGroupVersion.String(), Kind: olmsyncv1alpha1.SyncKind + "List"},
		Items:    append([]olmsyncv1alpha1.Sync{}, syncs...), // "items": [] rather than null
	}
	if one {
		v = &syncs[0]
	}
	var data []byte
	var err error
	if format == "yaml" {
		data, err = yaml.Marshal(v)
	} else {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// syncTable is the table get prints, -o wide or not, with or without a namespace column.
type syncTable struct{ allNamespaces, wide bool }

func (t syncTable) header() string {
	h := "NAME\tREVISION\tSUSPENDED\tREADY\t"
	if t.wide {
		h += "URL\tREF\tPATH\t"
	}
	h += "MESSAGE"
	if t.allNamespaces {
		h = "NAMESPACE\t" + h
	}
	return h
}

// row is obj's row; message, when not empty, stands for the Ready condition's message
// (a deleted Sync's row under --watch).
func (t syncTable) row(obj *olmsyncv1alpha1.Sync, message string) string {
	ready, readyMessage := string(metav1.ConditionUnknown), "waiting to be reconciled"
	if c := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition); c != nil {
		ready, readyMessage = string(c.Status), c.Message
	}
	if message == "" {
		message = readyMessage
	}
	row := fmt.Sprintf("%s\t%s\t%t\t%s\t", obj.Name, obj.Status.LastAppliedRevision, obj.Spec.Suspend, ready)
	if t.wide {
		path := obj.Spec.Path
		if path == "" {
			path = "./"
		}
		row += fmt.Sprintf("%s\t%s\t%s\t", sources.RedactURL(obj.Spec.Source.URL), refString(obj.Spec.Source.Ref), path)
	}
	row += oneLine(message)
	if t.allNamespaces {
		row = obj.Namespace + "\t" + row
	}
	return row
}

// refString says which revision a source follows, in one cell: the branch's name, or
// tag:, semver:, commit: and the value; HEAD for the remote's default branch.
func refString(ref *olmsyncv1alpha1.GitRef) string {
	switch {
	case ref == nil:
		return "HEAD"
	case ref.Commit != "" && ref.Branch != "":
		return ref.Branch + "@" + ref.Commit
	case ref.Commit != "":
		return "commit:" + ref.Commit
	case ref.Tag != "":
		return "tag:" + ref.Tag
	case ref.SemVer != "":
		return "semver:" + strings.Join(strings.Fields(ref.SemVer), " ")
	case ref.Branch != "":
		return ref.Branch
	}
	return "HEAD"
}

// oneLine keeps a message in its table cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func reconcileSync(ctx context.Context, s *syncSession, args []string) error {
	obj, err := s.getSync(ctx, args[0])
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(obj)
	if obj.Spec.Suspend {
		return fmt.Errorf("cannot reconcile Sync %s: it is suspended; resume it first (olmsync resume sync %s -n %s)", key, key.Name, key.Namespace)
	}
	return s.requestAndWait(ctx, key)
}

func suspendSyncs(ctx context.Context, s *syncSession, args []string) error {
	keys, err := s.targets(ctx, args)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if err := s.setSuspend(ctx, key, true); err != nil {
			return err
		}
	}
	return nil
}

// resumeSync resumes the Syncs and asks each for a reconcile before waiting for any, so
// that with --all they reconcile side by side; then it waits for each in turn.
func resumeSync(ctx context.Context, s *syncSession, args []string) error {
	keys, err := s.targets(ctx, args)
	if err != nil {
		return err
	}
	requested := make([]string, len(keys))
	for i, key := range keys {
		if err := s.setSuspend(ctx, key, false); err != nil {
			return err
		}
		if requested[i], err = requestReconcile(ctx, s.client, key); err != nil {
			return err
		}
	}
	var notReady []string
	for i, key := range keys {
		err := s.report(ctx, key, requested[i])
		var f *findingsError
		switch {
		case errors.As(err, &f):
			notReady = append(notReady, key.String())
		case err != nil:
			return err
		}
	}
	if len(notReady) > 0 {
		return &findingsError{"not ready: " + strings.Join(notReady, ", ")}
	}
	return nil
}

// setSuspend sets spec.suspend with a merge patch, which touches no other field.
func (s *syncSession) setSuspend(ctx context.Context, key types.NamespacedName, suspend bool) error {
	obj := &olmsyncv1alpha1.Sync{}
	obj.Namespace, obj.Name = key.Namespace, key.Name
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend))
	if err := s.client.Patch(ctx, obj, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound(key)
		}
		return fmt.Errorf("set spec.suspend of Sync %s: %w", key, err)
	}
	if suspend {
		fmt.Fprintf(s.out, "Sync %s suspended\n", key)
	} else {
		fmt.Fprintf(s.out, "Sync %s resumed\n", key)
	}
	return nil
}

// requestAndWait asks for a reconcile and, with --wait, reports its outcome: nil when the
// Sync is Ready, a findings error when it is not.
func (s *syncSession) requestAndWait(ctx context.Context, key types.NamespacedName) error {
	requestedAt, err := requestReconcile(ctx, s.client, key)
	if err != nil {
		return err
	}
	return s.report(ctx, key, requestedAt)
}

// report says a reconcile was requested at requestedAt and, with --wait, waits for its
// outcome: nil when the Sync is Ready, a findings error when it is not.
func (s *syncSession) report(ctx context.Context, key types.NamespacedName, requestedAt string) error {
	if !s.wait {
		fmt.Fprintf(s.out, "reconcile of Sync %s requested at %s\n", key, requestedAt)
		return nil
	}
	fmt.Fprintf(s.err, "reconcile of Sync %s requested at %s; waiting for it (timeout %s)\n", key, requestedAt, s.timeout)
	obj, err := waitForSync(ctx, s.client, key, requestedAt, s.timeout)
	if err != nil {
		return err
	}
	ready := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition)
	if ready.Status != metav1.ConditionTrue {
		fmt.Fprintf(s.out, "Sync %s is not ready: %s: %s\n", key, ready.Reason, ready.Message)
		return &findingsError{fmt.Sprintf("not ready: %s", ready.Reason)}
	}
	fmt.Fprintf(s.out, "Sync %s is ready: %s\n", key, ready.Message)
	fmt.Fprintf(s.out, "applied revision %s\n", obj.Status.LastAppliedRevision)
	return nil
}

// requestReconcile sets the Sync's reconcile.olmsync.dev/requestedAt annotation through
// the webhook's own trigger, and returns the value it set: the reconciler copies it to
// status.lastHandledReconcileAt once it has handled the request.
func requestReconcile(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	rec := &annotationRecorder{Client: c}
	if err := receiver.RequestReconcile(rec, time.Now)(ctx, key); err != nil {
		return "", err
	}
	if rec.requestedAt == "" {
		return "", fmt.Errorf("annotate Sync %s: the API server did not keep %s", key, olmsyncv1alpha1.ReconcileRequestAnnotation)
	}
	return rec.requestedAt, nil
}

// annotationRecorder reads the requestedAt annotation off the Sync a patch returns, so
// that the value is the one the API server stored, not one formatted a second time here.
type annotationRecorder struct {
	client.Client
	requestedAt string
}

func (r *annotationRecorder) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := r.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	r.requestedAt = obj.GetAnnotations()[olmsyncv1alpha1.ReconcileRequestAnnotation]
	return nil
}

// waitForSync polls the Sync until it has handled the reconcile requested at requestedAt
// and its Ready condition is True or False: the reconciler writes lastHandledReconcileAt
// when a reconcile ends, and keeps Ready Unknown while one is still progressing. Errors
// that may pass (a server busy or unreachable for a while, the client's rate limiter
// refusing a request close to the deadline) are retried until ctx ends; a Sync deleted
// or a request refused for want of rights ends the wait. timeout is ctx's, for the message.
func waitForSync(ctx context.Context, c client.Reader, key types.NamespacedName, requestedAt string, timeout time.Duration) (*olmsyncv1alpha1.Sync, error) {
	var last *olmsyncv1alpha1.Sync
	var lastErr error
	for {
		obj := &olmsyncv1alpha1.Sync{}
		err := c.Get(ctx, key, obj)
		switch {
		case err == nil:
			last, lastErr = obj, nil
			if handled(obj, requestedAt) {
				return obj, nil
			}
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("the Sync %s was deleted while waiting for its reconcile", key)
		case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
			return nil, fmt.Errorf("read Sync %s: %w", key, err)
		default:
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("timed out after %s waiting for Sync %s to handle the reconcile requested at %s: %s",
				timeout, key, requestedAt, lastSeen(last, lastErr))
		case <-time.After(syncPollInterval):
		}
	}
}

// handled says whether the Sync is done with the reconcile requested at requestedAt.
func handled(obj *olmsyncv1alpha1.Sync, requestedAt string) bool {
	if obj.Status.LastHandledReconcileAt != requestedAt {
		return false
	}
	ready := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition)
	return ready != nil && ready.Status != metav1.ConditionUnknown
}

// lastSeen says what a wait that timed out saw last.
func lastSeen(obj *olmsyncv1alpha1.Sync, err error) string {
	var parts []string
	if obj != nil {
		handledAt := obj.Status.LastHandledReconcileAt
		if handledAt == "" {
			handledAt = "none"
		}
		parts = append(parts, "last handled request "+handledAt)
		if c := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition); c != nil {
			parts = append(parts, fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message))
		} else {
			parts = append(parts, "no Ready condition")
		}
	}
	if err != nil {
		parts = append(parts, "last error: "+err.Error())
	}
	if len(parts) == 0 {
		return "the Sync was never read"
	}
	return strings.Join(parts, "; ")
}
