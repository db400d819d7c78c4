package groups

import (
	"slices"
	"strings"
	"testing"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The key read from an object's owner labels is the key of the owner that wrote them, for
// names OLM shortens too; an object owned by another kind, or by nothing, has none.
func TestOwnerKeysOfMatchesOwnerKey(t *testing.T) {
	long := strings.Repeat("operator-", 10) + "v1.2.3"
	csvKind, ogKind := v1alpha1.ClusterServiceVersionKind, operatorsv1.OperatorGroupKind
	for _, tc := range []struct {
		name   string
		kind   string
		labels map[string]string
		want   string
	}{
		{"a group's role", ogKind, ownerLabels("global", "ns1", ogKind), OwnerKey(ogKind, "ns1", "global")},
		{"a csv's role", csvKind, ownerLabels("etcd.v0.9.4", "ns1", csvKind), OwnerKey(csvKind, "ns1", "etcd.v0.9.4")},
		{"a long name", csvKind, ownerLabels(long, "ns1", csvKind), OwnerKey(csvKind, "ns1", long)},
		{"another kind", ogKind, ownerLabels("etcd.v0.9.4", "ns1", csvKind), ""},
		{"no owner name", csvKind, map[string]string{OwnerKindLabel: csvKind, OwnerNamespaceLabel: "ns1"}, ""},
		{"no labels", csvKind, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OwnerKeysOf(tc.kind, tc.labels)
			if tc.want == "" && got != nil || tc.want != "" && !slices.Equal(got, []string{tc.want}) {
				t.Errorf("OwnerKeysOf = %q, want %q", got, tc.want)
			}
		})
	}
	if OwnerKey(csvKind, "ns1", long) == OwnerKey(csvKind, "ns1", long+"x") {
		t.Error("two long names share a key")
	}
}
