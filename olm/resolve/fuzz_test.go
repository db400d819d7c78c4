package resolve_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/olm/semverrange"
)

// FuzzResolve builds a small catalog and namespace from the fuzzer's bytes — three packages
// of up to three bundles, random replaces, skips and skipRanges, provided and required APIs
// out of three, package requirements, installed CSVs with and without Subscriptions — and
// checks what resolution must always hold: it does not panic, it decides the same way twice,
// and whenever it installs something the namespace it leaves has at most one bundle per
// package, at most one provider per API, and a provider for every API and package a bundle
// in it requires (seed 001's "OLM must never" rules).
func FuzzResolve(f *testing.F) {
	f.Add([]byte{0x13, 0x42, 0x07, 0xff, 0x00, 0x91, 0x33, 0x5a, 0x01, 0x80, 0x2c, 0x6e, 0x10, 0x03, 0xc4, 0x77, 0x18, 0x29})
	f.Add([]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14})
	f.Add([]byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1, 0xf0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := &byteReader{data: data}
		apis := []string{"A.v1.example.com", "B.v1.example.com", "C.v1.example.com"}
		ranges := []string{">=1.0.0", "<2.0.0", ">=2.0.0 <3.0.0", "1.x"}
		var pkgs []pkgB
		n := resolve.Namespace{Name: "ns"}
		for pi := range 3 {
			name := fmt.Sprintf("p%d", pi)
			count := 1 + rd.next()%3
			var entries []catalog.ChannelEntry
			for v := 1; v <= count; v++ {
				entry := e(fmt.Sprintf("%s.v%d.0.0", name, v))
				b := rd.next()
				if v > 1 && b&1 == 0 {
					entry.Replaces = fmt.Sprintf("%s.v%d.0.0", name, v-1)
				}
				if v > 2 && b&2 != 0 {
					entry.Skips = []string{fmt.Sprintf("%s.v%d.0.0", name, v-2)}
				}
				if b&4 != 0 {
					entry.SkipRange = fmt.Sprintf("<%d.0.0", v)
				}
				entries = append(entries, entry)
			}
			p := pkg(name, "stable", ch("stable", entries...))
			for _, en := range entries {
				provides, requires := rd.next(), rd.next()
				for i, api := range apis {
					if provides&(1<<i) != 0 {
						p.provides(en.Name, api)
					}
					if requires&(1<<i) != 0 && requires&(8<<i) != 0 {
						p.requires(en.Name, api)
					}
				}
				if r := rd.next(); r&1 != 0 {
					p.requiresPackage(en.Name, fmt.Sprintf("p%d", (r>>1)%3), ranges[(r>>3)%len(ranges)])
				}
			}
			pkgs = append(pkgs, p)
			state := rd.next()
			installedName := ""
			if state&1 != 0 {
				installedName = entries[(state>>1)%len(entries)].Name
				n.CSVs = append(n.CSVs, installed(p, installedName))
			}
			if state&8 != 0 {
				s := sub(name, name, "stable", "c", "olm")
				if installedName != "" && state&16 != 0 {
					s = s.at(installedName)
				}
				n.Subscriptions = append(n.Subscriptions, s.get())
			}
		}
		r := resolve.New([]resolve.Catalog{cat("c", "olm", pkgs...)}, resolve.Options{GlobalNamespace: "olm", MaxSteps: 20_000})
		res := r.Resolve(n)
		if again := r.Resolve(n); !cmp.Equal(res, again, cmpBundle) {
			t.Fatalf("two resolutions of one namespace differ:\n%s", cmp.Diff(res, again, cmpBundle))
		}
		checkInvariants(t, n, res, pkgs)
	})
}

type byteReader struct {
	data []byte
	i    int
}

func (r *byteReader) next() int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[r.i%len(r.data)]
	r.i++
	return int(b)
}

// checkInvariants checks the namespace resolution leaves behind.
func checkInvariants(t *testing.T, n resolve.Namespace, res *resolve.Result, pkgs []pkgB) {
	t.Helper()
	bundles := map[string]*catalog.Bundle{}
	for _, p := range pkgs {
		for _, b := range p.Bundles {
			bundles[b.Name] = b
		}
	}
	for _, s := range res.Subscriptions {
		r := s.Resolution
		switch r.Status {
		case resolve.StatusResolved:
			if !slices.ContainsFunc(res.Bundles, func(b resolve.Bundle) bool { return b.Name == r.Next && b.Subscription == s.Name }) {
				t.Fatalf("%s resolved to %s, which is not installed: %+v", s.Name, r.Next, res.Bundles)
			}
		case resolve.StatusFailed:
			if r.Reason == "" || r.Message == "" {
				t.Fatalf("%s failed without a reason or message: %+v", s.Name, r)
			}
		}
	}
	if len(res.Bundles) == 0 {
		return
	}
	// What the namespace holds afterwards: installed CSVs, minus those a Subscription
	// upgrades, plus the new bundles.
	replaced := map[string]bool{}
	for _, b := range res.Bundles {
		if b.Subscription != "" {
			replaced[res.Subscription(b.Subscription).Installed] = true
		}
	}
	var final []*catalog.Bundle
	for _, csv := range n.CSVs {
		if !replaced[csv.Name] {
			final = append(final, bundles[csv.Name])
		}
	}
	for _, b := range res.Bundles {
		final = append(final, bundles[b.Name])
	}
	byPkg := map[string]string{}
	byAPI := map[catalog.GVK]string{}
	for _, b := range final {
		if other, ok := byPkg[b.Package]; ok {
			t.Fatalf("package %s twice: %s and %s (%+v)", b.Package, other, b.Name, res)
		}
		byPkg[b.Package] = b.Name
		bp, _ := b.Props()
		for _, g := range bp.Provides {
			if other, ok := byAPI[g]; ok {
				t.Fatalf("%s provided twice: %s and %s", g, other, b.Name)
			}
			byAPI[g] = b.Name
		}
	}
	for _, b := range final {
		bp, _ := b.Props()
		for _, g := range bp.Requires {
			if _, ok := byAPI[g]; !ok {
				t.Fatalf("%s requires %s, which nothing provides (%+v)", b.Name, g, res)
			}
		}
		for _, req := range bp.RequiresPackages {
			rng, _ := semverrange.Parse(req.VersionRange)
			name, ok := byPkg[req.PackageName]
			if !ok || !rng(bundles[name].Version) {
				t.Fatalf("%s requires %s %s, the namespace has %q", b.Name, req.PackageName, req.VersionRange, name)
			}
		}
	}
}
