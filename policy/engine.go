package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Options configure an Engine.
type Options struct {
	// Policies are folders of users' rules, evaluated with the built-in ones.
	Policies []PolicySource
	// Waivers are the waivers of olmsync.yaml.
	Waivers []Waiver
	// Now is the time waiver expiry is judged at; time.Now when nil.
	Now func() time.Time
	// Cache, when set, keeps each cluster's findings by the digest of the rules and its
	// input (check --base evaluates the base and the head with one cache).
	Cache *FindingsCache
	// Compiled, when set, keeps the compiled rules by the digest of their sources, for
	// every Engine made with it (the reconciler makes one per Sync and revision).
	Compiled *CompileCache
	// Timeout bounds each evaluation over one cluster: of the built-in rules together,
	// and of each package of users' rules on its own, so that a rule that runs past it is
	// named. Zero means DefaultTimeout; a negative value, no deadline.
	Timeout time.Duration
	// Sandbox, when set, compiles and evaluates the users' rules in a child process
	// whose memory is bounded (sandbox.go); nil evaluates them in this process.
	Sandbox *Sandbox
}

// DefaultTimeout is the deadline of one evaluation when Options.Timeout is zero: the
// built-in rules take well under a second over the largest repositories measured (300
// apps, 5,000 objects), and a rule is an error, not a wait.
const DefaultTimeout = 5 * time.Second

// Engine evaluates the built-in rules and users' rules. It compiles them once, in New (or
// takes them compiled from a CompileCache), and is safe to use from several goroutines.
type Engine struct {
	*compiled
	// sandbox evaluates the users' rules, userFiles, when set.
	sandbox   *Sandbox
	userFiles []regoFile
	waivers   []Waiver
	now       func() time.Time
	timeout   time.Duration
	// cache reuses findings, keyed with the compiled rules' fingerprint.
	cache *FindingsCache
}

