package report

import (
	"strings"
)

// The document's type. Within v1alpha1 the document only grows: fields and list entries
// may be added, never renamed, removed or given another meaning (docs/ci.md).
const (
	APIVersion = "olmsync.dev/v1alpha1"
	Kind       = "Report"
)

// Report is what `olmsync check` found in one revision of a repository (and, with a base,
// how that compares to the base). Build it, call Complete, then Write it.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Tool is the program that wrote the report.
	Tool Tool `json:"tool"`
	// Revision is the revision that was checked.
	Revision Revision `json:"revision"`
	// Base is the revision the check compared against (`--base`); nil without one.
	Base *Revision `json:"base,omitempty"`
	// Summary counts what the lists below hold; Complete computes it.
	Summary Summary `json:"summary"`
	// Apps are the apps that were found: those that rendered, and those that did not
	// (with their error).
	Apps []App `json:"apps"`
	// Rules is the catalog of every rule that was evaluated or that a violation names.
	Rules []Rule `json:"rules"`
	// Violations are the rule violations of the checked revision, waived ones included.
	Violations []Violation `json:"violations"`
	// Changes are the OLM objects added, removed or modified between Base and Revision.
	Changes []Change `json:"changes"`
	// Problems are inputs that could not be read or rendered; any in the checked revision
	// makes the check incomplete (exit code 2).
	Problems []Problem `json:"problems"`
	// Warnings are messages about the input that do not stop the check, such as
	// kustomize's deprecation warnings, each once per file.
	Warnings []Warning `json:"warnings"`
	// NotChecked is what the repository holds that olmsync deliberately did not check:
	// Argo CD Applications and ApplicationSets of other repositories, bases no app
	// includes. Information only.
	NotChecked []NotChecked `json:"notChecked,omitempty"`
	// Objects are the objects that were checked, when the CLI lists them; JUnit turns the
	// ones without violations into passed test cases.
	Objects []Object `json:"objects,omitempty"`
	// Subscriptions and OperatorGroups are the OLM preview (`--catalog`): what OLM would
	// do with each Subscription and OperatorGroup of the checked revision, cluster by
	// cluster. Absent when the preview did not run or found nothing.
	Subscriptions  []SubscriptionPreview  `json:"subscriptions,omitempty"`
	OperatorGroups []OperatorGroupPreview `json:"operatorGroups,omitempty"`
	// ClusterExtensions is the OLM v1 part of the preview: what OLM v1 would install for
	// each ClusterExtension of the checked revision.
	ClusterExtensions []ClusterExtensionPreview `json:"clusterExtensions,omitempty"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Revision is one revision of the checked repository.
type Revision struct {
	// Ref is the revision as the user named it (a branch, tag, commit or "worktree").
	Ref string `json:"ref,omitempty"`
	// Commit is the commit it resolved to; empty for an uncommitted working tree.
	Commit string `json:"commit,omitempty"`
}

// String is the revision for people: "main (3f2a1c0d)", "3f2a1c0d" or "worktree".
func (r Revision) String() string {
	short := r.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	switch {
	case r.Ref != "" && short != "" && !strings.HasPrefix(r.Commit, r.Ref):
		return r.Ref + " (" + short + ")"
	case short != "":
		return short
	case r.Ref != "":
		return r.Ref
	default:
		return "worktree"
	}
}

// Summary counts the report's lists. Violation counts leave waived ones out, except
// Waived itself.
type Summary struct {
	// Result is the verdict under FailOn: passed, failed or incomplete.
	Result Result `json:"result"`
	// FailOn says which violations decided Result: all of them, or only new ones.
	FailOn FailOn `json:"failOn"`
	// Apps and Objects count what was checked (Objects only when the CLI lists them).
	Apps    int `json:"apps"`
	Objects int `json:"objects"`
	// Errors and Warnings count violations that are not waived, by severity.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// Waived counts waived violations of any severity.
	Waived int `json:"waived"`
	// New and PreExisting count violations that are not waived, by status (with a base).
	New         int `json:"new"`
	PreExisting int `json:"preExisting"`
	// Unknown counts the base revision's violations of apps that do not render in the
	// checked revision: whether they are still there cannot be told. They are not in
	// Errors or Warnings.
	Unknown int `json:"unknown"`
	// Changes, Problems, RenderWarnings and NotChecked count the lists of the same
	// names (RenderWarnings is the length of warnings[]).
	Changes        int `json:"changes"`
	Problems       int `json:"problems"`
	RenderWarnings int `json:"renderWarnings"`
	NotChecked     int `json:"notChecked"`
	// LibraryRoots counts the apps that are library roots (App.Library).
	LibraryRoots int `json:"libraryRoots,omitempty"`
	// UncheckedChanges counts the warnings that are unchecked changes (Warning.Unchecked);
	// they are in RenderWarnings too.
	UncheckedChanges int `json:"uncheckedChanges,omitempty"`
}

// Result is the verdict of a check.
type Result string

const (
	// ResultPassed: no violation that counts under FailOn is at error severity.
	ResultPassed Result = "passed"
	// ResultFailed: at least one such violation is.
	ResultFailed Result = "failed"
	// ResultIncomplete: some input of the checked revision could not be read or rendered.
	ResultIncomplete Result = "incomplete"
)

// App is one app of the repository, as rendering found it.
type App struct {
	Name string `json:"name"`
	// Path is the app's folder, relative to the repository root.
	Path string `json:"path,omitempty"`
	// Cluster is the cluster the app is deployed to; empty for the default cluster.
	Cluster string `json:"cluster,omitempty"`
	// ClusterScope is true for the cluster-scope app of its cluster.
	ClusterScope bool `json:"clusterScope,omitempty"`
	// ClusterFrom says how the cluster was decided: config (olmsync.yaml), application
	// (an Argo CD Application's destination, or an ApplicationSet's), flux (Flux's
	// clusters/<name>/ layout), path (a path convention), unknown (the app's objects are
	// compared only with each other by the rules that look for conflicts) or none (a
	// library root).
	ClusterFrom string `json:"clusterFrom,omitempty"`
	// Library is true for a library root: a kustomization root no entry point of the
	// repository deploys (a catalog entry, a base for other repositories), checked on its
	// own without the placement rules.
	Library bool `json:"library,omitempty"`
	// Error is why the app could not be rendered; absent when it rendered.
	Error *AppError `json:"error,omitempty"`
}

// AppError is why an app could not be rendered.
type AppError struct {
	// File and Line locate the cause (the kustomization or manifest at fault).
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Hint says how to fix a known cause in one line (a kustomize v4 form, say).
	Hint string `json:"hint,omitempty"`
	// Status is new when the app rendered in the base revision, pre-existing when it
	// failed there too; empty without a base.
	Status Status `json:"status,omitempty"`
}

// NotChecked is one thing of the repository olmsync did not check, and why.
type NotChecked struct {
	// Kind is Application, ApplicationSet or Kustomization (an unused base).
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	RepoURL string `json:"repoURL,omitempty"`
	Path    string `json:"path,omitempty"`
	Reason  string `json:"reason"`
}

// Severity is how bad a violation is. Only errors fail a check.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Rule describes one rule: the catalog SARIF and JUnit take their help text from.
type Rule struct {
	// ID is the rule's stable identifier (OP001…, OLM001…, or a custom rule's own).
	ID string `json:"id"`
	// Title is one line saying what the rule requires.
	Title string `json:"title"`
	// Description is a paragraph: what the rule checks and why.
	Description string `json:"description,omitempty"`
	// Help is Markdown: how to fix a violation, with an example where it helps.
	Help string `json:"help,omitempty"`
	// HelpURI is a page documenting the rule.
	HelpURI string `json:"helpUri,omitempty"`
	// Severity is the rule's default severity; a violation may carry another.
	Severity Severity `json:"severity"`
	// Kinds lists the object kinds the rule looks at, "*" for every kind. JUnit lists a
	// passed test case for each checked object of these kinds without a violation; it
	// lists none for a rule whose kinds are not given.
	Kinds []string `json:"kinds,omitempty"`
	// Custom is true for a user's rule from --policy or olmsync.yaml.
	Custom bool `json:"custom,omitempty"`
}

// Violation is one object breaking one rule.
type Violation struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// App is the app that holds the object; Cluster the app's cluster (empty: default).
	// When several apps render the object (a base two overlays include), the violation
	// is reported once: App and Cluster are the first of them, Apps lists them all.
	App     string `json:"app"`
	Cluster string `json:"cluster,omitempty"`
	// Apps are every app, with its cluster, that renders the object, when there are
	// several; absent when App is the only one.
	Apps []AppRef `json:"apps,omitempty"`
	// File is relative to the repository root, slash-separated; Line is the line the
	// object's document starts on (1-based; 0 when unknown).
	File   string    `json:"file"`
	Line   int       `json:"line"`
	Object ObjectRef `json:"object"`
	// Waived is true when a waiver covers the violation; Waiver says which.
	Waived bool    `json:"waived"`
	Waiver *Waiver `json:"waiver,omitempty"`
	// Status is new or pre-existing when the check had a base; empty without one.
	Status Status `json:"status,omitempty"`
	// Digest is what the object is made of, for telling a moved object from a new one
	// (MarkAgainstBase); not part of the document.
	Digest ObjectDigest `json:"-"`
}

// Waiver records why a violation is accepted.
type Waiver struct {
	Reason string `json:"reason"`
	// Source is where the waiver is declared.
	Source WaiverSource `json:"source,omitempty"`
	// Expires is the waiver's expiry date (YYYY-MM-DD), when it has one.
	Expires string `json:"expires,omitempty"`
}

// WaiverSource is where a waiver is declared.
type WaiverSource string

const (
	// WaiverAnnotation: the object's olmsync.dev/waive annotation.
	WaiverAnnotation WaiverSource = "annotation"
	// WaiverConfig: the waiver list of olmsync.yaml.
	WaiverConfig WaiverSource = "config"
)

// Status says whether a violation was already in the base revision.
type Status string

const (
	StatusNew         Status = "new"
	StatusPreExisting Status = "pre-existing"
	// StatusUnknown: a violation of the base revision in an app that does not render in
	// the checked one. It is listed so that it does not look resolved; it never fails.
	StatusUnknown Status = "unknown"
)

// ObjectRef identifies a Kubernetes object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// Group is the API group of the object's apiVersion ("" for the core group).
func (o ObjectRef) Group() string {
	group, _, found := strings.Cut(o.APIVersion, "/")
	if !found {
		return ""
	}
	return group
}

// IsZero reports whether the reference names no object.
func (o ObjectRef) IsZero() bool { return o == ObjectRef{} }

// String is the object for people: "Subscription etcd/etcd" or "Namespace etcd".
func (o ObjectRef) String() string {
	if o.IsZero() {
		return ""
	}
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// identity is what makes two references the same object across revisions: the API group
// rather than the version, so an OperatorGroup moving from v1alpha2 to v1 stays itself.
func (o ObjectRef) identity() string {
	return o.Group() + "|" + o.Kind + "|" + o.Namespace + "|" + o.Name
}

// Change is one OLM object that a change adds, removes or modifies.
type Change struct {
	Type   ChangeType `json:"type"`
	Object ObjectRef  `json:"object"`
	// App and Cluster hold the object in the head revision (in the base for a removal).
	App     string `json:"app"`
	Cluster string `json:"cluster,omitempty"`
	// File and Line locate the object in the head revision (in the base for a removal).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Fields are the fields that differ; for an added or removed object, the fields it
	// has.
	Fields []FieldChange `json:"fields,omitempty"`
}

// ChangeType is what a change does to an object.
type ChangeType string

const (
	ChangeAdded    ChangeType = "added"
	ChangeRemoved  ChangeType = "removed"
	ChangeModified ChangeType = "modified"
)

// FieldChange is one field's value in the base and in the head. An absent value is
// empty; a field whose values are too large to show has both empty and Omitted set.
type FieldChange struct {
	// Path is the field's path: "spec.channel", `metadata.annotations["olm.skipRange"]`,
	// or "app" when the object moved to another app.
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
	// Omitted is true when the values differ but are too large to show (a CSV's install
	// strategy, for example).
	Omitted bool `json:"omitted,omitempty"`
}

// Problem is an input that could not be read or rendered.
type Problem struct {
	// App is the app that could not be rendered; when the same cause fails several
	// apps (a base they all include), App is the first and Apps lists them all.
	App  string   `json:"app,omitempty"`
	Apps []string `json:"apps,omitempty"`
	File string   `json:"file,omitempty"`
	Line int      `json:"line,omitempty"`
	// Message is the whole error, naming the object where one is known.
	Message string `json:"message"`
	// Base is true for a problem met while rendering the base revision; it does not
	// make the check incomplete, but every violation of that app then counts as new.
	Base bool `json:"base,omitempty"`
	// Hint is a one-line fix, where olmsync knows one.
	Hint string `json:"hint,omitempty"`
	// Status, for a problem of the checked revision when there is a base: new, or
	// pre-existing when the base has the same problem. Under --fail-on new only a new
	// problem makes the check incomplete.
	Status Status `json:"status,omitempty"`
}

// Warning is a message about the input that does not stop the check.
type Warning struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Hint says how to fix it in one line, where olmsync knows (a deprecated
	// kustomization field's replacement).
	Hint string `json:"hint,omitempty"`
	// Apps are the apps whose rendering met the warning.
	Apps []string `json:"apps,omitempty"`
	// Unchecked marks an unchecked change: a file the change adds, modifies or removes
	// that holds OLM objects no checked app renders at either revision (with a base).
	Unchecked bool `json:"unchecked,omitempty"`
}

// Object is one checked object and where it came from.
type Object struct {
	App     string    `json:"app"`
	Cluster string    `json:"cluster,omitempty"`
	File    string    `json:"file"`
	Line    int       `json:"line"`
	Object  ObjectRef `json:"object"`
}
