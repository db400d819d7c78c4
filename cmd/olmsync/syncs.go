package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// list adds -A and -o; wait adds --wait and --timeout.
	list, wait bool
	// flags adds the verb's own flags.
	flags func(f *pflag.FlagSet)
	run   func(ctx context.Context, s *syncSession, args []string) error
}

// syncSession is the flags every verb on Syncs shares and, once the command runs, the
// client they make and where it writes.
type syncSession struct {
	kubeconfig, context, namespace string
	allNamespaces                  bool
	output                         string
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
		f.StringVarP(&s.output, "output", "o", "table", "output format: table, json or yaml")
	}
	if v.wait {
		f.BoolVar(&s.wait, "wait", true, "wait until the Sync has handled the reconcile and is Ready or failed")
		f.DurationVar(&s.timeout, "timeout", 5*time.Minute, "give up after this long, waiting included")
	}
	if v.flags != nil {
		v.flags(f)
	}
	parent := &cobra.Command{Use: v.verb, Short: v.verbShort}
	parent.AddCommand(sub)
	return parent
}

// newSyncCommands returns the verbs on Syncs, modelled on flux's for Kustomizations.
func newSyncCommands() []*cobra.Command {
	return []*cobra.Command{
		newSyncVerbCommand(syncVerb{
			verb: "get", verbShort: "Display olmsync resources",
			use: "syncs [NAME]", aliases: []string{"sync"},
			short: "Show Syncs: revision applied, suspended, Ready and its message",
			long: `Show the Syncs of a namespace (-n, default olmsync-system) or of every namespace (-A),
or one by NAME: the revision last applied, whether it is suspended, and its Ready condition's
status and message. -o json or yaml prints the objects.`,
			example: `  olmsync get syncs
  olmsync get syncs -A
  olmsync get syncs platform -n olmsync-system -o yaml`,
			args: cobra.MaximumNArgs(1), list: true,
			run: getSyncs,
		}),
		newSyncVerbCommand(syncVerb{
			verb: "reconcile", verbShort: "Reconcile olmsync resources now",
			use:   "sync NAME",
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
			use:   "sync NAME",
			short: "Stop reconciling a Sync (spec.suspend: true)",
			args:  cobra.ExactArgs(1),
			run: func(ctx context.Context, s *syncSession, args []string) error {
				return s.setSuspend(ctx, args[0], true)
			},
		}),
		newSyncVerbCommand(syncVerb{
			verb: "resume", verbShort: "Resume the reconciliation of olmsync resources",
			use:   "sync NAME",
			short: "Reconcile a suspended Sync again (spec.suspend: false), now, and wait for its outcome",
			long: `Set spec.suspend to false, ask for a reconcile as olmsync reconcile sync does, and (with
--wait, the default) wait for its outcome. Exit codes as olmsync reconcile sync's.`,
			args: cobra.ExactArgs(1), wait: true,
			run: resumeSync,
		}),
		newDiffCommand(),
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
	if s.output != "table" && s.output != "json" && s.output != "yaml" {
		return fmt.Errorf("-o %q: want table, json or yaml", s.output)
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
	} else {
		list := &olmsyncv1alpha1.SyncList{}
		var opts []client.ListOption
		if !s.allNamespaces {
			opts = append(opts, client.InNamespace(s.namespace))
		}
		if err := s.client.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("list Syncs: %w", err)
		}
		syncs = list.Items
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
		return writeSyncTable(s.out, syncs, s.allNamespaces)
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

func writeSyncTable(w io.Writer, syncs []olmsyncv1alpha1.Sync, allNamespaces bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	header := "NAME\tREVISION\tSUSPENDED\tREADY\tMESSAGE"
	if allNamespaces {
		header = "NAMESPACE\t" + header
	}
	fmt.Fprintln(tw, header)
	for i := range syncs {
		obj := &syncs[i]
		ready, message := string(metav1.ConditionUnknown), "waiting to be reconciled"
		if c := apimeta.FindStatusCondition(obj.Status.Conditions, olmsyncv1alpha1.ReadyCondition); c != nil {
			ready, message = string(c.Status), c.Message
		}
		row := fmt.Sprintf("%s\t%s\t%t\t%s\t%s", obj.Name, obj.Status.LastAppliedRevision, obj.Spec.Suspend, ready, oneLine(message))
		if allNamespaces {
			row = obj.Namespace + "\t" + row
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
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

func resumeSync(ctx context.Context, s *syncSession, args []string) error {
	if err := s.setSuspend(ctx, args[0], false); err != nil {
		return err
	}
	return s.requestAndWait(ctx, s.key(args[0]))
}

// setSuspend sets spec.suspend with a merge patch, which touches no other field.
func (s *syncSession) setSuspend(ctx context.Context, name string, suspend bool) error {
	obj, err := s.getSync(ctx, name)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(obj)
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
