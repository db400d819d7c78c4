package render

import (
	"errors"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// hintedError is an error olmsync knows the fix of, in one line.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }

// Hint is the one-line fix of the first error in err's chain that has one, or "".
func Hint(err error) string {
	var h *hintedError
	if errors.As(err, &h) {
		return h.hint
	}
	return ""
}

// editFix is how kustomize itself rewrites deprecated fields.
const editFix = "`kustomize edit fix` rewrites it"

// deprecationHints say what replaces each deprecated kustomization field.
var deprecationHints = map[string]string{
	"bases":                 "list the bases under resources; " + editFix,
	"commonLabels":          "use labels with includeSelectors: true; " + editFix,
	"imageTags":             "rename imageTags to images",
	"patchesJson6902":       "list each under patches as {path: FILE, target: {...}}; " + editFix,
	"patchesStrategicMerge": "list each under patches as {path: FILE}; " + editFix,
	"vars":                  "use replacements; " + editFix,
}

// patchesStringHint recognises a kustomization that lists file names under patches, as
// patchesStrategicMerge takes them (a form kustomize v4 users wrote), which kustomize v5
// refuses: "cannot unmarshal string into Go struct field Kustomization.patches". It
// returns the line of the first such entry and the fix.
func patchesStringHint(n *yaml.Node, err error) (int, string, bool) {
	if !strings.Contains(err.Error(), "Kustomization.patches") {
		return 0, "", false
	}
	seq := mapValue(n, "patches")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return 0, "", false
	}
	for _, item := range seq.Content {
		if item.Kind == yaml.ScalarNode {
			return item.Line, "patches entries are objects in kustomize v5: write `- path: " + item.Value +
				"` (a file name alone is the patchesStrategicMerge form); " + editFix, true
		}
	}
	return 0, "", false
}

// knownPlugins are generators common in GitOps repositories, by API group and kind, with
// what to do when their plugin is off.
var knownPlugins = map[[2]string]string{
	{"viaduct.ai", "ksops"}: "KSOPS decrypts SOPS-encrypted Secrets: no placement rule reads a Secret, but the app stays incomplete without them; " +
		"to render them run with --enable-exec-plugins, ksops on the PATH and the SOPS keys in the environment (a Sync decrypts with spec.decryption instead)",
	{"goabout.com", "SopsSecretGenerator"}:                   "SopsSecretGenerator decrypts SOPS-encrypted Secrets: to render them run with --enable-exec-plugins, the plugin installed and the SOPS keys in the environment",
	{"policy.open-cluster-management.io", "PolicyGenerator"}: "Red Hat ACM's PolicyGenerator wraps manifests into Policies: to render them run with --enable-exec-plugins and the PolicyGenerator plugin installed",
	{"builtin", "HelmChartInflationGenerator"}:               "a Helm chart inflated by kustomize: run with --enable-helm (and --helm-command when helm is not on the PATH)",
}

// knownPluginHint is the hint for a well-known generator or transformer, or "".
func knownPluginHint(d manifestDoc) string {
	group, _, _ := strings.Cut(d.APIVersion, "/")
	return knownPlugins[[2]string{group, d.Kind}]
}
