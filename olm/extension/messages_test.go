package extension

import "testing"

// TestResolutionErrorLiterals holds OLM v1's resolution messages byte for byte, in their
// clause order: operator-controller internal/operator-controller/resolve/catalog.go,
// resolutionError.Error (lines 219-248 of df2c201: "error upgrading from currently installed
// version %q: ", "found bundles for package %q " / "no bundles found for package %q ",
// "matching version %q ", "in channels %v ", "in multiple catalogs with the same priority %v ",
// trimmed), and validation.go:21 (NoDependencyValidation).
func TestResolutionErrorLiterals(t *testing.T) {
	inst := &BundleMetadata{Name: "p.v1.0.0", Version: "1.0.0"}
	tests := []struct {
		err  error
		want string
	}{
		{&ResolutionError{Package: "p"}, `no bundles found for package "p"`},
		{&ResolutionError{Package: "p", Version: ">=1.0.0"}, `no bundles found for package "p" matching version ">=1.0.0"`},
		{&ResolutionError{Package: "p", Channels: []string{"a", "b"}}, `no bundles found for package "p" in channels [a b]`},
		{&ResolutionError{Package: "p", Version: "1.x", Channels: []string{"a"}, Installed: inst},
			`error upgrading from currently installed version "1.0.0": no bundles found for package "p" matching version "1.x" in channels [a]`},
		{&ResolutionError{Package: "p", Catalogs: []string{"x", "y"}}, `found bundles for package "p" in multiple catalogs with the same priority [x y]`},
		{&ResolutionError{Package: "p", Version: "1.x", Installed: inst, Catalogs: []string{"x", "y"}},
			`error upgrading from currently installed version "1.0.0": found bundles for package "p" matching version "1.x" in multiple catalogs with the same priority [x y]`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
