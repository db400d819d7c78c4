package policy

import (
	"fmt"
	"strings"
	"time"
)

// WaiveAnnotation is the annotation that waives rules for the object carrying it. Its value
// holds one "<RULE>[, <RULE>...]: <reason>" per line.
const WaiveAnnotation = "olmsync.dev/waive"

// The rules about waivers themselves. olmsync checks them in Go, after the Rego rules, so
// they cover users' rules too; they cannot be waived.
const (
	RuleWaiverExpired   = "OP900"
	RuleWaiverUnused    = "OP901"
	RuleWaiverMalformed = "OP902"
)

var waiverRules = []Rule{
	{
		ID:       RuleWaiverExpired,
		Title:    "Waivers are not expired",
		Severity: SeverityError,
		Description: "A waiver in olmsync.yaml whose expiry date has passed no longer waives anything, and is " +
			"reported itself: review the case again and renew the waiver with a new date, or remove it.",
	},
	{
		ID:       RuleWaiverUnused,
		Title:    "Waivers match a violation",
		Severity: SeverityWarning,
		Description: "A waiver (in olmsync.yaml, or a rule listed in an object's olmsync.dev/waive annotation) that " +
			"matches no violation is stale: the object was fixed, renamed or removed. Remove the waiver.",
	},
	{
		ID:       RuleWaiverMalformed,
		Title:    "Waiver annotations are readable",
		Severity: SeverityError,
		Description: "Each line of an olmsync.dev/waive annotation is \"<RULE>[, <RULE>...]: <reason>\" with a " +
			"reason; a line that is not waives nothing and is reported.",
	},
}

// WaiverSource says where a waiver is declared.
type WaiverSource string

const (
	// WaiverFromAnnotation is an object's olmsync.dev/waive annotation.
	WaiverFromAnnotation WaiverSource = "annotation"
	// WaiverFromConfig is the waiver list of olmsync.yaml.
	WaiverFromConfig WaiverSource = "config"
)

// Waiver excuses one object from one rule; olmsync.yaml lists them.
type Waiver struct {
	// Rule is the ID of the rule waived (OP006, or a user rule's). Required.
	Rule string
	// Object identifies the waived object.
	Object WaiverObject
	// Reason records why, for reviewers and reports. Required.
	Reason string
	// Expires is the last day the waiver holds (its date in UTC; the time of day is
	// ignored); from the next day on it waives nothing and is itself a violation (OP900).
	// Zero: it never expires.
	Expires time.Time
	// Source is where the waiver is written (olmsync.yaml and its line), for reports about
	// the waiver itself.
	Source Source
}

// WaiverObject identifies a waived object. Kind and Name are required. Namespace is the
// namespace the object lands in ("" for cluster-scoped objects). APIVersion and Cluster
// are optional: empty matches every apiVersion and every cluster.
type WaiverObject struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Cluster    string
}

func (o WaiverObject) ref() ObjectRef {
	return ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// AnnotationWaiver is one rule waived by an olmsync.dev/waive annotation.
type AnnotationWaiver struct {
	Rule   string
	Reason string
}

// ParseWaiveAnnotation reads the value of an olmsync.dev/waive annotation: one
// "<RULE>[, <RULE>...]: <reason>" per line; blank lines are skipped. It returns the rules
// waived, in order, and the lines it could not read (no colon, no rule, a rule with a
// space in it, or no reason).
func ParseWaiveAnnotation(value string) (waived []AnnotationWaiver, malformed []string) {
	for line := range strings.Lines(value) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ids, reason, ok := strings.Cut(line, ":")
		reason = strings.TrimSpace(reason)
		rules := parseRuleList(ids)
		if !ok || reason == "" || rules == nil {
			malformed = append(malformed, line)
			continue
		}
		for _, r := range rules {
			waived = append(waived, AnnotationWaiver{Rule: r, Reason: reason})
		}
	}
	return waived, malformed
}

// parseRuleList reads "OP005, OP007"; nil when any entry is empty or holds a space.
func parseRuleList(s string) []string {
	var rules []string
	for part := range strings.SplitSeq(s, ",") {
		id := strings.TrimSpace(part)
		if id == "" || strings.ContainsAny(id, " \t") {
			return nil
		}
		rules = append(rules, id)
	}
	return rules
}

// sameRule compares rule IDs as waivers do: without regard to case.
func sameRule(a, b string) bool { return strings.EqualFold(a, b) }

// configWaiver is a waiver of olmsync.yaml with what the evaluation found out about it.
type configWaiver struct {
	Waiver
	expired bool
	matched bool
}

func (w *configWaiver) matches(v *Violation) bool {
	o := w.Object
	return sameRule(w.Rule, v.Rule) &&
		o.Kind == v.Object.Kind && o.Name == v.Object.Name && o.Namespace == v.Object.Namespace &&
		(o.APIVersion == "" || o.APIVersion == v.Object.APIVersion) &&
		(o.Cluster == "" || o.Cluster == v.Cluster)
}

func (w *configWaiver) describe() string {
	return fmt.Sprintf("waiver of %s for %s", w.Rule, w.Object.ref())
}

