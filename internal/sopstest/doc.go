// Package sopstest makes SOPS-encrypted files for tests the way the sops CLI does: a fresh
// age key per test, and documents (YAML, JSON, dotenv, INI, binary) encrypted for it
// with sops's own Go API, so that what olmsync decrypts in a test is what a user's
// `sops --encrypt --age …` writes.
package sopstest
