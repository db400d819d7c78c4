package patcher

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// BenchmarkPatchUnchanged measures what most reconciles of a CSV end with: a Patch of a copy
// in which nothing changed, which writes nothing. The CSV is a real one of 70 KB
// (realCSV). The fake client only stands in for the writes that are
// never sent.
func BenchmarkPatchUnchanged(b *testing.B) {
	csv := realCSV(b)
	csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonInstallSuccessful}
	c := fake.NewClientBuilder().Build()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := New(csv, c)
		if err := p.Patch(ctx, csv); err != nil {
			b.Fatal(err)
		}
	}
}
