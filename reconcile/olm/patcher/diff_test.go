package patcher

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// TestDiffIsMergeFrom: diff's two parts, put together, are the merge patch
// controller-runtime's MergeFrom computes from the whole objects (less the
// resourceVersion, which write sets), on a real CSV of 70 KB and an OperatorGroup: a status
// change, a spec change with one, labels and annotations added and removed, a finalizer
// removed, a list in the status changed, a field cleared, and only the resourceVersion moved.
func TestDiffIsMergeFrom(t *testing.T) {
	csv := realCSV(t)
	csv.Finalizers = []string{"example.com/keep"}
	csv.Annotations["example.com/gone"] = "soon"
	csv.Status = v1alpha1.ClusterServiceVersionStatus{
		Phase: v1alpha1.CSVPhaseInstalling, Reason: v1alpha1.CSVReasonInstallSuccessful, Message: "waiting for install components to report healthy",
		Conditions: []v1alpha1.ClusterServiceVersionCondition{{Phase: v1alpha1.CSVPhasePending, Reason: v1alpha1.CSVReasonRequirementsUnknown}},
	}
	og := &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "og", ResourceVersion: "7", Labels: map[string]string{"a": "1"}},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{"operators"}},
		Status:     operatorsv1.OperatorGroupStatus{Namespaces: []string{"operators"}},
	}
	csvCase := func(change func(*v1alpha1.ClusterServiceVersion)) [2]client.Object { return changed(csv, change) }
	ogCase := func(change func(*operatorsv1.OperatorGroup)) [2]client.Object { return changed(og, change) }
	for name, c := range map[string][2]client.Object{
		"CSV status phase": csvCase(func(c *v1alpha1.ClusterServiceVersion) {
			c.Status.Phase, c.Status.Reason, c.Status.Message = v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "install strategy completed with no errors"
		}),
		"CSV status conditions appended": csvCase(func(c *v1alpha1.ClusterServiceVersion) {
			c.Status.Conditions = append(c.Status.Conditions, v1alpha1.ClusterServiceVersionCondition{Phase: v1alpha1.CSVPhaseSucceeded})
		}),
		"CSV status message cleared": csvCase(func(c *v1alpha1.ClusterServiceVersion) { c.Status.Message = "" }),
		"CSV spec and status": csvCase(func(c *v1alpha1.ClusterServiceVersion) {
			c.Spec.Description, c.Status.Phase = "changed", v1alpha1.CSVPhaseFailed
		}),
		"CSV labels and annotations": csvCase(func(c *v1alpha1.ClusterServiceVersion) {
			c.Labels = map[string]string{"olm.copiedFrom": "operators"}
			delete(c.Annotations, "example.com/gone")
		}),
		"CSV finalizer removed":    csvCase(func(c *v1alpha1.ClusterServiceVersion) { c.Finalizers = nil }),
		"CSV resourceVersion only": csvCase(func(c *v1alpha1.ClusterServiceVersion) { c.ResourceVersion = "43" }),
		"CSV status emptied":       csvCase(func(c *v1alpha1.ClusterServiceVersion) { c.Status = v1alpha1.ClusterServiceVersionStatus{} }),
		"group targets": ogCase(func(g *operatorsv1.OperatorGroup) {
			g.Spec.TargetNamespaces = []string{"operators", "other"}
		}),
		"group status and a label": ogCase(func(g *operatorsv1.OperatorGroup) {
			now := metav1.Now()
			g.Status.LastUpdated, g.Labels["b"] = &now, "2"
		}),
		"group labels removed": ogCase(func(g *operatorsv1.OperatorGroup) { g.Labels = nil }),
	} {
		t.Run(name, func(t *testing.T) {
			before, after := c[0], c[1]
			main, status, err := diff(before, after)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for k, v := range main.members {
				got[k] = decode(t, v)
			}
			if len(main.metadata) > 0 {
				meta := map[string]any{}
				for k, v := range main.metadata {
					meta[k] = decode(t, v)
				}
				got["metadata"] = meta
			}
			if status != nil {
				got["status"] = decode(t, status)
			}
			data, err := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}).Data(after)
			if err != nil {
				t.Fatal(err)
			}
			want := decode(t, data).(map[string]any)
			meta := want["metadata"].(map[string]any)
			delete(meta, "resourceVersion")
			if len(meta) == 0 {
				delete(want, "metadata")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("diff:\n%v\nMergeFrom:\n%v", got, want)
			}
		})
	}
}

// realCSV is a real CSV of 70 KB (cert-manager's, ../shared/data), as read from a namespace.
func realCSV(tb testing.TB) *v1alpha1.ClusterServiceVersion {
	tb.Helper()
	data, err := os.ReadFile(shareddata.Path(tb, "data/manifests/clusterserviceversions/cert-manager.v1.14.2.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(data, csv); err != nil {
		tb.Fatal(err)
	}
	csv.Namespace, csv.ResourceVersion = "operators", "42"
	return csv
}

// changed is before and a copy of it that change changed.
func changed[T client.Object](before T, change func(T)) [2]client.Object {
	after := before.DeepCopyObject().(T)
	change(after)
	return [2]client.Object{before, after}
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// BenchmarkDiffStatus: the merge patch of a status change of a real CSV of 70 KB, as diff
// computes it and as controller-runtime's MergeFrom, which the patcher called before, does.
func BenchmarkDiffStatus(b *testing.B) {
	before := realCSV(b)
	before.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseInstalling, Reason: v1alpha1.CSVReasonInstallSuccessful}
	after := before.DeepCopy()
	after.Status.Phase = v1alpha1.CSVPhaseSucceeded
	b.Run("diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := diff(before, after); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MergeFrom", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}).Data(after); err != nil {
				b.Fatal(err)
			}
		}
	})
}
