package report

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
)

// writeGitHub writes GitHub Actions workflow commands: one annotation per finding, shown
// on the file and line in the pull request. GitHub shows only the first ten annotations
// of each level per step, so they come most important first: problems, then errors (new
// before pre-existing), then warnings, then notices (OLM changes, waived violations).
func writeGitHub(w io.Writer, r *Report) error {
	e := &errWriter{w: w}
	for _, p := range r.Problems {
		level := "error"
		title := "olmsync: input could not be read or rendered"
		if p.Base {
			level, title = "warning", "olmsync: base revision could not be read or rendered"
		}
		e.print(workflowCommand(level, p.File, p.Line, title, withApp(p.Message, p.App)))
	}
	for _, v := range byImportance(r.Violations) {
		e.print(workflowCommand(string(v.Severity), v.File, v.Line, ruleTitle(r, v.Rule), violationText(v)))
	}
	for _, wr := range r.Warnings {
		e.print(workflowCommand("warning", wr.File, wr.Line, "olmsync: render warning", wr.Message))
	}
	for _, c := range r.Changes {
		e.print(workflowCommand("notice", c.File, c.Line, "olmsync: OLM change", changeText(c)))
	}
	for _, v := range r.Violations {
		if v.Waived {
			e.print(workflowCommand("notice", v.File, v.Line, ruleTitle(r, v.Rule)+" (waived)", violationText(v)))
		}
	}
	e.print("olmsync: " + verdict(r) + " — " + strings.Join(summaryParts(r), ", ") + "\n")
	return e.err
}

// byImportance lists the violations that are not waived, errors before warnings and new
// before pre-existing, keeping the report's order otherwise.
func byImportance(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if !v.Waived {
			out = append(out, v)
		}
	}
	statusRank := func(s Status) int {
		if s == StatusPreExisting {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
			cmp.Compare(statusRank(a.Status), statusRank(b.Status)))
	})
	return out
}

func severityRank(s Severity) int {
	if s == SeverityError {
		return 0
	}
	return 1
}

// ruleTitle is "OP007 Subscription outside its app's namespace".
func ruleTitle(r *Report, id string) string {
	if rule, ok := r.rule(id); ok && rule.Title != id {
		return id + " " + rule.Title
	}
	return id
}

// violationText is a violation's message followed by what it concerns:
// "…\nSubscription etcd/etcd in app etcd; new".
func violationText(v Violation) string {
	var about []string
	if obj := v.Object.String(); obj != "" {
		about = append(about, obj)
	}
	if v.App != "" {
		about = append(about, "in app "+v.App)
	}
	ctx := strings.Join(about, " ")
	if v.Status != "" {
		ctx += "; " + string(v.Status)
	}
	if v.Waived {
		ctx += "; " + waiverText(v.Waiver)
	}
	if ctx == "" {
		return v.Message
	}
	return v.Message + "\n" + strings.TrimPrefix(ctx, "; ")
}

// changeText is "Subscription etcd/etcd modified in app etcd\nchannel: stable → fast".
func changeText(c Change) string {
	lines := []string{c.Object.String() + " " + string(c.Type)}
	if c.App != "" {
		lines[0] += " in app " + c.App
	}
	for _, f := range c.Fields {
		lines = append(lines, fieldText(c.Type, f))
	}
	return strings.Join(lines, "\n")
}

func withApp(message, app string) string {
	if app == "" {
		return message
	}
	return "app " + app + ": " + message
}

// workflowCommand formats one command, "::error file=a.yaml,line=3,title=T::message",
// leaving out the properties that are unknown.
func workflowCommand(level, file string, line int, title, message string) string {
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty(file))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line))
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(title))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(message) + "\n"
}

// escapeData escapes a command's message as the runner expects ('%' and the line breaks,
// in one pass so that an escape is never escaped again): a message can then neither end
// the command early nor start another one.
func escapeData(s string) string { return dataEscaper.Replace(s) }

var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// escapeProperty escapes a property value: as a message, plus ':' and ',' which would
// otherwise end the property list or the value.
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }

var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
