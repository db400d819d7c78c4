package sops

import (
	"bytes"
	"errors"
	"testing"

	"github.com/getsops/sops/v3/shamir"

	"github.com/olmsync/olmsync/internal/sopstest"
)

// TestGF: multiplication is GF(2^8)'s with the AES polynomial (FIPS-197 4.2: {57}·{83} =
// {c1}), and division undoes it for every non-zero divisor.
func TestGF(t *testing.T) {
	if got := gfMul(0x57, 0x83); got != 0xc1 {
		t.Errorf("gfMul(0x57, 0x83) = %#x, want 0xc1", got)
	}
	for b := 1; b < 256; b++ {
		for _, a := range []byte{0, 1, 0x57, 0xff} {
			if got := gfMul(gfDiv(a, byte(b)), byte(b)); got != a {
				t.Fatalf("(%#x / %#x) * %#x = %#x", a, b, b, got)
			}
		}
	}
}

// TestCombineSharesMatchesSops: shares split by the Shamir package sops uses combine, any
// threshold of them in any order, into the secret.
func TestCombineSharesMatchesSops(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	shares, err := shamir.Split(secret, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, pick := range [][]int{{0, 1, 2}, {4, 2, 0}, {1, 3, 4}, {0, 1, 2, 3, 4}} {
		var in [][]byte
		for _, i := range pick {
			in = append(in, shares[i])
		}
		got, err := combineShares(in)
		if err != nil || !bytes.Equal(got, secret) {
			t.Errorf("shares %v: %q, %v; want the secret", pick, got, err)
		}
	}
	if got, _ := combineShares([][]byte{shares[0], shares[1]}); bytes.Equal(got, secret) {
		t.Error("two shares of a threshold of three gave the secret")
	}
	for name, in := range map[string][][]byte{
		"one share":      {shares[0]},
		"same x":         {shares[0], shares[0]},
		"length differs": {shares[0], shares[1][:10]},
	} {
		if _, err := combineShares(in); err == nil {
			t.Errorf("%s: combined without an error", name)
		}
	}
}

// TestDecryptKeyGroups: a file whose data key sops split across three key groups, two of
// which open it, decrypts as sops decrypts it with the identities of any two groups; with
// one, it is a NoKeyError saying how many groups it opened of how many needed. Without a
// shamir_threshold every group is needed.
func TestDecryptKeyGroups(t *testing.T) {
	k1, k2, k3 := sopstest.NewKey(t), sopstest.NewKey(t), sopstest.NewKey(t)
	plain := []byte("user: admin\npassword: s3cret\n")
	enc := sopstest.EncryptGroups(t, plain, sopstest.YAML, 2, []*Key{k1}, []*Key{k2}, []*Key{k3})
	want := sopstest.Decrypt(t, enc, sopstest.YAML, k1, k3)
	got, err := Decrypt(enc, YAML, YAML, identities(t, k1, k3))
	if err != nil || string(got) != string(want) {
		t.Fatalf("k1 and k3: %q, %v; want sops's %q", got, err, want)
	}
	if got, err := Decrypt(enc, YAML, YAML, identities(t, k3, k2)); err != nil || string(got) != string(want) {
		t.Errorf("k2 and k3: %q, %v", got, err)
	}
	var nk *NoKeyError
	if _, err := Decrypt(enc, YAML, YAML, identities(t, k2)); !errors.As(err, &nk) || nk.Groups != 3 || nk.Threshold != 2 || nk.Opened != 1 {
		t.Errorf("k2 alone: %v (%+v), want a NoKeyError of 3 groups, threshold 2, 1 opened", err, nk)
	}

	all := sopstest.EncryptGroups(t, plain, sopstest.YAML, 0, []*Key{k1}, []*Key{k2})
	if _, err := Decrypt(all, YAML, YAML, identities(t, k1)); !errors.As(err, &nk) || nk.Threshold != 2 {
		t.Errorf("no shamir_threshold, one group of two: %v, want a NoKeyError needing both", err)
	}
	if got, err := Decrypt(all, YAML, YAML, identities(t, k1, k2)); err != nil || string(got) != string(plain) {
		t.Errorf("no shamir_threshold, both groups: %q, %v", got, err)
	}
}

// Key is sopstest's key, named for the group literals above.
type Key = sopstest.Key
