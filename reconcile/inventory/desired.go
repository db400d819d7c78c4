package inventory

import (
	"fmt"
	"strings"

	"github.com/olmsync/olmsync/render"
)

// Desired is what one reconcile means the cluster to hold: every object the Sync's apps
// rendered, those a rule gates and those waiting for their CRD included, since they are
// not gone. Only DesiredOf makes one, and it records whether the render can be trusted to
// be complete; Inventory.Stale refuses to compute deletions from one that cannot. That is
// how "a failed fetch or render never prunes" is kept: the caller has no way to hand prune
// a partial list.
type Desired struct {
	inv     *Inventory
	blocked []string
}

// DesiredOf is the desired state of a reconcile. fetchErr is the error of this
// reconcile's fetch: nil when the revision came from the server, the error when the
// reconcile fell back to the last good revision in the cache (drift is still corrected
// then, but nothing is pruned: what the server holds now is not known). apps are the
// Sync's apps as render returned them; problems are render's discovery problems, of which
// an Application whose path is missing or a file that could not be read mean an app may
// be absent from apps.
func DesiredOf(fetchErr error, apps []*render.AppResult, problems []render.Diagnostic) *Desired {
	d := &Desired{inv: New()}
	if fetchErr != nil {
		d.blocked = append(d.blocked, "the fetch failed: "+fetchErr.Error())
	}
	for _, a := range apps {
		if a.Err != nil {
			d.blocked = append(d.blocked, fmt.Sprintf("app %q did not render", a.ID()))
			continue
		}
		for _, o := range a.Objects {
			d.inv.Add(EntryOfRendered(o))
		}
	}
	for _, p := range problems {
		if p.Reason == render.ReasonPathMissing || p.Reason == render.ReasonUnreadable {
			d.blocked = append(d.blocked, "an app could not be read: "+p.String())
		}
	}
	return d
}

// EntryOfRendered is the entry of a rendered object: its namespace is the one it lands in.
func EntryOfRendered(o *render.Object) Entry {
	gvk := o.Manifest.GroupVersionKind()
	return Entry{Namespace: o.EffectiveNamespace, Name: o.Name(), Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version}
}

// Inventory is the desired objects as an inventory.
func (d *Desired) Inventory() *Inventory { return d.inv }

// Complete reports whether the desired state may drive a prune.
func (d *Desired) Complete() bool { return len(d.blocked) == 0 }

// PruneBlockedError says why nothing may be pruned this time.
type PruneBlockedError struct {
	Reasons []string
}

func (e *PruneBlockedError) Error() string {
	return "prune skipped: " + strings.Join(e.Reasons, "; ")
}
