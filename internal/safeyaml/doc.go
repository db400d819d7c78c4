// Package safeyaml is the one gate every reader of outside YAML or JSON in olmsync passes
// its input through before decoding it: manifests and kustomizations read by render,
// olmsync.yaml, Argo CD Applications, catalogs (file-based, package manifests, bundles,
// ConfigMaps), cluster snapshots and operators.Decode. It bounds what a file may cost
// before any decoder (olmsync's, kustomize's, apimachinery's) builds values from it:
//
//   - a file (or request body) of at most Limits.MaxFileBytes, each YAML document or JSON
//     value in it of at most Limits.MaxDocumentBytes, so that the parse itself stays small;
//   - at most Limits.MaxNodes nodes in a file, an alias counted as the nodes it expands to,
//     so that a "billion laughs" file of a few hundred bytes is refused instead of being
//     expanded by whatever reads it next (kustomize's kyaml expands anchors without a
//     bound);
//   - go-yaml v3's own "excessive aliasing" rule, with its thresholds, for every document,
//     and its refusal of an anchor that contains itself (which a reader following aliases
//     would recurse into until its stack overflows).
//
// A refusal is a *LimitError naming the file and line; errors.Is(err, ErrLimit) holds.
// The package parses with go-yaml v3 (as kyaml does) into nodes and never expands an
// alias; it says nothing about syntax, which the decoder that follows reports in its own
// words.
package safeyaml
