// Package certs makes and checks the TLS material OLM gives an operator that serves webhooks
// or an aggregated API: a self-signed certificate authority per install, and a serving
// certificate it signs for the names of the operator's Service. The shapes are OLM's
// (pkg/controller/certs): ECDSA P-256 keys, the CA's common name "olm-selfsigned-<serial in
// hex>", the serving certificate's common name its first host, server-auth usage, and PEM
// blocks "CERTIFICATE" and "EC PRIVATE KEY". The package is pure apart from the randomness
// the keys need: every time is passed in, so a caller (and a test) decides what "now" is.
package certs
