package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/safeyaml"
)

// The keys of a ConfigMap catalog (sourceType configmap, or the deprecated internal).
const (
	ConfigMapKeyCRDs     = "customResourceDefinitions"
	ConfigMapKeyCSVs     = "clusterServiceVersions"
	ConfigMapKeyPackages = "packages"
)

// ReadConfigMap reads a ConfigMap manifest (YAML or JSON) holding a catalog. name is what
// origins call the file.
func ReadConfigMap(data []byte, name string) (*Catalog, error) {
	var cm corev1.ConfigMap
	if err := safeyaml.Check(name, data); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		return nil, fmt.Errorf("%s: read ConfigMap: %w", name, err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("%s: kind %q is not ConfigMap", name, cm.Kind)
	}
	c := LoadConfigMap(&cm)
	c.Source.Ref = name
	return c, nil
}

// MessageMissingKey is operator-registry's error for a ConfigMap catalog without one of its
// keys (pkg/sqlite/configmap.go, Populate).
const MessageMissingKey = "couldn't find expected key %s in configmap"

// populateCodes are the problems operator-registry's ConfigMapLoader.Populate returns an
// error for: what its YAML decoding, its CRD and CSV lists and its sqlite loader refuse.
// OLM's configmap-server runs without --permissive, so any of them makes it exit and the
// catalog is not served at all.
var populateCodes = []Code{
	CodeParse, CodeDuplicateCRD, CodeOwnedCRDMissing, CodeReplacesMissing, CodeCycle,
	CodeInvalidPackage, CodeNoDefaultChannel, CodeDefaultChannelNotFound,
}

// PopulateError is the error OLM's configmap-server stops with on this ConfigMap catalog
// (operator-registry cmd/configmap-server/main.go: "error loading manifests from
// configmap: %s" around Populate's errors, aggregated as k8s.io's utilerrors writes them:
// the one message, or "[a, b]"), or nil when OLM would serve it. Only for catalogs read
// by LoadConfigMap.
func (c *Catalog) PopulateError() error {
	if c.Source.Format != FormatConfigMap {
		return nil
	}
	var msgs []string
	for _, p := range c.Problems {
		if p.Severity != SeverityError || !slices.Contains(populateCodes, p.Code) {
			continue
		}
		if p.Message == fmt.Sprintf(MessageMissingKey, ConfigMapKeyCRDs) {
			// The loader returns this one alone: it looks at nothing else first.
			return fmt.Errorf("error loading manifests from configmap: %s", p.Message)
		}
		msgs = append(msgs, p.Message)
	}
	switch len(msgs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("error loading manifests from configmap: %s", msgs[0])
	default:
		return fmt.Errorf("error loading manifests from configmap: [%s]", strings.Join(msgs, ", "))
	}
}

// LoadConfigMap reads OLM's ConfigMap catalog format: keys customResourceDefinitions,
// clusterServiceVersions and packages, each a YAML list. Each package is built like a
// package manifest folder, its channels walked down the CSVs' spec.replaces; each bundle
// carries the CRDs its CSV owns, and a CSV owning a CRD the list lacks is OLM's error
// "couldn't find owned CRD in crd list".
func LoadConfigMap(cm *corev1.ConfigMap) *Catalog {
	cmName := fmt.Sprintf("configmap %s/%s", cm.Namespace, cm.Name)
	v := &problems{}
	c := &Catalog{Source: Source{Format: FormatConfigMap, Ref: cmName}}

	crds, crdKeys := readConfigMapCRDs(cm, cmName, v)
	csvs, csvOrigins, csvOrder := readConfigMapCSVs(cm, cmName, v)
	checkConfigMapOwnedCRDs(crdKeys, csvs, csvOrigins, csvOrder, v)
	manifests := readConfigMapList(cm, ConfigMapKeyPackages, cmName, v)
	// operator-registry's ConfigMapLoader (which OLM's configmap registry runs) refuses a
	// ConfigMap without any of these keys, customResourceDefinitions included (an operator
	// that owns no CRD still needs the key, with an empty list); without them nothing of
	// the catalog is served.
	for _, key := range []string{ConfigMapKeyCRDs, ConfigMapKeyCSVs, ConfigMapKeyPackages} {
		if _, ok := cm.Data[key]; !ok {
			v.add(SeverityError, CodeParse, Origin{File: cmName}, "", "", "", MessageMissingKey, key)
		}
	}

	claimed := map[string]bool{}
	for i, raw := range manifests {
		o := Origin{File: fmt.Sprintf("%s, %s[%d]", cmName, ConfigMapKeyPackages, i)}
		var pm PackageManifest
		if err := yaml.UnmarshalStrict(raw, &pm); err != nil {
			v.add(SeverityError, CodeParse, o, "", "", "", "read package manifest: %v", err)
			continue
		}
		for _, msg := range pm.Validate() {
			v.add(SeverityError, CodeInvalidPackage, o, pm.PackageName, "", "", "%s", msg)
		}
		var bundles []*Bundle
		for _, name := range reachableCSVs(pm, csvs) {
			claimed[name] = true
			csv := csvs[name]
			bundles = append(bundles, bundleFromCSV(pm.PackageName, csv, ownedCRDObjects(csv, crds), nil, csvOrigins[name]))
		}
		c.Packages = append(c.Packages, packageFromManifest(pm, o, bundles, v, "")) // owned CRDs: checkConfigMapOwnedCRDs
	}
	for name, csv := range csvs {
		if !claimed[name] {
			v.add(SeverityWarning, CodeBundleNotInChannel, csvOrigins[name], "", "", csv.Name, "no channel of any package reaches this ClusterServiceVersion; it is not in the catalog")
		}
	}
	c.Problems = v.list
	c.Sort()
	return c
}

