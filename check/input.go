package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
)

// Inputs maps a rendered repository into the policy inputs, one per cluster and one per
// library root (each checked on its own, Input.Library), completed
// (policy.Input.Complete): the cluster's apps that rendered with their objects and
// provenance, and the policy settings of olmsync.yaml that apply to the cluster. The
// object's scope and landing namespace are left to the policy package to decide, so the
// input document means what docs/policy.md says. An app that failed to render is left
// out: its objects are unknown, not absent, and its failure is a Problem of the check.
func Inputs(r *render.Result) []policy.Input {
	out := make([]policy.Input, 0, len(r.Clusters))
	for _, c := range r.Clusters {
		in := policy.Input{Cluster: c.Name, Library: c.Library, Config: policyConfig(r.Config, c.Name), Apps: []policy.App{}}
		for _, a := range c.Apps {
			if a.Err != nil {
				continue
			}
			app := policy.App{
				Name: a.Name, Path: a.Path, Namespace: a.Namespace, ClusterScope: a.ClusterScope, OwnScope: a.OwnScope(),
				Objects: make([]policy.Object, len(a.Objects)),
			}
			for i, o := range a.Objects {
				app.Objects[i] = policy.Object{
					Object: o.Manifest.Object,
					Source: policy.Source{File: o.Source.File, Line: o.Source.Line},
				}
			}
			in.Apps = append(in.Apps, app)
		}
		if c.Library && len(in.Apps) == 0 {
			continue // the library root failed to render: its problem says so
		}
		out = append(out, in.Complete())
	}
	return out
}

// setGlobalCatalogNamespaces puts each cluster's global catalog namespace, when the caller
// knows it, in place of olmsync.yaml's marketplace namespace.
func setGlobalCatalogNamespaces(inputs []policy.Input, byCluster map[string]string) {
	for i := range inputs {
		if inputs[i].Library {
			continue // a library root is on no cluster: olmsync.yaml's setting holds
		}
		ns, ok := byCluster[inputs[i].Cluster]
		if !ok {
			ns = byCluster[""]
		}
		if ns != "" {
			inputs[i].Config.MarketplaceNamespace = ns
		}
	}
}

// policyConfig is the part of olmsync.yaml the rules of one cluster read. The groups a
// cluster has outside Git are those listed for every cluster and those listed for it;
// a list that leaves none for this cluster means none, not the default.
func policyConfig(cfg *render.Config, cluster string) policy.Config {
	p := cfg.Policy
	groups := make([]policy.ClusterOperatorGroup, 0, len(p.OperatorGroups))
	for _, g := range p.OperatorGroups {
		if g.Cluster != "" && g.Cluster != cluster {
			continue
		}
		groups = append(groups, policy.ClusterOperatorGroup{
			Namespace: g.Namespace, Name: g.Name, Global: g.Global, TargetNamespaces: g.TargetNamespaces,
		})
	}
	return policy.Config{
		MarketplaceNamespace:     p.MarketplaceNamespace,
		GlobalOperatorsNamespace: p.GlobalOperatorsNamespace,
		OperatorGroups:           groups,
		MetaOperators:            p.MetaOperators,
	}
}

// waivers are olmsync.yaml's waivers as the policy engine takes them.
func waivers(cfg *render.Config, configFile string) []policy.Waiver {
	out := make([]policy.Waiver, 0, len(cfg.Waivers))
	for _, w := range cfg.Waivers {
		pw := policy.Waiver{
			Rule: w.Rule,
			Object: policy.WaiverObject{
				Kind: w.Object.Kind, Namespace: w.Object.Namespace, Name: w.Object.Name, Cluster: w.Object.Cluster,
			},
			Reason: w.Reason,
			Source: policy.Source{File: configFile, Line: w.Line},
		}
		if w.Expires != nil {
			pw.Expires = w.Expires.Time
		}
		out = append(out, pw)
	}
	return out
}

// warningReasons are the discovery problems that do not make a check incomplete: what
// olmsync knowingly does not render (another repository, a Helm chart, a config
// management plugin), settings it does not apply, and a second definition of an app it
// already has.
var warningReasons = map[render.Reason]bool{
	render.ReasonHelmChart:         true,
	render.ReasonUnsupportedSource: true,
	render.ReasonIgnoredSetting:    true,
	render.ReasonDuplicateApp:      true,
}

// renderDiagnostics sorts what rendering met into problems (the check cannot see
// everything: an app that failed, an app rendered without a generator whose plugin is off,
// an Application whose path is missing, a file that could not be read while looking for
// apps) and warnings. A discovery problem about the file an
// app's failure already names is left out: the app's problem says it all.
func renderDiagnostics(r *render.Result) (problems []report.Problem, warnings []report.Warning) {
	failedAt := map[string]bool{}
	type cause struct {
		file, message string
		line          int
	}
	byCause := map[cause]int{}
	add := func(app string, p report.Problem, message string) {
		c := cause{p.File, message, p.Line}
		if i, ok := byCause[c]; ok {
			problems[i].Apps = append(problems[i].Apps, app)
			return
		}
		byCause[c] = len(problems)
		p.App, p.Apps = app, []string{app}
		problems = append(problems, p)
	}
	for _, a := range r.Apps {
		if a.Err == nil {
			continue
		}
		file, line := errorLocation(a)
		failedAt[file] = true
		msg := a.Err.Error()
		add(a.ID(), report.Problem{File: file, Line: line, Message: msg, Hint: render.Hint(a.Err)},
			strings.TrimPrefix(msg, fmt.Sprintf("render app %q: ", a.ID())))
	}
	for _, d := range r.Problems {
		switch {
		case warningReasons[d.Reason]:
			warnings = append(warnings, report.Warning{File: d.File, Line: d.Line, Message: d.Message, Hint: d.Hint, Apps: d.Apps})
		case d.Reason == render.ReasonUnreadable && failedAt[d.File]:
		default:
			problems = append(problems, report.Problem{File: d.File, Line: d.Line, Message: d.String(), Hint: d.Hint})
		}
	}
	for _, d := range r.Warnings {
		if d.Reason == render.ReasonInvalidName {
			for _, app := range d.Apps {
				add(app, report.Problem{File: d.File, Line: d.Line, Message: d.Message}, d.Message)
			}
			continue
		}
		if d.Reason == render.ReasonPluginSkipped {
			// The apps rendered without what the generator makes: incomplete.
			for _, app := range d.Apps {
				add(app, report.Problem{File: d.File, Line: d.Line, Message: d.Message, Hint: d.Hint}, d.Message)
			}
			continue
		}
		warnings = append(warnings, report.Warning{File: d.File, Line: d.Line, Message: d.Message, Hint: d.Hint, Apps: d.Apps})
	}
	for i := range problems {
		if len(problems[i].Apps) == 1 {
			problems[i].Apps = nil
		}
	}
	return problems, warnings
}

// errorLocation is the file and line an app's render error names.
func errorLocation(a *render.AppResult) (string, int) {
	var be *render.BuildError
	if errors.As(a.Err, &be) {
		return be.File, be.Line
	}
	return a.Found.File, a.Found.Line
}