// validateWaivers checks the config waivers and judges their expiry at now.
func validateWaivers(ws []Waiver, now time.Time) ([]*configWaiver, error) {
	out := make([]*configWaiver, 0, len(ws))
	for i, w := range ws {
		var missing []string
		if strings.TrimSpace(w.Rule) == "" {
			missing = append(missing, "rule")
		}
		if w.Object.Kind == "" {
			missing = append(missing, "object kind")
		}
		if w.Object.Name == "" {
			missing = append(missing, "object name")
		}
		if strings.TrimSpace(w.Reason) == "" {
			missing = append(missing, "reason")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w %d%s: no %s", ErrInvalidWaiver, i+1, at(w.Source), strings.Join(missing, ", no "))
		}
		out = append(out, &configWaiver{Waiver: w, expired: expired(w.Expires, now)})
	}
	return out, nil
}

func at(s Source) string {
	switch {
	case s.File == "":
		return ""
	case s.Line == 0:
		return " (" + s.File + ")"
	default:
		return fmt.Sprintf(" (%s:%d)", s.File, s.Line)
	}
}

// expired reports whether the last day a waiver holds has passed at now (both in UTC).
func expired(lastDay, now time.Time) bool {
	if lastDay.IsZero() {
		return false
	}
	y, m, d := lastDay.UTC().Date()
	return !now.UTC().Before(time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC))
}

func dateString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// annotationWaivers is what one object's olmsync.dev/waive annotation says, and which of
// its rules waived something.
type annotationWaivers struct {
	waived    []AnnotationWaiver
	used      []bool
	malformed []string
}

// annotationOf reads an object's waive annotation; nil when it has none.
func annotationOf(manifest map[string]any) *annotationWaivers {
	meta, _ := manifest["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	raw, ok := annotations[WaiveAnnotation]
	if !ok {
		return nil
	}
	value, ok := raw.(string)
	if !ok {
		return &annotationWaivers{malformed: []string{fmt.Sprint(raw)}}
	}
	waived, malformed := ParseWaiveAnnotation(value)
	return &annotationWaivers{waived: waived, used: make([]bool, len(waived)), malformed: malformed}
}

// waive marks v waived when the annotation names its rule.
func (a *annotationWaivers) waive(v *Violation) {
	for i, w := range a.waived {
		if !sameRule(w.Rule, v.Rule) {
			continue
		}
		a.used[i] = true
		if !v.Waived {
			v.Waived, v.WaiverReason, v.WaiverSource = true, w.Reason, WaiverFromAnnotation
		}
	}
}

// waive applies the annotation and config waivers to the violations of every cluster, and
// adds the findings about the waivers: expired, unused or unreadable. A violation's
// annotation waivers are those of the input object it is about (clusterIndex.at).
func waive(clusters []Input, config []*configWaiver, violations []Violation) []Violation {
	indexes := make(map[string]*clusterIndex, len(clusters))
	for _, in := range clusters {
		completed := in.Complete()
		indexes[in.Cluster] = newClusterIndex(&completed)
	}
	out := make([]Violation, 0, len(violations))
	for _, v := range violations {
		if c := indexes[v.Cluster]; c != nil {
			if l := c.at(&v); l != nil && l.waivers != nil {
				l.waivers.waive(&v)
			}
		}
		applyConfig(config, &v)
		out = append(out, v)
	}
	for _, in := range clusters {
		c := indexes[in.Cluster]
		for _, at := range c.annotated {
			out = append(out, annotationFindings(c, at)...)
		}
	}
	out = append(out, configFindings(config)...)
	sortViolations(out)
	return out
}

func applyConfig(config []*configWaiver, v *Violation) {
	for _, w := range config {
		if !w.matches(v) {
			continue
		}
		w.matched = true
		if !w.expired && !v.Waived {
			v.Waived, v.WaiverReason, v.WaiverSource = true, w.Reason, WaiverFromConfig
			v.WaiverExpires = dateString(w.Expires)
		}
	}
}

// annotationFindings reports the rules an object's annotation waives in vain (OP901) and
// the lines it cannot read (OP902).
func annotationFindings(c *clusterIndex, at *located) []Violation {
	var out []Violation
	a := at.waivers
	for i, w := range a.waived {
		if a.used[i] {
			continue
		}
		v := at.violation(c.cluster, RuleWaiverUnused, SeverityWarning, fmt.Sprintf(
			"%s waives %s, but %s reports nothing about this object; remove %s from the annotation",
			WaiveAnnotation, w.Rule, w.Rule, w.Rule))
		out = append(out, v)
	}
	for _, line := range a.malformed {
		v := at.violation(c.cluster, RuleWaiverMalformed, SeverityError, fmt.Sprintf(
			`%s has a line that is not "<RULE>: <reason>": %q; write one "<RULE>[, <RULE>...]: <reason>" per line`,
			WaiveAnnotation, line))
		out = append(out, v)
	}
	return out
}

// configFindings reports the config waivers that expired (OP900) or matched nothing in any
// cluster (OP901). Call it once, after every violation of every cluster was waived.
func configFindings(config []*configWaiver) []Violation {
	var out []Violation
	for _, w := range config {
		v := Violation{
			Cluster: w.Object.Cluster,
			File:    w.Source.File,
			Line:    w.Source.Line,
			Object:  w.Object.ref(),
		}
		switch {
		case w.expired:
			v.Rule, v.Severity = RuleWaiverExpired, SeverityError
			v.Message = fmt.Sprintf("%s expired on %s (%s); review the case again and renew the waiver, or remove it",
				w.describe(), dateString(w.Expires), w.Reason)
		case !w.matched:
			v.Rule, v.Severity = RuleWaiverUnused, SeverityWarning
			v.Message = fmt.Sprintf("%s matches no violation; remove it", w.describe())
		default:
			continue
		}
		out = append(out, v)
	}
	return out
}
