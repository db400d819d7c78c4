package catalog

import "slices"

// DropBundleObjectProperties removes the olm.bundle.object properties of every bundle whose
// manifests were unpacked (Bundle.CSV, Bundle.Objects). A catalog a cluster serves needs them
// no longer: OLM's registry leaves them out of every bundle it serves (operator-registry's
// conversion to its API), so OLM's resolver, its constraints included, never reads them.
// Kept, each manifest is held twice — base64 in its property, and decoded — where the decoded
// manifests are all a plan reads. A catalog so trimmed no longer renders its bundles'
// objects (WriteFBC).
func (c *Catalog) DropBundleObjectProperties() {
	for _, p := range c.Packages {
		for _, b := range p.Bundles {
			if b.CSV == nil && len(b.Objects) == 0 {
				continue // nothing was unpacked: the properties are all there is
			}
			b.Properties = slices.DeleteFunc(b.Properties, func(prop Property) bool { return prop.Type == PropertyBundleObject })
		}
	}
}
