package olmtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct{ method, url, want string }{
		{"GET", "/api/v1/namespaces", "LIST namespaces"},
		{"GET", "/api/v1/namespaces/ns1", "GET namespaces"},
		{"GET", "/api/v1/namespaces/ns1/serviceaccounts/sa", "GET serviceaccounts"},
		{"GET", "/apis/operators.coreos.com/v1alpha1/namespaces/ns1/subscriptions", "LIST subscriptions"},
		{"GET", "/apis/operators.coreos.com/v1alpha1/subscriptions?watch=true&resourceVersion=1", "WATCH subscriptions"},
		{"PUT", "/apis/operators.coreos.com/v1alpha1/namespaces/ns1/clusterserviceversions/a.v1/status", "PUT clusterserviceversions/status"},
		{"PATCH", "/apis/rbac.authorization.k8s.io/v1/clusterroles/olm.og.og.admin-x", "PATCH clusterroles"},
		{"POST", "/apis/apps/v1/namespaces/ns1/deployments", "POST deployments"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/olmsync-system/leases/olm.olmsync.dev", "GET leases"},
	} {
		r := httptest.NewRequest(tc.method, tc.url, http.NoBody)
		if got := RequestKind(r); got != tc.want {
			t.Errorf("RequestKind(%s %s) = %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
}
