package inventory

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/render"
)

var (
	nsEntry  = Entry{Name: "operators", Kind: "Namespace", Version: "v1"}
	ogEntry  = Entry{Namespace: "operators", Name: "og", Group: "operators.coreos.com", Kind: "OperatorGroup", Version: "v1"}
	subEntry = Entry{Namespace: "operators", Name: "etcd", Group: "operators.coreos.com", Kind: "Subscription", Version: "v1alpha1"}
	cmEntry  = Entry{Namespace: "operators", Name: "settings", Kind: "ConfigMap", Version: "v1"}
	// RBAC names are path segments: they may hold "_" and ":".
	roleEntry = Entry{Name: "system:my_role", Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Version: "v1"}
)

func TestIDRoundTrip(t *testing.T) {
	for _, e := range []Entry{nsEntry, ogEntry, subEntry, cmEntry, roleEntry} {
		got, err := ParseID(e.ID(), e.Version)
		if err != nil {
			t.Fatalf("ParseID(%q): %v", e.ID(), err)
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Errorf("ParseID(%q) (-want +got):\n%s", e.ID(), diff)
		}
	}
	if got, want := ogEntry.ID(), "operators_og_operators.coreos.com_OperatorGroup"; got != want {
		t.Errorf("ID = %q, want Flux's form %q", got, want)
	}
	if got, want := nsEntry.ID(), "_operators__Namespace"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
}

func TestParseIDErrors(t *testing.T) {
	for _, tc := range []struct{ id, version, want string }{
		{"operators_og_operators.coreos.com", "v1", "is not <namespace>_<name>_<group>_<kind>"},
		{"no-separators", "v1", "is not"},
		{"operators__operators.coreos.com_OperatorGroup", "v1", "is not"}, // no name
		{"operators_og_operators.coreos.com_", "v1", "is not"},            // no kind
		{"operators_og_operators.coreos.com_OperatorGroup", "", "has no version"},
	} {
		_, err := ParseID(tc.id, tc.version)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseID(%q, %q) = %v, want an error containing %q", tc.id, tc.version, err, tc.want)
		}
	}
}

func TestStatusRoundTrip(t *testing.T) {
	inv := New(subEntry, nsEntry, ogEntry, roleEntry)
	status := inv.ToStatus()
	wantIDs := []string{"_operators__Namespace", "_system:my_role_rbac.authorization.k8s.io_ClusterRole",
		"operators_etcd_operators.coreos.com_Subscription", "operators_og_operators.coreos.com_OperatorGroup"}
	var gotIDs []string
	for _, r := range status.Entries {
		gotIDs = append(gotIDs, r.ID)
	}
	if diff := cmp.Diff(wantIDs, gotIDs); diff != "" {
		t.Errorf("status entries not sorted by ID (-want +got):\n%s", diff)
	}
	back, err := FromStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inv.Entries(), back.Entries()); diff != "" {
		t.Errorf("FromStatus(ToStatus()) (-want +got):\n%s", diff)
	}

	empty, err := FromStatus(nil)
	if err != nil || empty.Len() != 0 {
		t.Errorf("FromStatus(nil) = %d entries, %v; want none", empty.Len(), err)
	}
	bad := &olmsyncv1alpha1.ResourceInventory{Entries: []olmsyncv1alpha1.ResourceRef{{ID: ogEntry.ID(), Version: "v1"}, {ID: "garbage", Version: "v1"}}}
	if _, err := FromStatus(bad); err == nil {
		t.Error("FromStatus accepted a malformed entry: an untrustworthy inventory must not drive a prune")
	}
}