// readConfigMapList reads one key of the ConfigMap as a YAML list, each item as JSON.
func readConfigMapList(cm *corev1.ConfigMap, key, cmName string, v *problems) []json.RawMessage {
	value, ok := cm.Data[key]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if err := safeyaml.Check("", []byte(value)); err != nil {
		v.add(SeverityError, CodeParse, Origin{File: cmName + ", " + key}, "", "", "", "%s: %v", key, err)
		return nil
	}
	if err := yaml.Unmarshal([]byte(value), &items); err != nil {
		v.add(SeverityError, CodeParse, Origin{File: cmName + ", " + key}, "", "", "", "%s is not a YAML list: %v", key, err)
		return nil
	}
	return items
}

// readConfigMapCRDs reads the CRD list; the same CRD twice is OLM's error.
func readConfigMapCRDs(cm *corev1.ConfigMap, cmName string, v *problems) (crds map[string]Object, keys map[apiKey]bool) {
	crds, keys = map[string]Object{}, map[apiKey]bool{}
	for i, raw := range readConfigMapList(cm, ConfigMapKeyCRDs, cmName, v) {
		o := Origin{File: fmt.Sprintf("%s, %s[%d]", cmName, ConfigMapKeyCRDs, i)}
		m, err := newManifest(raw, o)
		if err == nil && !m.isCRD() {
			err = fmt.Errorf("%s %s is not a CustomResourceDefinition", m.Kind, m.Name)
		}
		var info crdInfo
		if err == nil {
			info, err = parseCRD(m.JSON)
		}
		if err != nil {
			v.add(SeverityError, CodeParse, o, "", "", "", "%v", err)
			continue
		}
		// operator-registry keys the list by group, version, kind and plural, one key per
		// version (spec.version only when spec.versions is empty); a key seen before is
		// refused, the CRD's other versions still count.
		versions := info.ListedVersions
		if len(versions) == 0 && len(info.Versions) > 0 {
			versions = info.Versions
		}
		for _, ver := range versions {
			k := apiKey{Group: info.Group, Version: ver, Kind: info.Kind, Plural: info.Plural}
			if keys[k] {
				v.add(SeverityError, CodeDuplicateCRD, o, "", "", "", "can't add the same CRD twice in one configmap: %s", k)
				continue
			}
			keys[k] = true
		}
		if _, dup := crds[m.Name]; !dup {
			crds[m.Name] = m
		}
	}
	return crds, keys
}

// apiKey is operator-registry's registry.APIKey, with its String form, which its
// ConfigMap loader's messages print.
type apiKey struct{ Group, Version, Kind, Plural string }

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s/%s (%s)", k.Group, k.Version, k.Kind, k.Plural)
}

