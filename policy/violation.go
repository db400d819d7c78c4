package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity is how bad a violation is.
type Severity string

const (
	// SeverityError fails the check: rules' deny results.
	SeverityError Severity = "error"
	// SeverityWarning is reported without failing the check: rules' warn results.
	SeverityWarning Severity = "warning"
)

// Violation is one rule's finding about one object (or, for a user's rule that names no
// object, about the cluster).
type Violation struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Cluster is the cluster the object was checked in ("" for the default cluster).
	Cluster string `json:"cluster"`
	// App is the app that holds the object; "" when the finding has none.
	App string `json:"app"`
	// File (slash-separated, from the repository root) and Line (1-based; 0 when unknown)
	// are where the object's document starts, or where a config waiver is written.
	File   string    `json:"file"`
	Line   int       `json:"line"`
	Object ObjectRef `json:"object"`
	// Waived is true when a waiver covers the violation; the fields below say which.
	Waived        bool         `json:"waived"`
	WaiverReason  string       `json:"waiverReason,omitempty"`
	WaiverSource  WaiverSource `json:"waiverSource,omitempty"`
	WaiverExpires string       `json:"waiverExpires,omitempty"`
}

// ObjectRef identifies an object. Namespace is the namespace the object lands in (the
// app's destination namespace when the manifest has none); "" for cluster-scoped objects.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// String names the object as messages do: Kind "namespace/name" or Kind "name".
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s %q", o.Kind, o.Name)
	}
	return fmt.Sprintf("%s %q", o.Kind, o.Namespace+"/"+o.Name)
}

// sortViolations orders violations the way reports list them: by file and line, then by
// rule, and then by everything else, so that the same input always gives the same list.
func sortViolations(vs []Violation) {
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Cluster, b.Cluster),
			cmp.Compare(a.App, b.App),
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Object.APIVersion, b.Object.APIVersion),
			cmp.Compare(a.Severity, b.Severity),
			cmp.Compare(a.Message, b.Message),
		)
	})
}
