package sops

import "errors"

// combineShares recovers a secret from Shamir shares in the format sops writes into its key
// groups (HashiCorp Vault's shamir package, which sops carries): each share is the
// secret's length of polynomial values, one per byte, followed by the share's x
// coordinate; the secret's byte i is the polynomial through the shares' byte i, evaluated
// at 0, in GF(2^8) with the AES polynomial.
func combineShares(shares [][]byte) ([]byte, error) {
	if len(shares) < 2 {
		return nil, errors.New("less than two Shamir shares cannot be combined")
	}
	n := len(shares[0])
	if n < 2 {
		return nil, errors.New("a Shamir share is too short")
	}
	xs := make([]byte, len(shares))
	seen := map[byte]bool{}
	for i, s := range shares {
		if len(s) != n {
			return nil, errors.New("the Shamir shares differ in length")
		}
		xs[i] = s[n-1]
		if seen[xs[i]] {
			return nil, errors.New("two Shamir shares have the same x coordinate")
		}
		seen[xs[i]] = true
	}
	secret := make([]byte, n-1)
	ys := make([]byte, len(shares))
	for b := range secret {
		for i, s := range shares {
			ys[i] = s[b]
		}
		secret[b] = interpolateAtZero(xs, ys)
	}
	return secret, nil
}

// interpolateAtZero is the Lagrange polynomial through (xs[i], ys[i]) evaluated at 0.
// Addition in GF(2^8) is XOR, so 0 - x is x.
func interpolateAtZero(xs, ys []byte) byte {
	var result byte
	for i := range xs {
		basis := byte(1)
		for j := range xs {
			if i != j {
				basis = gfMul(basis, gfDiv(xs[j], xs[i]^xs[j]))
			}
		}
		result ^= gfMul(ys[i], basis)
	}
	return result
}

// gfMul multiplies in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, without branching on the
// operands (they are key material).
func gfMul(a, b byte) byte {
	var r byte
	for i := 7; i >= 0; i-- {
		r = (-(b >> uint(i) & 1) & a) ^ (-(r >> 7) & 0x1b) ^ (r << 1)
	}
	return r
}

// gfDiv divides in GF(2^8): a times the inverse of b, b^254. b is never 0 here (the x
// coordinates differ).
func gfDiv(a, b byte) byte {
	inv := b
	for range 6 { // b^3, b^7, ..., b^127: square, then multiply by b
		inv = gfMul(gfMul(inv, inv), b)
	}
	return gfMul(a, gfMul(inv, inv)) // b^127 squared is b^254
}
