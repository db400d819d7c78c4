package policy

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// builtinFS holds the built-in rules and their tests (the tests are skipped when the
// rules are loaded for evaluation; the Go tests run them).
//
//go:embed rego/*.rego
var builtinFS embed.FS

// builtinRoot names the built-in files in messages by their place in the repository.
const builtinRoot = "policy"

// builtinNamespace is the package prefix reserved for the built-in rules and library.
const builtinNamespace = "olmsync"

// Rule describes one rule for reports: SARIF rule help, JUnit test names, docs links.
type Rule struct {
	// ID is the rule's stable identifier: OP001…, OP900… or a user rule's own.
	ID string `json:"id"`
	// Title is one line saying what the rule requires.
	Title string `json:"title"`
	// Description is a paragraph: what the rule checks, why, and how to fix a violation.
	Description string `json:"description,omitempty"`
	// Severity is the rule's severity; OP009 also warns (in the cluster-scope app).
	Severity Severity `json:"severity"`
	// ADR is the sentence of the operator placement ADR the rule enforces (built-ins).
	ADR string `json:"adr,omitempty"`
	// OLM is the OLM behaviour a built-in rule that is not from the ADR guards against,
	// in a sentence (OP014: where OLM looks for a Subscription's catalog).
	OLM string `json:"olm,omitempty"`
	// Kinds lists the kinds the rule looks at; empty means every kind.
	Kinds []string `json:"kinds,omitempty"`
	// Custom is true for a user's rule.
	Custom bool `json:"custom,omitempty"`
	// Library is true for a rule whose verdict does not depend on which app holds an
	// object (an OperatorGroup's shape, a Subscription without an OperatorGroup beside
	// it): it is evaluated on library roots too (METADATA custom.library: true). The
	// placement rules are not.
	Library bool `json:"library,omitempty"`
	// Package is the Rego package of the rule (data.olmsync.rules.op001); empty for the
	// waiver rules, which olmsync checks in Go.
	Package string `json:"package,omitempty"`
	// File is the Rego file declaring the rule.
	File string `json:"file,omitempty"`
}

// Help is the rule's help text in Markdown: its description and the ADR sentence (or the
// OLM behaviour the rule follows).
func (r Rule) Help() string {
	var b strings.Builder
	b.WriteString(r.Description)
	for _, q := range []struct{ intro, text string }{
		{"The ADR \"Managing Operators\" says:", r.ADR},
		{"What OLM does:", r.OLM},
	} {
		if q.text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(q.intro + "\n\n> ")
		b.WriteString(q.text)
	}
	return b.String()
}

// PolicySource is a folder of users' rules: every .rego file in it and below it, except
// tests (*_test.rego).
type PolicySource struct {
	// Root names the folder in messages, for example "policies/acme".
	Root string
	FS   fs.FS
}

// Dir is the folder at path on disk.
func Dir(path string) PolicySource {
	return PolicySource{Root: path, FS: os.DirFS(path)}
}

// BuiltinRules returns the catalog of the built-in rules and of the waiver rules, by ID.
func BuiltinRules() []Rule {
	return slices.Clone(builtinCatalog())
}

var builtinCatalog = sync.OnceValue(func() []Rule {
	modules, problems := parseFiles(builtinFiles())
	if len(problems) > 0 {
		panic(fmt.Sprintf("built-in rules do not parse: %v", problems))
	}
	rules := catalogOf(rulePackages(modules, false))
	rules = append(rules, waiverRules...)
	slices.SortFunc(rules, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return rules
})

// parseFolder parses the .rego files of a folder, tests included when tests is true.
// Modules are keyed and located by Root/path, so errors name the file as the user knows it.
func parseFolder(src PolicySource, tests bool) (map[string]*ast.Module, []Problem) {
	files, problems := readFolder(src, tests)
	modules, more := parseFiles(files)
	return modules, append(problems, more...)
}

// regoFile is one .rego file of a policy folder, named Root/path.
type regoFile struct {
	name string
	data []byte
}

// readFolder reads the .rego files of a folder, tests included when tests is true, in
// the folder's lexical order. A folder without any is a problem.
func readFolder(src PolicySource, tests bool) ([]regoFile, []Problem) {
	var files []regoFile
	var problems []Problem
	err := fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".rego") || (!tests && strings.HasSuffix(p, "_test.rego")) {
			return nil
		}
		name := path.Join(src.Root, p)
		data, err := fs.ReadFile(src.FS, p)
		if err != nil {
			problems = append(problems, Problem{File: name, Message: err.Error()})
			return nil
		}
		files = append(files, regoFile{name: name, data: data})
		return nil
	})
	if err != nil {
		problems = append(problems, Problem{File: src.Root, Message: fmt.Sprintf("read policy folder: %v", err)})
	} else if len(files) == 0 && len(problems) == 0 {
		problems = append(problems, Problem{File: src.Root, Message: "no .rego files (rules) in the policy folder"})
	}
	return files, problems
}

// parseFiles parses Rego files into modules keyed by their names.
func parseFiles(files []regoFile) (map[string]*ast.Module, []Problem) {
	modules := map[string]*ast.Module{}
	var problems []Problem
	for _, f := range files {
		mod, err := ast.ParseModuleWithOpts(f.name, string(f.data), ast.ParserOptions{
			ProcessAnnotation: true,
			RegoVersion:       ast.RegoV1,
			Capabilities:      capabilities(),
		})
		if err != nil {
			var pe *PolicyError
			if !errors.As(policyErrorFrom(err), &pe) {
				pe = &PolicyError{Problems: []Problem{{File: f.name, Message: err.Error()}}}
			}
			problems = append(problems, pe.Problems...)
			continue
		}
		modules[f.name] = mod
	}
	return modules, problems
}

