package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// AppRef is one app that renders a violation's object, with its cluster.
type AppRef struct {
	App     string `json:"app"`
	Cluster string `json:"cluster,omitempty"`
}

func (a AppRef) String() string {
	if a.Cluster == "" {
		return a.App
	}
	return a.Cluster + "/" + a.App
}

func compareAppRefs(a, b AppRef) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.App, b.App))
}

// MergeFindings reports each finding once per source object: the violations of one rule
// on one object of one file and line (with the same severity, waiver and status) found in
// several apps — a base several overlays include, a folder several clusters deploy —
// become one violation listing every app and cluster in Apps, the first of them in App
// and Cluster, and the first message in app order. The result is in no particular order;
// Complete sorts it. Merging merged violations changes nothing.
func MergeFindings(vs []Violation) []Violation {
	type key struct {
		rule     string
		severity Severity
		file     string
		line     int
		object   string
		waived   bool
		status   Status
	}
	keyOf := func(v Violation) key {
		return key{v.Rule, v.Severity, v.File, v.Line, v.Object.identity(), v.Waived, v.Status}
	}
	index := map[key]int{}
	var out []Violation
	for _, v := range vs {
		apps := v.AppRefs()
		k := keyOf(v)
		i, seen := index[k]
		if !seen {
			index[k] = len(out)
			v.Apps = apps
			out = append(out, v)
			continue
		}
		m := &out[i]
		for _, a := range apps {
			if !slices.Contains(m.Apps, a) {
				m.Apps = append(m.Apps, a)
			}
		}
		if compareAppRefs(apps[0], m.Apps[0]) < 0 {
			m.Message = v.Message // the message of the first app, in app order
		}
	}
	for i := range out {
		v := &out[i]
		slices.SortFunc(v.Apps, compareAppRefs)
		v.App, v.Cluster = v.Apps[0].App, v.Apps[0].Cluster
		if len(v.Apps) == 1 {
			v.Apps = nil
		}
	}
	return out
}

// AppRefs are the apps that render the violation's object: Apps, or its one App.
func (v Violation) AppRefs() []AppRef {
	if len(v.Apps) > 0 {
		return slices.Clone(v.Apps)
	}
	return []AppRef{{App: v.App, Cluster: v.Cluster}}
}

// AppsLabel names the apps a problem fails, as Violation.AppsLabel does.
func (p Problem) AppsLabel() string {
	if len(p.Apps) > 1 {
		refs := make([]AppRef, len(p.Apps))
		for i, a := range p.Apps {
			refs[i] = AppRef{App: a}
		}
		return Violation{Apps: refs}.AppsLabel()
	}
	return p.App
}

// maxAppsNamed is how many apps a one-line label names before it counts the rest.
const maxAppsNamed = 3

// AppsLabel names the apps of a violation in a line: "etcd", "a, b and c", or
// "a, b, c and 4 more apps".
func (v Violation) AppsLabel() string {
	refs := v.AppRefs()
	names := make([]string, 0, len(refs))
	for _, a := range refs {
		if a.App != "" {
			names = append(names, a.App)
		}
	}
	switch n := len(names); {
	case n == 0:
		return ""
	case n == 1:
		return names[0]
	case n <= maxAppsNamed:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	default:
		return fmt.Sprintf("%s and %d more apps", strings.Join(names[:maxAppsNamed], ", "), n-maxAppsNamed)
	}
}
