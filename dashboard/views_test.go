package dashboard

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

func TestForgeLink(t *testing.T) {
	const c = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		url, file string
		line      int
		want      string
	}{
		{"https://github.com/acme/clusters.git", "apps/team/sub.yaml", 12, "https://github.com/acme/clusters/blob/" + c + "/apps/team/sub.yaml#L12"},
		{"git@github.com:acme/clusters.git", "a.yaml", 1, "https://github.com/acme/clusters/blob/" + c + "/a.yaml#L1"},
		{"ssh://git@github.com/acme/clusters", "a b.yaml", 0, "https://github.com/acme/clusters/blob/" + c + "/a%20b.yaml"},
		{"https://github.example.com/acme/clusters", "a.yaml", 3, "https://github.example.com/acme/clusters/blob/" + c + "/a.yaml#L3"},
		{"https://gitlab.com/group/sub/clusters.git", "a.yaml", 4, "https://gitlab.com/group/sub/clusters/-/blob/" + c + "/a.yaml#L4"},
		{"git@gitlab.internal:ops/clusters.git", "a.yaml", 5, "https://gitlab.internal/ops/clusters/-/blob/" + c + "/a.yaml#L5"},
		{"https://bitbucket.org/acme/clusters.git", "a.yaml", 1, ""},
		{"http://127.0.0.1:8080/project.git", "a.yaml", 1, ""},
		{"file:///repos/clusters", "a.yaml", 1, ""},
		{"https://github.com/acme/clusters", "", 1, ""},
		{"https://github.com/", "a.yaml", 1, ""},
	}
	for _, tc := range tests {
		if got := ForgeLink(tc.url, c, tc.file, tc.line); got != tc.want {
			t.Errorf("ForgeLink(%q, %q, %d) = %q, want %q", tc.url, tc.file, tc.line, got, tc.want)
		}
	}
	if got := ForgeLink("https://github.com/acme/clusters", "", "a.yaml", 1); got != "" {
		t.Errorf("without a commit: %q, want none", got)
	}
}

func TestUpgradePath(t *testing.T) {
	// v4 (head) skips v3 and replaces v2; v3 replaces v2; v2 replaces v1; v2b covers v1
	// by skipRange but is further from the head than v2.
	g := catalog.ChannelGraph{
		Order: []string{"v4", "v3", "v2", "v2b", "v1"},
		Edges: []catalog.GraphEdge{
			{From: "v4", To: "v2", Kind: catalog.EdgeReplaces}, {From: "v4", To: "v3", Kind: catalog.EdgeSkips},
			{From: "v3", To: "v2", Kind: catalog.EdgeReplaces}, {From: "v2", To: "v1", Kind: catalog.EdgeReplaces},
			{From: "v2b", To: "v1", Kind: catalog.EdgeSkipRange},
		},
	}
	tests := []struct {
		installed string
		want      []string
	}{
		{"v1", []string{"v2", "v4"}},
		{"v3", []string{"v4"}},
		{"v4", nil},
		{"v0", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, upgradePath(g, tc.installed)); diff != "" {
			t.Errorf("from %s (-want +got)\n%s", tc.installed, diff)
		}
	}
	loop := catalog.ChannelGraph{Order: []string{"a", "b"}, Edges: []catalog.GraphEdge{{From: "a", To: "b"}, {From: "b", To: "a"}}}
	if got := upgradePath(loop, "a"); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("a loop: %v, want [b] and a stop", got)
	}
}

func syncOf(name string, apps ...olmsyncv1alpha1.AppStatus) *olmsyncv1alpha1.Sync {
	return &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name},
		Spec:   olmsyncv1alpha1.SyncSpec{Cluster: "prod", Source: olmsyncv1alpha1.GitSource{URL: "https://github.com/acme/" + name}},
		Status: olmsyncv1alpha1.SyncStatus{Apps: apps}}
}