// ruleQuery is one prepared query: the built-in rules together (so that the helpers'
// values are computed once per cluster), or one package of a user's rules on its own (so
// that a rule that fails, loops or exhausts memory is named with its file).
type ruleQuery struct {
	query    rego.PreparedEvalQuery
	bindings []binding
	// rule is the user's package the query evaluates; nil for the built-in rules.
	rule *Rule
	// sandboxed: the package is evaluated in the sandbox, not by query.
	sandboxed bool
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
	var user []regoFile
	var problems []Problem
	for _, src := range opts.Policies {
		files, probs := readFolder(src, false)
		user, problems = append(user, files...), append(problems, probs...)
	}
	if len(problems) > 0 {
		_, more := parseUserFiles(user) // a file that cannot be read does not hide another's errors
		return nil, &PolicyError{Problems: append(problems, more...)}
	}
	sandboxed := opts.Sandbox != nil && len(user) > 0
	c, err := opts.Compiled.compile(ctx, user, sandboxed)
	if err != nil {
		return nil, err
	}
	if _, err := validateWaivers(opts.Waivers, time.Time{}); err != nil {
		return nil, err
	}
	e := &Engine{compiled: c, waivers: slices.Clone(opts.Waivers), now: opts.Now, timeout: opts.Timeout, cache: opts.Cache}
	if sandboxed {
		e.sandbox, e.userFiles = opts.Sandbox, user
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.timeout == 0 {
		e.timeout = DefaultTimeout
	}
	return e, nil
}

// compile parses and compiles the built-in rules and user's, and prepares the queries;
// fingerprint is the digest of their sources. sandboxed leaves the users' rules parsed
// but not compiled: the sandbox compiles and evaluates them.
func compile(ctx context.Context, fingerprint string, user []regoFile, sandboxed bool) (*compiled, error) {
	builtin, problems := parseFiles(builtinFiles())
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	users, problems := parseUserFiles(user)
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	compiler := ast.NewCompiler().WithCapabilities(capabilities())
	all := maps.Clone(builtin)
	if !sandboxed {
		maps.Copy(all, users)
	}
	if compiler.Compile(all); compiler.Failed() {
		return nil, policyErrorFrom(compiler.Errors)
	}
	pkgs := append(rulePackages(builtin, false), rulePackages(users, true)...)
	if problems := idClashes(pkgs); len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	c := &compiled{fingerprint: fingerprint, rules: append(catalogOf(pkgs), waiverRules...)}
	slices.SortFunc(c.rules, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	if err := c.prepare(ctx, compiler, pkgs, sandboxed); err != nil {
		return nil, err
	}
	return c, nil
}

// parseUserFiles parses users' rule files. The package namespace olmsync is the built-in
// rules' own: a user's package there would merge into them.
func parseUserFiles(files []regoFile) (map[string]*ast.Module, []Problem) {
	user := map[string]*ast.Module{}
	var problems []Problem
	for _, f := range files {
		if _, dup := user[f.name]; dup {
			problems = append(problems, Problem{File: f.name, Message: "the same file is given twice"})
			continue
		}
		mods, probs := parseFiles([]regoFile{f})
		problems = append(problems, probs...)
		for name, mod := range mods {
			if path := mod.Package.Path; len(path) > 1 && path[1].Equal(ast.StringTerm(builtinNamespace)) {
				problems = append(problems, Problem{
					File: name, Line: mod.Package.Location.Row,
					Message: fmt.Sprintf("package %s: the package namespace %q is reserved for olmsync's built-in rules; give your package another name",
						strings.TrimPrefix(path.String(), "data."), builtinNamespace),
				})
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

// prepare builds the queries: one that reads every deny/warn rule of the built-in
// packages, so that one evaluation per cluster shares the helpers' cached values, and one
// per package of users' rules. Each rule is read as [x | x := data.<package>.<rule>]: a
// rule that is undefined yields [] instead of making the whole query undefined and hiding
// every other rule's results. The same again with only the rules marked for library roots
// (Rule.Library) are the queries of a library root's input: the other rules' findings
// would be dropped there, and on a catalog repository of hundreds of library roots
// evaluating them was most of the evaluation.
func (c *compiled) prepare(ctx context.Context, compiler *ast.Compiler, pkgs []rulePackage, sandboxed bool) error {
	builtin, builtinLibrary := &ruleQuery{}, &ruleQuery{}
	var user []*ruleQuery
	for i := range pkgs {
		pkg := &pkgs[i]
		if pkg.rule.Custom {
			q := &ruleQuery{rule: &pkg.rule, sandboxed: sandboxed}
			q.bind(pkg)
			user = append(user, q)
			continue
		}
		builtin.bind(pkg)
		if pkg.rule.Library {
			builtinLibrary.bind(pkg)
		}
	}
	// A user's package is one query of its own, the same for both: prepared once.
	for _, q := range append([]*ruleQuery{builtin, builtinLibrary}, user...) {
		if err := q.prepare(ctx, compiler); err != nil {
			return err
		}
	}
	for _, q := range append([]*ruleQuery{builtin}, user...) {
		if len(q.bindings) > 0 {
			c.queries = append(c.queries, *q)
		}
	}
	for _, q := range append([]*ruleQuery{builtinLibrary}, user...) {
		if len(q.bindings) > 0 && (q.rule == nil || q.rule.Library) {
			c.libraryQueries = append(c.libraryQueries, *q)
		}
	}
	return nil
}

// bind adds every deny/warn rule of pkg to the query.
func (q *ruleQuery) bind(pkg *rulePackage) {
	for _, name := range pkg.names {
		q.bindings = append(q.bindings, binding{
			name:     fmt.Sprintf("r%d", len(q.bindings)),
			ref:      pkg.path.Append(ast.StringTerm(name)).String(),
			severity: severityOfRule(name),
			pkg:      pkg,
		})
	}
}

// prepare prepares the query's evaluation, unless it has no rules or the sandbox
// evaluates it.
func (q *ruleQuery) prepare(ctx context.Context, compiler *ast.Compiler) error {
	if len(q.bindings) == 0 || q.sandboxed {
		return nil
	}
	exprs := make([]string, len(q.bindings))
	for i, b := range q.bindings {
		exprs[i] = fmt.Sprintf("%s = [x | x := %s]", b.name, b.ref)
	}
	body, err := ast.ParseBody(strings.Join(exprs, "; "))
	if err != nil {
		return fmt.Errorf("build policy query: %w", err)
	}
	q.query, err = rego.New(rego.ParsedQuery(body), rego.Compiler(compiler)).PrepareForEval(ctx)
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
	for _, in := range clusters {
		if seen[in.Key()] {
			return nil, fmt.Errorf("%s is given twice: give each cluster once, with all of its apps", in.Name())
		}
		seen[in.Key()] = true
	}
	completed := make([]Input, len(clusters))
	keys := make([]string, len(clusters))
	found := make([][]Violation, len(clusters))
	cached := make([]bool, len(clusters))
	_ = eachInput(len(clusters), func(i int) error { // never fails
		completed[i] = clusters[i].Complete()
		keys[i] = e.findingsKey(&completed[i])
		found[i], cached[i] = e.cache.get(keys[i])
		return nil
	})
	sandboxed, err := e.sandboxFindings(ctx, completed, cached)
	if err != nil {
		return nil, err
	}
	err = eachInput(len(clusters), func(i int) error {
		if cached[i] {
			return nil
		}
		f, err := e.evaluateInput(ctx, &completed[i], sandboxed[i])
		if err != nil {
			return fmt.Errorf("evaluate %s: %w", completed[i].Name(), err)
		}
		e.cache.put(keys[i], f)
		found[i] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(found...)
	sortViolations(out)
	return out, nil
}

// eachInput runs fn for every input index on as many goroutines as the process may run
// at once: each input is evaluated on its own (the rules are compiled once and safe to
// evaluate concurrently), and a repository of hundreds of library roots is hundreds of
// inputs. After an input fails the rest are skipped; the error returned is that of the
// first input in order that failed, so a report names the same input whatever the
// scheduling.
func eachInput(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			// An input once claimed is evaluated: the claimed ones are always a prefix,
			// and the first failure in order is in it.
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if errs[i] = fn(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sandboxFindings evaluates the users' rules in the sandbox over the completed inputs
// whose findings are not cached, all in one child process; nil results without a sandbox.
func (e *Engine) sandboxFindings(ctx context.Context, completed []Input, cached []bool) ([]*sandboxResults, error) {
	out := make([]*sandboxResults, len(completed))
	if e.sandbox == nil {
		return out, nil
	}
	var todo []int
	var values []map[string]any
	for i := range completed {
		if !cached[i] {
			todo = append(todo, i)
			values = append(values, completed[i].value())
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	results, err := e.evaluateInSandbox(ctx, values)
	if err != nil {
		return nil, err
	}
	for j, i := range todo {
		out[i] = &results[j]
	}
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

// evaluateInput runs every rule over one completed input; the users' rules' results come
// from sandboxed when the sandbox evaluated them. The input's value is the built-in rules'
// (astValue) unless users' rules are evaluated in this process.
func (e *Engine) evaluateInput(ctx context.Context, in *Input, sandboxed *sandboxResults) ([]Violation, error) {
	queries := e.queries
	if in.Library {
		queries = e.libraryQueries
	}
	builtinOnly := !slices.ContainsFunc(queries, func(q ruleQuery) bool { return q.rule != nil && !q.sandboxed })
	value, err := in.astValue(builtinOnly)
	if err != nil {
		return nil, fmt.Errorf("build policy input: %w", err)
	}
	return e.evaluateOver(ctx, in, queries, value, sandboxed)
}

// evaluateOver runs queries over one completed input, given as value.
func (e *Engine) evaluateOver(ctx context.Context, in *Input, queries []ruleQuery, value ast.Value, sandboxed *sandboxResults) ([]Violation, error) {
	c := newClusterIndex(in)
	var found []Violation
	seen := map[Violation]bool{}
	var problems []Problem
	for i := range queries {
		q := &queries[i]
		if q.sandboxed {
			if sandboxed != nil && sandboxed.bindings[q.rule.ID] != nil {
				found, problems = q.results(sandboxed.bindings[q.rule.ID], c, in.Library, found, seen, problems)
			}
			continue
		}
		rs, err := e.eval(ctx, q, value)
		if err != nil {
			return nil, err
		}
		found, problems = q.results(rs[0].Bindings, c, in.Library, found, seen, problems)
	}
	if sandboxed != nil {
		problems = append(problems, sandboxed.problems...)
	}
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	return found, nil
}

// eval evaluates one query over one input under the engine's deadline. A query stopped
// by the deadline, or by the caller with a cause other than plain cancellation (the
// memory ceiling of `olmsync check`), is a PolicyError naming the rule and its file and
// wrapping the cause.
func (e *Engine) eval(ctx context.Context, q *ruleQuery, input ast.Value) (rego.ResultSet, error) {
	evalCtx := ctx
	if e.timeout > 0 {
		var cancel context.CancelFunc
		evalCtx, cancel = context.WithTimeoutCause(ctx, e.timeout,
			fmt.Errorf("%w of %s", ErrTimeout, e.timeout))
		defer cancel()
	}
	// A built-in function that fails (yaml.unmarshal of a bomb, regex.match of a bad
	// pattern) leaves its expression undefined, and the rule with it: a rule that never
	// fires, unseen. Each such failure is a problem naming the rule's file and line.
	var builtinErrs []topdown.Error
	rs, err := q.query.Eval(evalCtx, rego.EvalParsedInput(input), rego.EvalBuiltinErrorList(&builtinErrs))
	if err == nil && len(builtinErrs) > 0 {
		pe := &PolicyError{}
		for _, be := range builtinErrs {
			pe.Problems = append(pe.Problems, problemAt(be.Location, "a built-in function failed, so the rule could not judge the input: "+be.Message))
		}
		return nil, pe
	}
	if err != nil {
		cause := context.Cause(evalCtx)
		if cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, policyErrorFrom(err)
		}
		return nil, q.stopped(cause)
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("policy query returned %d results, want 1", len(rs))
	}
	return rs, nil
}

// ErrTimeout is wrapped by the PolicyError of a rule that ran past Options.Timeout.
var ErrTimeout = errors.New("did not finish within the policy timeout")

// stopped is the PolicyError of a query its deadline or the memory ceiling stopped.
func (q *ruleQuery) stopped(cause error) error {
	what, file := "the built-in rules", builtinRoot+"/rego"
	if q.rule != nil {
		what = fmt.Sprintf("rule %s (%s)", q.rule.ID, strings.TrimPrefix(q.rule.Package, "data."))
		file = q.rule.File
	}
	msg := fmt.Sprintf("%s was stopped: %v", what, cause)
	if errors.Is(cause, ErrTimeout) {
		msg = fmt.Sprintf("%s %v", what, cause)
	}
	return &PolicyError{Problems: []Problem{{File: file, Message: msg}}, cause: cause}
}

// results reads the query's results into violations (one object named two ways with one
// message is one violation) and problems. Over a library root's input only the rules
// marked for library roots (Rule.Library) count.
func (q *ruleQuery) results(bindings rego.Vars, c *clusterIndex, library bool, found []Violation, seen map[Violation]bool, problems []Problem) ([]Violation, []Problem) {
	for _, b := range q.bindings {
		if library && !b.pkg.rule.Library {
			continue
		}
		results, err := ruleResults(bindings[b.name])
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
			for _, v := range c.findings(b, r) {
				if !seen[v] {
					seen[v] = true
					found = append(found, v)
				}
			}
		}
	}
	return found, problems
}

func (b binding) problem(err error) Problem {
	return Problem{File: b.pkg.rule.File, Message: fmt.Sprintf("%s: %v", strings.TrimPrefix(b.ref, "data."), err)}
}
