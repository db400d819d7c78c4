package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// GitHub shows at most this many annotations of each level (error, warning, notice) per
// step; the rest of a step's commands of that level are dropped from the pull request
// view without a word (actions/toolkit, docs/problem-matchers.md, "Limitations").
const githubAnnotationsPerLevel = 10

// annotation is one finding as a workflow command.
type annotation struct {
	level, file string
	line        int
	title, text string
}

// writeGitHub writes GitHub Actions workflow commands: one annotation per finding, shown
// on the file and line in the pull request. GitHub shows only the first ten of each level
// per step, so within each level the findings come most important first — the checked
// revision's violations (new errors before pre-existing ones), then its problems, then
// warnings, then notices — and when a level has more than ten, the tenth says how many
// more there are. Every finding past the limit is still printed, as a plain line in a
// collapsed log group, so nothing is lost.
func writeGitHub(w io.Writer, r *Report, opts Options) error {
	e := &errWriter{w: w}
	levels := map[string][]annotation{}
	add := func(a annotation) {
		a.file = prefixed(opts.PathPrefix, a.file)
		levels[a.level] = append(levels[a.level], a)
	}
	for _, v := range byImportance(r.Violations) {
		add(annotation{string(v.Severity), v.File, v.Line, ruleTitle(r, v.Rule), violationText(v)})
	}
	for _, p := range r.Problems {
		a := annotation{"error", p.File, p.Line, "olmsync: input could not be read or rendered", problemText(p)}
		switch {
		case p.Base:
			a.level, a.title = "warning", "olmsync: base revision could not be read or rendered"
		case p.Status == StatusPreExisting:
			a.level, a.title = "warning", "olmsync: input could not be read or rendered (as in the base revision)"
		}
		add(a)
	}
	for _, wr := range r.Warnings {
		add(annotation{"warning", wr.File, wr.Line, "olmsync: render warning", withHint(wr.Message, wr.Hint)})
	}
	for _, c := range r.Changes {
		add(annotation{"notice", c.File, c.Line, "olmsync: OLM change", changeText(c)})
	}
	for _, s := range r.Subscriptions {
		if lines := bringsLines(s.Brings); len(lines) > 0 {
			add(annotation{"notice", s.File, s.Line, "olmsync: what " + s.ID() + " brings (" + s.Brings.CSV + ")", strings.Join(lines, "\n")})
		}
	}
	for _, v := range r.Violations {
		if v.Waived && v.Status != StatusUnknown {
			add(annotation{"notice", v.File, v.Line, ruleTitle(r, v.Rule) + " (waived)", violationText(v)})
		}
	}
	var rest []annotation
	for _, level := range []string{"error", "warning", "notice"} {
		list := levels[level]
		if len(list) > githubAnnotationsPerLevel {
			shown := githubAnnotationsPerLevel - 1
			rest = append(rest, list[shown:]...)
			list = append(list[:shown:shown], annotation{level: level,
				title: "olmsync: " + plural(len(list)-shown, "more "+level, "more "+level+"s") + " not shown",
				text:  fmt.Sprintf("GitHub shows %d annotations of a kind per step: %d more are listed in the job log (group \"olmsync: findings not annotated\") and in the JSON report", githubAnnotationsPerLevel, len(list)-shown)})
		}
		for _, a := range list {
			e.print(workflowCommand(a.level, a.file, a.line, a.title, a.text))
		}
	}
	if len(rest) > 0 {
		e.print("::group::olmsync: findings not annotated\n")
		for _, a := range rest {
			e.print(logLine(a))
		}
		e.print("::endgroup::\n")
	}
	if lib := libraryLine(r); lib != "" {
		e.print(workflowCommand("notice", "", 0, "olmsync: library roots", lib))
	}
	e.print("olmsync: " + verdict(r) + " — " + strings.Join(summaryParts(r), ", ") + "\n")
	return e.err
}

// logLine is an annotation as a plain line of the job log: "error apps/a.yaml:3 OP004 …:
// message", one line, which can never be read as a workflow command.
func logLine(a annotation) string {
	line := a.level
	if loc := location(a.file, a.line); loc != "" {
		line += " " + loc
	}
	line += " " + a.title + ": " + strings.ReplaceAll(a.text, "\n", "; ")
	return "  " + escapeData(line) + "\n"
}

// problemText is a problem's message with its app and hint.
func problemText(p Problem) string {
	return withHint(withApps(p), p.Hint)
}

func withHint(message, hint string) string {
	if hint == "" {
		return message
	}
	return message + "\nhint: " + hint
}

// prefixed puts the checked folder's path inside its repository in front of a
// repository-relative file, for tools that read paths from the repository's top (GitHub
// annotations, code scanning).
func prefixed(prefix, file string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" || prefix == "." || file == "" {
		return file
	}
	return prefix + "/" + file
}

// byImportance lists the violations of the checked revision that are not waived, errors
// before warnings and new before pre-existing, keeping the report's order otherwise.
// Violations of unknown status (the base's, in an app that no longer renders) are left
// out: they are not findings of the checked revision.
func byImportance(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if !v.Waived && v.Status != StatusUnknown {
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
	switch {
	case len(v.Apps) > 1:
		about = append(about, "in apps "+v.AppsLabel())
	case v.App != "":
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

// withApps is a problem's message after the apps it fails: "apps a, b and c: …".
func withApps(p Problem) string {
	if len(p.Apps) > 1 {
		return "apps " + p.AppsLabel() + ": " + p.Message
	}
	return withApp(p.Message, p.App)
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
