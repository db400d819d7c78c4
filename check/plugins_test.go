package check

import (
	"strings"
	"testing"

	"github.com/olmsync/olmsync/report"
)

// TestSkippedGeneratorMakesTheCheckIncomplete: a generator whose plugin is off (a ksops
// Secret generator, an exec KRM function) is left out of the render, and the app is
// incomplete: a problem naming the generator, its file and line and the app, so that the
// check exits 2 and the reconciler neither applies nor prunes the app. The rest of the
// app is still checked.
func TestSkippedGeneratorMakesTheCheckIncomplete(t *testing.T) {
	fs := passingRepo()
	fs["team-a/kustomization.yaml"] = "namespace: team-a\nresources: [subscription.yaml]\ngenerators:\n- secrets.yaml\n"
	fs["team-a/secrets.yaml"] = "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: team-a-secrets\n"
	res := run(t, writeRepo(t, fs), Options{})
	if res.Complete() {
		t.Fatalf("the check is complete with a skipped generator; problems %+v, warnings %+v", res.Problems, res.Warnings)
	}
	if len(res.Problems) != 1 {
		t.Fatalf("problems %+v, want the skipped generator's", res.Problems)
	}
	p := res.Problems[0]
	if p.App != "team-a" || p.File != "team-a/secrets.yaml" || p.Line != 1 ||
		!strings.Contains(p.Message, `generator ksops "team-a-secrets" (viaduct.ai/v1) needs an exec plugin`) ||
		!strings.Contains(p.Message, "incomplete") {
		t.Errorf("problem %+v", p)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "team-a-secrets") {
			t.Errorf("the skipped generator is also a warning: %+v", w)
		}
	}
	var checked bool
	for _, in := range res.Inputs {
		for _, a := range in.Apps {
			checked = checked || a.Name == "team-a" && len(a.Objects) > 0
		}
	}
	if !checked {
		t.Error("the rest of team-a is not checked")
	}
	r, err := Report(res, nil, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := report.ExitCode(r, report.FailOnAll); got != report.ExitIncomplete {
		t.Errorf("exit code %d, want %d", got, report.ExitIncomplete)
	}
}
