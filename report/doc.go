// Package report defines the result of `olmsync check` as one versioned document
// (apiVersion olmsync.dev/v1alpha1, kind Report) and writes it for people and CI tools:
// text, JSON, SARIF 2.1.0, JUnit XML, GitHub workflow commands and Markdown. It also holds
// the pure decisions around a report that the CLI must not make twice: which head
// violations are new against a base revision (MarkAgainstBase), which OLM objects a change
// adds, removes or modifies (DiffObjects), and the exit code (ExitCode). It imports neither
// render nor policy; the CLI maps their results into the document, calls Complete, and
// hands the document to Write.
package report
