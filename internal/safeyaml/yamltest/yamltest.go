// Package yamltest holds hostile YAML for the tests and fuzz seeds of every reader that
// passes input through internal/safeyaml.
package yamltest

import (
	"fmt"
	"strings"
)

// Laughs is a "billion laughs" ConfigMap, about 400 bytes at nine levels: each level's
// list holds nine aliases of the level before, so it expands to 9^(levels+1) scalars.
// Before the bounded reader, nine levels as a kustomize resource made `olmsync check`
// grow to 23.9 GB. From four levels on, its aliases break go-yaml's ratio at line 9.
func Laughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n")
	b.WriteString("  a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n")
	for i := 1; i <= levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.Repeat(p+",", 8)+p)
	}
	return b.String()
}

// LaughsLine is the line at which Laughs(levels >= 4) is refused.
const LaughsLine = 9

// SelfAnchor is a ConfigMap whose data holds itself: a reader that follows aliases
// recurses until its stack overflows. The anchor is on line SelfAnchorLine.
const SelfAnchor = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loop\ndata: &d\n  self: *d\n"

// SelfAnchorLine is the line of SelfAnchor's anchor.
const SelfAnchorLine = 5

// Indent puts every line of s under the given indentation, for a document held in a
// block scalar of another.
func Indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+by) + "\n"
}

// MaxLines bounds the lines a YAML parser sees in data: every line break it knows (\n,
// \r, NEL, LS, PS) may start a line. A line an error names must not be past it.
func MaxLines(data []byte) int {
	n := 1
	for _, r := range string(data) {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

// Amplified is a resource of about 8 KB, named t<i>, whose spec holds an anchor of 4,000
// distinct scalars and 95 aliases of it: 384,000 nodes once aliases are expanded, 98.9 %
// of them aliased, under every per-file threshold of the alias check. Sixteen of them
// took `olmsync check` to 1.17 GB and `olmsync run` down with every Sync (issue 30).
func Amplified(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t%d\nspec:\n  a: &a [", i)
	for k := range 4000 {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "v%d_%d", i, k)
	}
	b.WriteString("]\n")
	for j := range 95 {
		fmt.Fprintf(&b, "  b%d: *a\n", j)
	}
	return b.String()
}

// Scalars is a resource named big whose spec holds a list of n scalars: at 990,000, about
// 2 MB, under the 1,000,000 nodes and 3 MiB a file may have, and it peaked at 903 MB.
func Scalars(n int) string {
	return "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: big\nspec:\n  a: [" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]\n"
}
