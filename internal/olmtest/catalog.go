package olmtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
)

// API is a namespaced custom resource kind served at one version. Plural, when set, is
// its plural; else the lower-case kind plus "s" (not "prometheuses" from Prometheus).
// Schema, when set, is the version's openAPIV3Schema (YAML, or JSON); without it the CRD
// keeps any field.
type API struct{ Group, Version, Kind, Plural, Schema string }

// CRDName is the CRD's name: <plural>.<group>.
func (a API) CRDName() string { return a.plural() + "." + a.Group }

func (a API) plural() string {
	if a.Plural != "" {
		return a.Plural
	}
	return strings.ToLower(a.Kind) + "s"
}

// Bundle is one version of a test operator: a CSV named <Package>.v<Version> with one
// Deployment <Package>-operator (the same name in every version, so that an upgrade takes it
// over), a namespaced permission, and the upgrade edges and APIs a test gives it.
type Bundle struct {
	Package, Version string
	// Replaces, Skips and SkipRange (the olm.skipRange annotation) are its upgrade edges.
	Replaces  string
	Skips     []string
	SkipRange string
	// Owns are the CRDs the CSV owns (the catalog carries them); Requires those it needs.
	Owns, Requires []API
	// InstallModes are the install modes the CSV supports; nil is OwnNamespace,
	// SingleNamespace and AllNamespaces.
	InstallModes []string
	// MinKubeVersion is spec.minKubeVersion.
	MinKubeVersion string
	// Channels are the channels the bundle is in; nil is "stable". A ConfigMap catalog
	// names only each channel's head (its last bundle here) and derives the rest from
	// replaces, so a channel's bundles must form its head's replaces chain.
	Channels []string
	// RequiresPackages are olm.package.required dependencies; only a file-based catalog
	// (FBC) carries them, as a ConfigMap catalog has no place for them.
	RequiresPackages []PackageRequirement
	// Webhooks are webhookdefinitions of the CSV, served by its deployment:
	// WebhookValidating (on its first owned API, failure policy Ignore), WebhookConversion
	// (of its first owned CRD) or WebhookRepeated (two validating webhooks of one name,
	// which OLM refuses).
	Webhooks []string
}

// The kinds of Bundle.Webhooks.
const (
	WebhookValidating = "validating"
	WebhookConversion = "conversion"
	WebhookRepeated   = "repeated"
)

// PackageRequirement is an olm.package.required property: a package within a semver range.
type PackageRequirement struct {
	Package, VersionRange string
}

// InChannels is the bundle's channels ("stable" when it names none).
func (b Bundle) InChannels() []string {
	if len(b.Channels) == 0 {
		return []string{"stable"}
	}
	return b.Channels
}

// Name is the CSV's name.
func (b Bundle) Name() string { return b.Package + ".v" + b.Version }

// CSV is the bundle's ClusterServiceVersion manifest.
func (b Bundle) CSV() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: %s\n", b.Name())
	if b.SkipRange != "" {
		fmt.Fprintf(&s, "  annotations:\n    olm.skipRange: %q\n", b.SkipRange)
	}
	fmt.Fprintf(&s, "spec:\n  displayName: %s\n  version: %s\n", b.Package, b.Version)
	if b.Replaces != "" {
		fmt.Fprintf(&s, "  replaces: %s\n", b.Replaces)
	}
	if len(b.Skips) > 0 {
		fmt.Fprintf(&s, "  skips: [%s]\n", strings.Join(b.Skips, ", "))
	}
	if b.MinKubeVersion != "" {
		fmt.Fprintf(&s, "  minKubeVersion: %s\n", b.MinKubeVersion)
	}
	modes := b.InstallModes
	if modes == nil {
		modes = []string{"OwnNamespace", "SingleNamespace", "AllNamespaces"}
	}
	s.WriteString("  installModes:\n")
	for _, m := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		fmt.Fprintf(&s, "  - {type: %s, supported: %t}\n", m, slices.Contains(modes, m))
	}
	s.WriteString("  customresourcedefinitions:\n")
	writeAPIs := func(key string, apis []API) {
		if len(apis) == 0 {
			return
		}
		fmt.Fprintf(&s, "    %s:\n", key)
		for _, a := range apis {
			fmt.Fprintf(&s, "    - {name: %s, version: %s, kind: %s}\n", a.CRDName(), a.Version, a.Kind)
		}
	}
	writeAPIs("owned", b.Owns)
	writeAPIs("required", b.Requires)
	b.writeWebhooks(&s)
	fmt.Fprintf(&s, `  install:
    strategy: deployment
    spec:
      permissions:
      - serviceAccountName: %[1]s-operator
        rules:
        - {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}
      deployments:
      - name: %[1]s-operator
        spec:
          replicas: 1
          selector: {matchLabels: {app: %[1]s-operator}}
          template:
            metadata: {labels: {app: %[1]s-operator}}
            spec:
              serviceAccountName: %[1]s-operator
              containers:
              - {name: operator, image: "example.com/%[1]s-operator:%[2]s"}
`, b.Package, b.Version)
	return s.String()
}

