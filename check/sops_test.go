package check

import (
	"testing"

	"github.com/olmsync/olmsync/internal/sopstest"
	"github.com/olmsync/olmsync/render"
)

// TestCheckSOPSEncrypted: the offline check, which has no keys, renders an app whose
// Secret manifest and secretGenerator env file are SOPS-encrypted without decrypting
// them, and checks it like any other: complete, the Secret kept as it is written.
func TestCheckSOPSEncrypted(t *testing.T) {
	key := sopstest.NewKey(t)
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: team-a\nstringData:\n  password: plaintext\n"
	tree := writeRepo(t, files{
		"cluster-scope/kustomization.yaml": clusterScopeKustomization,
		"cluster-scope/namespace.yaml":     namespaceTeamA,
		"cluster-scope/operatorgroup.yaml": operatorGroupTeamA,
		"apps/team-a/kustomization.yaml":   "resources: [secret.sops.yaml]\nsecretGenerator:\n- name: api\n  namespace: team-a\n  envs: [api.sops.env]\n",
		"apps/team-a/secret.sops.yaml":     string(sopstest.Encrypt(t, []byte(secret), sopstest.YAML, sopstest.KubernetesRegex, key)),
		"apps/team-a/api.sops.env":         string(sopstest.Encrypt(t, []byte("API_KEY=plaintext\n"), sopstest.Dotenv, "", key)),
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
