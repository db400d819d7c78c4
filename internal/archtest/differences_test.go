package archtest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testName is a Go test function named in a table cell, with or without backquotes.
var testName = regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`)

// TestOLMDifferencesNameTheirTests holds docs/olm.md to its promise (issue 16, "each
// difference there is tested"): every row of a table of differences — a table whose header
// has a "why" column (olmsync against OLM) or a "seeds" column (the seeds against OLM's
// code) — names at least one test, and every test it names exists in the module. A row
// added without its test, or a test renamed without the docs, fails here.
func TestOLMDifferencesNameTheirTests(t *testing.T) {
	root := moduleRoot(t)
	tests := moduleTests(t, root)
	f, err := os.Open(filepath.Join(root, "docs", "olm.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, inTable, differences := 0, false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if !strings.HasPrefix(text, "|") {
			inTable = false
			continue
		}
		if !inTable { // the header
			inTable = true
			header := strings.ToLower(text)
			differences = strings.Contains(header, "| why") || strings.Contains(header, "| seeds |")
			continue
		}
		if !differences || strings.HasPrefix(text, "|---") || strings.HasPrefix(text, "| ---") {
			continue
		}
		rows++
		names := testName.FindAllString(text, -1)
		topic, _, _ := strings.Cut(strings.TrimPrefix(text, "| "), " |")
		if len(names) == 0 {
			t.Errorf("docs/olm.md:%d: the difference %q names no test", line, topic)
		}
		for _, n := range names {
			if !tests[n] {
				t.Errorf("docs/olm.md:%d: the difference %q names %s, which no _test.go file defines", line, topic, n)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 40 {
		t.Fatalf("found %d rows of differences in docs/olm.md: has the tables' header changed?", rows)
	}
}

// moduleTests are the names of the test functions (func TestX(t *testing.T)) of the module.
func moduleTests(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found only %d tests under %s", len(out), root)
	}
	return out
}
