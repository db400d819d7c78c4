package render

import (
	"cmp"
	"fmt"
	"slices"
)

// Reason classifies a Diagnostic so callers can filter and count them.
type Reason string

// Reasons of discovery problems.
const (
	// ReasonPathMissing: an Argo CD Application's path does not exist in the repository.
	ReasonPathMissing Reason = "PathMissing"
	// ReasonHelmChart: an Application's source is a Helm chart; olmsync does not render it.
	ReasonHelmChart Reason = "HelmChart"
	// ReasonUnsupportedSource: an Application uses a config management plugin, or the
	// manifest is an ApplicationSet; olmsync does not render it.
	ReasonUnsupportedSource Reason = "UnsupportedSource"
	// ReasonInvalidApplication: an Application manifest lacks what olmsync needs (a name).
	ReasonInvalidApplication Reason = "InvalidApplication"
	// ReasonDuplicateApp: a second app with the same name in the same cluster; skipped.
	ReasonDuplicateApp Reason = "DuplicateApp"
	// ReasonIgnoredSetting: an Application setting olmsync does not apply.
	ReasonIgnoredSetting Reason = "IgnoredSetting"
	// ReasonUnreadable: a file could not be read while looking for apps.
	ReasonUnreadable Reason = "Unreadable"
)

// Reasons of build warnings.
const (
	// ReasonDeprecated: a kustomization uses a field kustomize deprecates; the message is
	// kustomize's own.
	ReasonDeprecated Reason = "Deprecated"
	// ReasonPluginSkipped: a generator needs a plugin that is off; it was left out so the
	// rest of the app still renders (and is checked), but the app is incomplete: what the
	// generator makes is missing, so check counts it a problem (exit 2) and a reconciler
	// must neither apply nor prune the app.
	ReasonPluginSkipped Reason = "PluginSkipped"
	// ReasonKustomizeOutput: kustomize printed a message while building the app.
	ReasonKustomizeOutput Reason = "KustomizeOutput"
	// ReasonNotManifest: a YAML file of the repository read as one directory app holds
	// something other than Kubernetes objects; it was not read.
	ReasonNotManifest Reason = "NotManifest"
)

// Diagnostic is one thing worth telling the user that does not stop the render: a
// discovery problem or a build warning. Each is reported once per file.
type Diagnostic struct {
	Reason Reason `json:"reason"`
	// File and Line locate it (repository-relative; Line 0 when unknown).
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Apps are the IDs of the apps concerned (every app whose build read the file).
	Apps    []string `json:"apps,omitempty"`
	Message string   `json:"message"`
	// Hint is a one-line fix, where olmsync knows one.
	Hint string `json:"hint,omitempty"`
}

func (d Diagnostic) String() string {
	loc := d.File
	if d.Line > 0 {
		loc = fmt.Sprintf("%s:%d", d.File, d.Line)
	}
	return fmt.Sprintf("%s: %s", loc, d.Message)
}

// diagnostics collects diagnostics, merging the same message about the same place.
type diagnostics struct {
	list  []Diagnostic
	index map[diagKey]int
}

type diagKey struct {
	reason  Reason
	file    string
	line    int
	message string
}

func (ds *diagnostics) add(d Diagnostic) {
	if ds.index == nil {
		ds.index = map[diagKey]int{}
	}
	k := diagKey{d.Reason, d.File, d.Line, d.Message}
	if i, ok := ds.index[k]; ok {
		for _, a := range d.Apps {
			if !slices.Contains(ds.list[i].Apps, a) {
				ds.list[i].Apps = append(ds.list[i].Apps, a)
			}
		}
		return
	}
	d.Apps = slices.Clone(d.Apps)
	ds.index[k] = len(ds.list)
	ds.list = append(ds.list, d)
}

// sorted returns the diagnostics ordered by file, line and message, each app list sorted.
func (ds *diagnostics) sorted() []Diagnostic {
	out := slices.Clone(ds.list)
	for i := range out {
		slices.Sort(out[i].Apps)
	}
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Message, b.Message))
	})
	return out
}
