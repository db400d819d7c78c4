package resolve

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/olmsync/olmsync/olm/catalog"
)

// An olm.constraint's cel clause is a CEL rule over a candidate bundle's properties, in the
// environment OLM defines: the variable properties (a list of {type, value} maps) and the
// function semver_compare(a, b), -1, 0 or 1 as a is lower than, equal to or higher than b.

var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("properties", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Function("semver_compare",
			cel.Overload("semver_compare_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.IntType,
				cel.BinaryBinding(semverCompare))),
	)
})

func semverCompare(a, b ref.Val) ref.Val {
	as, ok1 := a.Value().(string)
	bs, ok2 := b.Value().(string)
	if !ok1 || !ok2 {
		return types.NewErr("semver_compare takes two version strings")
	}
	va, err := semver.Parse(as)
	if err != nil {
		return types.WrapErr(err)
	}
	vb, err := semver.Parse(bs)
	if err != nil {
		return types.WrapErr(err)
	}
	return types.Int(va.Compare(vb))
}

type celPredicate struct {
	rule    string
	program cel.Program
}

func newCELPredicate(rule string) (predicate, error) {
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	ast, iss := env.Compile(rule)
	if iss.Err() != nil {
		return nil, fmt.Errorf("cel rule %q: %w", rule, iss.Err())
	}
	if !ast.OutputType().IsExactType(types.BoolType) && !ast.OutputType().IsExactType(types.DynType) {
		return nil, fmt.Errorf("cel rule %q: it must be a boolean, not %s", rule, ast.OutputType())
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("cel rule %q: %w", rule, err)
	}
	return celPredicate{rule: rule, program: prg}, nil
}

// test evaluates the rule over the entry's properties; a rule that errors on a bundle does
// not match it.
func (p celPredicate) test(e *entry) bool {
	props := make([]map[string]any, 0, len(e.props))
	for _, prop := range e.props {
		var v any
		if json.Unmarshal(prop.Value, &v) != nil {
			continue
		}
		props = append(props, map[string]any{"type": prop.Type, "value": v})
	}
	out, _, err := p.program.Eval(map[string]any{"properties": props})
	if err != nil {
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}

func (p celPredicate) gvk() *catalog.GVK { return nil }
func (p celPredicate) pkgName() string   { return "" }
func (p celPredicate) String() string    { return fmt.Sprintf("matching the rule %q", p.rule) }