// checkConfigMapOwnedCRDs applies operator-registry's ConfigMap loader check to every CSV
// of the list, whether or not a package reaches it: each owned CRD must be in the CRD
// list at the owned version. The messages are the loader's, byte for byte — including
// the "%!s(<nil>)" its format prints for the nil error it passes
// (pkg/sqlite/configmap.go:139 and :146 in OLM's vendor tree).
func checkConfigMapOwnedCRDs(keys map[apiKey]bool, csvs map[string]*operatorsv1alpha1.ClusterServiceVersion, origins map[string]Origin, order []string, v *problems) {
	var nilErr error
	for _, name := range order {
		csv := csvs[name]
		for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
			plural, group, ok := strings.Cut(owned.Name, ".")
			if !ok {
				v.add(SeverityError, CodeOwnedCRDMissing, origins[name], "", "", csv.Name, "error parsing owned name: %s", nilErr)
				continue
			}
			k := apiKey{Group: group, Version: owned.Version, Kind: owned.Kind, Plural: plural}
			if !keys[k] {
				v.add(SeverityError, CodeOwnedCRDMissing, origins[name], "", "", csv.Name, "couldn't find owned CRD in crd list %s: %s", k, nilErr)
			}
		}
	}
}

// readConfigMapCSVs reads the CSV list. OLM decodes the items as CSVs whatever their
// apiVersion and kind say, so missing ones are filled in.
func readConfigMapCSVs(cm *corev1.ConfigMap, cmName string, v *problems) (csvs map[string]*operatorsv1alpha1.ClusterServiceVersion, origins map[string]Origin, order []string) {
	csvs = map[string]*operatorsv1alpha1.ClusterServiceVersion{}
	origins = map[string]Origin{}
	for i, raw := range readConfigMapList(cm, ConfigMapKeyCSVs, cmName, v) {
		o := Origin{File: fmt.Sprintf("%s, %s[%d]", cmName, ConfigMapKeyCSVs, i)}
		data, err := withTypeMeta(raw, operatorsv1alpha1.SchemeGroupVersion.String(), operatorsv1alpha1.ClusterServiceVersionKind)
		var csv *operatorsv1alpha1.ClusterServiceVersion
		var unknown []string
		if err == nil {
			csv, unknown, err = decodeCSV(Object{JSON: data, Origin: o})
		}
		if err != nil {
			v.add(SeverityError, CodeParse, o, "", "", "", "decode ClusterServiceVersion: %v", err)
			continue
		}
		for _, f := range unknown {
			v.add(SeverityWarning, CodeUnknownField, o, "", "", csv.Name, "ClusterServiceVersion %s: %s", csv.Name, f)
		}
		if _, dup := csvs[csv.Name]; dup {
			v.add(SeverityError, CodeDuplicateBundle, o, "", "", csv.Name, "ClusterServiceVersion %s is listed twice (also at %s); the first one is used", csv.Name, origins[csv.Name])
			continue
		}
		csvs[csv.Name], origins[csv.Name] = csv, o
		order = append(order, csv.Name)
	}
	return csvs, origins, order
}

func withTypeMeta(raw []byte, apiVersion, kind string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj == nil { // a null item of the list ("- " with nothing after it)
		return nil, fmt.Errorf("a %s must be an object, not null", kind)
	}
	if _, ok := obj["apiVersion"]; !ok {
		obj["apiVersion"], _ = json.Marshal(apiVersion)
	}
	if _, ok := obj["kind"]; !ok {
		obj["kind"], _ = json.Marshal(kind)
	}
	return json.Marshal(obj)
}

// reachableCSVs lists, sorted, the CSVs a package's channels reach: each currentCSV, the
// CSVs down its spec.replaces, and the CSVs they skip.
func reachableCSVs(pm PackageManifest, csvs map[string]*operatorsv1alpha1.ClusterServiceVersion) []string {
	seen := map[string]bool{}
	for _, ch := range pm.Channels {
		for cur := ch.CurrentCSV; cur != "" && !seen[cur]; {
			csv, ok := csvs[cur]
			if !ok {
				break
			}
			seen[cur] = true
			for _, s := range csv.Spec.Skips {
				if _, ok := csvs[s]; ok {
					seen[s] = true
				}
			}
			cur = csv.Spec.Replaces
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ownedCRDObjects are the CRDs of the list that the CSV owns.
func ownedCRDObjects(csv *operatorsv1alpha1.ClusterServiceVersion, crds map[string]Object) []Object {
	var out []Object
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		if o, ok := crds[owned.Name]; ok && !slices.ContainsFunc(out, func(x Object) bool { return x.Name == o.Name }) {
			out = append(out, o)
		}
	}
	return out
}
