//go:build !olmsync_light

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/charts"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/olm"
)

type installOptions struct {
	kubeconfig, context string
	export              bool
	namespace, release  string
	olmMode             string
	image               string
	replicas            int
	watchLabelSelector  string
	crds                bool
	valueFiles, set     []string
	wait                bool
	timeout             time.Duration
}

func newInstallCommand() *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install olmsync in a cluster from the Helm chart embedded in this binary, or print its manifests (--export)",
		Long: `install renders the Helm chart embedded in this binary (charts/olmsync) with helm's own
library — values.yaml, then -f files, then --set, then the flags below, checked against the
chart's values.schema.json — and applies its objects to the cluster with server-side apply
(field manager olmsync), in helm's install order, as flux install does. --export prints them
instead, as helm template would, for a GitOps repository or kubectl apply.

The objects are the same as 'helm install' makes from charts/olmsync; a release applied by
install is not a Helm release (helm list does not show it): manage it with olmsync install
again, or with helm, not both.`,
		Example: `  olmsync install --image ghcr.io/you/olmsync:v0.1.0
  olmsync install --export --olm external > olmsync.yaml
  olmsync install --release-name olmsync-shard1 --olm external --set crds.install=false \
    --watch-label-selector 'sharding.olmsync.dev/key in (shard1)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use")
	f.BoolVar(&o.export, "export", false, "print the manifests instead of applying them")
	f.StringVarP(&o.namespace, "namespace", "n", defaultSyncNamespace, "the namespace olmsync runs in (created when missing)")
	f.StringVar(&o.release, "release-name", "olmsync", "the release name the objects are named after, as helm install's NAME")
	f.StringVar(&o.olmMode, "olm", "", "embedded, external or auto: whether the embedded OLM runs, and is granted its rights (olm.mode; default auto)")
	f.StringVar(&o.image, "image", "", "the olmsync image, repository[:tag] or repository@sha256:digest (image.*; default the chart's)")
	f.IntVar(&o.replicas, "replicas", 0, "replicas of the controller, taking turns through a Lease (replicaCount; default 1)")
	f.StringVar(&o.watchLabelSelector, "watch-label-selector", "", "reconcile only the Syncs this label selector matches: one shard of several (watchLabelSelector)")
	f.BoolVar(&o.crds, "crds", true, "install olmsync's CRDs with it (crds.install)")
	f.StringArrayVarP(&o.valueFiles, "values", "f", nil, "a values file, as helm's -f (repeatable)")
	f.StringArrayVar(&o.set, "set", nil, "a value, as helm's --set key=value[,key=value] (repeatable)")
	f.BoolVar(&o.wait, "wait", true, "wait until the controller's Deployment is available")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits")
	return cmd
}

func (o *installOptions) run(cmd *cobra.Command) error {
	vals, err := o.values(cmd)
	if err != nil {
		return err
	}
	r, err := charts.Render(charts.Options{ReleaseName: o.release, Namespace: o.namespace, Values: vals})
	if err != nil {
		return err
	}
	if o.export {
		data, err := charts.YAML(r.Objects)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(data)
		return err
	}
	cfg, err := kube.Config(o.kubeconfig, o.context)
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	err = reconcile.Install(ctx, c, o.namespace, r.Objects, func(u *unstructured.Unstructured) {
		fmt.Fprintf(out, "applied %s %s\n", u.GetKind(), objectName(u))
	})
	if err != nil {
		return err
	}
	if o.wait {
		for _, d := range r.Objects {
			if d.GetKind() != "Deployment" {
				continue
			}
			fmt.Fprintf(out, "waiting for Deployment %s to be available\n", objectName(d))
			wctx, cancel := context.WithTimeout(ctx, o.timeout)
			err := reconcile.WaitAvailable(wctx, c, client.ObjectKeyFromObject(d))
			cancel()
			if err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(out, "olmsync is installed in namespace %s\n\n%s\n", o.namespace, r.Notes)
	return nil
}

// values are the chart's values from -f, --set and the flags, in that order of precedence
// (the flags win, as the most specific).
func (o *installOptions) values(cmd *cobra.Command) (map[string]any, error) {
	files := map[string][]byte{}
	for _, name := range o.valueFiles {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	set := append([]string(nil), o.set...)
	flags := cmd.Flags()
	if flags.Changed("olm") {
		if _, err := olm.ParseMode(o.olmMode); err != nil {
			return nil, err
		}
		set = append(set, "olm.mode="+o.olmMode)
	}
	if flags.Changed("image") {
		repo, tag, digest, err := parseImage(o.image)
		if err != nil {
			return nil, err
		}
		set = append(set, "image.repository="+repo, "image.tag="+tag, "image.digest="+digest)
	}
	if flags.Changed("replicas") {
		set = append(set, fmt.Sprintf("replicaCount=%d", o.replicas))
	}
	vals, err := charts.Values(files, o.valueFiles, set)
	if err != nil {
		return nil, err
	}
	// Set as they are, not through --set's syntax: a selector holds commas and parentheses.
	if flags.Changed("watch-label-selector") {
		vals["watchLabelSelector"] = o.watchLabelSelector
	}
	if flags.Changed("crds") {
		crds, _ := vals["crds"].(map[string]any)
		if crds == nil {
			crds = map[string]any{}
		}
		crds["install"] = o.crds
		vals["crds"] = crds
	}
	return vals, nil
}

// parseImage splits an image reference into repository and tag or digest.
func parseImage(ref string) (repo, tag, digest string, err error) {
	if ref == "" {
		return "", "", "", fmt.Errorf("--image: empty")
	}
	if i := strings.Index(ref, "@"); i >= 0 {
		return ref[:i], "", ref[i+1:], nil
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i], ref[i+1:], "", nil
	}
	return ref, "", "", nil
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}
