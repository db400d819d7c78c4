package render

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/olmsync/olmsync/internal/sopstest"
)

const plainSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
type: Opaque
stringData:
  password: hunter2-plaintext
data:
  token: c2VjcmV0LXRva2Vu
`

// sopsRepo is an app with a SOPS-encrypted Secret manifest, a secretGenerator whose env
// file and JSON file are SOPS-encrypted, and a configMapGenerator (never decrypted), all
// encrypted for key by the test with sops's Go API, as `sops --encrypt --age` writes them.
func sopsRepo(t *testing.T, key *sopstest.Key) files {
	t.Helper()
	return files{
		"apps/shop/kustomization.yaml": `
resources: [secret.sops.yaml, cm.yaml]
secretGenerator:
  - name: env
    namespace: shop
    envs: [app.sops.env]
  - name: files
    namespace: shop
    files: [config.json=config.sops.json]
generatorOptions:
  disableNameSuffixHash: true
`,
		"apps/shop/secret.sops.yaml": string(sopstest.Encrypt(t, []byte(plainSecret), sopstest.YAML, sopstest.KubernetesRegex, key)),
		"apps/shop/app.sops.env":     string(sopstest.Encrypt(t, []byte("API_KEY=env-plaintext-value\nMODE=live\n"), sopstest.Dotenv, "", key)),
		"apps/shop/config.sops.json": string(sopstest.Encrypt(t, []byte(`{"dsn": "json-plaintext-value"}`), sopstest.JSON, "", key)),
		"apps/shop/cm.yaml": `
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: shop}
data: {a: b}
`,
	}
}

func decryptionOf(t *testing.T, keys ...*sopstest.Key) *Decryption {
	t.Helper()
	data := map[string][]byte{"ignored.txt": []byte("not a key")}
	for i, k := range keys {
		data[string(rune('a'+i))+".agekey"] = []byte("# created by the test\n" + k.Identity() + "\n")
	}
	d, err := NewDecryption("", data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func secretValue(t *testing.T, o *Object, key string) string {
	t.Helper()
	if v := nested(o, "stringData", key); v != "" {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(nested(o, "data", key))
	if err != nil {
		t.Fatalf("%s data.%s: %v", o.Name(), key, err)
	}
	return string(b)
}

// TestDecryptSOPS: an encrypted Secret manifest and encrypted secretGenerator sources,
// made by the test, are decrypted at render; the SOPS metadata is gone.
func TestDecryptSOPS(t *testing.T) {
	key := sopstest.NewKey(t)
	repo := sopsRepo(t, key)
	if strings.Contains(repo["apps/shop/secret.sops.yaml"], "hunter2-plaintext") || strings.Contains(repo["apps/shop/app.sops.env"], "env-plaintext-value") {
		t.Fatal("the test's files are not encrypted")
	}
	fsys, root := memRepo(t, repo)
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, sopstest.NewKey(t), key)})
	app := appNamed(t, res, "apps/shop")
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	db := objectNamed(t, app, "Secret", "db")
	if got := secretValue(t, db, "password"); got != "hunter2-plaintext" {
		t.Errorf("db password = %q", got)
	}
	if got := secretValue(t, db, "token"); got != "secret-token" {
		t.Errorf("db token = %q", got)
	}
	if _, ok := db.Manifest.Object["sops"]; ok {
		t.Error("the decrypted Secret still has its sops metadata")
	}
	if db.Source.File != "apps/shop/secret.sops.yaml" || db.Source.Line != 1 {
		t.Errorf("db source = %+v", db.Source)
	}
	env := objectNamed(t, app, "Secret", "env")
	if got := secretValue(t, env, "API_KEY"); got != "env-plaintext-value" {
		t.Errorf("env API_KEY = %q", got)
	}
	if _, ok := env.Manifest.Object["data"].(map[string]any)["sops_mac"]; ok {
		t.Error("the generated Secret holds the SOPS metadata of its env file")
	}
	if got := secretValue(t, objectNamed(t, app, "Secret", "files"), "config.json"); !strings.Contains(got, `"dsn": "json-plaintext-value"`) {
		t.Errorf("files config.json = %q", got)
	}

	// Without a Decryption the objects stay as written: the Secret is opaque ciphertext.
	res = renderRepo(t, fsys, root, Options{})
	app = appNamed(t, res, "apps/shop")
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	db = objectNamed(t, app, "Secret", "db")
	if !IsEncryptedSecret(db.Manifest) {
		t.Error("an encrypted Secret rendered without decryption is not IsEncryptedSecret")
	}
	if strings.Contains(secretValue(t, objectNamed(t, app, "Secret", "env"), "API_KEY"), "env-plaintext-value") {
		t.Error("an env file was decrypted without a Decryption")
	}
}

// TestDecryptSecretDataValue: a Secret whose data value is a whole SOPS document (a
// generator file taken as it is, under a key whose format differs from the file's name)
// is decrypted value by value, into the format of the key's name.
func TestDecryptSecretDataValue(t *testing.T) {
	key := sopstest.NewKey(t)
	doc := sopstest.Encrypt(t, []byte("user: admin\npass: yaml-plaintext\n"), sopstest.YAML, "", key)
	fsys, root := memRepo(t, files{
		"app/secret.yaml": `
