// Package sops decrypts documents that SOPS (github.com/getsops/sops, 3.x) encrypted for
// age recipients, with filippo.io/age and the standard library's AES-GCM only: linking
// sops itself brings every cloud key service's SDK into the binary (twice its size, and
// ~35 MB of resident memory at start). It reads the formats sops writes (YAML, JSON,
// dotenv, INI, binary), decrypts exactly the values sops would decrypt (its
// unencrypted/encrypted suffix, regex and comment-regex rules, and the additional data
// each value is bound to: the path of keys to it), and emits the plaintext as sops's
// stores emit it. Only render imports it; tests prove it against files the sops library
// encrypts (internal/sopstest).
package sops
