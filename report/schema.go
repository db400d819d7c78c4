package report

import (
	_ "embed"
)

// JSONSchema is the JSON Schema (draft-07) of the Report document, for consumers that
// validate what they read and for `olmsync check` to print. It leaves additional
// properties allowed: within v1alpha1 the document only grows.
//
//go:embed report.schema.json
var JSONSchema []byte
