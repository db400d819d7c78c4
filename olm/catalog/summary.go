package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// BundleSummary is what a bundle brings to a cluster: its CSV, the CRDs it owns and those
// it needs, the install modes it supports, the RBAC it asks for (cluster-wide rules apart),
// what it depends on and the images it runs. It is what a reviewer wants to know before an
// operator is installed or upgraded.
type BundleSummary struct {
	CSV         string `json:"csv"`
	Package     string `json:"package,omitempty"`
	Version     string `json:"version,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Replaces    string `json:"replaces,omitempty"`
	// Source is where the bundle was read (image with digest, or folder), when known.
	Source *Source `json:"source,omitempty"`
	// InstallModes are the install modes the CSV supports (OwnNamespace, SingleNamespace,
	// MultiNamespace, AllNamespaces).
	InstallModes []string     `json:"installModes"`
	OwnedCRDs    []SummaryCRD `json:"ownedCRDs"`
	// RequiredCRDs are the CRDs the CSV needs another operator (or the cluster) to provide.
	RequiredCRDs []string `json:"requiredCRDs"`
	// Permissions are the RBAC rules of the install strategy, namespaced first.
	Permissions []SummaryPermission `json:"permissions"`
	// Dependencies are the bundle's olm.package.required, olm.gvk.required and
	// olm.label.required properties, in words.
	Dependencies []string `json:"dependencies"`
	// Images are the images the operator runs (its deployments' containers) and lists
	// (relatedImages), sorted, each once.
	Images []string `json:"images"`
	// Webhooks are the admission and conversion webhooks the CSV declares, which OLM
	// registers with the API server.
	Webhooks []SummaryWebhook `json:"webhooks"`
	// APIServices are the aggregated APIs the CSV owns, which OLM registers with the API
	// server.
	APIServices []SummaryAPIService `json:"apiServices"`
}

// SummaryWebhook is a webhook a bundle brings.
type SummaryWebhook struct {
	Name string `json:"name"`
	// Type is ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook.
	Type       string `json:"type"`
	Deployment string `json:"deployment"`
	// Rules are "operations groups/versions resources": "CREATE,UPDATE cert-manager.io/v1 */*".
	Rules         []string `json:"rules"`
	FailurePolicy string   `json:"failurePolicy,omitempty"`
	SideEffects   string   `json:"sideEffects,omitempty"`
	// ConversionCRDs are the CRDs a conversion webhook converts.
	ConversionCRDs []string `json:"conversionCRDs,omitempty"`
	// ClusterWide is true when the API server may call it for objects of every namespace:
	// a conversion webhook (CRDs are cluster-wide), or an admission webhook of an operator
	// that can be installed for all namespaces (OLM scopes it to its OperatorGroup's
	// namespaces, all of them in a global group).
	ClusterWide bool `json:"clusterWide"`
}

// SummaryAPIService is an aggregated API a bundle's CSV owns: the APIService
// <version>.<group> serving kind, and the deployment behind it.
type SummaryAPIService struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Deployment string `json:"deployment"`
}

// SummaryCRD is a CRD a bundle carries: its name and the versions it serves (the storage
// version marked with a *).
type SummaryCRD struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind,omitempty"`
	Versions []string `json:"versions"`
	// Missing is true when the CSV owns the CRD and the bundle does not carry it.
	Missing bool `json:"missing,omitempty"`
}

// SummaryPermission is the rules one service account of the operator asks for.
type SummaryPermission struct {
	ServiceAccount string `json:"serviceAccount"`
	// ClusterWide is true for the CSV's clusterPermissions: granted on every namespace
	// and on cluster-scoped resources.
	ClusterWide bool `json:"clusterWide"`
	// Rules are "verbs resources (apiGroups)": "get,list,watch pods,services (core)".
	Rules []string `json:"rules"`
}

