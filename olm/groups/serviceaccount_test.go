package groups_test

import (
	"errors"
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

// TestScopedServiceAccount holds OLM's query of a namespace's service account and its
// errors' literals (OLM pkg/lib/scoped/querier.go:59, :75, :80, :89).
func TestScopedServiceAccount(t *testing.T) {
	ref := &corev1.ObjectReference{Kind: "ServiceAccount", APIVersion: "v1", Namespace: "team-a", Name: "installer", UID: "u1"}
	og := func(name, sa string, ref *corev1.ObjectReference, namespaces ...string) operatorsv1.OperatorGroup {
		g := operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
		g.Spec.ServiceAccountName = sa
		g.Status.ServiceAccountRef = ref
		g.Status.Namespaces = namespaces
		return g
	}
	cases := []struct {
		name    string
		groups  []operatorsv1.OperatorGroup
		want    *corev1.ObjectReference
		wantErr string
	}{
		{name: "no group", wantErr: "no operator group found that is managing this namespace"},
		{name: "a group managing nothing yet", groups: []operatorsv1.OperatorGroup{og("og", "", nil)}, wantErr: "no operator group found that is managing this namespace"},
		{name: "two managing", groups: []operatorsv1.OperatorGroup{og("a", "", nil, "team-a"), og("b", "", nil, "")}, wantErr: "more than one operator group(s) are managing this namespace count=2"},
		{name: "one managing, one not", groups: []operatorsv1.OperatorGroup{og("a", "", nil), og("b", "installer", ref, "team-a")}, want: ref},
		{name: "no account named", groups: []operatorsv1.OperatorGroup{og("og", "", nil, "team-a")}},
		{name: "account not synced", groups: []operatorsv1.OperatorGroup{og("og", "installer", nil, "team-a")}, wantErr: "please make sure the service account exists. sa=installer operatorgroup=team-a/og"},
		{name: "account synced", groups: []operatorsv1.OperatorGroup{og("og", "installer", ref, "team-a")}, want: ref},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := groups.ScopedServiceAccount(tc.groups)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				var ogErr *groups.OperatorGroupError
				if !errors.As(err, &ogErr) {
					t.Errorf("error %T, want *OperatorGroupError", err)
				}
			}
			if gotErr != tc.wantErr {
				t.Errorf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ref (-want +got):\n%s", diff)
			}
		})
	}
}
