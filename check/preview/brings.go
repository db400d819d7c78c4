package preview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/crdupgrade"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/report"
)

// bundlePullTimeout bounds one bundle image pull of the preview: a check must end.
const bundlePullTimeout = 2 * time.Minute

type unpacked struct {
	bundle *catalog.UnpackedBundle
	err    error
}

// unpackBundle pulls a bundle image with the preview's image options (its cache, the
// process's registry credentials), once per check: Subscriptions of several namespaces
// and clusters often install the same bundle.
func (s *Stage) unpackBundle(ctx context.Context, image string) (*catalog.UnpackedBundle, error) {
	s.mu.Lock()
	if u, ok := s.bundles[image]; ok {
		s.mu.Unlock()
		return u.bundle, u.err
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, bundlePullTimeout)
	defer cancel()
	u, err := catalog.LoadBundleImage(ctx, image, s.opts.Image)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bundles == nil {
		s.bundles = map[string]*unpacked{}
	}
	s.bundles[image] = &unpacked{bundle: u, err: err}
	return u, err
}

// brings is what the CSV a resolved Subscription ends on brings to the cluster: read from
// the catalog's content of the bundle, else from its image. A CRD is "changed" when the CSV
// the Subscription runs now (the cluster state's, or the base revision's) owns it too,
// "added" otherwise. When the image cannot be pulled (an offline run), the preview says
// what it could not see instead of failing, and tells what the catalog's olm.csv.metadata
// does.
func (p *clusterPreview) brings(v *view, sr *resolve.SubscriptionResult, contents map[resolve.CatalogKey]*catalog.Catalog) *report.PreviewBrings {
	r := sr.Resolution
	name := cmp.Or(lastOf(r.Path), r.Next)
	if r.Status != resolve.StatusResolved || name == "" {
		return nil
	}
	b := findBundle(contents, sr.Package, name, sr.Source, r.NextSource)
	if b == nil {
		return nil
	}
	out := &report.PreviewBrings{CSV: name}
	if b.CSV == nil {
		if b.Image == "" || p.unpack == nil {
			out.Unseen = fmt.Sprintf("bundle %s has neither its content nor an image in the catalog", name)
			return out
		}
		u, err := p.unpack(b.Image)
		switch {
		case err == nil && u != nil && u.Bundle != nil:
			if ref, err := catalog.DigestReference(b.Image, u.Source.Digest); err == nil {
				out.Image = ref
			}
			b = u.Bundle
		default:
			out.Unseen = fmt.Sprintf("bundle %s is listed by image only (%s), which could not be read: %v", name, b.Image, err)
			bp, perr := b.Props()
			if perr != nil || bp.Metadata == nil {
				return out
			}
			// The catalog's olm.csv.metadata still tells the CRDs and install modes.
			out.Unseen += "; its CRDs and install modes are the catalog's, its permissions and images unknown"
			b = &catalog.Bundle{Name: b.Name, Package: b.Package, CSV: csvFromBundle(b, sr.Namespace)}
		}
	}
	before := map[string]bool{}
	if sr.Installed != "" {
		if csv := installedCSV(v, sr.Namespace, sr.Installed); csv != nil {
			for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
				before[d.Name] = true
			}
		}
	}
	var oldCRDs map[string]*apiextensionsv1.CustomResourceDefinition
	if sr.Installed != "" {
		oldCRDs = p.bundleCRDs(findBundle(contents, sr.Package, sr.Installed, sr.Source, r.NextSource))
	}
	newCRDs := p.bundleCRDs(b)
	s := b.Summary()
	for _, c := range s.OwnedCRDs {
		pc := report.PreviewCRD{Name: c.Name, Versions: c.Versions, Change: report.CRDAdded}
		switch onCluster := v.state.CRD(c.Name); {
		case onCluster != nil:
			// OLM checks the new CRD against the one the cluster has, whoever applied it.
			pc.Change = report.CRDChanged
			pc.Verdict = clusterCRDVerdict(v.state, onCluster, newCRDs[c.Name])
		case before[c.Name] || oldCRDs[c.Name] != nil:
			pc.Change = report.CRDChanged
			pc.Verdict = crdVerdict(oldCRDs[c.Name], newCRDs[c.Name])
		}
		out.CRDs = append(out.CRDs, pc)
	}
	for _, pm := range s.Permissions {
		out.Permissions = append(out.Permissions, report.PreviewPermission{ServiceAccount: pm.ServiceAccount, ClusterWide: pm.ClusterWide, Rules: pm.Rules})
	}
	out.InstallModes, out.Images = s.InstallModes, s.Images
	out.Webhooks = webhooksIn(v, sr.Namespace, s.Webhooks)
	for _, a := range s.APIServices {
		out.APIServices = append(out.APIServices, report.PreviewAPIService{Name: a.Name, Kind: a.Kind, Deployment: a.Deployment})
	}
	return out
}