// capabilities are OPA's built-in functions minus those that reach outside the evaluation:
// the network (http.send, net.lookup_ip_addr) and the process's environment (opa.runtime).
// Rules come from repositories; they must not read or send the credentials of the CI job
// or of the controller that evaluates them.
var capabilities = sync.OnceValue(func() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	denied := map[string]bool{"http.send": true, "net.lookup_ip_addr": true, "opa.runtime": true}
	caps.Builtins = slices.DeleteFunc(slices.Clone(caps.Builtins), func(b *ast.Builtin) bool { return denied[b.Name] })
	return caps
})

// rulePackage is a Rego package with deny/warn rules: what the engine queries and what
// the catalog describes.
type rulePackage struct {
	path ast.Ref
	// names are its deny/warn rules, sorted.
	names []string
	// rule is its catalog entry; rule.ID is the ID of its results unless a result names
	// its own.
	rule Rule
}

// rulePackages finds the packages with deny/warn rules among modules, sorted by path. A
// package's catalog entry comes from the METADATA of the package (custom.id, severity,
// adr, kinds; title; description); without an id the rule is named after the package
// (acme.operators). Without a severity it is error when the package has deny rules.
func rulePackages(modules map[string]*ast.Module, custom bool) []rulePackage {
	byPath := map[string]*rulePackage{}
	annotations := map[string]*ast.Annotations{}
	for _, file := range sortedKeys(modules) {
		mod := modules[file]
		key := mod.Package.Path.String()
		if a := packageAnnotation(mod); a != nil && annotations[key] == nil {
			annotations[key] = a
		}
		names := ruleNames(mod)
		if len(names) == 0 {
			continue
		}
		pkg := byPath[key]
		if pkg == nil {
			pkg = &rulePackage{path: mod.Package.Path, rule: Rule{
				ID: strings.TrimPrefix(key, "data."), Package: key, File: file, Custom: custom,
			}}
			byPath[key] = pkg
		}
		for _, n := range names {
			if !slices.Contains(pkg.names, n) {
				pkg.names = append(pkg.names, n)
			}
		}
	}
	pkgs := make([]rulePackage, 0, len(byPath))
	for _, key := range sortedKeys(byPath) {
		pkg := byPath[key]
		slices.Sort(pkg.names)
		pkg.rule.Severity = severityOf(pkg.names)
		if a := annotations[key]; a != nil {
			applyAnnotation(&pkg.rule, a)
		}
		pkgs = append(pkgs, *pkg)
	}
	return pkgs
}

// catalogOf is the catalog entries of rule packages, one per ID (the first package wins).
func catalogOf(pkgs []rulePackage) []Rule {
	var rules []Rule
	for _, pkg := range pkgs {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return r.ID == pkg.rule.ID }) {
			rules = append(rules, pkg.rule)
		}
	}
	return rules
}

// ruleNames returns the names of the deny/warn rules a module declares.
func ruleNames(mod *ast.Module) []string {
	var names []string
	for _, r := range mod.Rules {
		if name, ok := resultRuleName(r); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// resultRuleName returns the name of a rule whose results olmsync reads: deny and warn, and
// deny_<x> and warn_<x> as conftest allows.
func resultRuleName(r *ast.Rule) (string, bool) {
	ref := r.Head.Ref()
	if len(ref) != 1 {
		return "", false
	}
	v, ok := ref[0].Value.(ast.Var)
	if !ok {
		return "", false
	}
	name := string(v)
	if severityOfRule(name) == "" {
		return "", false
	}
	return name, true
}

// severityOfRule is the severity of a deny/warn rule's results; "" for any other rule.
func severityOfRule(name string) Severity {
	switch {
	case name == "deny" || strings.HasPrefix(name, "deny_"):
		return SeverityError
	case name == "warn" || strings.HasPrefix(name, "warn_"):
		return SeverityWarning
	default:
		return ""
	}
}

func severityOf(ruleNames []string) Severity {
	for _, n := range ruleNames {
		if severityOfRule(n) == SeverityError {
			return SeverityError
		}
	}
	return SeverityWarning
}

func packageAnnotation(mod *ast.Module) *ast.Annotations {
	for _, a := range mod.Annotations {
		if a.Scope == "package" {
			return a
		}
	}
	return nil
}

func applyAnnotation(rule *Rule, a *ast.Annotations) {
	rule.Title = strings.TrimSpace(a.Title)
	rule.Description = strings.TrimSpace(a.Description)
	if id, ok := a.Custom["id"].(string); ok && id != "" {
		rule.ID = id
	}
	if sev, ok := a.Custom["severity"].(string); ok && (Severity(sev) == SeverityError || Severity(sev) == SeverityWarning) {
		rule.Severity = Severity(sev)
	}
	if adr, ok := a.Custom["adr"].(string); ok {
		rule.ADR = strings.TrimSpace(adr)
	}
	if olm, ok := a.Custom["olm"].(string); ok {
		rule.OLM = strings.TrimSpace(olm)
	}
	if lib, ok := a.Custom["library"].(bool); ok {
		rule.Library = lib
	}
	if kinds, ok := a.Custom["kinds"].([]any); ok {
		for _, k := range kinds {
			if s, ok := k.(string); ok {
				rule.Kinds = append(rule.Kinds, s)
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
