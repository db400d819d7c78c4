package sources

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/go-git/go-git/v5/plumbing"
)

// Ref says which revision of a remote repository to fetch. At most one of
// Tag, SemVer and Commit is set. Branch may go with Commit: the branch is then
// what gets fetched to find the commit (instead of every branch and tag), and
// it names the revision. All empty means the remote's default branch (HEAD).
type Ref struct {
	Branch string // e.g. "main"
	Tag    string // e.g. "v1.2.0"
	// SemVer is a range over the repository's tags in blang/semver syntax, the
	// one OLM uses for skipRange: ">=1.2.0 <2.0.0", ">=1.0.0 <1.5.0 || >=2.0.0",
	// wildcards such as "1.x". Tags are read as versions with an optional
	// leading "v". Pre-release tags are candidates only when the range itself
	// names a pre-release.
	SemVer string
	Commit string // a full hexadecimal commit hash
}

var fullHash = regexp.MustCompile(`^[0-9a-f]{40}$|^[0-9a-f]{64}$`)

// Validate reports a Ref that can never be fetched: an invalid branch or tag
// name, a malformed semver range, a commit that is not a full hash, or two
// selectors that exclude each other. A caller treats this as a bad spec, not
// as a transient failure.
func (r Ref) Validate() error {
	set := 0
	for _, s := range []string{r.Tag, r.SemVer, r.Commit} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return fmt.Errorf("ref %s: set at most one of tag, semver and commit", r)
	}
	if r.Branch != "" && (r.Tag != "" || r.SemVer != "") {
		return fmt.Errorf("ref %s: a branch goes only with a commit", r)
	}
	if r.Branch != "" {
		if err := plumbing.NewBranchReferenceName(r.Branch).Validate(); err != nil {
			return fmt.Errorf("branch %q is not a valid branch name", r.Branch)
		}
	}
	if r.Tag != "" {
		if err := plumbing.NewTagReferenceName(r.Tag).Validate(); err != nil {
			return fmt.Errorf("tag %q is not a valid tag name", r.Tag)
		}
	}
	if r.SemVer != "" {
		if _, err := semver.ParseRange(r.SemVer); err != nil {
			return fmt.Errorf("semver range %q: %w", r.SemVer, err)
		}
	}
	if r.Commit != "" && !fullHash.MatchString(r.Commit) {
		return fmt.Errorf("commit %q is not a full lower-case hexadecimal hash", r.Commit)
	}
	return nil
}

// String describes the ref the way messages name it: `branch "main"`,
// `tag "v1.0.0"`, `semver ">=1.0.0"`, `commit "abc…" on branch "main"`.
func (r Ref) String() string {
	var parts []string
	if r.Commit != "" {
		parts = append(parts, fmt.Sprintf("commit %q", r.Commit))
	}
	if r.Tag != "" {
		parts = append(parts, fmt.Sprintf("tag %q", r.Tag))
	}
	if r.SemVer != "" {
		parts = append(parts, fmt.Sprintf("semver range %q", r.SemVer))
	}
	if r.Branch != "" {
		b := fmt.Sprintf("branch %q", r.Branch)
		if r.Commit != "" {
			b = "on " + b
		}
		parts = append(parts, b)
	}
	if len(parts) == 0 {
		return "the default branch"
	}
	return strings.Join(parts, " ")
}

// selectSemverTag returns the tag holding the highest version inside the
// range, or "" when none does. Tags that are not versions are ignored. Among
// tags naming the same version ("v1.0.0" and "1.0.0") the first in sort
// order wins, so the choice never depends on the server's ordering.
func selectSemverTag(tags []string, rangeExpr string) (string, error) {
	rng, err := semver.ParseRange(rangeExpr)
	if err != nil {
		return "", fmt.Errorf("semver range %q: %w", rangeExpr, err)
	}
	allowPre := strings.Contains(rangeExpr, "-")
	sorted := append([]string(nil), tags...)
	sort.Strings(sorted)

	var (
		best    string
		bestVer semver.Version
	)
	for _, tag := range sorted {
		v, ok := tagVersion(tag)
		if !ok || (len(v.Pre) > 0 && !allowPre) || !rng(v) {
			continue
		}
		if best == "" || v.GT(bestVer) {
			best, bestVer = tag, v
		}
	}
	return best, nil
}

// tagVersion reads a tag name as a semantic version, with or without a
// leading "v". Partial versions ("1.2") are not versions: a range over them
// would be ambiguous.
func tagVersion(tag string) (semver.Version, bool) {
	v, err := semver.Parse(strings.TrimPrefix(tag, "v"))
	return v, err == nil
}