// Summary is what the bundle brings. It reads the CSV and the objects the bundle carries;
// a bundle without its CSV (known only by image) has nothing but its name and properties.
func (b *Bundle) Summary() BundleSummary {
	s := BundleSummary{CSV: b.Name, Package: b.Package}
	if b.Version.String() != "0.0.0" {
		s.Version = b.Version.String()
	}
	crds := map[string]SummaryCRD{}
	for _, o := range b.Objects {
		if o.Kind != "CustomResourceDefinition" {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if json.Unmarshal(o.JSON, &crd) != nil {
			continue
		}
		c := SummaryCRD{Name: o.Name, Kind: crd.Spec.Names.Kind, Versions: []string{}}
		for _, v := range crd.Spec.Versions {
			name := v.Name
			if v.Storage {
				name += "*"
			}
			c.Versions = append(c.Versions, name)
		}
		crds[o.Name] = c
	}
	if csv := b.CSV; csv != nil {
		s.DisplayName, s.Replaces = csv.Spec.DisplayName, csv.Spec.Replaces
		if s.Version == "" {
			s.Version = string(csv.Spec.Version)
		}
		for _, m := range csv.Spec.InstallModes {
			if m.Supported {
				s.InstallModes = append(s.InstallModes, string(m.Type))
			}
		}
		for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
			if _, ok := crds[d.Name]; !ok {
				crds[d.Name] = SummaryCRD{Name: d.Name, Kind: d.Kind, Versions: []string{d.Version}, Missing: true}
			}
		}
		for _, d := range csv.Spec.CustomResourceDefinitions.Required {
			s.RequiredCRDs = append(s.RequiredCRDs, d.Name)
		}
		st := csv.Spec.InstallStrategy.StrategySpec
		for _, p := range st.Permissions {
			s.Permissions = append(s.Permissions, SummaryPermission{ServiceAccount: p.ServiceAccountName, Rules: ruleStrings(p.Rules)})
		}
		for _, p := range st.ClusterPermissions {
			s.Permissions = append(s.Permissions, SummaryPermission{ServiceAccount: p.ServiceAccountName, ClusterWide: true, Rules: ruleStrings(p.Rules)})
		}
		for _, d := range st.DeploymentSpecs {
			pod := d.Spec.Template.Spec
			for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
				s.Images = append(s.Images, c.Image)
			}
		}
		for _, ri := range csv.Spec.RelatedImages {
			s.Images = append(s.Images, ri.Image)
		}
		s.Webhooks = SummaryWebhooks(csv)
		for _, d := range csv.Spec.APIServiceDefinitions.Owned {
			s.APIServices = append(s.APIServices, SummaryAPIService{Name: d.APIServiceName(), Kind: d.Kind, Deployment: d.DeploymentName})
		}
	}
	for _, ri := range b.RelatedImages {
		s.Images = append(s.Images, ri.Image)
	}
	if bp, err := b.Props(); err == nil {
		for _, r := range bp.RequiresPackages {
			s.Dependencies = append(s.Dependencies, fmt.Sprintf("package %s, versions %s", r.PackageName, r.VersionRange))
		}
		for _, g := range bp.Requires {
			s.Dependencies = append(s.Dependencies, "API "+g.String())
		}
		for _, l := range bp.RequiresLabels {
			s.Dependencies = append(s.Dependencies, "label "+l)
		}
	}
	for _, c := range crds {
		s.OwnedCRDs = append(s.OwnedCRDs, c)
	}
	slices.SortFunc(s.OwnedCRDs, func(a, b SummaryCRD) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(s.RequiredCRDs)
	slices.Sort(s.Images)
	s.Images = slices.Compact(s.Images)
	s.Images = slices.DeleteFunc(s.Images, func(i string) bool { return i == "" })
	s.InstallModes = nonNilStrings(s.InstallModes)
	s.RequiredCRDs = nonNilStrings(s.RequiredCRDs)
	s.Dependencies = nonNilStrings(s.Dependencies)
	s.Images = nonNilStrings(s.Images)
	if s.OwnedCRDs == nil {
		s.OwnedCRDs = []SummaryCRD{}
	}
	if s.Permissions == nil {
		s.Permissions = []SummaryPermission{}
	}
	if s.Webhooks == nil {
		s.Webhooks = []SummaryWebhook{}
	}
	if s.APIServices == nil {
		s.APIServices = []SummaryAPIService{}
	}
	return s
}

// SummaryWebhooks are the webhooks a CSV declares, in its order.
func SummaryWebhooks(csv *v1alpha1.ClusterServiceVersion) []SummaryWebhook {
	allNamespaces := false
	for _, m := range csv.Spec.InstallModes {
		if m.Type == v1alpha1.InstallModeTypeAllNamespaces && m.Supported {
			allNamespaces = true
		}
	}
	var out []SummaryWebhook
	for _, w := range csv.Spec.WebhookDefinitions {
		sw := SummaryWebhook{
			Name: w.GenerateName, Type: string(w.Type), Deployment: w.DeploymentName, Rules: []string{},
			ConversionCRDs: slices.Clone(w.ConversionCRDs),
			ClusterWide:    w.Type == v1alpha1.ConversionWebhook || allNamespaces,
		}
		if w.FailurePolicy != nil {
			sw.FailurePolicy = string(*w.FailurePolicy)
		}
		if w.SideEffects != nil {
			sw.SideEffects = string(*w.SideEffects)
		}
		for _, r := range w.Rules {
			ops := make([]string, len(r.Operations))
			for i, o := range r.Operations {
				ops[i] = string(o)
			}
			gvs := make([]string, 0, len(r.APIGroups)*max(1, len(r.APIVersions)))
			for _, g := range r.APIGroups {
				if g == "" {
					g = "core"
				}
				for _, v := range r.APIVersions {
					gvs = append(gvs, g+"/"+v)
				}
			}
			sw.Rules = append(sw.Rules, fmt.Sprintf("%s %s %s", strings.Join(ops, ","), strings.Join(gvs, ","), strings.Join(r.Resources, ",")))
		}
		out = append(out, sw)
	}
	return out
}

