package policy

import (
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// astValue is the completed input as the value the rules read: the value of Input.value
// (its JSON form) built as OPA's values directly, with no map of its own in between. With
// builtinOnly, the value is for the built-in rules alone, and an object of a kind outside
// OLM's groups is given as its apiVersion, kind and metadata: the built-in rules read
// nothing else of such an object (they place it by its scope, which the input gives, and
// name it), and its spec — a Deployment's pod template, a CRD's schema — was most of the
// memory a check of one large cluster held at its end, converted for OPA
// (docs/development.md). The users' rules always read the whole input; and the built-in
// rules find the same over both (TestBuiltinRulesReadWhatThePrunedInputHolds).
func (in *Input) astValue(builtinOnly bool) (ast.Value, error) {
	apps := make([]*ast.Term, len(in.Apps))
	for i := range in.Apps {
		app := &in.Apps[i]
		objects := make([]*ast.Term, len(app.Objects))
		for j := range app.Objects {
			obj := &app.Objects[j]
			manifest, err := manifestValue(obj.Object, builtinOnly)
			if err != nil {
				return nil, err
			}
			objects[j] = ast.ObjectTerm(
				ast.Item(ast.InternedTerm("object"), ast.NewTerm(manifest)),
				ast.Item(ast.InternedTerm("source"), ast.ObjectTerm(
					ast.Item(ast.InternedTerm("file"), ast.StringTerm(obj.Source.File)),
					ast.Item(ast.InternedTerm("line"), ast.InternedTerm(obj.Source.Line)),
				)),
				ast.Item(ast.InternedTerm("namespace"), ast.StringTerm(obj.Namespace)),
				ast.Item(ast.InternedTerm("scope"), ast.StringTerm(string(obj.Scope))),
			)
		}
		apps[i] = ast.ObjectTerm(
			ast.Item(ast.InternedTerm("name"), ast.StringTerm(app.Name)),
			ast.Item(ast.InternedTerm("path"), ast.StringTerm(app.Path)),
			ast.Item(ast.InternedTerm("namespace"), ast.StringTerm(app.Namespace)),
			ast.Item(ast.InternedTerm("clusterScope"), ast.InternedTerm(app.ClusterScope)),
			ast.Item(ast.InternedTerm("ownScope"), ast.InternedTerm(app.OwnScope)),
			ast.Item(ast.InternedTerm("objects"), ast.ArrayTerm(objects...)),
		)
	}
	config, err := ast.InterfaceToValue(in.configValue())
	if err != nil {
		return nil, err
	}
	return ast.NewObject(
		ast.Item(ast.InternedTerm("apiVersion"), ast.StringTerm(in.APIVersion)),
		ast.Item(ast.InternedTerm("kind"), ast.StringTerm(in.Kind)),
		ast.Item(ast.InternedTerm("cluster"), ast.StringTerm(in.Cluster)),
		ast.Item(ast.InternedTerm("library"), ast.InternedTerm(in.Library)),
		ast.Item(ast.InternedTerm("config"), ast.NewTerm(config)),
		ast.Item(ast.InternedTerm("apps"), ast.ArrayTerm(apps...)),
	), nil
}

// manifestValue is an object's manifest as the rules read it; for the built-in rules
// alone, an object outside OLM's groups only as its apiVersion, kind and metadata (those
// of them it has).
func manifestValue(manifest map[string]any, builtinOnly bool) (ast.Value, error) {
	if manifest == nil {
		return ast.NullValue, nil
	}
	if builtinOnly && !olmObject(manifest) {
		kept := make(map[string]any, 3)
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if v, ok := manifest[k]; ok {
				kept[k] = v
			}
		}
		manifest = kept
	}
	return ast.InterfaceToValue(manifest)
}

// olmObject reports an object of OLM's API groups (operators.coreos.com, and OLM v1's
// olm.operatorframework.io): the objects whose spec the built-in rules read.
func olmObject(manifest map[string]any) bool {
	apiVersion, _ := manifest["apiVersion"].(string)
	return strings.HasPrefix(apiVersion, "operators.coreos.com/") || strings.HasPrefix(apiVersion, "olm.operatorframework.io/")
}
