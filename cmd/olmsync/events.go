//go:build !olmsync_light

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/tree"
)

// eventsOptions are the flags of olmsync events.
type eventsOptions struct {
	forObject string
}

// newEventsCommand is flux events for Syncs: the Kubernetes Events of the Syncs and of
// every object of their trees (inventory and OLM chain).
func newEventsCommand() *cobra.Command {
	o := &eventsOptions{}
	s := &syncSession{}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the Kubernetes Events of Syncs and of the objects they manage",
		Long: `Show the Events of the Syncs of a namespace (-n, default olmsync-system) or of every
namespace (-A), and of every object of their trees as olmsync tree sync prints them: the
objects of their inventories and, below each Subscription, the InstallPlan, CSV and
Deployments OLM made for it. --for Sync/NAME shows one Sync's. Oldest first, as flux events.`,
		Example: `  olmsync events
  olmsync events --for Sync/platform -n teams
  olmsync events -A`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.connect(cmd); err != nil {
				return err
			}
			return o.run(cmd.Context(), s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config)")
	f.StringVar(&s.context, "context", "", "kubeconfig context to use")
	f.StringVarP(&s.namespace, "namespace", "n", defaultSyncNamespace, "namespace of the Syncs")
	f.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "the Syncs of every namespace")
	f.StringVar(&o.forObject, "for", "", "only the Events of this Sync and its objects: Sync/NAME")
	_ = cmd.RegisterFlagCompletionFunc("namespace", s.completeNamespaces)
	_ = cmd.RegisterFlagCompletionFunc("for", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := s.syncNames(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range names {
			if c := olmsyncv1alpha1.SyncKind + "/" + n; strings.HasPrefix(c, toComplete) {
				out = append(out, c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func (o *eventsOptions) run(ctx context.Context, s *syncSession) error {
	var syncs []olmsyncv1alpha1.Sync
	if o.forObject != "" {
		kind, name, ok := strings.Cut(o.forObject, "/")
		if !ok || name == "" || !strings.EqualFold(kind, olmsyncv1alpha1.SyncKind) {
			return fmt.Errorf("--for %q: want Sync/NAME", o.forObject)
		}
		if s.allNamespaces {
			return fmt.Errorf("--for names a Sync in one namespace (-n), not -A")
		}
		obj, err := s.getSync(ctx, name)
		if err != nil {
			return err
		}
		syncs = append(syncs, *obj)
	} else {
		var err error
		if syncs, err = s.listSyncs(ctx); err != nil {
			return err
		}
	}
	// Every object of every tree, and the namespaces their Events are in: a
	// cluster-scoped object's are in default.
	objects := map[objectKey]bool{}
	namespaces := map[string]bool{}
	for i := range syncs {
		root, err := s.syncTree(ctx, &syncs[i])
		if err != nil {
			return err
		}
		root.Walk(func(n *tree.Node) {
			objects[objectKey{n.Kind, n.Namespace, n.Name}] = true
			ns := n.Namespace
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			namespaces[ns] = true
		})
	}
	var events []corev1.Event
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		list := &corev1.EventList{}
		if err := s.client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("list the Events of namespace %s: %w", ns, err)
		}
		for _, ev := range list.Items {
			if objects[eventObject(&ev)] {
				events = append(events, ev)
			}
		}
	}
	if len(events) == 0 {
		fmt.Fprintln(s.err, "no Events found")
		return nil
	}
	return writeEvents(s.out, events, time.Now())
}

// objectKey names an object by kind, namespace and name, as an Event's involvedObject does.
type objectKey struct{ kind, namespace, name string }

// eventObject is the object an Event is about. A cluster-scoped object's Event, which
// lives in the default namespace, names no namespace.
func eventObject(ev *corev1.Event) objectKey {
	return objectKey{ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name}
}

// writeEvents prints the Events oldest first, with flux events' columns.
func writeEvents(w io.Writer, events []corev1.Event, now time.Time) error {
	slices.SortStableFunc(events, func(a, b corev1.Event) int {
		return cmp.Or(tree.EventTime(&a).Compare(tree.EventTime(&b)), cmp.Compare(a.Name, b.Name))
	})
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for i := range events {
		ev := &events[i]
		obj := (&tree.Node{Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}).Label()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", duration.HumanDuration(now.Sub(tree.EventTime(ev))), ev.Type, ev.Reason, obj, oneLine(ev.Message))
	}
	return tw.Flush()
}
