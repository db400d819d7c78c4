package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// Small builders for table tests: a channel from its entries, a package whose bundles are
// made from its channels' entries (the version is the name's part after ".v").

func channel(pkg, name string, entries ...ChannelEntry) *Channel {
	o := Origin{File: "catalog.json", Line: 2}
	for i := range entries {
		entries[i].Origin = o // as the FBC reader does: an entry is where its channel is
	}
	return &Channel{Package: pkg, Name: name, Entries: entries, Origin: o}
}

func entry(name string) ChannelEntry { return ChannelEntry{Name: name} }

func (e ChannelEntry) replaces(name string) ChannelEntry { e.Replaces = name; return e }

func (e ChannelEntry) skips(names ...string) ChannelEntry { e.Skips = names; return e }

func (e ChannelEntry) skipRange(r string) ChannelEntry { e.SkipRange = r; return e }

// versionOf is the version a test bundle name carries: "etcd.v0.9.2" is 0.9.2.
func versionOf(name string) string {
	if i := strings.LastIndex(name, ".v"); i >= 0 {
		return name[i+2:]
	}
	return "0.0.0"
}

// bundle is a bundle of the package with its olm.package property and an image.
func bundle(pkg, name, version string, extra ...Property) *Bundle {
	props := append([]Property{mustProperty(PropertyPackage, PackageProperty{PackageName: pkg, Version: version})}, extra...)
	b := &Bundle{Name: name, Package: pkg, Image: "quay.io/example/" + name, Properties: props, Origin: Origin{File: "catalog.json", Line: 3}}
	b.parseProperties()
	return b
}

// pkgWith is a package whose bundles are every entry of its channels.
func pkgWith(name, defaultChannel string, channels ...*Channel) *Package {
	p := &Package{Name: name, DefaultChannel: defaultChannel, Channels: channels, Origin: Origin{File: "catalog.json", Line: 1}}
	seen := map[string]bool{}
	for _, ch := range channels {
		for _, e := range ch.Entries {
			if !seen[e.Name] {
				seen[e.Name] = true
				p.Bundles = append(p.Bundles, bundle(name, e.Name, versionOf(e.Name)))
			}
		}
	}
	return p
}

func catalogOf(pkgs ...*Package) *Catalog {
	c := &Catalog{Source: Source{Format: FormatFBC, Ref: "catalog.json"}, Packages: pkgs}
	c.Sort()
	return c
}

// problemKey is what a table test compares of a problem: everything but where it was read.
type problemKey struct {
	Severity Severity
	Code     Code
	Package  string
	Channel  string
	Bundle   string
	Message  string
}

func keysOf(ps Problems) []problemKey {
	var out []problemKey
	for _, p := range ps {
		out = append(out, problemKey{p.Severity, p.Code, p.Package, p.Channel, p.Bundle, p.Message})
	}
	return out
}

func errorKey(code Code, pkg, ch, bundle, format string, args ...any) problemKey {
	return problemKey{SeverityError, code, pkg, ch, bundle, fmt.Sprintf(format, args...)}
}

func infoKey(code Code, pkg, ch, bundle, format string, args ...any) problemKey {
	return problemKey{SeverityInfo, code, pkg, ch, bundle, fmt.Sprintf(format, args...)}
}

func names(entries []ChannelEntry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func mustLoadFS(t *testing.T, load func() (*Catalog, error)) *Catalog {
	t.Helper()
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// csvYAML is a small ClusterServiceVersion manifest. owned are CRD names
// (<plural>.<group>) it owns at version v1.
func csvYAML(name, version, replaces string, skips []string, skipRange string, owned ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: " + name + "\n")
	if skipRange != "" {
		b.WriteString("  annotations:\n    olm.skipRange: '" + skipRange + "'\n")
	}
	b.WriteString("spec:\n  displayName: " + name + "\n  version: " + version + "\n")
	b.WriteString("  install:\n    strategy: deployment\n    spec:\n      deployments: []\n")
	b.WriteString("  installModes:\n  - type: OwnNamespace\n    supported: true\n  - type: AllNamespaces\n    supported: true\n")
	if replaces != "" {
		b.WriteString("  replaces: " + replaces + "\n")
	}
	if len(skips) > 0 {
		b.WriteString("  skips:\n")
		for _, s := range skips {
			b.WriteString("  - " + s + "\n")
		}
	}
	if len(owned) > 0 {
		b.WriteString("  customresourcedefinitions:\n    owned:\n")
		for _, o := range owned {
			kind := strings.ToUpper(o[:1]) + strings.TrimSuffix(o[1:strings.Index(o, ".")], "s")
			b.WriteString("    - name: " + o + "\n      version: v1\n      kind: " + kind + "\n")
		}
	}
	return b.String()
}

// crdYAML is a v1 CRD <plural>.<group> serving the versions.
func crdYAML(name string, versions ...string) string {
	plural, group, _ := strings.Cut(name, ".")
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n")
	b.WriteString("spec:\n  group: " + group + "\n  names:\n    kind: " + kind + "\n    plural: " + plural + "\n  scope: Namespaced\n  versions:\n")
	for i, v := range versions {
		b.WriteString("  - name: " + v + "\n    served: true\n    storage: " + fmt.Sprint(i == 0) + "\n")
	}
	return b.String()
}
