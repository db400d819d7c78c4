package render

import (
	"bytes"
	"io"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// captureStderrAndLog runs fn with os.Stderr and the standard logger pointed at buffers
// and returns what was written to each. Tests using it must not run in parallel.
func captureStderrAndLog(t *testing.T, fn func()) (stderr, logged string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	origStderr, origLog := os.Stderr, log.Writer()
	var logBuf bytes.Buffer
	os.Stderr = w
	log.SetOutput(&logBuf)
	done := make(chan string)
	go func() {
		data, _ := io.ReadAll(r)
		done <- string(data)
	}()
	defer func() {
		os.Stderr = origStderr
		log.SetOutput(origLog)
	}()
	fn()
	os.Stderr = origStderr
	log.SetOutput(origLog)
	_ = w.Close()
	return <-done, logBuf.String()
}

// TestDeprecationsOncePerFile: three apps share a base with deprecated fields; each
// deprecation is reported once, at its file and line, with every app that read it, and
// kustomize prints nothing to stderr.
func TestDeprecationsOncePerFile(t *testing.T) {
	fsys, root := memRepo(t, files{
		"base/kustomization.yaml":       "resources:\n- ns.yaml\ncommonLabels:\n  team: a\nimageTags: []\n",
		"base/ns.yaml":                  nsYAML,
		"overlays/a/kustomization.yaml": "bases:\n- ../../base\npatchesStrategicMerge:\n- patch.yaml\n",
		"overlays/a/patch.yaml":         "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  labels: {x: y1}\n",
		"overlays/b/kustomization.yaml": "resources:\n- ../../base\n",
		"overlays/c/kustomization.yaml": "resources:\n- ../../base\npatchesJson6902:\n- target: {version: v1, kind: Namespace, name: ns}\n  patch: '[{\"op\": \"add\", \"path\": \"/metadata/labels/z\", \"value\": \"1\"}]'\n",
	})
	var res *Result
	stderr, logged := captureStderrAndLog(t, func() { res = renderRepo(t, fsys, root, Options{}) })
	if stderr != "" || logged != "" {
		t.Errorf("kustomize wrote to stderr %q and to the log %q", stderr, logged)
	}
	for _, a := range res.Apps {
		if a.Err != nil {
			t.Fatal(a.Err)
		}
	}
	type warning struct {
		File    string
		Line    int
		Field   string
		Apps    []string
		Reason  Reason
		Message string
	}
	var got []warning
	for _, w := range res.Warnings {
		field := strings.SplitN(w.Message, "'", 3)[1]
		got = append(got, warning{w.File, w.Line, field, w.Apps, w.Reason, ""})
		if !strings.Contains(w.Message, "is deprecated") || strings.HasPrefix(w.Message, "#") {
			t.Errorf("message %q is not kustomize's deprecation text", w.Message)
		}
	}
	all := []string{"overlays/a", "overlays/b", "overlays/c"}
	want := []warning{
		{"base/kustomization.yaml", 3, "commonLabels", all, ReasonDeprecated, ""},
		{"base/kustomization.yaml", 5, "imageTags", all, ReasonDeprecated, ""},
		{"overlays/a/kustomization.yaml", 1, "bases", []string{"overlays/a"}, ReasonDeprecated, ""},
		{"overlays/a/kustomization.yaml", 3, "patchesStrategicMerge", []string{"overlays/a"}, ReasonDeprecated, ""},
		{"overlays/c/kustomization.yaml", 3, "patchesJson6902", []string{"overlays/c"}, ReasonDeprecated, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestKustomizeLogAttributed: kustomize logs unused vars through the standard logger; the
// message is reported against the app that built them, not printed.
func TestKustomizeLogAttributed(t *testing.T) {
	fsys, root := memRepo(t, files{
		"vars/kustomization.yaml": `
resources:
- cm.yaml
vars:
- name: UNUSED
  objref: {apiVersion: v1, kind: ConfigMap, name: cm}
  fieldref: {fieldpath: metadata.name}
`,
		"vars/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"plain/kustomization.yaml": kustomizationOf,
		"plain/ns.yaml":            nsYAML,
	})
	var res *Result
	stderr, logged := captureStderrAndLog(t, func() { res = renderRepo(t, fsys, root, Options{}) })
	if stderr != "" || logged != "" {
		t.Errorf("kustomize wrote to stderr %q and to the log %q", stderr, logged)
	}
	var got []Diagnostic
	for _, w := range res.Warnings {
		if w.Reason == ReasonKustomizeOutput {
			got = append(got, w)
		}
	}
	want := []Diagnostic{{Reason: ReasonKustomizeOutput, File: "vars/kustomization.yaml", Apps: []string{"vars"},
		Message: "well-defined vars that were never replaced: UNUSED"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kustomize output (-want +got):\n%s", diff)
	}
}

// TestOtherStderrOutputIsForwarded: while kustomize's output is captured, what other code
// writes to stderr and the log still reaches them.
func TestOtherStderrOutputIsForwarded(t *testing.T) {
	stderr, logged := captureStderrAndLog(t, func() {
		release, err := stray.acquire()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = os.Stderr.WriteString("someone else's line\n")
		_, _ = os.Stderr.WriteString(deprecatedFields["bases"] + "\n")
		log.Print("someone else's log line")
		stray.flushStderr()
		release()
	})
	if stderr != "someone else's line\n" {
		t.Errorf("stderr = %q, want only the other line (kustomize's deprecation dropped)", stderr)
	}
	if !strings.Contains(logged, "someone else's log line") {
		t.Errorf("log = %q", logged)
	}
}