func TestEntryOfObject(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("operators.coreos.com/v1alpha1")
	u.SetKind("Subscription")
	u.SetNamespace("operators")
	u.SetName("etcd")
	if diff := cmp.Diff(subEntry, EntryOf(u)); diff != "" {
		t.Errorf("EntryOf (-want +got):\n%s", diff)
	}
	obj := subEntry.Object()
	if obj.GetAPIVersion() != "operators.coreos.com/v1alpha1" || obj.GetKind() != "Subscription" || obj.GetNamespace() != "operators" || obj.GetName() != "etcd" {
		t.Errorf("Object() = %v", obj.Object)
	}
	if got, want := subEntry.String(), `Subscription "operators/etcd"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := nsEntry.String(), `Namespace "operators"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// rendered is an object as render returns it; ns is the namespace it lands in.
func rendered(e Entry) *render.Object {
	u := e.Object()
	scope := render.ScopeNamespaced
	if e.Namespace == "" {
		scope = render.ScopeCluster
	}
	// A namespaced object written without metadata.namespace lands in the app's namespace.
	u.SetNamespace("")
	return &render.Object{Manifest: u, Scope: scope, EffectiveNamespace: e.Namespace}
}

func app(name string, entries ...Entry) *render.AppResult {
	a := &render.AppResult{App: render.App{Name: name}}
	for _, e := range entries {
		a.Objects = append(a.Objects, rendered(e))
	}
	return a
}

func failedApp(name string) *render.AppResult {
	return &render.AppResult{App: render.App{Name: name}, Err: errors.New("kustomize: accumulating resources")}
}

func TestStale(t *testing.T) {
	previous := New(nsEntry, ogEntry, subEntry, cmEntry)
	for _, tc := range []struct {
		name        string
		desired     *Desired
		guard       Guard
		want        []Entry
		wantBlocked string
		// wantRefused: the guard refuses, and want are the entries it names.
		wantRefused string
	}{{
		name:    "what is no longer rendered is stale",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry)}, nil),
		want:    []Entry{subEntry, cmEntry},
	}, {
		name:    "nothing stale when everything is still rendered",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry, subEntry, cmEntry)}, nil),
	}, {
		name: "a new API version of the same kind is the same object",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, cmEntry, subEntry,
			Entry{Namespace: "operators", Name: "og", Group: "operators.coreos.com", Kind: "OperatorGroup", Version: "v1alpha2"})}, nil),
	}, {
		// A revision whose apps render nothing would delete everything the Sync
		// applied: refused, as Argo CD refuses an empty sync, unless allowed.
		name:        "an emptied repository is refused",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops")}, nil),
		want:        []Entry{nsEntry, subEntry, ogEntry, cmEntry},
		wantRefused: "the revision would delete all 4 objects of the Sync; set spec.pruneOptions.allowEmpty to allow it",
	}, {
		name:    "an emptied repository makes everything stale with allowEmpty",
		desired: DesiredOf(nil, nil, nil),
		guard:   Guard{AllowEmpty: true},
		want:    []Entry{nsEntry, subEntry, ogEntry, cmEntry},
	}, {
		name:        "a revision keeping none of the objects is refused too",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops", roleEntry)}, nil),
		want:        []Entry{nsEntry, subEntry, ogEntry, cmEntry},
		wantRefused: "would delete all 4 objects",
	}, {
		name:        "more deletions than a count allows are refused",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops", nsEntry)}, nil),
		guard:       Guard{MaxDeletions: ptr.To(intstr.FromInt32(2))},
		want:        []Entry{subEntry, ogEntry, cmEntry},
		wantRefused: "would delete 3 of 4 objects, more than spec.pruneOptions.maxDeletions 2 allows (2)",
	}, {
		name:    "as many deletions as a count allows go",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry)}, nil),
		guard:   Guard{MaxDeletions: ptr.To(intstr.FromInt32(2))},
		want:    []Entry{subEntry, cmEntry},
	}, {
		name:        "more deletions than a percentage allows are refused",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry)}, nil),
		guard:       Guard{MaxDeletions: ptr.To(intstr.FromString("49%"))},
		want:        []Entry{subEntry, cmEntry},
		wantRefused: "would delete 2 of 4 objects, more than spec.pruneOptions.maxDeletions 49% allows (1)",
	}, {
		name:    "a percentage that allows them",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry)}, nil),
		guard:   Guard{MaxDeletions: ptr.To(intstr.FromString("50%"))},
		want:    []Entry{subEntry, cmEntry},
	}, {
		name:        "allowEmpty does not lift maxDeletions",
		desired:     DesiredOf(nil, nil, nil),
		guard:       Guard{AllowEmpty: true, MaxDeletions: ptr.To(intstr.FromString("50%"))},
		want:        []Entry{nsEntry, subEntry, ogEntry, cmEntry},
		wantRefused: "would delete 4 of 4 objects, more than spec.pruneOptions.maxDeletions 50% allows (2)",
	}, {
		name:    "allowEmpty with a maxDeletions of 100%",
		desired: DesiredOf(nil, nil, nil),
		guard:   Guard{AllowEmpty: true, MaxDeletions: ptr.To(intstr.FromString("100%"))},
		want:    []Entry{nsEntry, subEntry, ogEntry, cmEntry},
	}, {
		name:        "maxDeletions 0 refuses any deletion",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry, subEntry)}, nil),
		guard:       Guard{MaxDeletions: ptr.To(intstr.FromInt32(0))},
		want:        []Entry{cmEntry},
		wantRefused: "would delete 1 of 4 objects",
	}, {
		name:        "a failed fetch prunes nothing",
		desired:     DesiredOf(errors.New("unreachable"), []*render.AppResult{app("ops", nsEntry)}, nil),
		wantBlocked: "the fetch failed: unreachable",
	}, {
		name:        "a failed app prunes nothing, even in other apps",
		desired:     DesiredOf(nil, []*render.AppResult{app("ops", nsEntry), failedApp("subs")}, nil),
		wantBlocked: `app "subs" did not render`,
	}, {
		name: "an Application whose path is missing prunes nothing",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry)},
			[]render.Diagnostic{{Reason: render.ReasonPathMissing, File: "apps/subs.yaml", Line: 3, Message: "path apps/subs does not exist"}}),
		wantBlocked: "apps/subs.yaml:3: path apps/subs does not exist",
	}, {
		name: "a deprecation warning does not block",
		desired: DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry, subEntry)},
			[]render.Diagnostic{{Reason: render.ReasonDeprecated, File: "kustomization.yaml", Message: "use resources"}}),
		want: []Entry{cmEntry},
	}, {
		name:        "no desired state at all prunes nothing",
		desired:     nil,
		wantBlocked: "nothing was rendered",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := previous.Stale(tc.desired, tc.guard)
			if tc.wantRefused != "" {
				var refused *PruneRefusedError
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.wantRefused) {
					t.Fatalf("Stale() error = %v, want a *PruneRefusedError containing %q", err, tc.wantRefused)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Stale() entries beside the refusal (-want +got):\n%s", diff)
				}
				return
			}
			if tc.wantBlocked != "" {
				var blocked *PruneBlockedError
				if !errors.As(err, &blocked) || !strings.Contains(err.Error(), tc.wantBlocked) {
					t.Fatalf("Stale() error = %v, want a *PruneBlockedError containing %q", err, tc.wantBlocked)
				}
				if got != nil {
					t.Errorf("Stale() = %v alongside the error, want nothing", got)
				}
				if tc.desired != nil && tc.desired.Complete() {
					t.Error("Complete() = true for a blocked desired state")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Stale() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNext(t *testing.T) {
	ogV2 := ogEntry
	ogV2.Version = "v1alpha2"
	for _, tc := range []struct {
		name     string
		previous *Inventory
		desired  *Desired
		applied  *Inventory
		want     []Entry
	}{{
		name:     "first reconcile: what was applied",
		previous: New(),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry, subEntry)}, nil),
		applied:  New(nsEntry, ogEntry, subEntry),
		want:     []Entry{nsEntry, subEntry, ogEntry},
	}, {
		name:     "an object gated this time stays ours while it is rendered",
		previous: New(nsEntry, ogEntry, subEntry),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry, subEntry)}, nil),
		applied:  New(nsEntry, ogEntry),
		want:     []Entry{nsEntry, subEntry, ogEntry},
	}, {
		name:     "an object never applied (waiting for its CRD) is not ours yet",
		previous: New(nsEntry),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, cmEntry)}, nil),
		applied:  New(nsEntry),
		want:     []Entry{nsEntry},
	}, {
		name:     "the version is the one last applied",
		previous: New(ogEntry),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", ogV2)}, nil),
		applied:  New(ogV2),
		want:     []Entry{ogV2},
	}, {
		name:     "pruned objects leave",
		previous: New(nsEntry, cmEntry),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", nsEntry)}, nil),
		applied:  New(nsEntry),
		want:     []Entry{nsEntry},
	}, {
		name:     "an incomplete render keeps everything it cannot see",
		previous: New(nsEntry, cmEntry, subEntry),
		desired:  DesiredOf(nil, []*render.AppResult{app("ops", nsEntry, ogEntry), failedApp("subs")}, nil),
		applied:  New(nsEntry, ogEntry),
		want:     []Entry{nsEntry, subEntry, ogEntry, cmEntry},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Next(tc.previous, tc.desired, tc.applied).Entries()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Next() (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseID(f *testing.F) {
	for _, e := range []Entry{nsEntry, ogEntry, roleEntry} {
		f.Add(e.ID(), e.Version)
	}
	f.Add("a_b_c_d_e", "v1")
	f.Fuzz(func(t *testing.T, id, version string) {
		e, err := ParseID(id, version)
		if err != nil {
			return
		}
		if e.ID() != id {
			t.Errorf("ParseID(%q).ID() = %q: an entry must read back to the ID it came from", id, e.ID())
		}
	})
}