func app(name, syncStatus, health string) olmsyncv1alpha1.AppStatus {
	return olmsyncv1alpha1.AppStatus{Name: name, Sync: olmsyncv1alpha1.SyncStatusCode(syncStatus), Health: olmsyncv1alpha1.HealthStatusCode(health)}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name             string
		obj              *olmsyncv1alpha1.Sync
		wantSync, health string
	}{
		{"no apps yet", syncOf("a"), "Unknown", "Unknown"},
		{"all good", syncOf("a", app("x", "Synced", "Healthy"), app("y", "Synced", "Healthy")), "Synced", "Healthy"},
		{"the worst app", syncOf("a", app("x", "Synced", "Progressing"), app("y", "OutOfSync", "Degraded"), app("z", "Unknown", "WaitingForApproval")), "OutOfSync", "Degraded"},
		{"unknown beats synced", syncOf("a", app("x", "Synced", "Healthy"), app("y", "Unknown", "Unknown")), "Unknown", "Unknown"},
	}
	for _, tc := range tests {
		s := summarize(tc.obj, nil)
		if s.Sync != tc.wantSync || s.Health != tc.health {
			t.Errorf("%s: sync %s health %s, want %s %s", tc.name, s.Sync, s.Health, tc.wantSync, tc.health)
		}
	}
	suspended := syncOf("a", app("x", "Synced", "Healthy"))
	suspended.Spec.Suspend = true
	if s := summarize(suspended, nil); s.Health != "Suspended" || !s.Suspended {
		t.Errorf("a suspended Sync: %+v", s)
	}
	// A Sync made before the CRD refused credentials in the URL, or with a query value the
	// CRD does not take for one: the dashboard, readable without a token, shows neither.
	for raw, want := range map[string]string{
		"https://gitlab.example.com/acme/c.git?private_token=S3CRET": "https://gitlab.example.com/acme/c.git?***",
		"https://oauth2:S3CRET@gitlab.example.com/acme/c.git":        "https://gitlab.example.com/acme/c.git",
	} {
		leaky := syncOf("a")
		leaky.Spec.Source.URL = raw
		if s := summarize(leaky, nil); s.URL != want {
			t.Errorf("URL %q shown as %q, want %q", raw, s.URL, want)
		}
	}
}

func TestFilter(t *testing.T) {
	all := []SyncSummary{
		summarize(syncOf("platform", app("cluster-scope", "Synced", "Healthy"), app("team", "Synced", "Degraded")), []string{"etcd"}),
		summarize(syncOf("apps", app("web", "OutOfSync", "Healthy")), nil),
		summarize(syncOf("empty"), nil),
	}
	names := func(list []SyncSummary) map[string][]string {
		out := map[string][]string{}
		for _, s := range list {
			out[s.Name] = []string{}
			for _, a := range s.Apps {
				out[s.Name] = append(out[s.Name], a.Name)
			}
		}
		return out
	}
	tests := []struct {
		query string
		want  map[string][]string
	}{
		{"", map[string][]string{"platform": {"cluster-scope", "team"}, "apps": {"web"}, "empty": {}}},
		{"health=Degraded", map[string][]string{"platform": {"team"}}},
		{"sync=OutOfSync", map[string][]string{"apps": {"web"}}},
		{"sync=Unknown", map[string][]string{"empty": {}}},
		{"package=etcd", map[string][]string{"platform": {"cluster-scope", "team"}}},
		{"search=WEB", map[string][]string{"apps": {"web"}}},
		{"search=acme/platform", map[string][]string{"platform": {"cluster-scope", "team"}}},
		{"cluster=prod&namespace=ops&health=Healthy", map[string][]string{"platform": {"cluster-scope"}, "apps": {"web"}}},
		{"cluster=dev", map[string][]string{}},
	}
	for _, tc := range tests {
		q, _ := url.ParseQuery(tc.query)
		f, err := filterFrom(q)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if diff := cmp.Diff(tc.want, names(f.apply(all))); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tc.query, diff)
		}
	}
	for _, bad := range []string{"health=Fine", "sync=Maybe", "search=" + string(make([]byte, 300))} {
		q, _ := url.ParseQuery(bad)
		if _, err := filterFrom(q); statusOf(err) != http.StatusBadRequest {
			t.Errorf("%.20s: %v, want a bad request", bad, err)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"header, nothing else (curl)", map[string]string{WriteHeader: "1"}, true},
		{"same origin", map[string]string{WriteHeader: "1", "Origin": "http://dash.example:9400", "Sec-Fetch-Site": "same-origin"}, true},
		{"no header", map[string]string{"Origin": "http://dash.example:9400"}, false},
		{"other origin", map[string]string{WriteHeader: "1", "Origin": "http://evil.example"}, false},
		{"same host, other port", map[string]string{WriteHeader: "1", "Origin": "http://dash.example:9401"}, false},
		{"same-site is not same-origin", map[string]string{WriteHeader: "1", "Sec-Fetch-Site": "same-site"}, false},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest(http.MethodPost, "http://dash.example:9400/api/v1/x", nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		if err := sameOrigin(r); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
