package sopstest

import (
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	sopsdotenv "github.com/getsops/sops/v3/stores/dotenv"
	sopsini "github.com/getsops/sops/v3/stores/ini"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// Format names a SOPS file format.
type Format string

// The formats sops reads and writes.
const (
	YAML   Format = "yaml"
	JSON   Format = "json"
	Dotenv Format = "dotenv"
	INI    Format = "ini"
	Binary Format = "binary"
)

// KubernetesRegex is the --encrypted-regex the SOPS guides of Flux give for Kubernetes
// manifests: only data and stringData are encrypted, metadata stays readable.
const KubernetesRegex = "^(data|stringData)$"

// Key is an age identity made for one test.
type Key struct {
	id *age.X25519Identity
}

// NewKey makes a fresh age identity.
func NewKey(t testing.TB) *Key {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return &Key{id: id}
}

// Identity is the secret key, as an age key file holds it (AGE-SECRET-KEY-1…).
func (k *Key) Identity() string { return k.id.String() }

// Recipient is the public key (age1…).
func (k *Key) Recipient() string { return k.id.Recipient().String() }

type store interface {
	LoadPlainFile(in []byte) (sops.TreeBranches, error)
	EmitEncryptedFile(in sops.Tree) ([]byte, error)
}

func storeFor(f Format) store {
	switch f {
	case YAML:
		return sopsyaml.NewStore(&config.YAMLStoreConfig{})
	case JSON:
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	case Dotenv:
		return sopsdotenv.NewStore(&config.DotenvStoreConfig{})
	case INI:
		return sopsini.NewStore(&config.INIStoreConfig{})
	}
	return sopsjson.NewBinaryStore(&config.JSONBinaryStoreConfig{})
}

// Encrypt encrypts plain, a document of format f, for the keys' recipients, as `sops
// --encrypt --age <recipients> [--encrypted-regex regex]` does. An empty regex encrypts
// every value.
func Encrypt(t testing.TB, plain []byte, f Format, regex string, keys ...*Key) []byte {
	t.Helper()
	return encrypt(t, plain, f, regex, 0, keys)
}

// EncryptGroups encrypts plain, a document of format f, with its data key split by Shamir
// across key groups (one per keys slice), threshold of which open it, as sops does for a
// .sops.yaml creation rule with key_groups and shamir_threshold.
func EncryptGroups(t testing.TB, plain []byte, f Format, threshold int, groups ...[]*Key) []byte {
	t.Helper()
	return encrypt(t, plain, f, "", threshold, groups...)
}

func encrypt(t testing.TB, plain []byte, f Format, regex string, threshold int, groups ...[]*Key) []byte {
	t.Helper()
	s := storeFor(f)
	branches, err := s.LoadPlainFile(plain)
	if err != nil {
		t.Fatalf("sops: load plain %s: %v", f, err)
	}
	var keyGroups []sops.KeyGroup
	for _, keys := range groups {
		var group sops.KeyGroup
		for _, k := range keys {
			mk, err := sopsage.MasterKeyFromRecipient(k.Recipient())
			if err != nil {
				t.Fatal(err)
			}
			group = append(group, mk)
		}
		keyGroups = append(keyGroups, group)
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{
		KeyGroups: keyGroups, ShamirThreshold: threshold, EncryptedRegex: regex, Version: "3.13.3"}}
	// The local key service encrypts the data key for each age recipient; it needs no
	// identity to do so.
	dataKey, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()})
	if len(errs) > 0 {
		t.Fatalf("sops: data key: %v", errs)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		t.Fatalf("sops: encrypt: %v", err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		t.Fatalf("sops: encrypt mac: %v", err)
	}
	out, err := s.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatalf("sops: emit %s: %v", f, err)
	}
	return out
}

type decryptStore interface {
	LoadEncryptedFile(in []byte) (sops.Tree, error)
	EmitPlainFile(in sops.TreeBranches) ([]byte, error)
}

// Decrypt is sops's own decryption of data, a document of format f encrypted for key,
// as `sops --decrypt` emits it: what olmsync's decryption is compared with. It sets
// SOPS_AGE_KEY for the test, which is where sops's key service finds the identity.
func Decrypt(t *testing.T, data []byte, f Format, key *Key, more ...*Key) []byte {
	t.Helper()
	ids := []string{key.Identity()}
	for _, k := range more {
		ids = append(ids, k.Identity())
	}
	t.Setenv("SOPS_AGE_KEY", strings.Join(ids, "\n"))
	s := storeFor(f).(decryptStore)
	tree, err := s.LoadEncryptedFile(data)
	if err != nil {
		t.Fatalf("sops: load encrypted %s: %v", f, err)
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()}, sops.DefaultDecryptionOrder)
	if err != nil {
		t.Fatalf("sops: data key: %v", err)
	}
	if _, err := tree.Decrypt(dataKey, aes.NewCipher()); err != nil {
		t.Fatalf("sops: decrypt: %v", err)
	}
	out, err := s.EmitPlainFile(tree.Branches)
	if err != nil {
		t.Fatalf("sops: emit %s: %v", f, err)
	}
	return out
}
