package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSettleClusterScopes: which app is its cluster's cluster-scope app, in the order
// docs/policy.md gives — olmsync.yaml's own clusterScope, policy.clusterScopeApps, a
// "cluster-scope" segment in the path or name, an AppProject that allows cluster-scoped
// kinds where nothing else names one — and never a library root.
func TestSettleClusterScopes(t *testing.T) {
	projects := map[string]appProject{
		"admin": {name: "admin", file: "argocd/projects.yaml", line: 1, clusterKinds: []string{"/Namespace", "operators.coreos.com/OperatorGroup"}},
		"teams": {name: "teams", file: "argocd/projects.yaml", line: 9},
	}
	app := func(name, path, cluster, project string) App {
		return App{Name: name, Path: path, Cluster: cluster, project: project}
	}
	tests := []struct {
		name     string
		globs    []string
		apps     []App
		explicit map[int]bool
		want     []bool
	}{
		{
			name: "a cluster-scope segment in the path or the name",
			apps: []App{app("a", "cluster-scope/overlays/cl1", "cl1", ""), app("cluster-scope-cl2", "platform/cl2", "cl2", ""), app("team", "team", "cl1", "")},
			want: []bool{true, true, false},
		},
		{
			name: "cluster-scoped is not cluster-scope",
			apps: []App{app("aap", "aap/operator/overlays/stable-2.6-cluster-scoped", "cl1", "")},
			want: []bool{false},
		},
		{
			name: "an AppProject that allows cluster-scoped kinds, where no app is named cluster-scope",
			apps: []App{app("platform", "platform", "cl1", "admin"), app("team", "team", "cl1", "teams"), app("other", "other", "cl1", "missing")},
			want: []bool{true, false, false},
		},
		{
			name: "the AppProject does not override a cluster's named cluster-scope app",
			apps: []App{app("cs", "cluster-scope/cl1", "cl1", "teams"), app("platform", "platform", "cl1", "admin"), app("platform", "platform", "cl2", "admin")},
			want: []bool{true, false, true},
		},
		{
			name:  "policy.clusterScopeApps: the apps a glob matches by name or path, and no other",
			globs: []string{"platform-*", "clusters/**/system"},
			apps:  []App{app("platform-cl1", "x", "cl1", ""), app("y", "clusters/prod/eu/system", "cl2", ""), app("cs", "cluster-scope/cl1", "cl1", "admin")},
			want:  []bool{true, true, false},
		},
		{
			name:     "an app olmsync.yaml sets clusterScope for keeps it",
			globs:    []string{"*"},
			apps:     []App{{Name: "a", Path: "a", ClusterScope: false, ClusterScopeReason: "olmsync.yaml sets clusterScope: false"}, {Name: "b", Path: "b"}},
			explicit: map[int]bool{0: true},
			want:     []bool{false, true},
		},
		{
			name: "a library root is never the cluster-scope app",
			apps: []App{{Name: "cluster-scope", Path: "cluster-scope", Library: true}},
			want: []bool{false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Policy.ClusterScopeApps = tt.globs
			settleClusterScopes(tt.apps, cfg, tt.explicit, projects)
			var got []bool
			for _, a := range tt.apps {
				got = append(got, a.ClusterScope)
				if a.ClusterScopeReason == "" {
					t.Errorf("app %s: no reason given", a.Name)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cluster-scope (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClusterScopeAppsConfig: a pattern of policy.clusterScopeApps that is not one is
// refused with its line.
func TestClusterScopeAppsConfig(t *testing.T) {
	_, err := ParseConfig("olmsync.yaml", []byte("policy:\n  clusterScopeApps:\n  - ok-*\n  - '[oops'\n"))
	if err == nil || err.Error() != `olmsync.yaml:4: policy.clusterScopeApps[1] "[oops": not a valid pattern ("*" within a folder name, "**" across folders, [abc], {a,b})` {
		t.Errorf("err = %v", err)
	}
	_, err = ParseConfig("olmsync.yaml", []byte("discovery:\n  uncoveredRoots: maybe\n"))
	if err == nil || err.Error() != `olmsync.yaml:2: discovery.uncoveredRoots "maybe": want library or apps` {
		t.Errorf("err = %v", err)
	}
}