// writeWebhooks writes the CSV's webhookdefinitions.
func (b Bundle) writeWebhooks(s *strings.Builder) {
	if len(b.Webhooks) == 0 {
		return
	}
	s.WriteString("  webhookdefinitions:\n")
	common := fmt.Sprintf("deploymentName: %s-operator, containerPort: 443, targetPort: 9443, sideEffects: None, admissionReviewVersions: [v1]", b.Package)
	validating := func(name string) {
		rule := "[]"
		if len(b.Owns) > 0 {
			a := b.Owns[0]
			rule = fmt.Sprintf("[{apiGroups: [%s], apiVersions: [%s], operations: [CREATE], resources: [%s]}]", a.Group, a.Version, a.plural())
		}
		fmt.Fprintf(s, "  - {generateName: %s, type: ValidatingAdmissionWebhook, %s, failurePolicy: Ignore, webhookPath: /validate, rules: %s}\n", name, common, rule)
	}
	for _, w := range b.Webhooks {
		switch w {
		case WebhookValidating:
			validating("v" + b.Package + ".olmsync.test")
		case WebhookRepeated:
			validating("r" + b.Package + ".olmsync.test")
			validating("r" + b.Package + ".olmsync.test")
		case WebhookConversion:
			crds := "[]"
			if len(b.Owns) > 0 {
				crds = "[" + b.Owns[0].CRDName() + "]"
			}
			fmt.Fprintf(s, "  - {generateName: c%s.olmsync.test, type: ConversionWebhook, %s, webhookPath: /convert, conversionCRDs: %s}\n", b.Package, common, crds)
		}
	}
}

