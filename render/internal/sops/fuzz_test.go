package sops

import (
	"testing"

	"filippo.io/age"

	"github.com/olmsync/olmsync/internal/sopstest"
)

// FuzzDecryptDocument: no document, in any format, panics the decryption or decrypts
// without the key's identity; seeds are documents the sops library encrypted.
func FuzzDecryptDocument(f *testing.F) {
	key := sopstest.NewKey(f)
	id, err := age.ParseX25519Identity(key.Identity())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		plain string
		f     sopstest.Format
		fmt   Format
	}{
		{yamlDoc, sopstest.YAML, YAML},
		{`{"a": {"b": [1, 2.5, true, "x"]}}`, sopstest.JSON, JSON},
		{"A=b\n#c\n", sopstest.Dotenv, Dotenv},
		{"[s]\nk = v\n", sopstest.INI, INI},
		{"raw", sopstest.Binary, Binary},
	} {
		f.Add(sopstest.Encrypt(f, []byte(s.plain), s.f, "", key), uint8(s.fmt), uint8(s.fmt))
	}
	// Key groups split by Shamir: the fuzzer mutates shares and thresholds too.
	f.Add(sopstest.EncryptGroups(f, []byte(yamlDoc), sopstest.YAML, 2, []*sopstest.Key{key}, []*sopstest.Key{key}, []*sopstest.Key{sopstest.NewKey(f)}), uint8(YAML), uint8(YAML))
	f.Add([]byte("a: &a [*a, *a]\nsops: {age: [{enc: x}]}\n"), uint8(YAML), uint8(JSON))
	f.Fuzz(func(t *testing.T, data []byte, in, out uint8) {
		inF, outF := Format(in%5), Format(out%5)
		_, _ = Decrypt(data, inF, outF, []age.Identity{id})
		// Without an identity, nothing decrypts.
		if plain, err := Decrypt(data, inF, outF, nil); err == nil && len(plain) > 0 {
			if _, lerr := Decrypt(data, inF, outF, []age.Identity{id}); lerr != nil {
				t.Fatalf("decrypted without an identity but not with one: %v", lerr)
			}
		}
	})
}
