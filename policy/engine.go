package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Options configure an Engine.
type Options struct {
	// Policies are folders of users' rules, evaluated with the built-in ones.
	Policies []PolicySource
	// Waivers are the waivers of olmsync.yaml.
	Waivers []Waiver
	// Now is the time waiver expiry is judged at; time.Now when nil.
	Now func() time.Time
}

// Engine evaluates the built-in rules and users' rules. It compiles them once, in New, and
// is safe to use from several goroutines.
type Engine struct {
	query    rego.PreparedEvalQuery
	bindings []binding
	rules    []Rule
	waivers  []Waiver
	now      func() time.Time
}

// binding is one deny/warn rule of one package: the query binds its results to name.
type binding struct {
	name     string
	ref      string
	severity Severity
	pkg      *rulePackage
}

// New loads and compiles the built-in rules and the users' rules of opts.Policies, and
// prepares the query that evaluates them. A rule that does not parse or compile is a
// *PolicyError naming its file and line; an unusable waiver wraps ErrInvalidWaiver.
func New(ctx context.Context, opts Options) (*Engine, error) {
	builtin, problems := parseFolder(PolicySource{Root: builtinRoot, FS: builtinFS}, false)
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	user, problems := parseUserFolders(opts.Policies)
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	compiler := ast.NewCompiler().WithCapabilities(capabilities())
	all := maps.Clone(builtin)
	maps.Copy(all, user)
	if compiler.Compile(all); compiler.Failed() {
		return nil, policyErrorFrom(compiler.Errors)
	}
	pkgs := append(rulePackages(builtin, false), rulePackages(user, true)...)
	if problems := idClashes(pkgs); len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	if _, err := validateWaivers(opts.Waivers, time.Time{}); err != nil {
		return nil, err
	}
	e := &Engine{waivers: slices.Clone(opts.Waivers), now: opts.Now}
	if e.now == nil {
		e.now = time.Now
	}
	e.rules = append(catalogOf(pkgs), waiverRules...)
	slices.SortFunc(e.rules, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	if err := e.prepare(ctx, compiler, pkgs); err != nil {
		return nil, err
	}
	return e, nil
}

// parseUserFolders parses users' rule folders. The package namespace olmsync is the
// built-in rules' own: a user's package there would merge into them.
func parseUserFolders(srcs []PolicySource) (map[string]*ast.Module, []Problem) {
	user := map[string]*ast.Module{}
	var problems []Problem
	for _, src := range srcs {
		mods, probs := parseFolder(src, false)
		problems = append(problems, probs...)
		for _, name := range sortedKeys(mods) {
			mod := mods[name]
			if path := mod.Package.Path; len(path) > 1 && path[1].Equal(ast.StringTerm(builtinNamespace)) {
				problems = append(problems, Problem{
					File: name, Line: mod.Package.Location.Row,
					Message: fmt.Sprintf("package %s: the package namespace %q is reserved for olmsync's built-in rules; give your package another name",
						strings.TrimPrefix(path.String(), "data."), builtinNamespace),
				})
				continue
			}
			if _, dup := user[name]; dup {
				problems = append(problems, Problem{File: name, Message: "the same file is given twice"})
				continue
			}
			user[name] = mod
		}
	}
	return user, problems
}

// idClashes reports a user's rule that claims the ID of a built-in rule.
func idClashes(pkgs []rulePackage) []Problem {
	builtinIDs := map[string]bool{}
	for _, r := range waiverRules {
		builtinIDs[r.ID] = true
	}
	for _, p := range pkgs {
		if !p.rule.Custom {
			builtinIDs[p.rule.ID] = true
		}
	}
	var problems []Problem
	for _, p := range pkgs {
		if p.rule.Custom && builtinIDs[p.rule.ID] {
			problems = append(problems, Problem{File: p.rule.File, Message: fmt.Sprintf(
				"package %s: rule ID %s is a built-in rule's; give the rule another ID", p.rule.ID, p.rule.ID)})
		}
	}
	return problems
}

// prepare builds one query that reads every deny/warn rule of every package, so that one
// evaluation per cluster shares the helpers' cached values. Each rule is read as
// [x | x := data.<package>.<rule>]: a rule that is undefined yields [] instead of making
// the whole query undefined and hiding every other rule's results.
func (e *Engine) prepare(ctx context.Context, compiler *ast.Compiler, pkgs []rulePackage) error {
	var exprs []string
	for i := range pkgs {
		pkg := &pkgs[i]
		for _, name := range pkg.names {
			b := binding{
				name:     fmt.Sprintf("r%d", len(e.bindings)),
				ref:      pkg.path.Append(ast.StringTerm(name)).String(),
				severity: severityOfRule(name),
				pkg:      pkg,
			}
			e.bindings = append(e.bindings, b)
			exprs = append(exprs, fmt.Sprintf("%s = [x | x := %s]", b.name, b.ref))
		}
	}
	body, err := ast.ParseBody(strings.Join(exprs, "; "))
	if err != nil {
		return fmt.Errorf("build policy query: %w", err)
	}
	e.query, err = rego.New(rego.ParsedQuery(body), rego.Compiler(compiler)).PrepareForEval(ctx)
	if err != nil {
		return policyErrorFrom(err)
	}
	return nil
}

// Rules returns the catalog of every rule the engine evaluates, sorted by ID: the
// built-in rules, the users' rules and the waiver rules.
func (e *Engine) Rules() []Rule {
	return slices.Clone(e.rules)
}

// Rule returns the catalog entry of a rule ID.
func (e *Engine) Rule(id string) (Rule, bool) {
	i := slices.IndexFunc(e.rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return e.rules[i], true
}

// Evaluate checks clusters, each one input, and returns every violation sorted by file,
// line and rule, with the waivers applied (Findings, then Waive). Each cluster is
// evaluated on its own: no rule sees two clusters. The inputs are completed
// (Input.Complete) on copies; the caller's are left as they are.
func (e *Engine) Evaluate(ctx context.Context, clusters ...Input) ([]Violation, error) {
	found, err := e.Findings(ctx, clusters...)
	if err != nil {
		return nil, err
	}
	return e.Waive(clusters, found)
}

// Findings checks clusters, each one input, and returns what the rules found, waivers not
// applied: a caller that adds findings of its own (the OLM preview of check) waives them
// all in one step afterwards with Waive. Each cluster is evaluated on its own: no rule
// sees two clusters.
func (e *Engine) Findings(ctx context.Context, clusters ...Input) ([]Violation, error) {
	seen := map[string]bool{}
	var out []Violation
	for _, in := range clusters {
		if seen[in.Cluster] {
			return nil, fmt.Errorf("%s is given twice: give each cluster once, with all of its apps", clusterName(in.Cluster))
		}
		seen[in.Cluster] = true
		completed := in.Complete()
		found, err := e.evaluateCluster(ctx, &completed)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", clusterName(in.Cluster), err)
		}
		out = append(out, found...)
	}
	sortViolations(out)
	return out, nil
}

// Waive applies the waivers — the olmsync.dev/waive annotations of the clusters' objects
// and the engine's config waivers — to violations, whatever produced them (the rules, or
// a later stage of the check), and adds the findings about the waivers themselves:
// expired (OP900), stale (OP901), unreadable (OP902). Call it once, with every violation
// of the clusters: a waiver that matches none of them is stale. The result is sorted by
// file, line and rule.
func (e *Engine) Waive(clusters []Input, violations []Violation) ([]Violation, error) {
	config, err := validateWaivers(e.waivers, e.now())
	if err != nil {
		return nil, err
	}
	return waive(clusters, config, violations), nil
}

func clusterName(name string) string {
	if name == "" {
		return "the default cluster"
	}
	return fmt.Sprintf("cluster %q", name)
}

// evaluateCluster runs every rule over one completed input.
func (e *Engine) evaluateCluster(ctx context.Context, in *Input) ([]Violation, error) {
	value, err := ast.InterfaceToValue(in.value())
	if err != nil {
		return nil, fmt.Errorf("build policy input: %w", err)
	}
	rs, err := e.query.Eval(ctx, rego.EvalParsedInput(value))
	if err != nil {
		return nil, policyErrorFrom(err)
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("policy query returned %d results, want 1", len(rs))
	}
	c := newClusterIndex(in)
	var found []Violation
	seen := map[Violation]bool{}
	var problems []Problem
	for _, b := range e.bindings {
		results, err := ruleResults(rs[0].Bindings[b.name])
		if err != nil {
			problems = append(problems, b.problem(err))
			continue
		}
		for _, raw := range results {
			r, err := decodeResult(raw)
			if err != nil {
				problems = append(problems, b.problem(err))
				continue
			}
			// One object named two ways (a reference and a manifest) with one message is
			// one violation.
			for _, v := range c.findings(b, r) {
				if !seen[v] {
					seen[v] = true
					found = append(found, v)
				}
			}
		}
	}
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	return found, nil
}

func (b binding) problem(err error) Problem {
	return Problem{File: b.pkg.rule.File, Message: fmt.Sprintf("%s: %v", strings.TrimPrefix(b.ref, "data."), err)}
}
