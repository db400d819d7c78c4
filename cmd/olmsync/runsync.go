//go:build !olmsync_light

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/sources"
)

// syncFlags make `olmsync run --repo` create or update a Sync before the controllers start.
type syncFlags struct {
	repo, path, ref, cluster string
	name, namespace          string
	interval                 time.Duration
}

// cliFieldManager owns the spec fields the CLI writes; the reconciler owns the status.
const cliFieldManager = "olmsync-cli"

func (f *syncFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.repo, "repo", "", "create or update a Sync of this repository: a URL, or a folder of a local git repository (its committed state, on its current branch)")
	fs.StringVar(&f.path, "path", "", "with --repo: the folder of the repository holding the apps (relative to the folder --repo names)")
	fs.StringVar(&f.ref, "ref", "", "with --repo: a branch, refs/tags/<tag>, or a full commit hash (default: the remote's default branch; a local folder's current branch)")
	fs.StringVar(&f.cluster, "cluster", "", "with --repo: the cluster of the repository whose apps the Sync deploys (default: the apps without a cluster)")
	fs.StringVar(&f.name, "sync-name", "", "with --repo: the Sync's name (default: the last element of its path or repository)")
	fs.StringVar(&f.namespace, "sync-namespace", defaultSyncNamespace, "with --repo: the Sync's namespace (created when missing)")
	fs.DurationVar(&f.interval, "interval", time.Minute, "with --repo: how often the repository is asked for a new revision")
}

// apply creates or updates the Sync the flags describe, by server-side apply, and reports
// whether it reads a local repository (local sources must then be allowed).
func (f *syncFlags) apply(ctx context.Context, c client.Client) (*olmsyncv1alpha1.Sync, bool, error) {
	src, err := f.source()
	if err != nil {
		return nil, false, err
	}
	name := f.name
	if name == "" {
		name = defaultSyncName(src)
	}
	sync := &olmsyncv1alpha1.Sync{
		TypeMeta:   metav1.TypeMeta{APIVersion: olmsyncv1alpha1.SchemeGroupVersion.String(), Kind: olmsyncv1alpha1.SyncKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:  olmsyncv1alpha1.GitSource{URL: src.url, Ref: src.ref, Interval: metav1.Duration{Duration: f.interval}},
			Path:    src.path,
			Cluster: f.cluster,
			Prune:   true,
			// Drift is corrected at least as often as the repository is polled, and at most
			// every ten minutes.
			Interval: metav1.Duration{Duration: max(f.interval, 10*time.Minute)},
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("create namespace %s: %w", f.namespace, err)
	}
	u, err := toUnstructured(sync)
	if err != nil {
		return nil, false, err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(cliFieldManager), client.ForceOwnership); err != nil {
		return nil, false, fmt.Errorf("apply Sync %s/%s: %w", f.namespace, name, err)
	}
	return sync, src.local, nil
}

// syncSource is what --repo, --path and --ref say, resolved.
type syncSource struct {
	url   string
	ref   *olmsyncv1alpha1.GitRef
	path  string
	local bool
}

// source resolves the flags: a URL is taken as it is; a folder is found within its git
// repository, whose root becomes a file:// URL and the folder the Sync's path.
func (f *syncFlags) source() (syncSource, error) {
	ref, err := parseRef(f.ref)
	if err != nil {
		return syncSource{}, err
	}
	if sources.IsRemoteURL(f.repo) {
		return syncSource{url: f.repo, ref: ref, path: f.path, local: strings.HasPrefix(f.repo, "file://")}, nil
	}
	dir, err := filepath.Abs(f.repo)
	if err != nil {
		return syncSource{}, fmt.Errorf("--repo %s: %w", f.repo, err)
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return syncSource{}, fmt.Errorf("--repo %s: not a folder of a git repository: %w", f.repo, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return syncSource{}, fmt.Errorf("--repo %s: %w", f.repo, err)
	}
	root := wt.Filesystem.Root()
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return syncSource{}, fmt.Errorf("--repo %s: %w", f.repo, err)
	}
	p := filepath.ToSlash(filepath.Join(rel, f.path))
	if p == "." {
		p = ""
	}
	if ref == nil {
		head, err := repo.Head()
		if err != nil {
			return syncSource{}, fmt.Errorf("--repo %s: read HEAD: %w", f.repo, err)
		}
		if head.Name().IsBranch() {
			ref = &olmsyncv1alpha1.GitRef{Branch: head.Name().Short()}
		} else {
			ref = &olmsyncv1alpha1.GitRef{Commit: head.Hash().String()}
		}
	}
	return syncSource{url: "file://" + filepath.ToSlash(root), ref: ref, path: p, local: true}, nil
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// parseRef reads --ref: a full hash is a commit, refs/tags/X a tag, refs/heads/X or any
// other name a branch.
func parseRef(ref string) (*olmsyncv1alpha1.GitRef, error) {
	switch {
	case ref == "":
		return nil, nil
	case fullCommit.MatchString(ref):
		return &olmsyncv1alpha1.GitRef{Commit: ref}, nil
	case strings.HasPrefix(ref, "refs/tags/"):
		return &olmsyncv1alpha1.GitRef{Tag: strings.TrimPrefix(ref, "refs/tags/")}, nil
	}
	branch := strings.TrimPrefix(ref, "refs/heads/")
	if err := (sources.Ref{Branch: branch}).Validate(); err != nil {
		return nil, fmt.Errorf("--ref: %w", err)
	}
	return &olmsyncv1alpha1.GitRef{Branch: branch}, nil
}

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// defaultSyncName is the last element of the Sync's path, or of its repository's URL, as a
// valid object name.
func defaultSyncName(src syncSource) string {
	base := strings.TrimSuffix(filepath.Base(strings.TrimRight(src.url, "/")), ".git")
	if src.path != "" {
		base = filepath.Base(src.path)
	}
	name := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if name == "" {
		return "repository"
	}
	return name[:min(len(name), 63)]
}

// describeSource says what a Sync follows, for the line `olmsync run` prints.
func describeSource(s *olmsyncv1alpha1.Sync) string {
	out := sources.RedactURL(s.Spec.Source.URL)
	if r := s.Spec.Source.Ref; r != nil {
		out += " at " + sources.Ref{Branch: r.Branch, Tag: r.Tag, SemVer: r.SemVer, Commit: r.Commit}.String()
	}
	if s.Spec.Path != "" {
		out += ", folder " + s.Spec.Path
	}
	return out
}

// errNotCommitted is what a local folder's uncommitted changes are to a Sync: unseen.
var errNotCommitted = errors.New("uncommitted changes are not seen: a Sync follows committed revisions")

// warnUncommitted tells when the local folder has changes a Sync will not see.
func warnUncommitted(f *syncFlags) error {
	if sources.IsRemoteURL(f.repo) {
		return nil
	}
	tree, err := sources.OpenWorkTree(filepath.Join(f.repo, f.path), sources.Limits{})
	if err != nil || !tree.Dirty {
		return nil
	}
	return fmt.Errorf("%s: %w", f.repo, errNotCommitted)
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
