package render

import "testing"

func TestClusterPathMatch(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         string
		ok           bool
	}{
		{"**/overlays/**/{cluster}", "team-a/overlays/alpha", "alpha", true},
		{"**/overlays/**/{cluster}", "cluster-scope/overlays/prod/us-east-1/alpha", "alpha", true},
		{"**/overlays/**/{cluster}", "overlays/b", "b", true},
		{"**/overlays/**/{cluster}", "team-a/base", "", false},
		{"**/overlays/**/{cluster}", "overlays", "", false},
		{"**/clusters/{cluster}/**", "clusters/production/infra", "production", true},
		{"**/clusters/{cluster}/**", "clusters/production", "production", true},
		{"**/clusters/{cluster}/**", "fleet/clusters/staging/apps/x", "staging", true},
		{"**/clusters/{cluster}/**", "apps/x", "", false},
		{"envs/*/{cluster}", "envs/prod/cl1", "cl1", true},
		{"envs/*/{cluster}", "envs/cl1", "", false},
		{"envs/*/{cluster}", "x/envs/prod/cl1", "", false},
		{"{cluster}", "cl1", "cl1", true},
		{"{cluster}", ".", "", false},
	}
	for _, tt := range tests {
		c, err := parseClusterPath(tt.pattern)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.pattern, err)
		}
		got, ok := c.match(tt.dir)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q.match(%q) = %q, %t; want %q, %t", tt.pattern, tt.dir, got, ok, tt.want, tt.ok)
		}
	}
}

func TestClusterFromPathFirstWins(t *testing.T) {
	conv := parseClusterPaths([]string{"**/clusters/{cluster}/**", "**/overlays/**/{cluster}"})
	if got, pattern := clusterFromPath(conv, "clusters/prod/overlays/x"); got != "prod" || pattern != "**/clusters/{cluster}/**" {
		t.Errorf("clusterFromPath = %q by %q, want prod by the first pattern", got, pattern)
	}
	if got, _ := clusterFromPath(conv, "apps/x"); got != "" {
		t.Errorf("clusterFromPath(apps/x) = %q, want none", got)
	}
}
