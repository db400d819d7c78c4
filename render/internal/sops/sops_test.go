package sops

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/olmsync/olmsync/internal/sopstest"
)

func identities(t *testing.T, keys ...*sopstest.Key) []age.Identity {
	t.Helper()
	var out []age.Identity
	for _, k := range keys {
		id, err := age.ParseX25519Identity(k.Identity())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

const yamlDoc = `# head comment
apiVersion: v1
kind: Secret
metadata:
    name: db
    labels:
        tier: backend
data:
    password: hunter2 # inline
    port: 5432
    ratio: 0.25
    enabled: true
    hosts:
        - a.example
        - b.example
        - nested:
            deep: value
    empty: ""
    multi: |
        line one
        line two
token_unencrypted: stays-plain
`

// TestDecryptMatchesSops: documents of every format, encrypted by the sops library, decrypt
// to the bytes sops's own decryption emits (nested mappings, lists, every scalar type,
// comments, the _unencrypted suffix, --encrypted-regex).
func TestDecryptMatchesSops(t *testing.T) {
	key := sopstest.NewKey(t)
	tests := []struct {
		name   string
		plain  string
		format sopstest.Format
		f      Format
		regex  string
	}{
		{"yaml", yamlDoc, sopstest.YAML, YAML, ""},
		{"yaml regex", yamlDoc, sopstest.YAML, YAML, "^(data|stringData)$"},
		{"yaml multi-document", "a: 1\n---\nb: [x, y]\n", sopstest.YAML, YAML, ""},
		{"json", `{"z": "first", "a": {"n": 1, "f": 1.5, "b": false, "l": ["x", {"y": "z"}], "nil": null}, "s_unencrypted": "plain"}`, sopstest.JSON, JSON, ""},
		{"dotenv", "# a comment\nAPI_KEY=abc\nMULTI=one\\ntwo\nEMPTY=\n", sopstest.Dotenv, Dotenv, ""},
		{"ini", "[db]\nuser = admin ; who\npass = s3cret\n[other]\nk = v\n", sopstest.INI, INI, ""},
		{"binary", "\x00\x01 raw bytes\nsecond line", sopstest.Binary, Binary, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := sopstest.Encrypt(t, []byte(tt.plain), tt.format, tt.regex, key)
			want := sopstest.Decrypt(t, enc, tt.format, key)
			got, err := Decrypt(enc, tt.f, tt.f, identities(t, sopstest.NewKey(t), key))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("plaintext differs from sops's:\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

// TestDecryptAcrossFormats: a YAML document emitted as JSON and dotenv keeps its order.
func TestDecryptAcrossFormats(t *testing.T) {
	key := sopstest.NewKey(t)
	enc := sopstest.Encrypt(t, []byte("b: two\na: 1\n"), sopstest.YAML, "", key)
	for f, want := range map[Format]string{JSON: "{\n\"b\": \"two\",\n\"a\": 1\n}\n", Dotenv: "b=two\na=1\n", YAML: "b: two\na: 1\n"} {
		got, err := Decrypt(enc, YAML, f, identities(t, key))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", f, got, err, want)
		}
	}
	if _, err := Decrypt(sopstest.Encrypt(t, []byte("a: {b: c}\n"), sopstest.YAML, "", key), YAML, Dotenv, identities(t, key)); err == nil ||
		err.Error() != "cannot use complex value in dotenv file; offending key a" {
		t.Errorf("nested value to dotenv: %v", err)
	}
}

// TestDecryptErrors: a tampered value, a value moved to another path, a value that is
// not sops's, a wrong key and a document without metadata fail clearly, without the
// plaintext.
func TestDecryptErrors(t *testing.T) {
	key, other := sopstest.NewKey(t), sopstest.NewKey(t)
	enc := string(sopstest.Encrypt(t, []byte("user: admin-plaintext\npass: pass-plaintext\n"), sopstest.YAML, "", key))
	userValue := regexp.MustCompile(`user: (ENC\[[^\]]*\])`).FindStringSubmatch(enc)[1]
	passValue := regexp.MustCompile(`pass: (ENC\[[^\]]*\])`).FindStringSubmatch(enc)[1]
	data := regexp.MustCompile(`data:([^,]*),`)
	tampered := strings.Replace(enc, userValue, data.ReplaceAllString(userValue, "data:"+base64.StdEncoding.EncodeToString([]byte("xxxxxxxxxxxxx"))+","), 1)
	tests := []struct {
		name, doc string
		ids       []age.Identity
		want      string
		as        any
	}{
		{"tampered", tampered, identities(t, key), "Error walking tree: Could not decrypt value: Could not decrypt with AES_GCM: cipher: message authentication failed", new(*TreeError)},
		{"moved to another key", strings.Replace(enc, "pass: "+passValue, "pass: "+userValue, 1), identities(t, key), "message authentication failed", new(*TreeError)},
		{"plaintext value", strings.Replace(enc, "pass: "+passValue, "pass: added-plaintext", 1), identities(t, key), "Could not decrypt value: Input string <redacted> does not match sops' data format", new(*TreeError)},
		{"wrong key", enc, identities(t, other), "no age identity opens the data key; the file's age recipients: " + key.Recipient(), new(*NoKeyError)},
		{"no identity", enc, nil, key.Recipient(), new(*NoKeyError)},
		{"no metadata", "a: b\n", identities(t, key), "sops metadata not found", new(*LoadError)},
		{"two rules", strings.Replace(enc, "sops:\n", "sops:\n    encrypted_regex: x\n    unencrypted_regex: y\n", 1), identities(t, key), "Cannot use more than one of", new(*LoadError)},
		{"no keys", regexp.MustCompile(`(?s)    age:.*?    lastmodified`).ReplaceAllString(enc, "    lastmodified"), identities(t, key), "No keys found in file", new(*LoadError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc == enc && tt.name != "wrong key" && tt.name != "no identity" {
				t.Fatal("the test did not change the document")
			}
			_, err := Decrypt([]byte(tt.doc), YAML, YAML, tt.ids)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			if !errors.As(err, tt.as) {
				t.Errorf("err is a %T, want %T", err, tt.as)
			}
			for _, secret := range []string{"admin-plaintext", "pass-plaintext", "added-plaintext", key.Identity(), other.Identity()} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q holds a secret", err)
				}
			}
		})
	}
}

// encryptValue encrypts as sops's cipher does, for the value tests.
func encryptValue(t *testing.T, plain, typ string, key []byte, aad string) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	iv := make([]byte, 32)
	gcm, err := cipher.NewGCMWithNonceSize(block, len(iv))
	if err != nil {
		t.Fatal(err)
	}
	out := gcm.Seal(nil, iv, []byte(plain), []byte(aad))
	n := len(out) - 16
	return fmt.Sprintf("ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]", base64.StdEncoding.EncodeToString(out[:n]),
		base64.StdEncoding.EncodeToString(iv), base64.StdEncoding.EncodeToString(out[n:]), typ)
}

// TestDecryptValue: each type sops writes, and the values that are not sops's.
func TestDecryptValue(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		name, value string
		want        any
		wantErr     string
	}{
		{"str", encryptValue(t, "hello", "str", key, "a:b:"), "hello", ""},
		{"int", encryptValue(t, "42", "int", key, "a:b:"), 42, ""},
		{"float", encryptValue(t, "0.5", "float", key, "a:b:"), 0.5, ""},
		{"bool", encryptValue(t, "True", "bool", key, "a:b:"), true, ""},
		{"bytes", encryptValue(t, "raw", "bytes", key, "a:b:"), "raw", ""},
		{"time", encryptValue(t, "2024-05-06T07:08:09Z", "time", key, "a:b:"), when, ""},
		{"comment", encryptValue(t, " note", "comment", key, "a:b:"), comment{value: " note"}, ""},
		{"empty", "", "", ""},
		{"bad int", encryptValue(t, "secret-not-int", "int", key, "a:b:"), nil, "the decrypted value is not of its type int"},
		{"unknown type", encryptValue(t, "x", "weird", key, "a:b:"), nil, "Unknown datatype: weird"},
		{"other path", encryptValue(t, "x", "str", key, "a:c:"), nil, "Could not decrypt with AES_GCM: cipher: message authentication failed"},
		{"not sops", "secret-plaintext", nil, "Input string <redacted> does not match sops' data format"},
		{"bad base64", "ENC[AES256_GCM,data:!!,iv:AA==,tag:AA==,type:str]", nil, "Error base64-decoding data"},
		{"empty iv", "ENC[AES256_GCM,data:AA==,iv:,tag:AA==,type:str]", nil, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decryptValue(tt.value, key, "a:b:")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "secret-") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, ok := got.([]byte); ok {
				got = string(b)
			}
			if t2, ok := got.(time.Time); ok {
				got = t2.UTC()
			}
			if got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestWalkPaths: the additional data of each value is the path of keys to it; list items
// keep their list's path; comments stay when they do not decrypt.
func TestWalkPaths(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tree := branch{
		{key: "a", value: branch{{key: "b", value: encryptValue(t, "ab", "str", key, "a:b:")}}},
		{key: "l", value: []any{encryptValue(t, "l0", "str", key, "l:"), branch{{key: "k", value: encryptValue(t, "lk", "str", key, "l:k:")}}, []any{encryptValue(t, "ll", "str", key, "l:")}}},
		{key: comment{value: encryptValue(t, "secret comment", "comment", key, ":")}},
		{key: comment{value: " plain comment"}},
		{key: "top", value: encryptValue(t, "t", "str", key, "top:")},
		{key: "n", value: nil},
	}
	w := &walker{key: key, rules: &rules{unencryptedSuffix: "_unencrypted"}}
	if err := w.branch(tree, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := encodeJSON(tree)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a": {"b": "ab"},"l": ["l0",{"k": "lk"},["ll"]],"top": "t","n": null}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if c := tree[2].key.(comment).value; c != "secret comment" {
		t.Errorf("encrypted comment = %q", c)
	}
	if c := tree[3].key.(comment).value; c != " plain comment" {
		t.Errorf("plain comment = %q", c)
	}
}

// TestRules: which values each of sops's rules says are encrypted.
func TestRules(t *testing.T) {
	re := regexp.MustCompile
	tests := []struct {
		name      string
		r         rules
		path      []string
		comments  [][]string
		isComment bool
		want      bool
	}{
		{"default", rules{unencryptedSuffix: "_unencrypted"}, []string{"a", "b"}, nil, false, true},
		{"unencrypted suffix", rules{unencryptedSuffix: "_unencrypted"}, []string{"a_unencrypted", "b"}, nil, false, false},
		{"encrypted suffix, match", rules{encryptedSuffix: "_enc"}, []string{"x", "pw_enc"}, nil, false, true},
		{"encrypted suffix, none", rules{encryptedSuffix: "_enc"}, []string{"x", "pw"}, nil, false, false},
		{"unencrypted regex", rules{unencryptedRegex: re("^meta")}, []string{"metadata", "name"}, nil, false, false},
		{"unencrypted regex, none", rules{unencryptedRegex: re("^meta")}, []string{"data", "x"}, nil, false, true},
		{"encrypted regex", rules{encryptedRegex: re("^(data|stringData)$")}, []string{"data", "x"}, nil, false, true},
		{"encrypted regex, none", rules{encryptedRegex: re("^(data|stringData)$")}, []string{"metadata", "name"}, nil, false, false},
		{"unencrypted comment", rules{unencryptedComment: re("sops:plain")}, []string{"a"}, [][]string{{" sops:plain"}}, false, false},
		{"encrypted comment", rules{encryptedComm: re("sops:enc")}, []string{"a"}, [][]string{{}, {" sops:enc"}}, false, true},
		{"encrypted comment, none", rules{encryptedComm: re("sops:enc")}, []string{"a"}, [][]string{{" other"}}, false, false},
		{"encrypted comment, the marker itself", rules{encryptedComm: re("sops:enc")}, nil, [][]string{{" sops:enc"}}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comments := tt.comments
			if comments == nil {
				comments = [][]string{{}}
			}
			if got := tt.r.encrypted(tt.path, comments, tt.isComment); got != tt.want {
				t.Errorf("encrypted = %v, want %v", got, tt.want)
			}
		})
	}
}
