package policy

import (
	"encoding/json"
	"errors"
	"fmt"
)

// result is one deny/warn result: a message, optionally the ID of the rule (else the
// package's) and the object it is about.
type result struct {
	msg    string
	rule   string
	object map[string]any
}

// ruleResults reads the value the query bound for one rule: [] when the rule is undefined,
// else [value], where value is a set (an array once it reaches Go) of results.
func ruleResults(bound any) ([]any, error) {
	wrapped, ok := bound.([]any)
	if !ok || len(wrapped) > 1 {
		return nil, fmt.Errorf("unexpected query value %s", brief(bound))
	}
	if len(wrapped) == 0 {
		return nil, nil
	}
	results, ok := wrapped[0].([]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want a set of results (deny contains result if { ... })", brief(wrapped[0]))
	}
	return results, nil
}

// decodeResult reads one result: a message string (as conftest allows), or an object with
// "msg" and optional "rule" and "object".
func decodeResult(raw any) (result, error) {
	switch v := raw.(type) {
	case string:
		if v == "" {
			return result{}, errors.New("a result is an empty message")
		}
		return result{msg: v}, nil
	case map[string]any:
		var r result
		var ok bool
		if r.msg, ok = v["msg"].(string); !ok || r.msg == "" {
			return result{}, fmt.Errorf(`result %s has no "msg" string`, brief(v))
		}
		if rule, found := v["rule"]; found {
			if r.rule, ok = rule.(string); !ok {
				return result{}, fmt.Errorf(`result %s: "rule" is not a string`, brief(v))
			}
		}
		if obj, found := v["object"]; found && obj != nil {
			if r.object, ok = obj.(map[string]any); !ok {
				return result{}, fmt.Errorf(`result %s: "object" is not an object`, brief(v))
			}
		}
		return r, nil
	default:
		return result{}, fmt.Errorf(`result %s is neither a message nor an object with "msg"`, brief(raw))
	}
}

// brief renders a value for an error message, cut short.
func brief(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	const limit = 200
	if len(data) > limit {
		return string(data[:limit]) + "…"
	}
	return string(data)
}

// located is one object entry of the input with its app.
type located struct {
	app     *App
	obj     *Object
	ref     ObjectRef
	waivers *annotationWaivers
}

func (l *located) violation(cluster, rule string, severity Severity, msg string) Violation {
	return Violation{
		Rule: rule, Severity: severity, Message: msg,
		Cluster: cluster, App: l.app.Name, File: l.obj.Source.File, Line: l.obj.Source.Line,
		Object: l.ref,
	}
}

type kindName struct{ kind, name string }

// clusterIndex finds the objects of one cluster's input by kind and name, so that a
// result's object can be matched to its app, file and line.
type clusterIndex struct {
	cluster string
	objects map[kindName][]*located
	// annotated are the objects with a waive annotation, in input order.
	annotated []*located
}

func newClusterIndex(in *Input) *clusterIndex {
	c := &clusterIndex{cluster: in.Cluster, objects: map[kindName][]*located{}}
	for i := range in.Apps {
		app := &in.Apps[i]
		for j := range app.Objects {
			obj := &app.Objects[j]
			apiVersion, _ := obj.Object["apiVersion"].(string)
			kind, _ := obj.Object["kind"].(string)
			name := metadataString(obj.Object, "name")
			l := &located{app: app, obj: obj, ref: ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: obj.Namespace, Name: name}}
			if l.waivers = annotationOf(obj.Object); l.waivers != nil {
				c.annotated = append(c.annotated, l)
			}
			key := kindName{kind, name}
			c.objects[key] = append(c.objects[key], l)
		}
	}
	return c
}

// findings turns one result into violations: one per input object the result's object
// names (usually exactly one), or one without file and line when it names none of them.
func (c *clusterIndex) findings(b binding, r result) []Violation {
	v := Violation{Rule: r.rule, Severity: b.severity, Message: r.msg, Cluster: c.cluster}
	if v.Rule == "" {
		v.Rule = b.pkg.rule.ID
	}
	if r.object == nil {
		return []Violation{v}
	}
	q := objectQuery(r.object)
	var out []Violation
	for _, l := range c.objects[kindName{q.ref.Kind, q.ref.Name}] {
		if q.matches(l) {
			out = append(out, l.violation(v.Cluster, v.Rule, v.Severity, v.Message))
		}
	}
	if len(out) == 0 {
		v.App, v.Object = q.app, q.ref
		out = append(out, v)
	}
	return out
}

// at finds the object of the input a violation is about: the one in the violation's app,
// at its file and line, with its reference. Any stage's violation that names an object of
// the input finds it this way, so that the object's waive annotation applies to it.
func (c *clusterIndex) at(v *Violation) *located {
	if v.File == "" {
		return nil
	}
	for _, l := range c.objects[kindName{v.Object.Kind, v.Object.Name}] {
		if l.app.Name == v.App && l.obj.Source == (Source{File: v.File, Line: v.Line}) && l.ref == v.Object {
			return l
		}
	}
	return nil
}

// query is what a result says about its object. A result may name it three ways: a
// reference {"app", "apiVersion", "kind", "namespace", "name"} (what data.olmsync.lib.ref
// builds; only kind and name are required), an object entry of the input
// ({"object": manifest, "source", "namespace", ...}), or a manifest itself.
type query struct {
	ref          ObjectRef
	app          string
	hasNamespace bool
	source       *Source
}

func objectQuery(obj map[string]any) query {
	var q query
	str := func(m map[string]any, key string) string { s, _ := m[key].(string); return s }
	manifest, isEntry := obj["object"].(map[string]any)
	if !isEntry {
		if _, isManifest := obj["metadata"].(map[string]any); isManifest {
			manifest = obj
		}
	}
	q.app = str(obj, "app")
	if manifest == nil {
		q.ref = ObjectRef{APIVersion: str(obj, "apiVersion"), Kind: str(obj, "kind"), Namespace: str(obj, "namespace"), Name: str(obj, "name")}
		_, q.hasNamespace = obj["namespace"].(string)
		return q
	}
	q.ref = ObjectRef{APIVersion: str(manifest, "apiVersion"), Kind: str(manifest, "kind"), Name: metadataString(manifest, "name")}
	if isEntry {
		q.ref.Namespace, q.hasNamespace = obj["namespace"].(string)
		if src, ok := obj["source"].(map[string]any); ok {
			line, _ := src["line"].(json.Number)
			n, _ := line.Int64()
			q.source = &Source{File: str(src, "file"), Line: int(n)}
		}
	} else if ns := metadataString(manifest, "namespace"); ns != "" {
		q.ref.Namespace, q.hasNamespace = ns, true
	}
	return q
}

func (q query) matches(l *located) bool {
	return (q.app == "" || q.app == l.app.Name) &&
		(q.ref.APIVersion == "" || q.ref.APIVersion == l.ref.APIVersion) &&
		(!q.hasNamespace || q.ref.Namespace == l.ref.Namespace) &&
		(q.source == nil || *q.source == l.obj.Source)
}
