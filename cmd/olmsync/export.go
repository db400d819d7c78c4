//go:build !olmsync_light

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// lastAppliedAnnotation is kubectl's copy of what it last applied: server state, not
// something to export.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

func newExportCommand() *cobra.Command {
	return newSyncVerbCommand(syncVerb{
		verb: "export", verbShort: "Print olmsync resources as YAML to apply elsewhere",
		use: "sync [NAME]", aliases: syncAliases, names: true,
		short: "Print a Sync, or every Sync with --all, as YAML to keep in Git or apply elsewhere",
		long: `Print the Sync as flux export does: apiVersion, kind, name, namespace, labels, annotations
and spec, and nothing the cluster wrote (status, uid, resourceVersion, generation,
creationTimestamp, managedFields, kubectl's last-applied-configuration, the annotation of the
last reconcile request), each object after a "---" line. What it prints, applied, makes the
same Sync.`,
		example: `  olmsync export sync platform > platform.yaml
  olmsync export sync --all -A > syncs.yaml`,
		args: cobra.MaximumNArgs(1), all: true,
		run: func(ctx context.Context, s *syncSession, args []string) error {
			var syncs []olmsyncv1alpha1.Sync
			if s.all {
				var err error
				if syncs, err = s.listSyncs(ctx); err != nil {
					return err
				}
			} else {
				obj, err := s.getSync(ctx, args[0])
				if err != nil {
					return err
				}
				syncs = append(syncs, *obj)
			}
			for i := range syncs {
				if err := writeExport(s.out, &syncs[i]); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// exported is the Sync as it would be written by hand: metadata the user sets and spec.
func exported(obj *olmsyncv1alpha1.Sync) *olmsyncv1alpha1.Sync {
	out := &olmsyncv1alpha1.Sync{
		TypeMeta: metav1.TypeMeta{APIVersion: olmsyncv1alpha1.SchemeGroupVersion.String(), Kind: olmsyncv1alpha1.SyncKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        obj.Name,
			Namespace:   obj.Namespace,
			Labels:      maps.Clone(obj.Labels),
			Annotations: maps.Clone(obj.Annotations),
		},
		Spec: *obj.Spec.DeepCopy(),
	}
	delete(out.Annotations, lastAppliedAnnotation)
	delete(out.Annotations, olmsyncv1alpha1.ReconcileRequestAnnotation)
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	return out
}

// writeExport prints obj's export as one YAML document.
func writeExport(w io.Writer, obj *olmsyncv1alpha1.Sync) error {
	data, err := yaml.Marshal(exported(obj))
	if err != nil {
		return fmt.Errorf("export Sync %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	_, err = fmt.Fprintf(w, "---\n%s", data)
	return err
}

// createOptions are the flags of olmsync create sync.
type createOptions struct {
	url, branch, tag, semver, commit string
	path, cluster                    string
	apps                             []string
	interval, sourceInterval         time.Duration
	prune                            bool
	secretRef, serviceAccount        string
	policyMode                       string
	export                           bool
}

func newCreateCommand() *cobra.Command {
	o := &createOptions{}
	return newSyncVerbCommand(syncVerb{
		verb: "create", verbShort: "Create or update olmsync resources",
		use: "sync NAME", aliases: syncAliases,
		short: "Create a Sync, or update the spec of an existing one; --export prints it instead",
		long: `Create the Sync NAME in the namespace (-n) from the flags, as flux create kustomization
does: a Sync of that name already there gets the new spec (its status is kept). The API
server checks the Sync as it checks any (a URL with credentials, a path leaving the
repository, a tag with a branch are refused). --export prints the Sync as olmsync export sync
would, touching no cluster. It does not wait for the reconcile: olmsync reconcile sync NAME
does.`,
		example: `  olmsync create sync platform --url https://github.com/acme/clusters.git --branch main --path ./clusters/prod
  olmsync create sync platform --url https://github.com/acme/clusters.git --tag v1.4.0 --prune --export > platform.yaml`,
		args: cobra.ExactArgs(1),
		flags: func(f *pflag.FlagSet) {
			f.StringVar(&o.url, "url", "", "the Git repository (spec.source.url): https://, ssh:// or user@host:path")
			f.StringVar(&o.branch, "branch", "", "branch to follow (default: the remote's default branch)")
			f.StringVar(&o.tag, "tag", "", "tag to follow")
			f.StringVar(&o.semver, "semver", "", "semver range over the tags to follow, e.g. '>=1.2.0 <2.0.0'")
			f.StringVar(&o.commit, "commit", "", "commit to pin (full hash), alone or with --branch")
			f.StringVar(&o.path, "path", "", "folder of the repository that holds the apps (spec.path; default: the root)")
			f.StringVar(&o.cluster, "cluster", "", "the cluster whose apps to deploy (spec.cluster)")
			f.StringSliceVar(&o.apps, "app", nil, "an app to deploy (spec.apps), repeated or comma-separated (default: every app of the cluster)")
			f.DurationVar(&o.interval, "interval", 10*time.Minute, "how often drift is corrected (spec.interval)")
			f.DurationVar(&o.sourceInterval, "source-interval", time.Minute, "how often the repository is fetched (spec.source.interval)")
			f.BoolVar(&o.prune, "prune", false, "delete what the Sync applied and no longer renders (spec.prune)")
			f.StringVar(&o.secretRef, "secret-ref", "", "Secret in the namespace with the repository's credentials (spec.source.secretRef)")
			f.StringVar(&o.serviceAccount, "service-account", "", "service account to apply as (spec.serviceAccountName)")
			f.StringVar(&o.policyMode, "policy-mode", "", "placement rules: enforce (the default) or audit (spec.policy.mode)")
			f.BoolVar(&o.export, "export", false, "print the Sync as YAML instead of creating it")
		},
		complete: func(cmd *cobra.Command) {
			_ = cmd.RegisterFlagCompletionFunc("policy-mode", cobra.FixedCompletions(
				[]cobra.Completion{string(olmsyncv1alpha1.PolicyModeEnforce), string(olmsyncv1alpha1.PolicyModeAudit)}, cobra.ShellCompDirectiveNoFileComp))
		},
		offline: func(s *syncSession) bool { return o.export },
		run: func(ctx context.Context, s *syncSession, args []string) error {
			obj, err := o.sync(s.namespace, args[0])
			if err != nil {
				return err
			}
			if o.export {
				return writeExport(s.out, obj)
			}
			return s.upsert(ctx, obj)
		},
	})
}

// sync is the Sync the flags describe; what only the API server can check is left to it.
func (o *createOptions) sync(namespace, name string) (*olmsyncv1alpha1.Sync, error) {
	if o.url == "" {
		return nil, errors.New("--url is required: the Git repository to follow")
	}
	obj := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source: olmsyncv1alpha1.GitSource{
				URL:      o.url,
				Interval: metav1.Duration{Duration: o.sourceInterval},
			},
			Path:               o.path,
			Cluster:            o.cluster,
			Apps:               o.apps,
			Prune:              o.prune,
			Interval:           metav1.Duration{Duration: o.interval},
			ServiceAccountName: o.serviceAccount,
			Policy:             olmsyncv1alpha1.PolicySpec{Mode: olmsyncv1alpha1.PolicyMode(o.policyMode)},
		},
	}
	if o.branch != "" || o.tag != "" || o.semver != "" || o.commit != "" {
		obj.Spec.Source.Ref = &olmsyncv1alpha1.GitRef{Branch: o.branch, Tag: o.tag, SemVer: o.semver, Commit: o.commit}
	}
	if o.secretRef != "" {
		obj.Spec.Source.SecretRef = &olmsyncv1alpha1.LocalObjectReference{Name: o.secretRef}
	}
	switch obj.Spec.Policy.Mode {
	case "", olmsyncv1alpha1.PolicyModeEnforce, olmsyncv1alpha1.PolicyModeAudit:
	default:
		return nil, fmt.Errorf("--policy-mode %q: want enforce or audit", o.policyMode)
	}
	return obj, nil
}

// upsert creates obj, or gives an existing Sync of its name obj's spec.
func (s *syncSession) upsert(ctx context.Context, obj *olmsyncv1alpha1.Sync) error {
	key := client.ObjectKeyFromObject(obj)
	err := s.client.Create(ctx, obj.DeepCopy())
	if err == nil {
		fmt.Fprintf(s.out, "Sync %s created\n", key)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Sync %s: %w", key, err)
	}
	live, err := s.getSync(ctx, key.Name)
	if err != nil {
		return err
	}
	live.Spec = obj.Spec
	if err := s.client.Update(ctx, live); err != nil {
		return fmt.Errorf("update Sync %s: %w", key, err)
	}
	fmt.Fprintf(s.out, "Sync %s updated\n", key)
	return nil
}
