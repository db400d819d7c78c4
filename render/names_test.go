package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNamesAsTheAPIServerChecks: names and namespaces the API server refuses — a
// right-to-left override, a zero-width space, a Cyrillic а in "team" — passed the check
// with exit 0 (issue 30). Each is a diagnostic (a problem of the check) naming the file,
// the line and the character; names the API server takes pass, an RBAC name with colons
// among them.
func TestNamesAsTheAPIServerChecks(t *testing.T) {
	doc := func(apiVersion, kind, ns, name string) string {
		s := "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
		if ns != "" {
			s += "  namespace: " + ns + "\n"
		}
		return s
	}
	fsys, root := memRepo(t, files{
		"app/kustomization.yaml": "resources: [ok.yaml, bad.yaml]\n",
		"app/ok.yaml": strings.Join([]string{
			doc("rbac.authorization.k8s.io/v1", "ClusterRole", "", `"system:controller:x"`),
			doc("v1", "ConfigMap", "team-a", "a.b-c"),
			doc("operators.coreos.com/v1alpha1", "Subscription", "team-a", "etcd"),
		}, "---\n"),
		"app/bad.yaml": strings.Join([]string{
			doc("v1", "ConfigMap", `"x\u202eb"`, "cm"),
			doc("operators.coreos.com/v1alpha1", "Subscription", "team-a", `"a\u200bb"`),
			doc("v1", "Namespace", "", `"te\u0430m"`),
			doc("v1", "Service", "team-a", "1web"),
			doc("operators.coreos.com/v1", "OperatorGroup", "team-a", "Upper_Case"),
		}, "---\n"),
	})
	res := renderRepo(t, fsys, root, Options{})
	if app := appNamed(t, res, "app"); app.Err != nil || len(app.Objects) != 8 {
		t.Fatalf("app: err %v, %d objects; want all 8 rendered", app.Err, len(app.Objects))
	}
	type finding struct {
		Line int
		Says string
	}
	var got []finding
	for _, w := range res.Warnings {
		if w.Reason != ReasonInvalidName {
			continue
		}
		if w.File != "app/bad.yaml" {
			t.Errorf("%s: %s", w.File, w.Message)
		}
		got = append(got, finding{w.Line, w.Message})
	}
	want := []finding{
		{1, `ConfigMap "x\u202eb/cm": metadata.namespace "x\u202eb" holds U+202E RIGHT-TO-LEFT OVERRIDE, which no Kubernetes name may hold (it may look like another name); the API server refuses it`},
		{7, `Subscription "team-a/a\u200bb": metadata.name "a\u200bb" holds U+200B ZERO WIDTH SPACE, which no Kubernetes name may hold (it may look like another name); the API server refuses it`},
		{13, `Namespace "te\u0430m": metadata.name "te\u0430m" holds U+0430 CYRILLIC SMALL LETTER A, which no Kubernetes name may hold (it may look like another name); the API server refuses it`},
		{18, `Service "team-a/1web": metadata.name "1web" is not a valid name: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'); the API server refuses it`},
		{24, `OperatorGroup "team-a/Upper_Case": metadata.name "Upper_Case" is not a valid name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); the API server refuses it`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("name diagnostics (-want +got):\n%s", diff)
	}
}
