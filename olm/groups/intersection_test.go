package groups_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

const (
	etcdAPI  = "EtcdCluster.v1beta2.etcd.database.coreos.com"
	otherAPI = "Widget.v1.example.com"
	thirdAPI = "Gadget.v1.example.com"
)

var (
	conflictTransition = &groups.Transition{
		Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonInterOperatorGroupOwnerConflict,
		Message: "intersecting operatorgroups provide the same apis",
	}
	staticTransition = &groups.Transition{
		Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs,
		Message: "static provided api operatorgroup cannot be modified by these apis",
	}
)

// TestSeedIntersectionRules is seed 000's "Rules for intersection", case by case: whether the
// set of intersecting provided APIs is empty, whether the CSV's APIs are a subset of its
// group's, and whether the group is static.
func TestSeedIntersectionRules(t *testing.T) {
	member := csv("ops", "etcdoperator.v0.9.4", etcdCluster, everyMode)
	// Around the group in "ops" (targeting "ops"): a group whose targets do not reach "ops"
	// but that lists the same API, and one whose targets do but that lists another API. Neither
	// makes the intersecting set non-empty.
	bystanders := []operatorsv1.OperatorGroup{
		og("far", "same-api-elsewhere", targets("far"), provides(etcdAPI)),
		og("near", "other-api-here", targets("ops"), provides(thirdAPI)),
	}
	// A group in "tenant" targeting "ops" that lists the CSV's API: the intersecting set is
	// not empty.
	rival := og("tenant", "rival", targets("ops", "tenant"), provides(etcdAPI))
	rivalConflict := []groups.Conflict{{Namespace: "tenant", Name: "rival", APIs: groups.ParseAPISet(etcdAPI)}}

	subsetAnnotation := etcdAPI + "," + otherAPI // sorted: E < W
	tests := []struct {
		name         string
		intersecting bool
		subset       bool
		static       bool
		want         groups.Intersection
	}{
		{
			name: "empty, subset: continue", subset: true,
			want: groups.Intersection{Result: groups.NoAPIConflict, ProvidedAPIs: subsetAnnotation, Continue: true},
		},
		{
			name: "empty, subset, static: continue", subset: true, static: true,
			want: groups.Intersection{Result: groups.NoAPIConflict, ProvidedAPIs: subsetAnnotation, Continue: true},
		},
		{
			name: "empty, not a subset: the group's annotation becomes the union",
			want: groups.Intersection{Result: groups.AddAPIs, ProvidedAPIs: subsetAnnotation, AnnotationChanged: true},
		},
		{
			name: "empty, not a subset, static: CannotModifyStaticOperatorGroupProvidedAPIs", static: true,
			want: groups.Intersection{Result: groups.AddAPIs, ProvidedAPIs: otherAPI, Transition: staticTransition, DeleteDeployments: true},
		},
		{
			name: "not empty, not a subset: InterOperatorGroupOwnerConflict", intersecting: true,
			want: groups.Intersection{Result: groups.APIConflict, ProvidedAPIs: otherAPI, Transition: conflictTransition, DeleteDeployments: true, Conflicts: rivalConflict},
		},
		{
			name: "not empty, not a subset, static: InterOperatorGroupOwnerConflict", intersecting: true, static: true,
			want: groups.Intersection{Result: groups.APIConflict, ProvidedAPIs: otherAPI, Transition: conflictTransition, DeleteDeployments: true, Conflicts: rivalConflict},
		},
		{
			name: "not empty, subset: the group's annotation becomes the difference", intersecting: true, subset: true,
			want: groups.Intersection{Result: groups.RemoveAPIs, ProvidedAPIs: otherAPI, AnnotationChanged: true, Conflicts: rivalConflict},
		},
		{
			name: "not empty, subset, static: CannotModifyStaticOperatorGroupProvidedAPIs", intersecting: true, subset: true, static: true,
			want: groups.Intersection{Result: groups.RemoveAPIs, ProvidedAPIs: subsetAnnotation, Transition: staticTransition, DeleteDeployments: true, Conflicts: rivalConflict},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			annotation := otherAPI
			if tt.subset {
				annotation = subsetAnnotation
			}
			opts := []ogOpt{targets("ops"), provides(annotation)}
			if tt.static {
				opts = append(opts, static())
			}
			group := og("ops", "mine", opts...)
			all := append([]operatorsv1.OperatorGroup{group}, bystanders...)
			if tt.intersecting {
				all = append(all, rival)
			}
			got, err := groups.IntersectAPIs(member, &group, all)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IntersectAPIs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileAPIs(t *testing.T) {
	etcd := groups.ParseAPISet(etcdAPI)
	tests := []struct {
		name   string
		apis   groups.APISet
		group  operatorsv1.OperatorGroup
		others []operatorsv1.OperatorGroup
		want   groups.APIReconciliation
	}{
		{"alone, annotation empty", etcd, og("ops", "g", targets("ops")), nil, groups.AddAPIs},
		{"alone, annotated", etcd, og("ops", "g", targets("ops"), provides(etcdAPI)), nil, groups.NoAPIConflict},
		{"no APIs at all", groups.APISet{}, og("ops", "g", targets("ops")), []operatorsv1.OperatorGroup{og("x", "h", global(), provides(etcdAPI))}, groups.NoAPIConflict},
		{"itself among the others is skipped", etcd, og("ops", "g", targets("ops"), provides(etcdAPI)),
			[]operatorsv1.OperatorGroup{og("ops", "g", targets("ops"), provides(etcdAPI))}, groups.NoAPIConflict},
		{"a global group elsewhere claims it", etcd, og("ops", "g", targets("ops")),
			[]operatorsv1.OperatorGroup{og("operators", "global", global(), provides(etcdAPI))}, groups.APIConflict},
		{"being global, every group intersects", etcd, og("ops", "g", global(), provides(etcdAPI)),
			[]operatorsv1.OperatorGroup{og("far", "h", targets("far"), provides(etcdAPI))}, groups.RemoveAPIs},
		{"intersection through the other's own namespace", etcd, og("ops", "g", targets("apps")),
			[]operatorsv1.OperatorGroup{og("apps", "h", targets("apps"), provides(etcdAPI))}, groups.APIConflict},
		{"a group without status does not intersect", etcd, og("ops", "g", targets("ops")),
			[]operatorsv1.OperatorGroup{og("ops2", "h", specTargets("ops"), provides(etcdAPI))}, groups.AddAPIs},
		{"partly shared, partly new", groups.ParseAPISet(etcdAPI + "," + otherAPI), og("ops", "g", targets("ops"), provides(otherAPI)),
			[]operatorsv1.OperatorGroup{og("x", "h", targets("ops"), provides(etcdAPI))}, groups.APIConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groups.ReconcileAPIs(tt.apis, &tt.group, tt.others); got != tt.want {
				t.Errorf("ReconcileAPIs = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestStaticGroupKeepsAnExistingConflict(t *testing.T) {
	// OLM does not turn a CSV already failed with InterOperatorGroupOwnerConflict into
	// CannotModifyStatic...: it leaves it as it is.
	group := og("ops", "g", targets("ops"), static())
	member := csv("ops", "c", etcdCluster, status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict))
	got, err := groups.IntersectAPIs(member, &group, []operatorsv1.OperatorGroup{group})
	if err != nil {
		t.Fatal(err)
	}
	want := groups.Intersection{Result: groups.AddAPIs}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IntersectAPIs (-want +got):\n%s", diff)
	}
}

func TestConflicts(t *testing.T) {
	group := og("ops", "g", targets("ops", "apps"), provides(etcdAPI+","+otherAPI))
	all := []operatorsv1.OperatorGroup{
		group,
		og("z", "global", global(), provides(otherAPI)),
		og("apps", "h", targets("apps"), provides(etcdAPI+","+thirdAPI)),
		og("far", "f", targets("far"), provides(etcdAPI)),
		og("a", "unrelated", global(), provides(thirdAPI)),
	}
	got := groups.Conflicts(groups.GroupProvidedAPIs(&group), &group, all)
	want := []groups.Conflict{
		{Namespace: "apps", Name: "h", APIs: groups.ParseAPISet(etcdAPI)},
		{Namespace: "z", Name: "global", APIs: groups.ParseAPISet(otherAPI)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Conflicts (-want +got):\n%s", diff)
	}
}

func TestPruneProvidedAPIs(t *testing.T) {
	deleting := func(c *v1alpha1.ClusterServiceVersion) {
		c.DeletionTimestamp = &metav1.Time{Time: time.Unix(0, 0)}
	}
	succeeded := status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	widget := ownsCRD("widgets.example.com", "v1", "Widget")
	both := etcdAPI + "," + otherAPI
	tests := []struct {
		name  string
		group operatorsv1.OperatorGroup
		csvs  []*v1alpha1.ClusterServiceVersion
		want  groups.Prune
	}{
		{
			name:  "every API still provided",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "a", etcdCluster, succeeded), csv("ops", "b", widget, succeeded)},
			want:  groups.Prune{ProvidedAPIs: both},
		},
		{
			name:  "an API nobody provides is pruned",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "a", etcdCluster, succeeded)},
			want:  groups.Prune{ProvidedAPIs: etcdAPI, Changed: true},
		},
		{
			name:  "fully pruned is the empty string",
			group: og("ops", "g", provides(both)),
			want:  groups.Prune{ProvidedAPIs: "", Changed: true},
		},
		{
			name:  "a static group is never pruned",
			group: og("ops", "g", provides(both), static()),
			want:  groups.Prune{ProvidedAPIs: both},
		},
		{
			name:  "copies and CSVs of other namespaces do not count",
			group: og("ops", "g", provides(both)),
			csvs: []*v1alpha1.ClusterServiceVersion{
				csv("ops", "a", etcdCluster, succeeded),
				csv("ops", "b", widget, status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied)),
				csv("apps", "c", widget, succeeded),
			},
			want: groups.Prune{ProvidedAPIs: etcdAPI, Changed: true},
		},
		{
			name:  "a pending CSV with an API not listed yet holds pruning back",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "new", etcdCluster, ownsCRD("gadgets.example.com", "v1", "Gadget"), status(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown))},
			want:  groups.Prune{ProvidedAPIs: both, WaitingFor: "ops/new"},
		},
		{
			name:  "a CSV without a phase holds pruning back",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "new", ownsCRD("gadgets.example.com", "v1", "Gadget"))},
			want:  groups.Prune{ProvidedAPIs: both, WaitingFor: "ops/new"},
		},
		{
			name:  "a pending CSV whose APIs are all listed does not",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "new", etcdCluster, status(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown))},
			want:  groups.Prune{ProvidedAPIs: etcdAPI, Changed: true},
		},
		{
			name:  "a pending CSV being deleted does not",
			group: og("ops", "g", provides(both)),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "old", ownsCRD("gadgets.example.com", "v1", "Gadget"), deleting)},
			want:  groups.Prune{ProvidedAPIs: "", Changed: true},
		},
		{
			name:  "malformed entries do not count; nothing to prune among the parsed ones",
			group: og("ops", "g", provides(etcdAPI+",Broken")),
			csvs:  []*v1alpha1.ClusterServiceVersion{csv("ops", "a", etcdCluster, succeeded)},
			want:  groups.Prune{ProvidedAPIs: etcdAPI + ",Broken"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var csvs []v1alpha1.ClusterServiceVersion
			for _, c := range tt.csvs {
				csvs = append(csvs, *c)
			}
			if diff := cmp.Diff(tt.want, groups.PruneProvidedAPIs(&tt.group, csvs)); diff != "" {
				t.Errorf("PruneProvidedAPIs (-want +got):\n%s", diff)
			}
		})
	}
}
