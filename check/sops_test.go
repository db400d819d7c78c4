package check

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/render"
)

// TestCheckSOPSEncrypted: the offline check, which has no keys, renders an app whose
// Secret manifest and secretGenerator env file are SOPS-encrypted without decrypting
// them, and checks it like any other: complete, the Secret kept as it is written. The two
// files in testdata/sops were encrypted by sops's Go API (internal/sopstest) with an age key
// thrown away after: this package's test binary does not link sops, so the benchmark's
// memory figures (bench_test.go) are olmsync's own.
func TestCheckSOPSEncrypted(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/sops/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tree := writeRepo(t, files{
		"cluster-scope/kustomization.yaml": clusterScopeKustomization,
		"cluster-scope/namespace.yaml":     namespaceTeamA,
		"cluster-scope/operatorgroup.yaml": operatorGroupTeamA,
		"apps/team-a/kustomization.yaml":   "resources: [secret.sops.yaml]\nsecretGenerator:\n- name: api\n  namespace: team-a\n  envs: [api.sops.env]\n",
		"apps/team-a/secret.sops.yaml":     read("secret.sops.yaml"),
		"apps/team-a/api.sops.env":         read("api.sops.env"),
	})
	res := run(t, tree, Options{})
	if !res.Complete() {
		t.Fatalf("problems: %+v", res.Problems)
	}
	var db *render.Object
	for _, a := range res.Render.Apps {
		for _, o := range a.Objects {
			if o.Kind() == "Secret" && o.Name() == "db" {
				db = o
			}
		}
	}
	if db == nil || !render.IsEncryptedSecret(db.Manifest) {
		t.Fatalf("Secret db = %+v, want it as written, encrypted", db)
	}
}
