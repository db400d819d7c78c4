package apply

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/olmsync/olmsync/internal/testenv"
)

// immutableConfigMap is a ConfigMap the API server refuses to change once created.
func immutableConfigMap(t *testing.T, ns, value string, annotations map[string]string) []*unstructured.Unstructured {
	t.Helper()
	immutable := true
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "frozen", Annotations: annotations},
		Immutable:  &immutable,
		Data:       map[string]string{"value": value},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	nsObj := kindObj("v1", "Namespace", "", ns)
	return []*unstructured.Unstructured{nsObj, {Object: m}}
}

// TestForceRecreatesImmutable: a change the API server refuses as immutable fails the
// object without force; with the Applier's Force, or Flux's force annotation on the
// object, the object is deleted and created again with Git's content (a dry run only says
// it would be).
func TestForceRecreatesImmutable(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("force")
	a := newApplier(t, env, "platform")
	mustApply(t, a, immutableConfigMap(t, ns, "one", nil))
	before := get(t, a.Client, "v1", "ConfigMap", ns, "frozen")

	res, err := a.Apply(context.Background(), immutableConfigMap(t, ns, "two", nil))
	if err != nil {
		t.Fatal(err)
	}
	failed := res.With(Failed)
	if len(failed) != 1 || !strings.Contains(failed[0].Message, "field is immutable") {
		t.Fatalf("without force: %v, want the ConfigMap failed as immutable", actions(res))
	}

	a.Force = true
	dry, err := a.DryRun(context.Background(), immutableConfigMap(t, ns, "two", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := dry.With(Configured); len(c) != 1 || !strings.Contains(c[0].Message, "would be recreated") {
		t.Fatalf("dry run with force: %v", actions(dry))
	}
	if got := get(t, a.Client, "v1", "ConfigMap", ns, "frozen"); got.GetUID() != before.GetUID() {
		t.Fatal("the dry run recreated the ConfigMap")
	}
	res = mustApply(t, a, immutableConfigMap(t, ns, "two", nil))
	if c := res.With(Configured); len(c) != 1 || !strings.Contains(c[0].Message, "recreated") {
		t.Fatalf("with force: %v", actions(res))
	}
	after := get(t, a.Client, "v1", "ConfigMap", ns, "frozen")
	if v, _, _ := unstructured.NestedString(after.Object, "data", "value"); v != "two" || after.GetUID() == before.GetUID() {
		t.Errorf("after force: value %q, uid changed %v; want two, a new object", v, after.GetUID() != before.GetUID())
	}

	// The annotation alone does it too.
	a.Force = false
	mustApply(t, a, immutableConfigMap(t, ns, "three", map[string]string{ForceAnnotation: ForceEnabled}))
	if v, _, _ := unstructured.NestedString(get(t, a.Client, "v1", "ConfigMap", ns, "frozen").Object, "data", "value"); v != "three" {
		t.Errorf("with the force annotation: value %q, want three", v)
	}
}
