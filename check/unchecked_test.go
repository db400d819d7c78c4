package check

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/policy"
)

// TestUncheckedChangesDecides: what each file a change touches is reported as — added,
// changed, removed — and what is not reported: a file an app renders, one the same at
// both revisions, one that only names the group, one that does not parse.
func TestUncheckedChangesDecides(t *testing.T) {
	sub := func(name string) string {
		return "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: " + name + "\n"
	}
	comment := "# see operators.coreos.com/v1alpha1\nkind: ConfigMap\n"
	base := writeRepo(t, files{
		"changed.yaml": sub("a"), "removed.yaml": sub("r"), "same.yaml": sub("s"),
		"emptied.yaml": sub("e"), "comment.yaml": comment, "broken.yaml": "x",
	})
	head := writeRepo(t, files{
		"changed.yaml": sub("a2"), "added.yaml": sub("n"), "same.yaml": sub("s"),
		"emptied.yaml": comment, "comment.yaml": comment + "data: {}\n", "broken.yaml": "operators.coreos.com/: [",
		"rendered.yaml": sub("checked"),
	})
	headRes := &Result{Tree: head}
	headRes.Inputs = renderedFrom(t, "rendered.yaml")
	var got []string
	for _, w := range uncheckedChanges(headRes, &Result{Tree: base}) {
		what, _, _ := strings.Cut(w.Message, " here,")
		got = append(got, w.File+": "+what)
	}
	want := []string{
		`added.yaml: unchecked change: this change adds Subscription "n"`,
		`changed.yaml: unchecked change: this change changes Subscription "a2"`,
		`emptied.yaml: unchecked change: this change removes Subscription "e"`,
		`removed.yaml: unchecked change: this change removes Subscription "r"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unchecked changes (-want +got):\n%s", diff)
	}
}

// renderedFrom is an input with one app that rendered an object from each file.
func renderedFrom(t *testing.T, files ...string) []policy.Input {
	t.Helper()
	app := policy.App{Name: "app"}
	for _, f := range files {
		app.Objects = append(app.Objects, policy.Object{Source: policy.Source{File: f, Line: 1}})
	}
	return []policy.Input{{Apps: []policy.App{app}}}
}
