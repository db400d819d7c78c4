//go:build !olmsync_light

package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apifields "k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
)

// watchSyncs lists the Syncs (one by name when args has it), prints them as get does,
// then prints a row each time one changes, until ctx ends. It watches from the list's
// resourceVersion through client-go's RetryWatcher, which re-opens a watch the server
// closed (they time out after a few minutes) without missing or repeating a change. A
// row that would read as the last one printed for the same Sync (a status update of a
// field the table does not show) is not printed again.
func (s *syncSession) watchSyncs(ctx context.Context, args []string) error {
	wc, err := client.NewWithWatch(s.config, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	opts := &client.ListOptions{}
	if !s.allNamespaces {
		opts.Namespace = s.namespace
	}
	if len(args) > 0 {
		opts.FieldSelector = apifields.OneTermEqualSelector("metadata.name", args[0])
	}
	list := &olmsyncv1alpha1.SyncList{}
	if err := wc.List(ctx, list, opts); err != nil {
		return fmt.Errorf("list Syncs: %w", err)
	}
	t := syncTable{allNamespaces: s.allNamespaces, wide: s.output == "wide"}
	tw := tabwriter.NewWriter(s.out, 0, 0, 3, ' ', 0)
	last := map[string]string{}
	show := func(obj *olmsyncv1alpha1.Sync, message string) error {
		key := obj.Namespace + "/" + obj.Name
		row := t.row(obj, message)
		if last[key] == row {
			return nil
		}
		last[key] = row
		fmt.Fprintln(tw, row)
		return tw.Flush()
	}
	fmt.Fprintln(tw, t.header())
	for i := range list.Items {
		if err := show(&list.Items[i], ""); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			wo := *opts
			wo.Raw = &o
			return wc.Watch(ctx, &olmsyncv1alpha1.SyncList{}, &wo)
		},
	})
	if err != nil {
		return fmt.Errorf("watch Syncs: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			// Interrupted, as --watch is meant to end: not an error.
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("watch Syncs: the watch ended")
			}
			var err error
			switch ev.Type {
			case watch.Added, watch.Modified:
				if obj, ok := ev.Object.(*olmsyncv1alpha1.Sync); ok {
					err = show(obj, "")
				}
			case watch.Deleted:
				if obj, ok := ev.Object.(*olmsyncv1alpha1.Sync); ok {
					err = show(obj, "deleted")
				}
			case watch.Error:
				return fmt.Errorf("watch Syncs: %w", apierrors.FromObject(ev.Object))
			}
			if err != nil {
				return err
			}
		}
	}
}

// completionTimeout bounds the API request behind a completion: a shell waits for it.
const completionTimeout = 5 * time.Second

// completeSyncNames completes a Sync's name with the names of the Syncs of -n (as typed
// so far on the command line), read from the API server of --kubeconfig and --context.
func (s *syncSession) completeSyncNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := s.syncNames(cmd)
	if err != nil {
		cobra.CompDebugln(err.Error(), true)
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// syncNames lists the names of the Syncs of -n, for completions.
func (s *syncSession) syncNames(cmd *cobra.Command) ([]string, error) {
	if err := s.connect(cmd); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(completionContext(cmd), completionTimeout)
	defer cancel()
	list := &olmsyncv1alpha1.SyncList{}
	if err := s.client.List(ctx, list, client.InNamespace(s.namespace)); err != nil {
		return nil, fmt.Errorf("list Syncs: %w", err)
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	return names, nil
}

// completeNamespaces completes -n with the namespaces of the cluster.
func (s *syncSession) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if err := s.connect(cmd); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ctx, cancel := context.WithTimeout(completionContext(cmd), completionTimeout)
	defer cancel()
	list := &corev1.NamespaceList{}
	if err := s.client.List(ctx, list); err != nil {
		cobra.CompDebugln(err.Error(), true)
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			out = append(out, ns.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionContext is the command's context; cobra leaves it nil when the command was
// run with Execute rather than ExecuteContext.
func completionContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