// ClusterWide reports whether the bundle asks for any cluster-wide rule.
func (s BundleSummary) ClusterWide() bool {
	return slices.ContainsFunc(s.Permissions, func(p SummaryPermission) bool { return p.ClusterWide })
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ruleStrings renders policy rules as "verbs resources (apiGroups)", the core group as
// "core", non-resource URLs as "verbs urls".
func ruleStrings(rules []rbacv1.PolicyRule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		verbs := strings.Join(r.Verbs, ",")
		if len(r.NonResourceURLs) > 0 {
			out = append(out, verbs+" "+strings.Join(r.NonResourceURLs, ","))
			continue
		}
		groups := make([]string, len(r.APIGroups))
		for i, g := range r.APIGroups {
			groups[i] = g
			if g == "" {
				groups[i] = "core"
			}
		}
		resources := strings.Join(r.Resources, ",")
		if len(r.ResourceNames) > 0 {
			resources += " named " + strings.Join(r.ResourceNames, ",")
		}
		out = append(out, fmt.Sprintf("%s %s (%s)", verbs, resources, strings.Join(groups, ",")))
	}
	return out
}

// WriteBundleSummary writes the summary as text (ReportText) or indented JSON
// (ReportJSON).
func WriteBundleSummary(w io.Writer, s BundleSummary, format string) error {
	switch format {
	case ReportJSON:
		return writeJSON(w, s)
	case ReportText, "":
	default:
		return fmt.Errorf("unknown output format %q: use text or json", format)
	}
	ew := &errWriter{w: w}
	ew.printf("%s", s.CSV)
	if s.DisplayName != "" {
		ew.printf(" (%s)", s.DisplayName)
	}
	ew.printf("\n  package: %s, version: %s", orNone(s.Package), orNone(s.Version))
	if s.Replaces != "" {
		ew.printf(", replaces: %s", s.Replaces)
	}
	ew.printf("\n")
	if s.Source != nil {
		ew.printf("  source: %s", s.Source.Ref)
		if s.Source.Digest != "" {
			ew.printf(" %s", s.Source.Digest)
		}
		ew.printf("\n")
	}
	ew.printf("  install modes: %s\n", orNone(strings.Join(s.InstallModes, ", ")))
	ew.printf("  owned CRDs:%s\n", countOrNone(len(s.OwnedCRDs)))
	for _, c := range s.OwnedCRDs {
		ew.printf("    %s (%s) %s", c.Name, c.Kind, strings.Join(c.Versions, ", "))
		if c.Missing {
			ew.printf(" — not in the bundle")
		}
		ew.printf("\n")
	}
	ew.printf("  required CRDs:%s\n", countOrNone(len(s.RequiredCRDs)))
	for _, c := range s.RequiredCRDs {
		ew.printf("    %s\n", c)
	}
	ew.printf("  permissions:%s\n", countOrNone(len(s.Permissions)))
	for _, p := range s.Permissions {
		scope := "namespaced"
		if p.ClusterWide {
			scope = "CLUSTER-WIDE"
		}
		ew.printf("    %s, service account %s:\n", scope, p.ServiceAccount)
		for _, r := range p.Rules {
			ew.printf("      %s\n", r)
		}
	}
	ew.printf("  dependencies:%s\n", countOrNone(len(s.Dependencies)))
	for _, d := range s.Dependencies {
		ew.printf("    %s\n", d)
	}
	ew.printf("  images:%s\n", countOrNone(len(s.Images)))
	for _, i := range s.Images {
		ew.printf("    %s\n", i)
	}
	ew.printf("  webhooks:%s\n", countOrNone(len(s.Webhooks)))
	for _, w := range s.Webhooks {
		ew.printf("    %s\n", w.Line())
	}
	ew.printf("  API services:%s\n", countOrNone(len(s.APIServices)))
	for _, a := range s.APIServices {
		ew.printf("    %s (%s), served by deployment %s\n", a.Name, a.Kind, a.Deployment)
	}
	return ew.err
}

// Line is the webhook in one line: "CLUSTER-WIDE validating webhook
// validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail):
// CREATE,UPDATE cert-manager.io/v1 */*".
func (w SummaryWebhook) Line() string {
	scope := ""
	if w.ClusterWide {
		scope = "CLUSTER-WIDE "
	}
	kind := map[string]string{
		string(v1alpha1.ValidatingAdmissionWebhook): "validating webhook",
		string(v1alpha1.MutatingAdmissionWebhook):   "mutating webhook",
		string(v1alpha1.ConversionWebhook):          "conversion webhook",
	}[w.Type]
	if kind == "" {
		kind = w.Type + " webhook"
	}
	detail := "deployment " + w.Deployment
	if w.FailurePolicy != "" {
		detail += ", failure policy " + w.FailurePolicy
	}
	line := fmt.Sprintf("%s%s %s (%s)", scope, kind, w.Name, detail)
	switch {
	case len(w.ConversionCRDs) > 0:
		line += ": converts " + strings.Join(w.ConversionCRDs, ", ")
	case len(w.Rules) > 0:
		line += ": " + strings.Join(w.Rules, "; ")
	}
	return line
}

func countOrNone(n int) string {
	if n == 0 {
		return " none"
	}
	return ""
}
