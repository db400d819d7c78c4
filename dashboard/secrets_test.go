package dashboard

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMaskFile: a Secret's values and a secretGenerator's literals are masked in every
// shape YAML and JSON write them, keys and lines kept; anything else is left as it is.
func TestMaskFile(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{{
		name: "block data and stringData; other documents untouched",
		in: `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  password: visible
---
apiVersion: v1
kind: Secret
metadata:
  name: s
stringData:
  password: hunter2 # a comment
  multi: |
    line one
    line two

  quoted: "x"
data:
  token: dG9r
type: Opaque
`,
		want: `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  password: visible
---
apiVersion: v1
kind: Secret
metadata:
  name: s
stringData:
  password: ***
  multi: ***
    ***
    ***

  quoted: ***
data:
  token: ***
type: Opaque
`,
	}, {
		name: "flow style",
		in:   "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: dG9r, b: eA==}}\n",
		want: "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: ***\n",
	}, {
		name: "pretty JSON",
		in: `{
  "apiVersion": "v1",
  "kind": "Secret",
  "data": {
    "token": "dG9r"
  },
  "type": "Opaque"
}`,
		want: `{
  "apiVersion": "v1",
  "kind": "Secret",
  "data": ***
    ***
  },
  "type": "Opaque"
}`,
	}, {
		name: "an anchored value aliased into data",
		in: `apiVersion: v1
kind: Secret
metadata:
  name: s
  annotations: {note: &pw hunter2}
stringData:
  password: *pw
`,
		want: `apiVersion: v1
kind: Secret
metadata:
  name: s
  annotations: {note: ***
stringData:
  password: ***
`,
	}, {
		name: "a kustomization's secretGenerator literals",
		in: `resources: [a.yaml]
secretGenerator:
- name: creds
  literals:
  - password=hunter2
  - user=admin
  files: [tls.crt]
configMapGenerator:
- name: settings
  literals: [level=debug]
`,
		want: `resources: [a.yaml]
secretGenerator:
- name: creds
  literals:
  - ***
  - ***
  files: [tls.crt]
configMapGenerator:
- name: settings
  literals: [level=debug]
`,
	}, {
		name: "a SecretGenerator plugin config",
		in:   "apiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: g}\nliterals: [password=hunter2]\n",
		want: "apiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: g}\nliterals: ***\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := maskFile("f.yaml", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("masked (-want +got)\n%s", diff)
			}
			if strings.Count(string(got), "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("lines moved: %d, want %d", strings.Count(string(got), "\n"), strings.Count(tt.in, "\n"))
			}
		})
	}
	if _, err := maskFile("f.yaml", []byte("kind: Secret\ndata: {a: [\n")); err == nil {
		t.Error("a broken file with a Secret was shown")
	}
	if got, err := maskFile("f.yaml", []byte("key: [unclosed\n")); err != nil || string(got) != "key: [unclosed\n" {
		t.Errorf("a broken file without a Secret: %q %v, want it as it is", got, err)
	}
}

func TestSecretSources(t *testing.T) {
	k := `secretGenerator:
- name: a
  files: [tls.crt, key=keys/tls.key]
  envs: [creds.env]
- name: b
  env: old.env
configMapGenerator:
- name: c
  files: [settings.yaml]
`
	if diff := cmp.Diff([]string{"tls.crt", "keys/tls.key", "creds.env", "old.env"}, secretSources("kustomization.yaml", []byte(k))); diff != "" {
		t.Errorf("sources (-want +got)\n%s", diff)
	}
}

func TestShownFile(t *testing.T) {
	for p, want := range map[string]bool{"a.yaml": true, "b/c.YML": true, "d.json": true, "creds.env": false, "tls.key": false, "Kustomization": false} {
		if shownFile(p) != want {
			t.Errorf("shownFile(%q) = %v, want %v", p, !want, want)
		}
	}
}

// FuzzMaskFile: any input is masked without a panic, and no line moves.
func FuzzMaskFile(f *testing.F) {
	f.Add([]byte("kind: Secret\ndata:\n  a: b\n"))
	f.Add([]byte("{\"kind\":\"Secret\",\"stringData\":{\"a\":\"b\"}}"))
	f.Add([]byte("secretGenerator:\n- literals:\n  - a=b\n"))
	f.Add([]byte("kind: Secret\nstringData:\n  a: &x |\n    b\n  c: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := maskFile("f.yaml", data)
		if err != nil {
			return
		}
		if strings.Count(string(got), "\n") != strings.Count(string(data), "\n") {
			t.Errorf("lines moved: %q -> %q", data, got)
		}
	})
}
