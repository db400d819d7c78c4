package groups_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestCheckServiceAccount(t *testing.T) {
	og := func(sa string) *operatorsv1.OperatorGroup {
		g := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "og"}}
		g.Spec.ServiceAccountName = sa
		return g
	}
	installer := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "installer", UID: "u1"}}
	cases := []struct {
		name string
		og   *operatorsv1.OperatorGroup
		sa   *corev1.ServiceAccount
		want groups.ServiceAccountCheck
	}{
		{"no account named", og(""), nil, groups.ServiceAccountCheck{}},
		{"no account named, one given", og(""), installer, groups.ServiceAccountCheck{}},
		// OLM pkg/lib/scoped/syncer.go:90: fmt.Sprintf("ServiceAccount %s not found", serviceAccountName)
		{"missing", og("installer"), nil, groups.ServiceAccountCheck{Missing: true, Message: "ServiceAccount installer not found"}},
		{"present", og("installer"), installer, groups.ServiceAccountCheck{Ref: &corev1.ObjectReference{
			Kind: "ServiceAccount", APIVersion: "v1", Namespace: "team-a", Name: "installer", UID: "u1"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, groups.CheckServiceAccount(c.og, c.sa)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