// CRD is the manifest of a CRD serving api.
func CRD(api API) string {
	schema := api.Schema
	if schema == "" {
		schema = "{type: object, x-kubernetes-preserve-unknown-fields: true}"
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s
spec:
  group: %[2]s
  names: {kind: %[3]s, listKind: %[3]sList, plural: %[7]s, singular: %[4]s}
  scope: Namespaced
  versions:
  - name: %[5]s
    served: true
    storage: true
    schema:
      openAPIV3Schema: %[6]s
`, api.CRDName(), api.Group, api.Kind, strings.ToLower(api.Kind), api.Version, schema, api.plural())
}

// ConfigMapData is OLM's ConfigMap catalog of the bundles: each package has the channels its
// bundles name (Bundle.Channels), each headed (currentCSV) by the last bundle in the list
// that is in it; the default channel is "stable" when there is one, else the first named.
func ConfigMapData(tb testing.TB, bundles []Bundle) map[string]string {
	tb.Helper()
	var csvs, crds, pkgs []string
	heads := map[string]map[string]string{} // package -> channel -> head
	channels := map[string][]string{}       // package -> channels in order of appearance
	var order []string
	// A ConfigMap catalog holds one CRD of a name: the last bundle's that owns it, as a
	// catalog carries its newest CRD.
	crdAt := map[string]int{}
	for _, b := range bundles {
		csvs = append(csvs, b.CSV())
		if _, ok := heads[b.Package]; !ok {
			order = append(order, b.Package)
			heads[b.Package] = map[string]string{}
		}
		for _, ch := range b.InChannels() {
			if _, ok := heads[b.Package][ch]; !ok {
				channels[b.Package] = append(channels[b.Package], ch)
			}
			heads[b.Package][ch] = b.Name()
		}
		for _, a := range b.Owns {
			if i, ok := crdAt[a.CRDName()]; ok {
				crds[i] = CRD(a)
				continue
			}
			crdAt[a.CRDName()] = len(crds)
			crds = append(crds, CRD(a))
		}
	}
	for _, p := range order {
		def := channels[p][0]
		if slices.Contains(channels[p], "stable") {
			def = "stable"
		}
		var s strings.Builder
		fmt.Fprintf(&s, "packageName: %s\ndefaultChannel: %s\nchannels:\n", p, def)
		for _, ch := range channels[p] {
			fmt.Fprintf(&s, "- {name: %s, currentCSV: %s}\n", ch, heads[p][ch])
		}
		pkgs = append(pkgs, s.String())
	}
	return map[string]string{
		catalog.ConfigMapKeyCRDs:     YAMLList(tb, crds...),
		catalog.ConfigMapKeyCSVs:     YAMLList(tb, csvs...),
		catalog.ConfigMapKeyPackages: YAMLList(tb, pkgs...),
	}
}

// YAMLList writes manifests as the YAML list a ConfigMap catalog key holds.
func YAMLList(tb testing.TB, manifests ...string) string {
	tb.Helper()
	items := []any{}
	for _, m := range manifests {
		var v any
		if err := yaml.Unmarshal([]byte(m), &v); err != nil {
			tb.Fatalf("fixture manifest: %v\n%s", err, m)
		}
		items = append(items, v)
	}
	data, err := yaml.Marshal(items)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// ImageCatalog creates a CatalogSource "name" in ns serving a catalog image, and waits
// until it is READY.
func ImageCatalog(tb testing.TB, env *testenv.Env, ns, name, image string, secrets ...string) {
	tb.Helper()
	Create(tb, env, &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: image, Secrets: secrets},
	})
	Eventually(tb, "catalogsource "+name+" READY", func() error {
		cs := &v1alpha1.CatalogSource{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != v1alpha1.ConnectionStateReady {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})
}

// ConfigMapCatalog creates, or updates, a ConfigMap catalog of the bundles and a
// CatalogSource "name" in ns reading it, and waits until the CatalogSource is READY with
// this content loaded.
func ConfigMapCatalog(tb testing.TB, env *testenv.Env, ns, name string, bundles ...Bundle) {
	tb.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = ConfigMapData(tb, bundles)
		Create(tb, env, cm)
		Create(tb, env, &v1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: name, DisplayName: name},
		})
	case err != nil:
		tb.Fatal(err)
	default:
		cm.Data = ConfigMapData(tb, bundles)
		if err := env.Client.Update(ctx, cm); err != nil {
			tb.Fatal(err)
		}
	}
	// The controller labels the ConfigMap (olm.managed: "false") and owns it by the
	// CatalogSource, as OLM does: what it loads is the version after that write, with the
	// data written here.
	written := cm.Data
	Eventually(tb, fmt.Sprintf("catalogsource %s/%s READY with configmap version %s or the controller's after it", ns, name, cm.ResourceVersion), func() error {
		cs := &v1alpha1.CatalogSource{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != v1alpha1.ConnectionStateReady {
			return fmt.Errorf("status %+v", cs.Status)
		}
		live := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), live); err != nil {
			return err
		}
		if !maps.Equal(live.Data, written) {
			return fmt.Errorf("configmap %s changed by someone else", live.Name)
		}
		if ref := cs.Status.ConfigMapResource; ref == nil || ref.ResourceVersion != live.ResourceVersion {
			return fmt.Errorf("loaded configmap %+v, the configmap is at %s", cs.Status.ConfigMapResource, live.ResourceVersion)
		}
		return nil
	})
}
