package render

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/runenames"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ReasonInvalidName: an object's name or namespace is one the API server refuses. It
// would never be applied, and a check that passed it would pass what the cluster
// refuses; check counts it a problem (exit 2).
const ReasonInvalidName Reason = "InvalidName"

// checkNames says, for each rendered object, whether the API server would take its name
// and namespace, as it checks them: a namespace is a DNS-1123 label; a Namespace's name too,
// a Service's a DNS-1035 label, an RBAC object's a path segment (system:controller:x), and
// every other name a DNS-1123 subdomain. A character that is not what it looks like — a
// Cyrillic а in "team", a zero-width space, a right-to-left override — is named in the
// message.
func checkNames(appID string, objs []*Object) []Diagnostic {
	var out []Diagnostic
	for _, o := range objs {
		if msg := nameProblem(o); msg != "" {
			out = append(out, Diagnostic{Reason: ReasonInvalidName, File: o.Source.File, Line: o.Source.Line, Apps: []string{appID},
				Message: fmt.Sprintf("%s %s: %s; the API server refuses it", o.Kind(), quoteName(o.Namespace(), o.Name()), msg)})
		}
	}
	return out
}

func nameProblem(o *Object) string {
	if ns := o.Namespace(); ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return "metadata.namespace " + strconvQuote(ns) + " " + explain(ns, errs)
		}
	}
	name := o.Name()
	var errs []string
	switch {
	case name == "":
		return "" // a missing name is kustomize's to report, or a generateName
	case o.Group() == "" && o.Kind() == "Namespace":
		errs = validation.IsDNS1123Label(name)
	case o.Group() == "" && o.Kind() == "Service":
		errs = validation.IsDNS1035Label(name)
	case o.Group() == "rbac.authorization.k8s.io":
		errs = content.IsPathSegmentName(name)
	default:
		errs = validation.IsDNS1123Subdomain(name)
	}
	if len(errs) == 0 {
		return ""
	}
	return "metadata.name " + strconvQuote(name) + " " + explain(name, errs)
}

// explain is what is wrong with a name: the characters that are not what they look like,
// by their Unicode names, else the validation's own words.
func explain(s string, errs []string) string {
	var odd []string
	for _, c := range s {
		if c > unicode.MaxASCII || unicode.IsControl(c) {
			odd = append(odd, fmt.Sprintf("U+%04X %s", c, runenames.Name(c)))
		}
	}
	if len(odd) > 0 {
		return "holds " + strings.Join(odd, ", ") + ", which no Kubernetes name may hold (it may look like another name)"
	}
	return "is not a valid name: " + strings.Join(errs, "; ")
}

// strconvQuote quotes a name with every non-ASCII or control character escaped, so the
// message shows what is there.
func strconvQuote(s string) string { return fmt.Sprintf("%+q", s) }

func quoteName(ns, name string) string {
	if ns == "" {
		return strconvQuote(name)
	}
	return strconvQuote(ns + "/" + name)
}