// webhooksIn are a bundle's webhooks as OLM would register them in namespace ns: an admission
// webhook is scoped to the target namespaces of the namespace's OperatorGroup (every
// namespace for a global group, which the report calls out as cluster-wide); a conversion
// webhook serves its CRDs everywhere. Without exactly one group the bundle's own scope is
// said.
func webhooksIn(v *view, ns string, webhooks []catalog.SummaryWebhook) []report.PreviewWebhook {
	var targets []string
	known := false
	if gs := v.groupsOf(ns); len(gs) == 1 {
		targets, known = gs[0].og.Status.Namespaces, true
	}
	var out []report.PreviewWebhook
	for _, w := range webhooks {
		pw := report.PreviewWebhook{Name: w.Name, Type: w.Type, Deployment: w.Deployment, Rules: w.Rules, FailurePolicy: w.FailurePolicy, ClusterWide: w.ClusterWide}
		if known && w.Type != string(v1alpha1.ConversionWebhook) {
			pw.ClusterWide = groups.IsAllNamespaces(targets)
			if !pw.ClusterWide {
				pw.Namespaces = slices.Clone(targets)
			}
		}
		w.ClusterWide = pw.ClusterWide
		pw.Summary = w.Line()
		if len(pw.Namespaces) > 0 {
			pw.Summary += "; in namespaces " + strings.Join(pw.Namespaces, ", ")
		}
		out = append(out, pw)
	}
	return out
}

// bundleCRDs are the CRDs a bundle carries, by name: from the catalog's content, else from
// its image (nil when it cannot be read).
func (p *clusterPreview) bundleCRDs(b *catalog.Bundle) map[string]*apiextensionsv1.CustomResourceDefinition {
	if b == nil {
		return nil
	}
	if b.CSV == nil && b.Image != "" && p.unpack != nil {
		if u, err := p.unpack(b.Image); err == nil && u != nil && u.Bundle != nil {
			b = u.Bundle
		}
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, o := range b.Objects {
		if o.Kind != "CustomResourceDefinition" {
			continue
		}
		if crd, err := crdupgrade.Decode(o.JSON); err == nil {
			out[crd.Name] = crd
		}
	}
	return out
}

// crdVerdict is what OLM's CRD upgrade check says of replacing the CRD the running bundle
// applied with the new bundle's: "safe", or the check's error (a served or stored version
// removed). The stored versions are taken to be the old CRD's storage version (the cluster
// may have stored more); the existing custom resources are not known to the preview, so a
// schema that narrows over them is not seen. "" when either CRD is unknown.
func crdVerdict(old, updated *apiextensionsv1.CustomResourceDefinition) string {
	if old == nil || updated == nil {
		return ""
	}
	existing := old.DeepCopy()
	if len(existing.Status.StoredVersions) == 0 {
		for _, v := range existing.Spec.Versions {
			if v.Storage {
				existing.Status.StoredVersions = append(existing.Status.StoredVersions, v.Name)
			}
		}
	}
	if _, err := crdupgrade.Check(existing, updated, nil); err != nil {
		return err.Error()
	}
	return report.CRDUpgradeSafe
}

// clusterCRDVerdict is OLM's CRD upgrade check of replacing the cluster's CRD, with its
// status.storedVersions and the custom resources the state holds of its kind: "safe", or
// the check's error. "" when the new CRD is unknown.
func clusterCRDVerdict(st *ClusterState, existing, updated *apiextensionsv1.CustomResourceDefinition) string {
	if updated == nil {
		return ""
	}
	if _, err := crdupgrade.Check(existing, updated, st.CustomResourcesOf(existing)); err != nil {
		return err.Error()
	}
	return report.CRDUpgradeSafe
}
