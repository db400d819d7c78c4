package groups_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/olm/groups"
)

// BenchmarkEvaluate measures the OperatorGroup checks of one CSV on a cluster of 1,000 groups,
// each in its own namespace with one API listed: the cost a controller pays per CSV sync and
// the preview per CSV.
func BenchmarkEvaluate(b *testing.B) {
	const n = 1000
	all := make([]operatorsv1.OperatorGroup, 0, n+1)
	for i := range n {
		ns := fmt.Sprintf("team-%d", i)
		all = append(all, og(ns, "g", targets(ns), provides(fmt.Sprintf("Kind%d.v1.example.com", i))))
	}
	all = append(all, og("ops", "g", global()))
	member := csv("ops", "op.v1", etcdCluster, everyMode)
	b.ReportAllocs()
	for b.Loop() {
		ev, err := groups.Evaluate(member, all)
		if err != nil || ev.Transition != nil {
			b.Fatalf("Evaluate = %+v, %v", ev.Transition, err)
		}
	}
}

// BenchmarkTargetNamespaces measures a selector group on a cluster of 5,000 labelled namespaces.
func BenchmarkTargetNamespaces(b *testing.B) {
	const n = 5000
	cluster := make([]corev1.Namespace, 0, n)
	for i := range n {
		cluster = append(cluster, namespace(fmt.Sprintf("ns-%d", i), "tier", fmt.Sprint(i%10)))
	}
	group := og("ops", "g", matchLabels("tier", "3"))
	b.ReportAllocs()
	for b.Loop() {
		got, err := groups.TargetNamespaces(&group, cluster)
		if err != nil || len(got) != n/10 {
			b.Fatalf("TargetNamespaces = %d namespaces, %v", len(got), err)
		}
	}
}
