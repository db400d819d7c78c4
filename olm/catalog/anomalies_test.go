package catalog

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/shareddata"
)

// The real community catalog has exactly the defects its ANOMALIES.md lists. This test
// reads that list and checks that every listed anomaly is reported against its package and
// channel, that nothing else is reported as an error, and that every channel without an
// error can be ordered and walked: one defective package never hides the others.

// anomalies are the defects ANOMALIES.md lists, by section.
type anomalies struct {
	cycles, noHead         int // section counts; both are zero
	notAtTail, atTail      []missingReplaces
	inMultiHead            []missingReplaces
	duplicateNames         map[string]string // package -> CSV name
	duplicateVersions      map[string]string // package -> version
	multipleHeads          []channelList
	stranded               []channelList
	badSkipRanges          []badSkipRange
	skipsMissing           []skipsMissing
	defaultChannelProblems []string
}

// missingReplaces is an entry whose replaces names something outside its channel; where
// says where that is ("in another channel of the package", "in no bundle of the package").
type missingReplaces struct{ pkg, channel, entry, target, where string }

// channelList is a channel with a count of names and the first few of them.
type channelList struct {
	pkg, channel string
	count        int
	names        []string
}

type badSkipRange struct{ pkg, bundle, skipRange string }

type skipsMissing struct {
	pkg, channel string
	count        int
	example      string
}

var (
	sectionRe    = regexp.MustCompile(`^## (.*?) \((\d+)[^)]*\)$`)
	replacesRe   = regexp.MustCompile("^- `([^`]+)` / `([^`]+)` \\[[^]]+\\]: `([^`]+)` replaces `([^`]+)` \\(([^;)]+)")
	headsRe      = regexp.MustCompile("^- `([^`]+)` / `([^`]+)`: (\\d+) heads: (.*)$")
	strandedRe   = regexp.MustCompile("^- `([^`]+)` / `([^`]+)` \\[[^]]+\\]: (\\d+) stranded \\([^)]*\\): (.*)$")
	skipRangeRe  = regexp.MustCompile("^- `([^`]+)`: `([^`]+)` olm.skipRange `([^`]+)`")
	skipsRe      = regexp.MustCompile("^- `([^`]+)` / `([^`]+)`: (\\d+) skips to absent names, e.g. `([^`]+)`")
	dupNameRe    = regexp.MustCompile("^- `([^`]+)`: CSV name `([^`]+)`")
	dupVersionRe = regexp.MustCompile("^- `([^`]+)`: version `([^`]+)`")
	defaultRe    = regexp.MustCompile("^- `([^`]+)`: ")
	backticked   = regexp.MustCompile("`([^`]+)`")
)

