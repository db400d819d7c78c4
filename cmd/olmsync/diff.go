//go:build !olmsync_light

package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/reconcile/diff"
)

// diffOptions are the flags of `olmsync diff sync`.
type diffOptions struct {
	output   string
	gitCache string
}

func newDiffCommand() *cobra.Command {
	o := &diffOptions{}
	return newSyncVerbCommand(syncVerb{
		verb: "diff", verbShort: "Show what a reconcile of olmsync resources would change",
		use: "sync NAME", aliases: syncAliases, names: true,
		short: "Show what a reconcile of a Sync would change now, changing nothing",
		long: `Say what a reconcile of the Sync would do now, as flux diff kustomization does, writing
nothing to the cluster. It reads the Sync, fetches spec.source at its ref (with the
credentials of the Secret spec.source.secretRef names, read from the cluster), renders and
checks that revision as the reconciler does — the same apps of spec.cluster and spec.apps,
the same policy mode and gating — then dry-runs the server-side apply of every object (field
manager olmsync, forcing ownership, as spec.serviceAccountName when the Sync names one) and
the prune of what status.inventory holds and the revision no longer renders.

Each object is one of:
  created    not in the cluster
  changed    different from Git: a unified diff of the live object and the dry-run apply's
             answer follows, without managedFields, resourceVersion, generation, uid,
             creationTimestamp and status; a Secret's values show as *** (*** (before) and
             *** (after) where they change)
  unchanged  as Git has it
  gated      kept out by a placement rule's unwaived error (enforce mode); the rule is named
  waiting    its kind is not served yet and its CRD is on its way (WaitingForCRD)
  failed     the API server would refuse it, or its deletion
  skipped    an earlier apply stage would fail, so it would not be tried
  pruned     applied before, no longer rendered: spec.prune deletes it
  left       applied before, no longer rendered, left in place: spec.prune is off, an
             object would be refused, or it opts out (olmsync.dev/prune: disabled) or no
             longer carries the Sync's labels

A file:// source is read from this machine's filesystem: where the controller reads it when
olmsync run --repo DIR runs on this machine. Fetched repositories are kept in --git-cache.
-o json prints the report as one JSON object.

Exit codes: 0 no differences (every object unchanged or left), 1 differences, 2 errors: no
such Sync, a fetch that failed (the message names the URL), a revision that did not build.`,
		example: `  olmsync diff sync platform
  olmsync diff sync platform -n teams -o json`,
		args:  cobra.ExactArgs(1),
		flags: o.register,
		run:   o.run,
	})
}

func (o *diffOptions) register(f *pflag.FlagSet) {
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.StringVar(&o.gitCache, "git-cache", "", "folder keeping the fetched repositories (default: the user's cache folder, olmsync/git)")
}

func (o *diffOptions) run(ctx context.Context, s *syncSession, args []string) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("-o %q: want text or json", o.output)
	}
	obj, err := s.getSync(ctx, args[0])
	if err != nil {
		return err
	}
	opts := diff.Options{CacheDir: gitCacheDir(o.gitCache), AllowLocalSources: true, Config: s.config}
	report, err := diff.Sync(ctx, s.client, obj, opts)
	if err != nil {
		return fmt.Errorf("diff Sync %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if o.output == "json" {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = report.WriteText(s.out)
	}
	if err != nil {
		return err
	}
	if report.Differs {
		return &findingsError{"the cluster differs from the revision"}
	}
	return nil
}
