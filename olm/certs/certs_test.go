package certs

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

var t0 = time.Now().Truncate(time.Second)

func TestCAAndServingCertificate(t *testing.T) {
	ca, err := NewCA(t0, t0.Add(time.Hour), "Red Hat, Inc.")
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || ca.Cert.KeyUsage != x509.KeyUsageCertSign || !strings.HasPrefix(ca.Cert.Subject.CommonName, "olm-selfsigned-") ||
		ca.Cert.Subject.CommonName != "olm-selfsigned-"+ca.Cert.SerialNumber.Text(16) {
		t.Errorf("CA %+v: want OLM's self-signed CA, common name olm-selfsigned-<serial in hex>", ca.Cert.Subject)
	}
	hosts := []string{"svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"}
	serving, err := NewServing(ca, t0, ca.Cert.NotAfter, "Red Hat, Inc.", hosts)
	if err != nil {
		t.Fatal(err)
	}
	if serving.Cert.Subject.CommonName != "svc.ns" || serving.Cert.Subject.Organization[0] != "Red Hat, Inc." ||
		len(serving.Cert.ExtKeyUsage) != 1 || serving.Cert.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || serving.Cert.IsCA {
		t.Errorf("serving certificate %+v", serving.Cert.Subject)
	}
	for _, h := range hosts {
		if err := Verify(ca.Cert, serving.Cert, h, t0.Add(time.Minute)); err != nil {
			t.Errorf("verify for %s: %v", h, err)
		}
	}
	if Verify(ca.Cert, serving.Cert, "other.ns.svc", t0.Add(time.Minute)) == nil {
		t.Error("verified for a host it was not made for")
	}
	if Verify(ca.Cert, serving.Cert, hosts[1], t0.Add(2*time.Hour)) == nil {
		t.Error("verified after expiry")
	}
	other, err := NewCA(t0, t0.Add(time.Hour), "Red Hat, Inc.")
	if err != nil {
		t.Fatal(err)
	}
	if Verify(other.Cert, serving.Cert, hosts[1], t0.Add(time.Minute)) == nil {
		t.Error("verified under another CA")
	}

	certPEM, keyPEM, err := serving.PEM()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(certPEM), "-----BEGIN CERTIFICATE-----\n") || !strings.HasPrefix(string(keyPEM), "-----BEGIN EC PRIVATE KEY-----\n") {
		t.Errorf("PEM blocks %.30q %.30q", certPEM, keyPEM)
	}
	back, err := ParsePEM(certPEM)
	if err != nil || !back.Equal(serving.Cert) {
		t.Errorf("ParsePEM: %v", err)
	}
	if _, err := ParsePEM([]byte("no pem")); err == nil || err.Error() != "cert PEM empty" {
		t.Errorf("ParsePEM of nothing: %v, want OLM's %q", err, "cert PEM empty")
	}
}

func TestNotAfterBeforeNow(t *testing.T) {
	if _, err := NewCA(t0, t0.Add(-time.Second), "o"); err == nil || !strings.HasPrefix(err.Error(), "invalid notAfter: ") {
		t.Errorf("NewCA: %v", err)
	}
	ca, err := NewCA(t0, t0.Add(time.Hour), "o")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewServing(ca, t0, t0.Add(-time.Second), "o", []string{"h"}); err == nil {
		t.Error("NewServing expired: no error")
	}
	if _, err := NewServing(ca, t0, t0.Add(time.Second), "o", nil); err == nil {
		t.Error("NewServing without hosts: no error")
	}
}

func TestActive(t *testing.T) {
	c := &x509.Certificate{NotBefore: t0, NotAfter: t0.Add(time.Hour)}
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{{t0, false}, {t0.Add(time.Second), true}, {t0.Add(time.Hour), false}, {t0.Add(2 * time.Hour), false}} {
		if got := Active(c, tt.at); got != tt.want {
			t.Errorf("Active at %s = %v, want %v", tt.at.Sub(t0), got, tt.want)
		}
	}
}

// TestPEMSHA256: OLM's olmcahash is the hex SHA-256 of the PEM bytes (checked with another
// implementation: Python's hashlib).
func TestPEMSHA256(t *testing.T) {
	if got, want := PEMSHA256([]byte("-----BEGIN CERTIFICATE-----\n")), "b93f51c3ac1bdd90edcce2019d2452a328cbf97443f3744cc7ec63033a5b2c16"; got != want {
		t.Errorf("PEMSHA256 = %s, want %s", got, want)
	}
}