func readAnomalies(t *testing.T) anomalies {
	t.Helper()
	data, err := os.ReadFile(shareddata.Path(t, "data/catalogs/community-operators/ANOMALIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	a := anomalies{duplicateNames: map[string]string{}, duplicateVersions: map[string]string{}}
	section, declared := "", map[string]int{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if m := sectionRe.FindStringSubmatch(line); m != nil {
			section = m[1]
			declared[section], _ = strconv.Atoi(m[2])
			continue
		}
		a.addLine(t, section, line)
	}
	a.cycles, a.noHead = declared["Replaces cycles"], declared["Channels with no head"]
	// The lists must be as long as their headings say, or this parser has missed lines.
	for section, got := range map[string]int{
		"Replaces to a missing bundle, not at the chain tail":                    len(a.notAtTail),
		"Replaces to a missing bundle, at the chain tail":                        len(a.atTail),
		"Replaces to a missing bundle in channels with several heads":            len(a.inMultiHead),
		"Duplicate CSV names in a package":                                       len(a.duplicateNames),
		"Duplicate versions in a package":                                        len(a.duplicateVersions),
		"Bad olm.skipRange strings":                                              len(a.badSkipRanges),
		"Channels with stranded nodes":                                           len(a.stranded),
		"Default channel problems":                                               len(a.defaultChannelProblems),
		"Channels with more than one head: replaces-mode packages":               -1,
		"Skips naming bundles absent from the package (informational)":           -1,
		"Channels with more than one head: semver-mode and FBC-managed packages": -1,
	} {
		if got >= 0 && got != declared[section] {
			t.Fatalf("ANOMALIES.md section %q declares %d entries, parsed %d", section, declared[section], got)
		}
	}
	heads := declared["Channels with more than one head: replaces-mode packages"] + declared["Channels with more than one head: semver-mode and FBC-managed packages"]
	if len(a.multipleHeads) != heads {
		t.Fatalf("ANOMALIES.md declares %d channels with several heads, parsed %d", heads, len(a.multipleHeads))
	}
	return a
}

func (a *anomalies) addLine(t *testing.T, section, line string) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	switch {
	case strings.HasPrefix(section, "Replaces to a missing bundle"):
		m := replacesRe.FindStringSubmatch(line)
		if m == nil {
			return
		}
		mr := missingReplaces{m[1], m[2], m[3], m[4], m[5]}
		switch section {
		case "Replaces to a missing bundle, not at the chain tail":
			a.notAtTail = append(a.notAtTail, mr)
		case "Replaces to a missing bundle, at the chain tail":
			a.atTail = append(a.atTail, mr)
		default:
			a.inMultiHead = append(a.inMultiHead, mr)
		}
	case strings.HasPrefix(section, "Channels with more than one head"):
		if m := headsRe.FindStringSubmatch(line); m != nil {
			a.multipleHeads = append(a.multipleHeads, channelList{m[1], m[2], atoi(m[3]), backtickedNames(m[4])})
		}
	case section == "Channels with stranded nodes":
		if m := strandedRe.FindStringSubmatch(line); m != nil {
			a.stranded = append(a.stranded, channelList{m[1], m[2], atoi(m[3]), backtickedNames(m[4])})
		}
	case section == "Bad olm.skipRange strings":
		if m := skipRangeRe.FindStringSubmatch(line); m != nil {
			a.badSkipRanges = append(a.badSkipRanges, badSkipRange{m[1], m[2], m[3]})
		}
	case strings.HasPrefix(section, "Skips naming bundles absent"):
		if m := skipsRe.FindStringSubmatch(line); m != nil {
			a.skipsMissing = append(a.skipsMissing, skipsMissing{m[1], m[2], atoi(m[3]), m[4]})
		}
	case section == "Duplicate CSV names in a package":
		if m := dupNameRe.FindStringSubmatch(line); m != nil {
			a.duplicateNames[m[1]] = m[2]
		}
	case section == "Duplicate versions in a package":
		if m := dupVersionRe.FindStringSubmatch(line); m != nil {
			a.duplicateVersions[m[1]] = m[2]
		}
	case section == "Default channel problems":
		if m := defaultRe.FindStringSubmatch(line); m != nil {
			a.defaultChannelProblems = append(a.defaultChannelProblems, m[1])
		}
	}
}

func backtickedNames(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// problemIndex finds problems by code, package and channel.
type problemIndex map[string][]Problem

func indexProblems(ps Problems) problemIndex {
	idx := problemIndex{}
	for _, p := range ps {
		idx.add(p)
	}
	return idx
}

func (idx problemIndex) key(code Code, pkg, ch string) string {
	return string(code) + "|" + pkg + "|" + ch
}

func (idx problemIndex) add(p Problem) {
	k := idx.key(p.Code, p.Package, p.Channel)
	idx[k] = append(idx[k], p)
}

func (idx problemIndex) get(code Code, pkg, ch string) []Problem { return idx[idx.key(code, pkg, ch)] }

// listed returns the names after the colon of a message ("...: a, b, c").
func listed(message string) []string {
	_, list, _ := strings.Cut(message, ": ")
	return strings.Split(list, ", ")
}

// unknownSplits: an entry of a channel of several heads replaces a bundle the package
// does not have, which Validate reports as the cause (CodeReplacesUnknown).
func unknownSplits(w missingReplaces) bool { return w.where == inNoBundle }

func TestCommunityCatalogAnomalies(t *testing.T) {
	want := readAnomalies(t)
	c, err := LoadPath(communityCatalogPath(t))
	if err != nil {
		t.Fatal(err)
	}
	problems := c.Validate()
	idx := indexProblems(problems)
	accounted := map[*Problem]bool{}
	account := func(ps []Problem) {
		for i := range ps {
			for j := range problems {
				if problems[j] == ps[i] {
					accounted[&problems[j]] = true
				}
			}
		}
	}

	if want.cycles != 0 || want.noHead != 0 {
		t.Fatalf("ANOMALIES.md now lists cycles or headless channels; extend this test")
	}

	t.Run("channels with several heads", func(t *testing.T) {
		for _, w := range want.multipleHeads {
			got := idx.get(CodeMultipleHeads, w.pkg, w.channel)
			if len(got) != 1 {
				t.Errorf("%s/%s: %d MultipleHeads problems, want 1", w.pkg, w.channel, len(got))
				continue
			}
			account(got)
			heads := listed(got[0].Message)
			if len(heads) != w.count || !isSubset(w.names, heads) {
				t.Errorf("%s/%s: heads %v, want %d heads including %v", w.pkg, w.channel, heads, w.count, w.names)
			}
			// OLM's resolver cannot order such a channel either: one chain per head (an entry
			// listed twice is two heads to the resolver, one to the graph).
			var oerr *ChannelOrderError
			if _, err := c.Package(w.pkg).Channel(w.channel).Order(); !errors.As(err, &oerr) || oerr.Failure != OrderMultipleChains || len(slices.Compact(slices.Sorted(slices.Values(oerr.Chains)))) != w.count {
				t.Errorf("%s/%s: Order() error = %v, want %d replacement chains", w.pkg, w.channel, err, w.count)
			}
		}
	})

	t.Run("stranded bundles", func(t *testing.T) {
		// ANOMALIES.md reads operator-registry's walk differently from its code in two ways:
		// it makes a name an entry replaces a node even when no entry has it (so a replaces
		// leaving the channel mid-chain strands that name), and it ends the walk at a node
		// skipped by an earlier node of the walk. operator-registry's validateReplacesChain
		// (alpha/model/model.go:272-312, vendored by OLM at 992bb09) counts only entries, and
		// ends the walk at a replaces edge to any name some entry of the channel skips. Where
		// the two readings disagree, these are the counts of stranded entries under the code
		// (docs/olm.md, "Catalogs"); everywhere else they agree.
		byCode := map[string]int{
			"gitlab-runner-operator/stable":           37,
			"grafana-operator/v5":                     9,
			"ibm-block-csi-operator-community/stable": 8,
			"infinispan/2.3.x":                        0,
			"infinispan/stable":                       8,
			"kepler-operator/alpha":                   19,
		}
		for _, w := range want.stranded {
			got := idx.get(CodeStranded, w.pkg, w.channel)
			account(got)
			if n, ok := byCode[w.pkg+"/"+w.channel]; ok {
				var stranded []string
				if len(got) == 1 {
					stranded = listed(got[0].Message)
				}
				if len(got) > 1 || len(stranded) != n {
					t.Errorf("%s/%s: stranded %v, want %d entries, as operator-registry's code walks the channel", w.pkg, w.channel, stranded, n)
				}
				continue
			}
			if len(got) != 1 {
				t.Errorf("%s/%s: %d Stranded problems, want 1", w.pkg, w.channel, len(got))
				continue
			}
			stranded := listed(got[0].Message)
			if len(stranded) != w.count || !isSubset(w.names, stranded) {
				t.Errorf("%s/%s: stranded %v, want %d including %v", w.pkg, w.channel, stranded, w.count, w.names)
			}
		}
	})

	t.Run("replaces naming a bundle outside the channel", func(t *testing.T) {
		check := func(w missingReplaces, channelError func([]Problem) bool, what string) {
			notes := idx.get(CodeReplacesOutside, w.pkg, w.channel)
			if unknownSplits(w) {
				// The cause of the channel's several heads: an error of its own, not a note.
				notes = idx.get(CodeReplacesUnknown, w.pkg, w.channel)
				account(notes)
			}
			if !slices.ContainsFunc(notes, func(p Problem) bool {
				return p.Bundle == w.entry && strings.Contains(p.Message, fmt.Sprintf("%q", w.target))
			}) {
				t.Errorf("%s/%s: no note that %s replaces %s outside the channel", w.pkg, w.channel, w.entry, w.target)
			}
			if !channelError(append(idx.get(CodeStranded, w.pkg, w.channel), idx.get(CodeMultipleHeads, w.pkg, w.channel)...)) {
				t.Errorf("%s/%s: %s replaces %s: want %s", w.pkg, w.channel, w.entry, w.target, what)
			}
		}
		for _, w := range want.notAtTail {
			// operator-registry's code never lists a name no entry has as stranded (see
			// "stranded bundles" above): the walk just ends where the replaces leaves.
			check(w, func(ps []Problem) bool {
				return !slices.ContainsFunc(ps, func(p Problem) bool { return slices.Contains(listed(p.Message), w.target) })
			}, "no stranded problem naming the missing name")
		}
		for _, w := range want.atTail {
			check(w, func(ps []Problem) bool {
				return !slices.ContainsFunc(ps, func(p Problem) bool { return slices.Contains(listed(p.Message), w.target) })
			}, "the chain tail to be tolerated")
		}
		for _, w := range want.inMultiHead {
			check(w, func(ps []Problem) bool {
				return slices.ContainsFunc(ps, func(p Problem) bool { return p.Code == CodeMultipleHeads })
			}, "the channel to fail with several heads")
		}
		unknown := 0
		for _, w := range want.inMultiHead {
			if unknownSplits(w) {
				unknown++
			}
		}
		if got, want := len(problems.bySeverity(SeverityInfo).codes(CodeReplacesOutside)), len(want.notAtTail)+len(want.atTail)+len(want.inMultiHead)-unknown; got != want {
			t.Errorf("%d replaces-outside notes, want %d", got, want)
		}
		if got := len(problems.codes(CodeReplacesUnknown)); got != unknown {
			t.Errorf("%d errors for a replaces of an unknown bundle, want %d (ANOMALIES.md: in no bundle of the package, in a channel of several heads)", got, unknown)
		}
	})

	t.Run("bad skipRange strings", func(t *testing.T) {
		for _, w := range want.badSkipRanges {
			var got []Problem
			for _, ch := range c.Package(w.pkg).Channels {
				for _, p := range idx.get(CodeBadSkipRange, w.pkg, ch.Name) {
					if p.Bundle == w.bundle && strings.Contains(p.Message, fmt.Sprintf("invalid skipRange %q", w.skipRange)) {
						got = append(got, p)
					}
				}
			}
			if len(got) == 0 {
				t.Errorf("%s: bad skipRange %q of %s not reported", w.pkg, w.skipRange, w.bundle)
			}
			account(got)
		}
	})

	t.Run("duplicate names and versions", func(t *testing.T) {
		for pkg, name := range want.duplicateNames {
			dups := slices.DeleteFunc(idx.get(CodeDuplicateBundle, pkg, ""), func(p Problem) bool { return p.Bundle != name })
			if len(dups) != 1 {
				t.Errorf("%s: %d DuplicateBundle problems for %s, want 1", pkg, len(dups), name)
			}
			account(dups)
			for _, ch := range c.Package(pkg).Channels {
				if ch.Entry(name) != nil {
					entries := idx.get(CodeDuplicateEntry, pkg, ch.Name)
					if len(entries) == 0 {
						t.Errorf("%s/%s lists %s twice; not reported", pkg, ch.Name, name)
					}
					account(entries)
				}
			}
		}
		for pkg, version := range want.duplicateVersions {
			got := idx.get(CodeDuplicateVersion, pkg, "")
			if len(got) != 1 || !strings.Contains(got[0].Message, "{"+version+": ") {
				t.Errorf("%s: DuplicateVersion problems %v, want one for %s", pkg, got, version)
			}
			account(got)
		}
	})

	t.Run("default channel", func(t *testing.T) {
		for _, pkg := range want.defaultChannelProblems {
			got := idx.get(CodeNoDefaultChannel, pkg, "")
			if len(got) != 1 {
				t.Errorf("%s: no default channel not reported", pkg)
			}
			account(got)
		}
	})

	t.Run("skips naming absent bundles", func(t *testing.T) {
		total := 0
		for _, w := range want.skipsMissing {
			got := idx.get(CodeSkipsMissing, w.pkg, w.channel)
			total += w.count
			if len(got) != w.count || !slices.ContainsFunc(got, func(p Problem) bool { return strings.Contains(p.Message, fmt.Sprintf("%q", w.example)) }) {
				t.Errorf("%s/%s: %d skips-missing notes, want %d including %s", w.pkg, w.channel, len(got), w.count, w.example)
			}
		}
		if got := len(problems.codes(CodeSkipsMissing)); got != total {
			t.Errorf("%d skips-missing notes, want %d", got, total)
		}
	})

	t.Run("nothing else is an error", func(t *testing.T) {
		for i := range problems {
			if problems[i].Severity != SeverityInfo && !accounted[&problems[i]] {
				t.Errorf("not in ANOMALIES.md: %v", problems[i])
			}
		}
	})

	t.Run("every other channel can be walked", func(t *testing.T) {
		usable, usablePackages := 0, 0
		for _, p := range c.Packages {
			defaultUsable := false
			for _, ch := range p.Channels {
				if problems.ForChannel(p.Name, ch.Name).HasErrors() {
					continue
				}
				order, err := ch.Order()
				if err != nil {
					t.Errorf("%s/%s has no errors but cannot be ordered: %v", p.Name, ch.Name, err)
					continue
				}
				if heads := ch.Heads(); len(heads) != 1 || order[0].Name != heads[0] {
					t.Errorf("%s/%s: order starts at %s, heads %v", p.Name, ch.Name, order[0].Name, heads)
				}
				for _, e := range order {
					if b := p.Bundle(e.Name); b == nil || b.Version.String() == "0.0.0" {
						t.Errorf("%s/%s: entry %s has no bundle with a version", p.Name, ch.Name, e.Name)
					}
				}
				usable++
				defaultUsable = defaultUsable || ch.Name == p.DefaultChannel
			}
			if defaultUsable {
				usablePackages++
			}
		}
		// 654 channels, 262 with several heads, 18 stranded, 8 holding a duplicate entry
		// or a bad skipRange without another error.
		t.Logf("%d of 654 channels can be walked; %d of 333 packages have a usable default channel", usable, usablePackages)
		if usable < 654-262-18-len(want.badSkipRanges)-4 {
			t.Errorf("only %d channels usable", usable)
		}
	})
}

func (ps Problems) codes(code Code) Problems {
	var out Problems
	for _, p := range ps {
		if p.Code == code {
			out = append(out, p)
		}
	}
	return out
}

func isSubset(sub, set []string) bool {
	for _, s := range sub {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}
