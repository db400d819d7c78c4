package report

import (
	"fmt"
	"strings"
)

// previewSentence says what OLM would do with a Subscription, the way a person writes it
// in a pull request: "installs etcd.v0.9.4 from community-operators, channel stable;
// upgrade path etcd.v0.9.2 → etcd.v0.9.4 (skips etcd.v0.9.3)".
func previewSentence(s SubscriptionPreview) string {
	var b strings.Builder
	if c := s.Change; c != nil {
		switch c.Type {
		case ChangeInstall:
			b.WriteString("first install: ")
		case ChangeChannelSwitch:
			fmt.Fprintf(&b, "channel switch %s → %s: ", c.FromChannel, s.Channel)
		case ChangeUpgrade:
			b.WriteString("upgrade: ")
		case ChangeUnchanged:
			b.WriteString("unchanged: ")
		}
	}
	r := s.Resolution
	source := s.Source
	if r.NextSource != "" {
		source = r.NextSource
	}
	switch {
	case r.Status == ResolutionUnknown:
		b.WriteString("not previewed: " + r.Message)
		return b.String()
	case r.Status == ResolutionUpToDate:
		fmt.Fprintf(&b, "runs %s, the head of channel %s", s.Installed, s.Channel)
	case r.Status == ResolutionFailed && s.Installed != "":
		fmt.Fprintf(&b, "stays on %s (%s): %s", s.Installed, r.Reason, r.Message)
	case r.Status == ResolutionFailed:
		fmt.Fprintf(&b, "cannot be resolved (%s): %s", r.Reason, r.Message)
	case s.Installed == "":
		fmt.Fprintf(&b, "installs %s from %s, channel %s", r.Next, source, s.Channel)
	default:
		fmt.Fprintf(&b, "upgrades to %s from %s, channel %s; upgrade path %s → %s",
			lastOr(r.Path, r.Next), source, s.Channel, s.Installed, strings.Join(r.Path, " → "))
		if len(r.Skipped) > 0 {
			fmt.Fprintf(&b, " (skips %s)", strings.Join(r.Skipped, ", "))
		}
	}
	if r.Status == ResolutionResolved && s.Installed == "" && len(r.Path) > 1 {
		fmt.Fprintf(&b, ", then %s", strings.Join(r.Path[1:], " → "))
	}
	var deps []string
	for _, d := range s.Dependencies {
		if !d.Installed {
			deps = append(deps, d.Name)
		}
	}
	if len(deps) > 0 {
		fmt.Fprintf(&b, "; with %s %s", noun(len(deps), "dependency", "dependencies"), strings.Join(deps, ", "))
	}
	return b.String()
}

// bringsLines say what a bundle brings, one line each: CRDs, cluster-wide and namespaced
// permissions, install modes, images; or what the preview could not see.
func bringsLines(b *PreviewBrings) []string {
	if b == nil {
		return nil
	}
	if b.Unseen != "" {
		return []string{"brings: not seen: " + b.Unseen}
	}
	var out []string
	if len(b.CRDs) > 0 {
		crds := make([]string, len(b.CRDs))
		for i, c := range b.CRDs {
			change := c.Change
			switch {
			case c.Verdict == CRDUpgradeSafe:
				change += ", upgrade safe"
			case c.Verdict != "":
				change += ", OLM REFUSES: " + c.Verdict
			}
			crds[i] = fmt.Sprintf("%s %s (%s)", c.Name, strings.Join(c.Versions, ","), change)
		}
		out = append(out, "CRDs: "+strings.Join(crds, ", "))
	}
	for _, p := range b.Permissions {
		scope := "namespaced permissions"
		if p.ClusterWide {
			scope = "CLUSTER-WIDE permissions"
		}
		out = append(out, fmt.Sprintf("%s of %s: %s", scope, p.ServiceAccount, strings.Join(p.Rules, "; ")))
	}
	if len(b.InstallModes) > 0 {
		out = append(out, "install modes: "+strings.Join(b.InstallModes, ", "))
	}
	if len(b.Images) > 0 {
		out = append(out, "images: "+strings.Join(b.Images, ", "))
	}
	for _, w := range b.Webhooks {
		out = append(out, w.Summary)
	}
	for _, a := range b.APIServices {
		out = append(out, fmt.Sprintf("API service %s (%s), served by deployment %s", a.Name, a.Kind, a.Deployment))
	}
	return out
}

// outcomeText is the phase a CSV would reach: "Succeeded", "Failed (NoOperatorGroup):
// csv in namespace with no operatorgroups".
func outcomeText(o *PreviewOutcome) string {
	if o == nil {
		return ""
	}
	if o.Phase == o.Reason || o.Phase == "Succeeded" {
		return o.Phase
	}
	text := fmt.Sprintf("%s (%s)", o.Phase, o.Reason)
	if o.Message != "" {
		text += ": " + o.Message
	}
	return text
}