apiVersion: v1
kind: Secret
metadata: {name: blob, namespace: x}
data:
  creds.yaml: ` + base64.StdEncoding.EncodeToString(doc) + `
  plain: aGVsbG8=
`,
	})
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, key)})
	app := res.Apps[0]
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	blob := objectNamed(t, app, "Secret", "blob")
	if got := secretValue(t, blob, "creds.yaml"); got != "user: admin\npass: yaml-plaintext\n" {
		t.Errorf("creds.yaml = %q", got)
	}
	if got := secretValue(t, blob, "plain"); got != "hello" {
		t.Errorf("plain = %q", got)
	}
}

// TestDecryptWrongKey: a file encrypted for another key fails its app with an error
// naming the file, the line and the object, the recipients the file is for, and no key.
func TestDecryptWrongKey(t *testing.T) {
	key, other := sopstest.NewKey(t), sopstest.NewKey(t)
	fsys, root := memRepo(t, sopsRepo(t, key))
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, other)})
	app := appNamed(t, res, "apps/shop")
	var be *BuildError
	if !errors.As(app.Err, &be) || !errors.Is(app.Err, ErrDecryption) {
		t.Fatalf("err = %v, want a BuildError of ErrDecryption", app.Err)
	}
	if len(app.Objects) != 0 {
		t.Errorf("a failed app has %d objects", len(app.Objects))
	}
	msg := app.Err.Error()
	for _, want := range []string{"apps/shop/app.sops.env", "secretGenerator of apps/shop/kustomization.yaml:3",
		"cannot get sops data key", key.Recipient()} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	for _, secret := range []string{other.Identity(), key.Identity(), "env-plaintext-value"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error %q holds a secret", msg)
		}
	}

	// The Secret manifest alone, encrypted for the other key: the error names its file,
	// line and object.
	fsys, root = memRepo(t, files{
		"app/kustomization.yaml": "resources: [cm.yaml, secret.sops.yaml]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"app/secret.sops.yaml":   string(sopstest.Encrypt(t, []byte(plainSecret), sopstest.YAML, sopstest.KubernetesRegex, key)),
	})
	res = renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, other)})
	err := res.Apps[0].Err
	if !errors.Is(err, ErrDecryption) {
		t.Fatalf("err = %v", err)
	}
	want := `app/secret.sops.yaml:1: decryption failed: Secret shop/db: failed to decrypt and format 'shop/db' Secret data: cannot get sops data key: none of the 1 age identities of the decryption Secret is a recipient of the file; its age recipients: ` + key.Recipient()
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error:\n%s\nwant it to end in:\n%s", err, want)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Error("the error holds the plaintext")
	}
}

// TestDecryptKeyGroups: a Secret whose data key sops split across key groups (Shamir)
// decrypts with identities of enough groups; with too few, the error says how many groups
// open it and how many the Secret's identities opened.
func TestDecryptKeyGroups(t *testing.T) {
	k1, k2, k3 := sopstest.NewKey(t), sopstest.NewKey(t), sopstest.NewKey(t)
	groups := func(t *testing.T) files {
		enc := sopstest.EncryptGroups(t, []byte(plainSecret), sopstest.YAML, 2, []*sopstest.Key{k1}, []*sopstest.Key{k2}, []*sopstest.Key{k3})
		return files{"app/kustomization.yaml": "resources: [secret.sops.yaml]\n", "app/secret.sops.yaml": string(enc)}
	}
	fsys, root := memRepo(t, groups(t))
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, k1, k3)})
	if err := res.Apps[0].Err; err != nil || len(res.Apps[0].Objects) != 1 {
		t.Fatalf("two groups of three: %v", err)
	}
	if v, _, _ := unstructured.NestedString(res.Apps[0].Objects[0].Manifest.Object, "stringData", "password"); v != "hunter2-plaintext" {
		t.Errorf("stringData.password = %q, want the plaintext", v)
	}
	fsys, root = memRepo(t, groups(t))
	res = renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, k2)})
	want := "the file's data key is split across 3 key groups (Shamir), 2 of which open it, and the decryption Secret's age identities open 1"
	if err := res.Apps[0].Err; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("one group of three: %v, want it to say %q", err, want)
	}
}

// TestDecryptDisabled: an object annotated as Flux's decrypt: disabled is left
// encrypted, and is no Secret to refuse.
func TestDecryptDisabled(t *testing.T) {
	key := sopstest.NewKey(t)
	annotated := strings.Replace(plainSecret, "  namespace: shop\n", "  namespace: shop\n  annotations: {kustomize.toolkit.fluxcd.io/decrypt: Disabled}\n", 1)
	fsys, root := memRepo(t, files{
		"app/secret.yaml": string(sopstest.Encrypt(t, []byte(annotated), sopstest.YAML, sopstest.KubernetesRegex, key)),
	})
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, key)})
	db := objectNamed(t, res.Apps[0], "Secret", "db")
	if _, ok := db.Manifest.Object["sops"]; !ok {
		t.Error("an object that opts out was decrypted")
	}
	if IsEncryptedSecret(db.Manifest) {
		t.Error("an object that opts out is IsEncryptedSecret")
	}
}

// TestNewDecryption: the identities of a decryption Secret, and the errors that name the
// key and the line but never the key material.
func TestNewDecryption(t *testing.T) {
	k1, k2 := sopstest.NewKey(t), sopstest.NewKey(t)
	tests := []struct {
		name    string
		data    map[string][]byte
		want    int
		wantErr string
	}{
		{name: "none", data: map[string][]byte{"identity.asc": []byte("pgp")}, want: 0},
		{name: "two keys, two lines", data: map[string][]byte{
			"a.agekey": []byte(k1.Identity() + "\n\n# comment\n" + k2.Identity()), "b.agekey": []byte(k1.Identity())}, want: 3},
		{name: "malformed", data: map[string][]byte{"a.agekey": []byte(k1.Identity() + "\nAGE-SECRET-KEY-1NOTAKEYQQQQ")},
			wantErr: "failed to import 'a.agekey' data: line 2 is not an age identity (AGE-SECRET-KEY-1…)"},
		{name: "plugin", data: map[string][]byte{"p.agekey": []byte("AGE-PLUGIN-YUBIKEY-1QQQQ")},
			wantErr: "failed to import 'p.agekey' data: line 1 is an age plugin identity, which would run a program: olmsync reads native age identities only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecryption("", tt.data)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Identities() != tt.want {
				t.Errorf("identities = %d, want %d", d.Identities(), tt.want)
			}
		})
	}
}

// TestRedact: the value sops quotes when it cannot read one is never in an error.
func TestRedact(t *testing.T) {
	err := redact(errors.New("Error walking tree: Could not decrypt value: Input string hunter2 does not match sops' data format"))
	want := "Error walking tree: Could not decrypt value: Input string <redacted> does not match sops' data format"
	if err.Error() != want {
		t.Errorf("redact = %q", err)
	}
}

// TestDecryptNotEncryptedValue: a fully encrypted manifest to which something added a
// plaintext value fails without quoting the value.
func TestDecryptNotEncryptedValue(t *testing.T) {
	key := sopstest.NewKey(t)
	enc := string(sopstest.Encrypt(t, []byte(plainSecret), sopstest.YAML, "", key))
	// kustomize's namespace transformer writes a plaintext namespace into a document
	// whose every value sops encrypted.
	fsys, root := memRepo(t, files{
		"app/kustomization.yaml": "namespace: moved-plaintext-ns\nresources: [s.yaml]\n",
		"app/s.yaml":             enc,
	})
	res := renderRepo(t, fsys, root, Options{Decryption: decryptionOf(t, key)})
	err := res.Apps[0].Err
	if !errors.Is(err, ErrDecryption) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "moved-plaintext-ns\" does") || strings.Contains(err.Error(), "Input string moved") {
		t.Errorf("the error quotes the value: %v", err)
	}
	t.Log(err)
}
