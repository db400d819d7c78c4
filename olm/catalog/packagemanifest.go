package catalog

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// PackageManifest is a package manifest (<pkg>.package.yaml, or one item of a ConfigMap
// catalog's packages list): the package's channels, each naming its head CSV.
type PackageManifest struct {
	PackageName    string           `json:"packageName"`
	Channels       []PackageChannel `json:"channels"`
	DefaultChannel string           `json:"defaultChannel,omitempty"`
}

// PackageChannel is one channel of a package manifest.
type PackageChannel struct {
	Name       string `json:"name"`
	CurrentCSV string `json:"currentCSV"`
}

// ParsePackageManifest reads a <pkg>.package.yaml strictly: an unknown field or a key
// given twice is an error, and so is a file over the bounded reader's limits.
func ParsePackageManifest(data []byte) (PackageManifest, error) {
	var pm PackageManifest
	if err := safeyaml.Check("", data); err != nil {
		return pm, err
	}
	err := yaml.UnmarshalStrict(data, &pm)
	return pm, err
}

// Validate checks a package manifest with OLM's validator and returns its messages.
func (pm PackageManifest) Validate() []string {
	var errs []string
	if pm.PackageName == "" {
		errs = append(errs, "packageName empty")
	}
	if len(pm.Channels) == 0 {
		errs = append(errs, "channels empty")
	}
	if pm.DefaultChannel == "" && len(pm.Channels) > 1 {
		errs = append(errs, "default channel is empty but more than one channel exists")
	}
	seen := map[string]bool{}
	for i, ch := range pm.Channels {
		if ch.Name == "" {
			errs = append(errs, fmt.Sprintf("channel %d name is empty", i))
		}
		if ch.CurrentCSV == "" {
			errs = append(errs, fmt.Sprintf("channel %q currentCSV is empty", ch.Name))
		}
		if seen[ch.Name] {
			errs = append(errs, fmt.Sprintf("duplicate package manifest channel name %q", ch.Name))
		}
		seen[ch.Name] = true
	}
	if pm.DefaultChannel != "" && !seen[pm.DefaultChannel] {
		errs = append(errs, fmt.Sprintf("default channel %q not found in the list of declared channels", pm.DefaultChannel))
	}
	return errs
}

// defaultChannel is the manifest's default channel; a single channel is implicitly default.
func (pm PackageManifest) defaultChannel() string {
	if pm.DefaultChannel == "" && len(pm.Channels) == 1 {
		return pm.Channels[0].Name
	}
	return pm.DefaultChannel
}

// LoadPackageManifests reads a folder in the package manifest format — <pkg>.package.yaml
// beside one folder per version holding a CSV and its CRDs — or a folder of such package
// folders. A channel holds its currentCSV and every CSV reached from it by walking
// spec.replaces; the CSVs those entries skip join it too. Each entry's edges are its CSV's
// replaces, skips and olm.skipRange annotation.
func LoadPackageManifests(fsys fs.FS, root string) (*Catalog, error) {
	return loadPackageManifests(fsys, root, "")
}

func loadPackageManifests(fsys fs.FS, root, display string) (*Catalog, error) {
	files, err := findPackageFiles(fsys, root)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no package manifest (*.package.yaml) found", displayPath(display, root))
	}
	v := &problems{}
	c := &Catalog{Source: Source{Format: FormatPackageManifest, Ref: displayPath(display, root)}}
	for _, file := range files {
		if p := readPackageDir(fsys, file, display, v); p != nil {
			c.Packages = append(c.Packages, p)
		}
	}
	c.Problems = v.list
	c.Sort()
	return c, nil
}

