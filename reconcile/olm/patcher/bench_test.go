package patcher_test

import (
	"context"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/reconcile/olm/patcher"
)

// BenchmarkPatchUnchanged measures what most reconciles of a CSV end with: a Patch of a copy
// in which nothing changed, which writes nothing. The CSV is a real one of 70 KB
// (cert-manager's, ../shared/data). The fake client only stands in for the writes that are
// never sent.
func BenchmarkPatchUnchanged(b *testing.B) {
	data, err := os.ReadFile(shareddata.Path(b, "data/manifests/clusterserviceversions/cert-manager.v1.14.2.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(data, csv); err != nil {
		b.Fatal(err)
	}
	csv.Namespace, csv.ResourceVersion = "operators", "42"
	csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: v1alpha1.CSVReasonInstallSuccessful}
	c := fake.NewClientBuilder().Build()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := patcher.New(csv, c)
		if err := p.Patch(ctx, csv); err != nil {
			b.Fatal(err)
		}
	}
}
