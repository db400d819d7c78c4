package groups_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestCopyNamespaces(t *testing.T) {
	cluster := []string{"ops", "a", "b", "c", "kube-system"}
	succeeded := status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	member := csv("ops", "op.v1", succeeded)
	tests := []struct {
		name  string
		csv   *v1alpha1.ClusterServiceVersion
		group operatorsv1.OperatorGroup
		opts  groups.CopyOptions
		want  []string
	}{
		{name: "every target but the group's namespace", csv: member, group: og("ops", "g", targets("b", "ops", "a")), want: []string{"a", "b"}},
		{name: "a target that does not exist gets none", csv: member, group: og("ops", "g", targets("a", "missing")), want: []string{"a"}},
		{name: "OwnNamespace group: none", csv: member, group: og("ops", "g", targets("ops"))},
		{name: "SingleNamespace group: that one", csv: member, group: og("ops", "g", targets("c")), want: []string{"c"}},
		{name: "global: every other namespace", csv: member, group: og("ops", "g", global()), want: []string{"a", "b", "c", "kube-system"}},
		{
			name: "global with copies disabled: the protected namespaces only", csv: member, group: og("ops", "g", global()),
			opts: groups.CopyOptions{DisableCopiedCSVs: true, ProtectedNamespaces: []string{"kube-system", "ops"}},
			want: []string{"kube-system"},
		},
		{
			name: "copies disabled do not touch explicit targets", csv: member, group: og("ops", "g", targets("a", "b")),
			opts: groups.CopyOptions{DisableCopiedCSVs: true}, want: []string{"a", "b"},
		},
		{name: "no phase yet: none", csv: csv("ops", "op.v1"), group: og("ops", "g", global())},
		{name: "pending is copied", csv: csv("ops", "op.v1", status(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet)), group: og("ops", "g", targets("a")), want: []string{"a"}},
		{name: "failed install is copied", csv: csv("ops", "op.v1", status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed)), group: og("ops", "g", targets("a")), want: []string{"a"}},
		{name: "a copy is not copied again", csv: csv("ops", "op.v1", succeeded, labels("olm.copiedFrom", "elsewhere")), group: og("ops", "g", targets("a"))},
		{name: "in another namespace than the group", csv: csv("apps", "op.v1", succeeded), group: og("ops", "g", targets("a"))},
	}
	for _, reason := range []v1alpha1.ConditionReason{
		v1alpha1.CSVReasonCopied, v1alpha1.CSVReasonInvalidInstallModes, v1alpha1.CSVReasonNoTargetNamespaces,
		v1alpha1.CSVReasonUnsupportedOperatorGroup, v1alpha1.CSVReasonNoOperatorGroup, v1alpha1.CSVReasonTooManyOperatorGroups,
		v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs,
	} {
		tests = append(tests, struct {
			name  string
			csv   *v1alpha1.ClusterServiceVersion
			group operatorsv1.OperatorGroup
			opts  groups.CopyOptions
			want  []string
		}{name: "uncopiable: " + string(reason), csv: csv("ops", "op.v1", status(v1alpha1.CSVPhaseFailed, reason)), group: og("ops", "g", targets("a"))})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := groups.CopyNamespaces(tt.csv, &tt.group, cluster, tt.opts)
			if copyable := groups.Copyable(tt.csv, &tt.group); copyable != (len(tt.want) > 0) {
				t.Errorf("Copyable = %v, want %v (copies: %v)", copyable, len(tt.want) > 0, tt.want)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CopyNamespaces (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopiedCSV(t *testing.T) {
	parent := csv("ops", "op.v1", etcdCluster, everyMode,
		annotations(
			"olm.operatorGroup", "g", "olm.operatorNamespace", "ops", "olm.operatorGroupNamespace", "ops",
			"olm.targetNamespaces", "a,b", "kubectl.kubernetes.io/last-applied-configuration", "{...}",
			"alm-examples", "[]",
		),
		labels("operators.coreos.com/op.ops", "", "olm.api.c571d720f17289d3", "provided", "app", "etcd"),
		func(c *v1alpha1.ClusterServiceVersion) {
			c.TypeMeta = metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"}
			c.UID = "parent-uid"
			c.ResourceVersion = "42"
			c.Status = v1alpha1.ClusterServiceVersionStatus{
				Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonInstallSuccessful,
				Message:    "install strategy completed with no errors",
				Conditions: []v1alpha1.ClusterServiceVersionCondition{{Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonInstallSuccessful}},
			}
		},
	)
	want := &v1alpha1.ClusterServiceVersion{
		TypeMeta: parent.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "op.v1", Namespace: "a",
			Annotations: map[string]string{
				"olm.operatorGroup": "g", "olm.operatorNamespace": "ops", "olm.operatorGroupNamespace": "ops", "alm-examples": "[]",
			},
			Labels: map[string]string{"olm.api.c571d720f17289d3": "provided", "app": "etcd", "olm.copiedFrom": "ops"},
		},
		Spec: parent.Spec,
		Status: v1alpha1.ClusterServiceVersionStatus{
			Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonCopied,
			Message:    "The operator is running in ops but is managing this namespace",
			Conditions: parent.Status.Conditions,
		},
	}
	got := groups.CopiedCSV(parent, "a")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CopiedCSV (-want +got):\n%s", diff)
	}
	if !groups.IsCopied(got) {
		t.Error("the copy is not IsCopied")
	}
	got.Spec.InstallModes[0].Supported = !got.Spec.InstallModes[0].Supported
	if parent.Spec.InstallModes[0].Supported == got.Spec.InstallModes[0].Supported {
		t.Error("the copy shares its spec with the parent")
	}
}

func TestIsCopied(t *testing.T) {
	tests := []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		want bool
	}{
		{"plain", csv("ops", "c"), false},
		{"own namespace annotation", csv("ops", "c", annotations("olm.operatorNamespace", "ops")), false},
		{"reason Copied", csv("a", "c", status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied)), true},
		{"copiedFrom label, even empty", csv("a", "c", labels("olm.copiedFrom", "")), true},
		{"operator namespace elsewhere", csv("a", "c", annotations("olm.operatorNamespace", "ops")), true},
	}
	for _, tt := range tests {
		if got := groups.IsCopied(tt.csv); got != tt.want {
			t.Errorf("%s: IsCopied = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDanglingCopies(t *testing.T) {
	parent := func(ns, name, targets string, opts ...csvOpt) v1alpha1.ClusterServiceVersion {
		opts = append([]csvOpt{annotations("olm.operatorNamespace", ns, "olm.targetNamespaces", targets),
			status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)}, opts...)
		return *csv(ns, name, opts...)
	}
	copyOf := func(ns, name, parentNS string) v1alpha1.ClusterServiceVersion {
		return *csv(ns, name, annotations("olm.operatorNamespace", parentNS),
			labels("olm.copiedFrom", parentNS), status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied))
	}
	cluster := []v1alpha1.ClusterServiceVersion{
		parent("ops", "tenant.v1", "a,b"),
		copyOf("a", "tenant.v1", "ops"), // kept
		copyOf("c", "tenant.v1", "ops"), // no longer targeted
		copyOf("a", "gone.v1", "ops"),   // parent gone
		parent("ops2", "rival.v1", "", status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict)),
		copyOf("a", "rival.v1", "ops2"),       // parent in conflict
		parent("operators", "global.v1", ""),  // global
		copyOf("a", "global.v1", "operators"), // kept unless copies are disabled
		copyOf("kube-system", "global.v1", "operators"),
		*csv("b", "orphan.v1", labels("olm.copiedFrom", "ops")), // no parent-namespace annotation
		copyOf("d", "self.v1", "d"),                             // names its own namespace
		*csv("ops3", "fresh.v1", status(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown)),
		copyOf("a", "fresh.v1", "ops3"), // a parent not annotated yet keeps its copies
	}
	tests := []struct {
		name string
		opts groups.CopyOptions
		want []groups.Dangling
	}{
		{
			name: "copies enabled",
			want: []groups.Dangling{
				{Namespace: "a", Name: "gone.v1", Reason: groups.DanglingParentGone},
				{Namespace: "a", Name: "rival.v1", Reason: groups.DanglingParentConflict},
				{Namespace: "b", Name: "orphan.v1", Reason: groups.DanglingNoParentNamespace},
				{Namespace: "c", Name: "tenant.v1", Reason: groups.DanglingNotTargeted},
				{Namespace: "d", Name: "self.v1", Reason: groups.DanglingSameNamespace},
			},
		},
		{
			name: "copies of global operators disabled, kube-system protected",
			opts: groups.CopyOptions{DisableCopiedCSVs: true, ProtectedNamespaces: []string{"kube-system"}},
			want: []groups.Dangling{
				{Namespace: "a", Name: "global.v1", Reason: groups.DanglingCopiedCSVsDisabled},
				{Namespace: "a", Name: "gone.v1", Reason: groups.DanglingParentGone},
				{Namespace: "a", Name: "rival.v1", Reason: groups.DanglingParentConflict},
				{Namespace: "b", Name: "orphan.v1", Reason: groups.DanglingNoParentNamespace},
				{Namespace: "c", Name: "tenant.v1", Reason: groups.DanglingNotTargeted},
				{Namespace: "d", Name: "self.v1", Reason: groups.DanglingSameNamespace},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, groups.DanglingCopies(cluster, tt.opts)); diff != "" {
				t.Errorf("DanglingCopies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodTemplateAnnotations(t *testing.T) {
	c := csv("ops", "op.v1", annotations("olm.targetNamespaces", "a,b", "olm.operatorGroup", "g", "shared", "from-csv"))
	template := map[string]string{"shared": "from-template", "prometheus.io/scrape": "true"}
	want := map[string]string{
		"olm.targetNamespaces": "a,b", "olm.operatorGroup": "g", "shared": "from-csv", "prometheus.io/scrape": "true",
	}
	if diff := cmp.Diff(want, groups.PodTemplateAnnotations(c, template)); diff != "" {
		t.Errorf("PodTemplateAnnotations (-want +got):\n%s", diff)
	}
	if template["shared"] != "from-template" {
		t.Error("PodTemplateAnnotations changed the template's map")
	}
}