// groupSentence describes an OperatorGroup: its targets, the APIs it provides and its
// conflicts.
func groupSentence(g OperatorGroupPreview) string {
	var parts []string
	switch {
	case g.Message != "":
		parts = append(parts, "refused: "+g.Message)
	case len(g.TargetNamespaces) == 1 && g.TargetNamespaces[0] == "":
		parts = append(parts, "targets all namespaces")
	case len(g.TargetNamespaces) == 0:
		parts = append(parts, "targets no namespace")
	default:
		parts = append(parts, "targets "+strings.Join(g.TargetNamespaces, ", "))
	}
	if len(g.ProvidedAPIs) > 0 {
		parts = append(parts, "provides "+strings.Join(g.ProvidedAPIs, ", "))
	}
	if g.Static {
		parts = append(parts, "static")
	}
	for _, c := range g.Conflicts {
		parts = append(parts, fmt.Sprintf("also provided by %s/%s: %s", c.Namespace, c.Name, strings.Join(c.APIs, ", ")))
	}
	if g.Origin != "git" {
		parts = append(parts, "on the cluster, not in Git ("+g.Origin+")")
	}
	return strings.Join(parts, "; ")
}

func lastOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[len(s)-1]
}

func (t *textWriter) preview(r *Report) {
	if len(r.Subscriptions) == 0 && len(r.OperatorGroups) == 0 && len(r.ClusterExtensions) == 0 {
		return
	}
	t.print("\n" + t.style(ansiBold, "OLM preview") + "\n")
	defer t.extensions(r)
	for _, s := range r.Subscriptions {
		head := "  Subscription " + plain(s.ID())
		var tags []string
		if s.Cluster != "" {
			tags = append(tags, "cluster "+s.Cluster)
		}
		if loc := location(s.File, s.Line); loc != "" {
			tags = append(tags, loc)
		}
		if len(tags) > 0 {
			head += "  (" + plain(strings.Join(tags, ", ")) + ")"
		}
		t.print(head + "\n" + indentLines(plain(previewSentence(s)), "      ") + "\n")
		if o := s.Outcome; o != nil {
			code := ansiGreen
			if o.Failed() {
				code = ansiRed
			} else if o.Phase != "Succeeded" {
				code = ansiYellow
			}
			t.print("      " + t.style(code, "→ "+o.CSV+": "+outcomeText(o)) + "\n")
		}
		for _, line := range bringsLines(s.Brings) {
			t.print(indentLines(plain(line), "      ") + "\n")
		}
	}
	for _, g := range r.OperatorGroups {
		head := "  OperatorGroup " + plain(g.Namespace+"/"+g.Name)
		if g.Cluster != "" {
			head += "  (cluster " + plain(g.Cluster) + ")"
		}
		t.print(head + "\n" + indentLines(plain(groupSentence(g)), "      ") + "\n")
	}
}

func (m *mdWriter) preview(r *Report) {
	defer m.extensions(r)
	if len(r.Subscriptions) == 0 {
		return
	}
	m.printf("\n#### OLM preview\n\n| Subscription | Location | What OLM does | Outcome |\n|---|---|---|---|\n")
	for i, s := range r.Subscriptions {
		if i == m.rows {
			m.moreRows(len(r.Subscriptions) - i)
			break
		}
		name := s.ID()
		if s.Cluster != "" {
			name = s.Cluster + ": " + name
		}
		outcome := ""
		if s.Outcome != nil {
			outcome = mdText(truncate(outcomeText(s.Outcome), maxCellMessage))
			if s.Outcome.Failed() {
				outcome = "❌ " + outcome
			}
		}
		m.printf("| %s | %s | %s | %s |\n", mdCode(name), m.link(s.File, s.Line),
			mdText(truncate(previewSentence(s), maxCellMessage)), outcome)
	}
	var bringing []SubscriptionPreview
	for i, s := range r.Subscriptions {
		if i < m.rows && s.Brings != nil {
			bringing = append(bringing, s)
		}
	}
	if len(bringing) > 0 {
		m.details("What the Subscriptions bring: CRDs, permissions, images", func() {
			for _, s := range bringing {
				m.printf("%s — %s:\n\n", mdCode(s.ID()), mdCode(s.Brings.CSV))
				for _, line := range bringsLines(s.Brings) {
					m.printf("- %s\n", mdText(truncate(line, maxCellMessage)))
				}
				m.printf("\n")
			}
		})
	}
	if len(r.OperatorGroups) == 0 {
		return
	}
	m.details(plural(len(r.OperatorGroups), "OperatorGroup", "OperatorGroups"), func() {
		for i, g := range r.OperatorGroups {
			if i == m.rows {
				m.printf("- … and %d more\n", len(r.OperatorGroups)-i)
				break
			}
			m.printf("- %s: %s\n", mdCode(g.Namespace+"/"+g.Name), mdText(truncate(groupSentence(g), maxCellMessage)))
		}
	})
}
