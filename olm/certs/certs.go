package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
)

// The PEM block types OLM writes.
const (
	pemCertificate = "CERTIFICATE"
	pemECKey       = "EC PRIVATE KEY"
)

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed certificate authority valid from now until notAfter, for the
// organization org, its common name "olm-selfsigned-<serial in hex>" as OLM names it.
func NewCA(now, notAfter time.Time, org string) (*KeyPair, error) {
	if notAfter.Before(now) {
		return nil, fmt.Errorf("invalid notAfter: %s before %s", notAfter, now)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("olm-selfsigned-%x", serial), Organization: []string{org}},
		NotBefore:             now,
		NotAfter:              notAfter,
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	return sign(template, nil)
}

// NewServing makes a serving certificate for hosts (the first is its common name), signed by
// ca, valid from now until notAfter.
func NewServing(ca *KeyPair, now, notAfter time.Time, org string, hosts []string) (*KeyPair, error) {
	if notAfter.Before(now) {
		return nil, fmt.Errorf("invalid notAfter: %s before %s", notAfter, now)
	}
	if len(hosts) == 0 {
		return nil, errors.New("a serving certificate needs at least one host")
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0], Organization: []string{org}},
		NotBefore:             now,
		NotAfter:              notAfter,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              hosts,
	}
	return sign(template, ca)
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	return serial, nil
}

// sign makes a key and a certificate from template, signed by parent (self-signed when nil).
func sign(template *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certificate key: %w", err)
	}
	issuer, signer := template, key
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	raw, err := x509.CreateCertificate(rand.Reader, template, issuer, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(raw)
	if err != nil {
		return nil, fmt.Errorf("parse created certificate: %w", err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// PEM encodes the certificate and its key.
func (kp *KeyPair) PEM() (certPEM, keyPEM []byte, err error) {
	der, err := x509.MarshalECPrivateKey(kp.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode private key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: kp.Cert.Raw})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: pemECKey, Bytes: der})
	return certPEM, keyPEM, nil
}

// ParsePEM reads the first certificate of PEM data (OLM's message when there is none).
func ParsePEM(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("cert PEM empty")
	}
	return x509.ParseCertificate(block.Bytes)
}

// PEMSHA256 is the hex SHA-256 of PEM data: OLM's olmcahash of a CA.
func PEMSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Verify checks that cert is valid for host at now and signed by ca.
func Verify(ca, cert *x509.Certificate, host string, now time.Time) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: now})
	return err
}

// Active reports whether now is strictly inside the certificate's validity.
func Active(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotBefore) && now.Before(cert.NotAfter)
}
