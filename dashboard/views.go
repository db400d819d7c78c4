package dashboard

import (
	"cmp"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/sources"
)

// SyncSummary is one tile of the list: a Sync, and its apps.
type SyncSummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster is spec.cluster; URL, Ref and Path say what the Sync follows.
	Cluster string `json:"cluster,omitempty"`
	URL     string `json:"url"`
	Ref     string `json:"ref,omitempty"`
	Path    string `json:"path,omitempty"`
	// Sync and Health are the worst of the apps' (Unknown with no apps).
	Sync      string `json:"sync"`
	Health    string `json:"health"`
	Suspended bool   `json:"suspended,omitempty"`
	// Ready is the Ready condition: status, reason and message.
	Ready        string `json:"ready"`
	ReadyReason  string `json:"readyReason,omitempty"`
	ReadyMessage string `json:"readyMessage,omitempty"`
	// Revision is status.lastAppliedRevision, Commit its commit.
	Revision string                          `json:"revision,omitempty"`
	Commit   *olmsyncv1alpha1.CommitMetadata `json:"commit,omitempty"`
	// LastSync and LastSyncDuration are the newest status.history entry's.
	LastSync         *time.Time `json:"lastSync,omitempty"`
	LastSyncDuration string     `json:"lastSyncDuration,omitempty"`
	LastSyncResult   string     `json:"lastSyncResult,omitempty"`
	Violations       int        `json:"violations"`
	// Packages are the operator packages of the Sync's Subscriptions, as far as the
	// inventory and the cache tell.
	Packages []string     `json:"packages,omitempty"`
	Apps     []AppSummary `json:"apps"`
}

// AppSummary is one app of a Sync.
type AppSummary struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	Path       string `json:"path,omitempty"`
	Sync       string `json:"sync"`
	Health     string `json:"health"`
	Message    string `json:"message,omitempty"`
	Objects    int    `json:"objects"`
	Violations int    `json:"violations"`
}

// healthOrder orders healths from worst to best, for a Sync's health and sorting.
var healthOrder = []olmsyncv1alpha1.HealthStatusCode{
	olmsyncv1alpha1.HealthDegraded, olmsyncv1alpha1.HealthMissing, olmsyncv1alpha1.HealthUnknown,
	olmsyncv1alpha1.HealthWaitingForApproval, olmsyncv1alpha1.HealthProgressing, olmsyncv1alpha1.HealthSuspended,
	olmsyncv1alpha1.HealthHealthy,
}

func healthRank(h string) int {
	i := slices.Index(healthOrder, olmsyncv1alpha1.HealthStatusCode(h))
	if i < 0 {
		return 2 // as Unknown
	}
	return i
}

// summarize is the list's view of a Sync: its status as the reconciler wrote it, nothing
// recomputed. packages are the operator packages of its Subscriptions.
func summarize(obj *olmsyncv1alpha1.Sync, packages []string) SyncSummary {
	s := SyncSummary{
		// The URL as messages show it: a Sync may hold a credential in it (one made before
		// the CRD refused them, or a query value under a name the CRD does not know).
		Namespace: obj.Namespace, Name: obj.Name, Cluster: obj.Spec.Cluster, URL: sources.RedactURL(obj.Spec.Source.URL),
		Ref: refString(obj.Spec.Source.Ref), Path: obj.Spec.Path, Suspended: obj.Spec.Suspend,
		Revision: obj.Status.LastAppliedRevision, Commit: obj.Status.LastAppliedCommit,
		Violations: obj.Status.ViolationCount, Packages: packages, Apps: []AppSummary{},
		Sync: string(olmsyncv1alpha1.SyncStatusUnknown), Health: string(olmsyncv1alpha1.HealthUnknown),
		Ready: "Unknown",
	}
	if c := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition); c != nil {
		s.Ready, s.ReadyReason, s.ReadyMessage = string(c.Status), c.Reason, c.Message
	}
	if h := obj.Status.History; len(h) > 0 {
		t := h[0].LastReconciled.Time
		s.LastSync, s.LastSyncDuration, s.LastSyncResult = &t, h[0].LastReconciledDuration.Duration.String(), h[0].LastReconciledStatus
	}
	violations := map[string]int{}
	for _, v := range obj.Status.Violations {
		violations[v.App]++
	}
	if len(obj.Status.Apps) > 0 {
		s.Sync, s.Health = string(olmsyncv1alpha1.SyncStatusSynced), string(olmsyncv1alpha1.HealthHealthy)
	}
	for _, a := range obj.Status.Apps {
		s.Apps = append(s.Apps, AppSummary{Name: a.Name, Namespace: a.Namespace, Path: a.Path, Sync: string(a.Sync),
			Health: string(a.Health), Message: a.Message, Objects: a.Objects, Violations: violations[a.Name]})
		if healthRank(string(a.Health)) < healthRank(s.Health) {
			s.Health = string(a.Health)
		}
		switch {
		case a.Sync == olmsyncv1alpha1.SyncStatusOutOfSync:
			s.Sync = string(a.Sync)
		case a.Sync == olmsyncv1alpha1.SyncStatusUnknown && s.Sync == string(olmsyncv1alpha1.SyncStatusSynced):
			s.Sync = string(a.Sync)
		}
	}
	if obj.Spec.Suspend {
		s.Health = string(olmsyncv1alpha1.HealthSuspended)
	}
	return s
}

