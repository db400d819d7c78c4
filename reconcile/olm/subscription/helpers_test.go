package subscription_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

// sub is a Subscription to package pkg in catalog "cat" of namespace "olm".
func sub(name, pkg string, opts ...func(*v1alpha1.Subscription)) *v1alpha1.Subscription {
	s := &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: v1alpha1.SubscriptionSpec{
			CatalogSource: "cat", CatalogSourceNamespace: "olm", Package: pkg, Channel: "stable",
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func annotated(k, v string) func(*v1alpha1.Subscription) {
	return func(s *v1alpha1.Subscription) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[k] = v
	}
}

func manual(s *v1alpha1.Subscription) { s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual }

func installed(csv string) func(*v1alpha1.Subscription) {
	return func(s *v1alpha1.Subscription) {
		s.Status.CurrentCSV, s.Status.InstalledCSV, s.Status.State = csv, csv, v1alpha1.SubscriptionStateAtLatest
	}
}

func pending(csv, plan string) func(*v1alpha1.Subscription) {
	return func(s *v1alpha1.Subscription) {
		s.Status.CurrentCSV, s.Status.State = csv, v1alpha1.SubscriptionStateUpgradePending
		s.Status.InstallPlanRef = &corev1.ObjectReference{Kind: v1alpha1.InstallPlanKind, Namespace: "ns", Name: plan}
		s.Status.Install = &v1alpha1.InstallPlanReference{Kind: v1alpha1.InstallPlanKind, Name: plan}
	}
}

func cond(s *v1alpha1.Subscription, t v1alpha1.SubscriptionConditionType) string {
	c := subscription.Condition(&s.Status, t)
	if c == nil {
		return "-"
	}
	out := string(c.Status) + "/" + c.Reason
	if c.Message != "" {
		out += ": " + c.Message
	}
	return out
}

// fixtureFBC is a small catalog: a and c require the API B.v1.b.example.com that b
// provides; a has a three-step replaces chain and c a skipRange; d needs nothing.
const fixtureFBC = `
{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.0.0"},{"name":"a.v1.1.0","replaces":"a.v1.0.0"},{"name":"a.v1.2.0","replaces":"a.v1.1.0"}]}
{"schema":"olm.bundle","name":"a.v1.0.0","package":"a","image":"example.com/a:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.gvk.required","value":{"group":"b.example.com","kind":"B","version":"v1"}}]}
{"schema":"olm.bundle","name":"a.v1.1.0","package":"a","image":"example.com/a:v1.1.0","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.1.0"}},{"type":"olm.gvk.required","value":{"group":"b.example.com","kind":"B","version":"v1"}}]}
{"schema":"olm.bundle","name":"a.v1.2.0","package":"a","image":"example.com/a:v1.2.0","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.2.0"}},{"type":"olm.gvk.required","value":{"group":"b.example.com","kind":"B","version":"v1"}}]}
{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1.0.0"}]}
{"schema":"olm.bundle","name":"b.v1.0.0","package":"b","image":"example.com/b:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"b.example.com","kind":"B","version":"v1"}}]}
{"schema":"olm.package","name":"c","defaultChannel":"stable"}
{"schema":"olm.channel","package":"c","name":"stable","entries":[{"name":"c.v2.0.0","skipRange":">=1.0.0 <2.0.0"}]}
{"schema":"olm.package","name":"d","defaultChannel":"stable"}
{"schema":"olm.channel","package":"d","name":"stable","entries":[{"name":"d.v1.0.0"}]}
{"schema":"olm.bundle","name":"d.v1.0.0","package":"d","image":"example.com/d:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"d","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"c.v2.0.0","package":"c","image":"example.com/c:v2.0.0","properties":[{"type":"olm.package","value":{"packageName":"c","version":"2.0.0"}},{"type":"olm.gvk.required","value":{"group":"b.example.com","kind":"B","version":"v1"}}]}
`

// resolveFixture resolves the Subscriptions of namespace ns against fixtureFBC.
func resolveFixture(t *testing.T, subs ...*v1alpha1.Subscription) *resolve.Result {
	t.Helper()
	c := catalog.ReadFBC(strings.NewReader(fixtureFBC), "catalog.json")
	r := resolve.New([]resolve.Catalog{{Name: "cat", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
	ns := resolve.Namespace{Name: "ns"}
	for _, s := range subs {
		ns.Subscriptions = append(ns.Subscriptions, *plans.ForResolver(s))
		if name := s.Status.InstalledCSV; name != "" {
			ns.CSVs = append(ns.CSVs, installedCSV(s.Spec.Package, name))
		}
	}
	return r.Resolve(ns)
}

// installedCSV is the CSV an InstallPlan would have made for a fixture bundle named
// <pkg>.v<version>, with its package in the properties annotation.
func installedCSV(pkg, name string) v1alpha1.ClusterServiceVersion {
	version := name[strings.LastIndex(name, ".v")+2:]
	csv := v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns",
		Annotations: map[string]string{resolve.PropertiesAnnotation: `{"properties":[{"type":"olm.package","value":{"packageName":"` + pkg + `","version":"` + version + `"}}]}`},
	}}
	csv.Spec.Version = v1alpha1.OperatorVersion(version)
	return csv
}
