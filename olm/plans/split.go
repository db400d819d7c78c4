package plans

import (
	"github.com/olmsync/olmsync/olm/resolve"
)

// Split divides a namespace's resolution into one resolution per Subscription that needs
// an InstallPlan, so that each plan installs one Subscription's CSV and the dependencies it
// brings. A dependency (and the Subscription OLM generates for it) goes with the first
// Subscription, in the resolution's order, whose dependency tree names it; a bundle no
// tree names (a provider an installed CSV needs again) goes with the first Subscription
// that installs anything. Subscriptions with nothing to install are left out.
//
// want names the Subscriptions to split for (those ApplyResolution says need a plan); a
// bundle of a Subscription not in want is dropped: it already has its plan.
func Split(res *resolve.Result, want map[string]bool) map[string]*resolve.Result {
	out := map[string]*resolve.Result{}
	owner := map[string]string{} // bundle name -> Subscription
	var order []string
	for _, s := range res.Subscriptions {
		if !want[s.Name] || s.Resolution.Status != resolve.StatusResolved {
			continue
		}
		order = append(order, s.Name)
		if _, ok := owner[s.Resolution.Next]; !ok {
			owner[s.Resolution.Next] = s.Name
		}
		for _, d := range s.Dependencies {
			if _, ok := owner[d.Name]; !ok && !d.Installed {
				owner[d.Name] = s.Name
			}
		}
	}
	part := func(sub string) *resolve.Result {
		p := out[sub]
		if p == nil {
			p = &resolve.Result{Namespace: res.Namespace}
			for _, s := range res.Subscriptions {
				if s.Name == sub {
					p.Subscriptions = []resolve.SubscriptionResult{s}
				}
			}
			out[sub] = p
		}
		return p
	}
	var orphans []resolve.Bundle
	for _, b := range res.Bundles {
		switch {
		case b.Subscription != "" && !want[b.Subscription]:
			continue
		case b.Subscription != "":
			part(b.Subscription).Bundles = append(part(b.Subscription).Bundles, b)
		case owner[b.Name] != "":
			part(owner[b.Name]).Bundles = append(part(owner[b.Name]).Bundles, b)
		default:
			orphans = append(orphans, b)
		}
	}
	if len(orphans) > 0 && len(order) > 0 {
		first := order[0]
		for _, name := range order {
			if out[name] != nil {
				first = name
				break
			}
		}
		for _, b := range orphans {
			owner[b.Name] = first
		}
		part(first).Bundles = append(part(first).Bundles, orphans...)
	}
	for _, g := range res.Generated {
		if sub := owner[g.Spec.StartingCSV]; sub != "" && out[sub] != nil {
			out[sub].Generated = append(out[sub].Generated, g)
		}
	}
	return out
}