func refString(r *olmsyncv1alpha1.GitRef) string {
	switch {
	case r == nil:
		return ""
	case r.Commit != "" && r.Branch != "":
		return r.Branch + "@" + r.Commit
	}
	return cmp.Or(r.Commit, r.Tag, r.SemVer, r.Branch)
}

// Filter is what the list shows: each field, when set, must match (exactly for cluster,
// namespace, sync, health and package; Search anywhere in the names, URL, revision and
// commit subject, case-insensitively). A Sync matches when it or one of its apps does;
// only the matching apps are listed then.
type Filter struct {
	Cluster, Namespace, Sync, Health, Package, Search string
}

// maxFilterLength bounds each filter value: longer ones are bad input.
const maxFilterLength = 256

// filterFrom reads a Filter from a query; an unknown sync or health value is an error
// naming the parameter.
func filterFrom(q url.Values) (Filter, error) {
	f := Filter{Cluster: q.Get("cluster"), Namespace: q.Get("namespace"), Sync: q.Get("sync"),
		Health: q.Get("health"), Package: q.Get("package"), Search: q.Get("search")}
	for k, v := range map[string]string{"cluster": f.Cluster, "namespace": f.Namespace, "sync": f.Sync, "health": f.Health, "package": f.Package, "search": f.Search} {
		if len(v) > maxFilterLength {
			return f, badRequest("query parameter %s: longer than %d bytes", k, maxFilterLength)
		}
	}
	if f.Sync != "" && !slices.Contains([]string{"Synced", "OutOfSync", "Unknown"}, f.Sync) {
		return f, badRequest("query parameter sync: %q is none of Synced, OutOfSync, Unknown", f.Sync)
	}
	if f.Health != "" && !slices.Contains(healthOrder, olmsyncv1alpha1.HealthStatusCode(f.Health)) {
		return f, badRequest("query parameter health: %q is none of Healthy, Progressing, Degraded, Suspended, Missing, Unknown, WaitingForApproval", f.Health)
	}
	return f, nil
}

// apply keeps the Syncs f matches, with only their matching apps when f is about apps.
func (f Filter) apply(all []SyncSummary) []SyncSummary {
	out := []SyncSummary{}
	search := strings.ToLower(f.Search)
	for _, s := range all {
		if (f.Cluster != "" && s.Cluster != f.Cluster) || (f.Namespace != "" && s.Namespace != f.Namespace) ||
			(f.Package != "" && !slices.Contains(s.Packages, f.Package)) {
			continue
		}
		syncText := strings.ToLower(strings.Join([]string{s.Namespace, s.Name, s.URL, s.Revision, commitSubject(s.Commit)}, " "))
		var apps []AppSummary
		for _, a := range s.Apps {
			if (f.Sync == "" || a.Sync == f.Sync) && (f.Health == "" || a.Health == f.Health) &&
				(search == "" || strings.Contains(syncText, search) || strings.Contains(strings.ToLower(a.Name+" "+a.Namespace), search)) {
				apps = append(apps, a)
			}
		}
		syncMatches := (f.Sync == "" || s.Sync == f.Sync) && (f.Health == "" || s.Health == f.Health) &&
			(search == "" || strings.Contains(syncText, search))
		// A Sync is listed for its matching apps; one without apps for itself.
		if len(apps) == 0 && (!syncMatches || len(s.Apps) > 0) {
			continue
		}
		if apps == nil {
			apps = []AppSummary{}
		}
		s.Apps = apps
		out = append(out, s)
	}
	return out
}

