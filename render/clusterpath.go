package render

import (
	"errors"
	"strings"
)

// clusterPath is one path convention naming the cluster of a folder
// (DiscoveryConfig.ClusterPaths): its pattern split into folder names.
type clusterPath struct {
	pattern  string
	segments []string
}

// The special segments of a cluster path pattern.
const (
	clusterSegment = "{cluster}"
	anyOne         = "*"
	anyMany        = "**"
)

// parseClusterPath reads a pattern: folder names separated by "/", exactly one of them
// "{cluster}", "*" for any one folder and "**" for any number of folders.
func parseClusterPath(pattern string) (clusterPath, error) {
	if pattern == "" || strings.HasPrefix(pattern, "/") {
		return clusterPath{}, errors.New(`a pattern is folder names separated by "/", relative to the repository root`)
	}
	segs := strings.Split(strings.TrimSuffix(pattern, "/"), "/")
	n := 0
	for _, s := range segs {
		switch {
		case s == clusterSegment:
			n++
		case s == "":
			return clusterPath{}, errors.New("an empty folder name (two \"/\" in a row)")
		case strings.ContainsAny(s, "{}") || (strings.Contains(s, "*") && s != anyOne && s != anyMany):
			return clusterPath{}, errors.New(`a folder name is a name, "*", "**" or "{cluster}"`)
		}
	}
	if n != 1 {
		return clusterPath{}, errors.New(`a pattern names the cluster exactly once, with "{cluster}"`)
	}
	return clusterPath{pattern: pattern, segments: segs}, nil
}

// match returns the cluster a repository-relative folder path names, if the pattern
// matches the whole path. Where "**" could take more or fewer folders, the match that
// puts "{cluster}" furthest right wins: "**/overlays/**/{cluster}" names "cl1" in
// overlays/prod/eu/cl1.
func (c clusterPath) match(dir string) (string, bool) {
	if dir == "." || dir == "" {
		return "", false
	}
	return matchSegments(c.segments, strings.Split(dir, "/"))
}

func matchSegments(pat, segs []string) (string, bool) {
	if len(pat) == 0 {
		return "", len(segs) == 0
	}
	switch p := pat[0]; p {
	case anyMany:
		// Try the longest run first, so a later {cluster} lands as far right as it can.
		for take := len(segs); take >= 0; take-- {
			if cluster, ok := matchSegments(pat[1:], segs[take:]); ok {
				return cluster, true
			}
		}
		return "", false
	default:
		if len(segs) == 0 {
			return "", false
		}
		rest, ok := matchSegments(pat[1:], segs[1:])
		switch {
		case !ok:
			return "", false
		case p == clusterSegment:
			return segs[0], true
		case p == anyOne || p == segs[0]:
			return rest, true
		}
		return "", false
	}
}

// clusterFromPath is the cluster the first matching convention names.
func clusterFromPath(conventions []clusterPath, dir string) (cluster, pattern string) {
	for _, c := range conventions {
		if name, ok := c.match(dir); ok {
			return name, c.pattern
		}
	}
	return "", ""
}

// parseClusterPaths parses validated patterns (Config.validate checked them).
func parseClusterPaths(patterns []string) []clusterPath {
	out := make([]clusterPath, 0, len(patterns))
	for _, p := range patterns {
		if c, err := parseClusterPath(p); err == nil {
			out = append(out, c)
		}
	}
	return out
}
