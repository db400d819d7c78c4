package inventory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// Entry is one object of an inventory.
type Entry struct {
	Namespace string // "" for cluster-scoped objects
	Name      string
	Group     string // "" for the core group
	Kind      string
	Version   string // the version it was applied with; not part of its identity
}

// ID is the entry's identity, as Flux writes it: "<namespace>_<name>_<group>_<kind>".
// A namespace, a group and a kind can hold no "_"; a name can (RBAC objects' names are
// path segments), which ParseID allows for.
func (e Entry) ID() string {
	return e.Namespace + "_" + e.Name + "_" + e.Group + "_" + e.Kind
}

// GroupVersionKind is the kind the entry was applied as.
func (e Entry) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: e.Group, Version: e.Version, Kind: e.Kind}
}

// GroupKind is the entry's group and kind.
func (e Entry) GroupKind() schema.GroupKind { return schema.GroupKind{Group: e.Group, Kind: e.Kind} }

// String names the object as messages do: Kind "namespace/name", or Kind "name".
func (e Entry) String() string {
	if e.Namespace == "" {
		return fmt.Sprintf("%s %q", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %q", e.Kind, e.Namespace+"/"+e.Name)
}

// Object returns an empty object of the entry's kind, namespace and name, to read or
// delete it with.
func (e Entry) Object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(e.GroupVersionKind())
	u.SetNamespace(e.Namespace)
	u.SetName(e.Name)
	return u
}

// EntryOf is the entry of an object as it is applied: its namespace must already be
// settled (empty for a cluster-scoped kind).
func EntryOf(obj *unstructured.Unstructured) Entry {
	gvk := obj.GroupVersionKind()
	return Entry{Namespace: obj.GetNamespace(), Name: obj.GetName(), Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version}
}

// ParseID reads an entry back from its ID and version. The namespace is what comes before
// the first "_", the group and kind what come after the last two; the name is the rest, "_"
// and all.
func ParseID(id, version string) (Entry, error) {
	ns, rest, ok1 := strings.Cut(id, "_")
	rest, kind, ok2 := cutLast(rest, "_")
	name, group, ok3 := cutLast(rest, "_")
	if !ok1 || !ok2 || !ok3 || name == "" || kind == "" {
		return Entry{}, fmt.Errorf("inventory entry %q is not <namespace>_<name>_<group>_<kind>", id)
	}
	if version == "" {
		return Entry{}, fmt.Errorf("inventory entry %q has no version", id)
	}
	return Entry{Namespace: ns, Name: name, Group: group, Kind: kind, Version: version}, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// Inventory is a set of entries, one per ID.
type Inventory struct {
	byID map[string]Entry
}

// New makes an inventory of entries; a later entry with the same ID replaces an earlier.
func New(entries ...Entry) *Inventory {
	inv := &Inventory{byID: make(map[string]Entry, len(entries))}
	for _, e := range entries {
		inv.byID[e.ID()] = e
	}
	return inv
}

// Of makes an inventory of objects as they are applied.
func Of(objs []*unstructured.Unstructured) *Inventory {
	inv := New()
	for _, o := range objs {
		inv.Add(EntryOf(o))
	}
	return inv
}

// FromStatus reads the inventory a Sync's status holds; nil holds none. A malformed entry
// fails the whole read: an inventory that cannot be trusted must not drive a prune.
func FromStatus(s *olmsyncv1alpha1.ResourceInventory) (*Inventory, error) {
	inv := New()
	if s == nil {
		return inv, nil
	}
	for _, ref := range s.Entries {
		e, err := ParseID(ref.ID, ref.Version)
		if err != nil {
			return nil, err
		}
		inv.Add(e)
	}
	return inv, nil
}

// ToStatus is the inventory as the Sync's status holds it, sorted by ID.
func (inv *Inventory) ToStatus() *olmsyncv1alpha1.ResourceInventory {
	out := &olmsyncv1alpha1.ResourceInventory{Entries: make([]olmsyncv1alpha1.ResourceRef, 0, inv.Len())}
	for _, e := range inv.Entries() {
		out.Entries = append(out.Entries, olmsyncv1alpha1.ResourceRef{ID: e.ID(), Version: e.Version})
	}
	return out
}

// Add puts e in the inventory, replacing the entry with its ID.
func (inv *Inventory) Add(e Entry) { inv.byID[e.ID()] = e }

// Has reports whether an entry with e's ID is in the inventory.
func (inv *Inventory) Has(e Entry) bool {
	_, ok := inv.byID[e.ID()]
	return ok
}

// Len is the number of entries.
func (inv *Inventory) Len() int { return len(inv.byID) }

// Entries are the entries sorted by ID.
func (inv *Inventory) Entries() []Entry {
	out := make([]Entry, 0, len(inv.byID))
	for _, e := range inv.byID {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.ID(), b.ID()) })
	return out
}

// Stale are the entries of inv, the inventory before, whose objects the desired state no
// longer holds: what prune may delete. It refuses, with a *PruneBlockedError and no
// entries, when desired cannot be trusted to be complete (see DesiredOf), so a failed
// fetch or render can never turn into deletions. When the guard refuses the prune (the
// whole inventory, or more than its bound), it returns the entries with a
// *PruneRefusedError: none of them may be deleted, and the caller says which they are.
func (inv *Inventory) Stale(desired *Desired, guard Guard) ([]Entry, error) {
	if desired == nil {
		return nil, &PruneBlockedError{Reasons: []string{"nothing was rendered"}}
	}
	if len(desired.blocked) > 0 {
		return nil, &PruneBlockedError{Reasons: slices.Clone(desired.blocked)}
	}
	var out []Entry
	for _, e := range inv.Entries() {
		if !desired.inv.Has(e) {
			out = append(out, e)
		}
	}
	return out, guard.Check(len(out), inv.Len())
}

// Next is the inventory after a reconcile: every desired object that this reconcile
// applied, or that an earlier one did (an object gated by a rule, or waiting for its CRD,
// stays in the inventory, and in the cluster, until it is no longer rendered). The version
// of an entry is the one last applied. When desired is incomplete, nothing of previous is
// dropped either: what an app that failed to render held is still there and still ours.
func Next(previous *Inventory, desired *Desired, applied *Inventory) *Inventory {
	next := New()
	if len(desired.blocked) > 0 {
		for _, e := range previous.byID {
			next.Add(e)
		}
	}
	for id := range desired.inv.byID {
		if a, ok := applied.byID[id]; ok {
			next.Add(a)
		} else if p, ok := previous.byID[id]; ok {
			next.Add(p)
		}
		// Desired but never applied (gated, waiting, failed): not ours yet.
	}
	for id, a := range applied.byID {
		if _, ok := desired.inv.byID[id]; !ok {
			// Applied but not desired cannot happen through the reconciler; keep it
			// anyway, so whatever is in the cluster because of us stays prunable.
			next.Add(a)
		}
	}
	return next
}
