package csv_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// TestInterOperatorGroupOwnerConflict: the real prometheus 0.27.0 CSV runs in a MultiNamespace
// group; when its group grows to intersect a group that already provides the same APIs, it
// fails with InterOperatorGroupOwnerConflict and its deployments are deleted; when the groups
// stop intersecting it recovers and installs again (seed 000, "Rules for intersection").
func TestInterOperatorGroupOwnerConflict(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "prometheus", "0.27.0")
	installCRDs(t, env, dir)
	shared := newNamespace(t, env, "shared")
	ns := newNamespace(t, env, "prometheus")
	csv := loadCSV(t, dir, ns)
	apis, err := groups.ProvidedAPIs(csv)
	if err != nil {
		t.Fatal(err)
	}

	// Another tenant protects the same APIs in the shared namespace with a static group.
	other := newNamespace(t, env, "monitoring")
	static := &operatorsv1.OperatorGroup{}
	static.Namespace, static.Name = other, "cluster-monitoring"
	static.Annotations = map[string]string{operatorsv1.OperatorGroupProvidedAPIsAnnotationKey: apis.String()}
	static.Spec = operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{other, shared}, StaticProvidedAPIs: true}
	create(t, env, static)

	og := operatorGroup(t, env, ns, "prometheus", ns)
	installAndSucceed(t, env, csv)
	waitGroupAPIs(t, env, ns, "prometheus", apis.String())

	setTargets(t, env, ns, "prometheus", ns, shared)
	failed := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict)
	if failed.Status.Message != groups.MessageInterOperatorGroupConflict {
		t.Errorf("message = %q", failed.Status.Message)
	}
	eventually(t, "deployments deleted", func() error {
		return noDeployments(env, ns)
	})
	waitGroupAPIs(t, env, ns, "prometheus", "")

	setTargets(t, env, ns, og.Name, ns)
	eventually(t, "recovery from the conflict", func() error {
		return hasCondition(getCSV(t, env, ns, csv.Name), v1alpha1.CSVPhasePending, groups.MessageRecoveredIntersection)
	})
	waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	waitGroupAPIs(t, env, ns, "prometheus", apis.String())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(static), static); err != nil {
		t.Fatal(err)
	}
	if got := static.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]; got != apis.String() {
		t.Errorf("the static group's olm.providedAPIs changed to %q", got)
	}
}

// TestCannotModifyStaticOperatorGroupProvidedAPIs: a CSV whose APIs its static group does not
// list fails, and recovers once the group lists them.
func TestCannotModifyStaticOperatorGroupProvidedAPIs(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "static")
	og := &operatorsv1.OperatorGroup{}
	og.Namespace, og.Name = ns, "static"
	og.Spec = operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}, StaticProvidedAPIs: true}
	create(t, env, og)
	csv := loadCSV(t, dir, ns)
	create(t, env, csv)

	failed := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs)
	if failed.Status.Message != groups.MessageCannotModifyStaticProvided {
		t.Errorf("message = %q", failed.Status.Message)
	}
	if err := noDeployments(env, ns); err != nil {
		t.Error(err)
	}
	apis, err := groups.ProvidedAPIs(csv)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "static group lists the apis", func() error {
		current := &operatorsv1.OperatorGroup{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(og), current); err != nil {
			return err
		}
		current.Annotations = map[string]string{operatorsv1.OperatorGroupProvidedAPIsAnnotationKey: apis.String()}
		return env.Client.Update(ctx, current)
	})
	eventually(t, "recovery", func() error {
		return hasCondition(getCSV(t, env, ns, csv.Name), v1alpha1.CSVPhasePending, groups.MessageRecoveredStaticProvidedAPIs)
	})
	waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
}