// findPackageFiles lists the *.package.yaml files below root, one per folder.
func findPackageFiles(fsys fs.FS, root string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if !d.IsDir() && isPackageFile(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

func isPackageFile(name string) bool {
	return strings.HasSuffix(name, ".package.yaml") || strings.HasSuffix(name, ".package.yml") || name == "package.yaml"
}

// readPackageDir reads one package folder: its package file and its version folders.
func readPackageDir(fsys fs.FS, file, display string, v *problems) *Package {
	o := Origin{File: displayPath(display, file)}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		v.add(SeverityError, CodeParse, o, "", "", "", "%v", err)
		return nil
	}
	pm, err := ParsePackageManifest(data)
	if err != nil {
		v.add(SeverityError, CodeParse, o, "", "", "", "read package manifest: %v", err)
		return nil
	}
	for _, msg := range pm.Validate() {
		v.add(SeverityError, CodeInvalidPackage, o, pm.PackageName, "", "", "%s", msg)
	}
	dir := path.Dir(file)
	bundles := readVersionFolders(fsys, dir, display, pm.PackageName, v)
	return packageFromManifest(pm, o, bundles, v, "owned CRD is not in the version folder")
}

// readVersionFolders reads every subfolder of a package folder as one version: exactly
// one CSV (seeds 001: "every version of an Operator has exactly one CSV") and its objects.
func readVersionFolders(fsys fs.FS, dir, display, pkg string, v *problems) []*Bundle {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		v.add(SeverityError, CodeParse, Origin{File: displayPath(display, dir)}, pkg, "", "", "%v", err)
		return nil
	}
	var bundles []*Bundle
	for _, e := range entries {
		if !e.IsDir() {
			if isManifestFile(e.Name()) && !isPackageFile(e.Name()) && e.Name() != "ci.yaml" {
				v.add(SeverityWarning, CodeParse, Origin{File: displayPath(display, path.Join(dir, e.Name()))}, pkg, "", "", "manifest beside the package file is not in a version folder; ignored")
			}
			continue
		}
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		vdir := path.Join(dir, e.Name())
		content, err := readBundleManifests(fsys, vdir, display, v, pkg, "")
		if err != nil {
			v.add(SeverityError, CodeParse, Origin{File: displayPath(display, vdir)}, pkg, "", "", "%v", err)
			continue
		}
		if len(content.CSVs) != 1 {
			v.add(SeverityError, CodeCSVCount, Origin{File: displayPath(display, vdir)}, pkg, "", "", "version folder %q must hold exactly one ClusterServiceVersion, found %d", e.Name(), len(content.CSVs))
			if len(content.CSVs) == 0 {
				continue
			}
		}
		bundles = append(bundles, bundleFromCSV(pkg, content.CSVs[0], content.Objects, nil, content.CSVFile))
	}
	return bundles
}

// packageFromManifest builds a package from its manifest and the bundles of its CSVs
// (a package folder's versions, or a ConfigMap's CSVs), walking each channel from its
// currentCSV down spec.replaces.
func packageFromManifest(pm PackageManifest, o Origin, bundles []*Bundle, v *problems, ownedCRDMessage string) *Package {
	p := &Package{Name: pm.PackageName, DefaultChannel: pm.defaultChannel(), Origin: o}
	byName := map[string]*Bundle{}
	for _, b := range bundles {
		if _, dup := byName[b.Name]; !dup {
			byName[b.Name] = b
		}
		p.Bundles = append(p.Bundles, b)
		checkOwnedCRDs(v, b, ownedCRDMessage)
	}
	for _, b := range bundles {
		// seeds 001: "If a CSV replaces another, both the old and the new must exist in the package."
		if r := b.CSV.Spec.Replaces; r != "" && byName[r] == nil {
			v.add(SeverityError, CodeReplacesMissing, b.Origin, p.Name, "", b.Name, "Invalid bundle %s, replaces nonexistent bundle %s", b.Name, r)
		}
	}
	for _, pc := range pm.Channels {
		ch := &Channel{Package: p.Name, Name: pc.Name, Origin: o}
		ch.Entries = walkChannel(v, p.Name, pc, o, byName)
		p.Channels = append(p.Channels, ch)
	}
	return p
}

// walkChannel lists a channel's entries: its currentCSV, every CSV reached by walking
// spec.replaces, then the CSVs of the package those entries skip.
func walkChannel(v *problems, pkg string, pc PackageChannel, o Origin, byName map[string]*Bundle) []ChannelEntry {
	if pc.CurrentCSV == "" {
		return nil
	}
	var entries []ChannelEntry
	in := map[string]bool{}
	prev := ""
	for cur := pc.CurrentCSV; cur != ""; {
		b, ok := byName[cur]
		if !ok {
			if prev == "" {
				v.add(SeverityError, CodeMissingBundle, o, pkg, pc.Name, cur, "currentCSV %q is not a CSV of the package", cur)
			}
			break // a missing replaces target is reported once, on the CSV that names it
		}
		if in[cur] {
			v.add(SeverityError, CodeCycle, o, pkg, pc.Name, prev, "Cycle detected, %s replaces %s", prev, cur)
			break
		}
		in[cur] = true
		entries = append(entries, entryFromCSV(b.CSV, b.Origin))
		prev, cur = cur, b.CSV.Spec.Replaces
	}
	for _, e := range slices.Clone(entries) {
		for _, s := range e.Skips {
			if b, ok := byName[s]; ok && !in[s] {
				in[s] = true
				entries = append(entries, entryFromCSV(b.CSV, b.Origin))
			}
		}
	}
	return entries
}
