package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// Sentinel errors. A BuildError wraps one of them when olmsync itself refused or could
// not read something; callers branch with errors.Is.
var (
	// ErrMalformedYAML: a manifest or kustomization is not valid YAML (see YAMLError).
	ErrMalformedYAML = errors.New("malformed YAML")
	// ErrInputLimit: a file is over a parsing limit (its size, a document's size, its
	// node count) or its aliases expand too far ("billion laughs"); it is refused before
	// kustomize or anything else decodes it (see YAMLError).
	ErrInputLimit = safeyaml.ErrLimit
	// ErrInvalidManifest: a document of a plain manifest folder is not a Kubernetes
	// object (no apiVersion, kind or metadata.name).
	ErrInvalidManifest = errors.New("not a Kubernetes object")
	// ErrNotFound: a path named by a kustomization, an Application or olmsync.yaml does
	// not exist in the repository.
	ErrNotFound = errors.New("not found")
	// ErrOutsideRepository: a path leads out of the repository root.
	ErrOutsideRepository = errors.New("path leads outside the repository")
	// ErrRemoteDisabled: a kustomization refers to a remote base or file and remote
	// bases are off (Options.AllowRemoteBases).
	ErrRemoteDisabled = errors.New("remote bases are off")
	// ErrPluginDisabled: a kustomization needs an exec or container plugin (KRM
	// function, legacy plugin) that is off (Options.EnableExecPlugins,
	// Options.EnableContainerPlugins).
	ErrPluginDisabled = errors.New("kustomize plugins are off")
	// ErrHelmDisabled: a kustomization inflates a Helm chart and Helm is off
	// (Options.EnableHelm).
	ErrHelmDisabled = errors.New("helm inflation is off")
	// ErrKustomize: kustomize itself failed; the message is kustomize's own.
	ErrKustomize = errors.New("kustomize build failed")
)

// ErrOverBudget is an app whose build would take the render past its node budget
// (Options.NodeBudget): more YAML than the memory limit allows, aliases expanded.
var ErrOverBudget = errors.New("over the render's YAML budget")

// BuildError is why one app could not be rendered. The other apps are unaffected.
type BuildError struct {
	// App is the app's name.
	App string
	// File is the repository-relative file at fault: the kustomization that refers to
	// something it cannot have, or the manifest that could not be read. For a failure
	// kustomize reports, it is the app's own kustomization.
	File string
	// Line is the 1-based line in File, 0 when unknown.
	Line int
	// Err is the cause: kustomize's message (with repository paths made relative) or a
	// YAMLError, wrapping one of the sentinel errors above.
	Err error
}

func (e *BuildError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	var ye *YAMLError
	var fe *fileError
	if errors.As(e.Err, &ye) && ye.File == e.File && ye.Line == e.Line ||
		errors.As(e.Err, &fe) && fe.file == e.File && e.Line == 0 {
		// the error already names the location
		return fmt.Sprintf("render app %q: %v", e.App, e.Err)
	}
	if loc == "" {
		return fmt.Sprintf("render app %q: %v", e.App, e.Err)
	}
	return fmt.Sprintf("render app %q: %s: %v", e.App, loc, e.Err)
}

func (e *BuildError) Unwrap() error { return e.Err }

// fileError is a repository file that could not be read: a symbolic link out of the
// repository, a file over the filesystem's size bound, an unreadable file. A BuildError
// names the file.
type fileError struct {
	file string
	err  error
}

func (e *fileError) Error() string {
	if strings.Contains(e.err.Error(), e.file) {
		return e.err.Error() // the filesystem's message names the file already
	}
	return e.file + ": " + e.err.Error()
}

func (e *fileError) Unwrap() error { return e.err }

// kustomizeError is kustomize's own message, marked as ErrKustomize for errors.Is.
type kustomizeError struct{ msg string }

func (e *kustomizeError) Error() string        { return e.msg }
func (e *kustomizeError) Is(target error) bool { return target == ErrKustomize }

// ConfigError is an olmsync.yaml that cannot be used: malformed YAML, an unknown field,
// a value of the wrong type, or a value that breaks a rule (a duplicate app name, a path
// out of the repository). Line is 1-based, 0 when the whole file is at fault.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

// MaxManifestFiles bounds the YAML and JSON files of a repository that discovery reads,
// and the manifest files one app reads: an app with directory recurse over a million small
// files gave no answer in 120 s and grew past 875 MB (issue 30). The largest repositories
// measured hold a few thousand.
const MaxManifestFiles = 50000

// ErrTooManyFiles is a repository, or an app, of more than MaxManifestFiles manifest files.
var ErrTooManyFiles = errors.New("too many manifest files")

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}
