package report

import (
	"encoding/json"
	"io"
)

// writeJSON writes the document, indented, as docs/ci.md describes it.
func writeJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages quote YAML and Go types ("<none>", "a && b"); the document is not HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