func commitSubject(c *olmsyncv1alpha1.CommitMetadata) string {
	if c == nil {
		return ""
	}
	return c.Subject
}

// Violation is a status violation with a link to its file and line at the fetched
// revision, when the repository is on a forge the link can be made for.
type Violation struct {
	olmsyncv1alpha1.PolicyViolation `json:",inline"`
	// Path is the file's path in the repository (spec.path joined with the file).
	Path string `json:"path,omitempty"`
	Link string `json:"link,omitempty"`
}

// violations are obj's status.violations with their links.
func violations(obj *olmsyncv1alpha1.Sync) []Violation {
	commit := commitOf(obj.Status.LastFetchedRevision)
	out := make([]Violation, 0, len(obj.Status.Violations))
	for _, v := range obj.Status.Violations {
		out = append(out, Violation{PolicyViolation: v, Path: repoPath(obj.Spec.Path, v.File),
			Link: ForgeLink(obj.Spec.Source.URL, commit, repoPath(obj.Spec.Path, v.File), v.Line)})
	}
	return out
}

func repoPath(dir, file string) string {
	if file == "" {
		return ""
	}
	return strings.TrimPrefix(path.Join("/", dir, file), "/")
}

// commitOf is the commit hash of a Flux-style revision ("main@sha1:<hex>").
func commitOf(revision string) string {
	_, hash, ok := strings.Cut(revision, "sha1:")
	if !ok {
		_, hash, _ = strings.Cut(revision, "sha256:")
	}
	return hash
}

var scpLike = regexp.MustCompile(`^[^@/:\s]+@([^:/\s]+):(.+)$`)

// ForgeLink links a file and line at a commit on GitHub or GitLab ("github.com",
// "gitlab.com", or a host whose first label is "github" or "gitlab": GitHub Enterprise,
// self-managed GitLab); "" for any other host, or without a commit or file.
func ForgeLink(repoURL, commit, file string, line int) string {
	if commit == "" || file == "" {
		return ""
	}
	host, repo := "", ""
	if m := scpLike.FindStringSubmatch(repoURL); m != nil {
		host, repo = m[1], m[2]
	} else if u, err := url.Parse(repoURL); err == nil && (u.Scheme == "https" || u.Scheme == "http" || u.Scheme == "ssh") {
		host, repo = u.Hostname(), u.Path
	}
	repo = strings.TrimSuffix(strings.Trim(repo, "/"), ".git")
	if host == "" || repo == "" || strings.Contains(repo, "..") {
		return ""
	}
	first, _, _ := strings.Cut(host, ".")
	var blob string
	switch {
	case host == "github.com" || first == "github":
		blob = "/blob/"
	case host == "gitlab.com" || first == "gitlab":
		blob = "/-/blob/"
	default:
		return ""
	}
	link := "https://" + host + "/" + repo + blob + commit + "/" + (&url.URL{Path: file}).EscapedPath()
	if line > 0 {
		link += "#L" + strconv.Itoa(line)
	}
	return link
}

// UpgradeGraph is a Subscription's channel drawn from its catalog: the graph, and where
// the Subscription is on it.
type UpgradeGraph struct {
	Package   string `json:"package"`
	Channel   string `json:"channel"`
	Catalog   string `json:"catalog"`
	Installed string `json:"installed,omitempty"`
	// Next is the entry OLM upgrades the installed one to (the nearest the head of those
	// that replace, skip or skipRange it); Path the steps from Installed to the head.
	Next  string               `json:"next,omitempty"`
	Head  string               `json:"head,omitempty"`
	Path  []string             `json:"path,omitempty"`
	Graph catalog.ChannelGraph `json:"graph"`
}

// upgradePath walks a channel from installed towards its head: at each step the entry
// nearest the head (first in the resolver's order) of those with an edge to the current
// one. It stops at the head, at an entry nothing upgrades from, or at a loop.
func upgradePath(g catalog.ChannelGraph, installed string) []string {
	rank := map[string]int{}
	for i, n := range g.Order {
		rank[n] = i
	}
	var path []string
	seen := map[string]bool{installed: true}
	for cur := installed; ; {
		next := ""
		for _, e := range g.Edges {
			if e.To != cur || seen[e.From] {
				continue
			}
			if r, ok := rank[e.From]; ok && (next == "" || r < rank[next]) {
				next = e.From
			}
		}
		if next == "" {
			return path
		}
		path = append(path, next)
		seen[next] = true
		cur = next
	}
}
