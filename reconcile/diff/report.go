package diff

import (
	"fmt"
	"io"
	"strings"
)

// Report is what a reconcile of a Sync would do now.
type Report struct {
	// Sync is the Sync's namespace/name.
	Sync string `json:"sync"`
	// Revision is the revision fetched; LastAppliedRevision the Sync's
	// status.lastAppliedRevision.
	Revision            string `json:"revision"`
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`
	PolicyMode          string `json:"policyMode"`
	Prune               bool   `json:"prune"`
	// Suspended: spec.suspend is set, so nothing happens until the Sync is resumed; the
	// report is what its first reconcile would then do.
	Suspended bool     `json:"suspended,omitempty"`
	Objects   []Object `json:"objects"`
	// Summary counts the objects by action.
	Summary map[Action]int `json:"summary"`
	// Differs is true when an object's action Differs.
	Differs bool `json:"differs"`
}

// NewReport fills in the summary of objs.
func NewReport(objs []Object) *Report {
	r := &Report{Objects: objs, Summary: map[Action]int{}}
	if r.Objects == nil {
		r.Objects = []Object{}
	}
	for _, o := range objs {
		r.Summary[o.Action]++
		r.Differs = r.Differs || o.Action.Differs()
	}
	return r
}

// WriteText writes the report for people: a line per object, a changed object's diff
// under it, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	prune := "off"
	if r.Prune {
		prune = "on"
	}
	fmt.Fprintf(&b, "Sync %s at %s (last applied: %s), policy %s, prune %s\n",
		r.Sync, r.Revision, orNone(r.LastAppliedRevision), r.PolicyMode, prune)
	if r.Suspended {
		b.WriteString("The Sync is suspended: nothing is applied until it is resumed. Its first reconcile then would do this:\n")
	}
	for i := range r.Objects {
		writeObject(&b, &r.Objects[i])
	}
	b.WriteString("\n" + r.summaryLine() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeObject(b *strings.Builder, o *Object) {
	fmt.Fprintf(b, "%-10s %s", o.Action, o)
	if o.App != "" {
		fmt.Fprintf(b, " (app %s)", o.App)
	}
	switch {
	case len(o.Fields) > 0:
		fmt.Fprintf(b, ": %s", strings.Join(o.Fields, ", "))
	case o.Message != "":
		fmt.Fprintf(b, ": %s", o.Message)
	}
	b.WriteString("\n")
	for _, v := range o.Violations {
		where := ""
		if v.File != "" {
			where = " (" + v.File
			if v.Line > 0 {
				where += fmt.Sprintf(":%d", v.Line)
			}
			where += ")"
		}
		fmt.Fprintf(b, "    %s%s: %s\n", v.Rule, where, v.Message)
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(o.Diff, "\n"), "\n") {
		if line != "" {
			fmt.Fprintf(b, "    %s\n", line)
		}
	}
}

// summaryLine counts the objects by action, and says whether anything differs.
func (r *Report) summaryLine() string {
	var counts []string
	for _, a := range Actions {
		if n := r.Summary[a]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, a))
		}
	}
	if len(counts) == 0 {
		counts = append(counts, "no objects")
	}
	verdict := "no differences"
	if r.Differs {
		verdict = "the cluster differs from the revision"
	}
	return strings.Join(counts, ", ") + ": " + verdict
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
