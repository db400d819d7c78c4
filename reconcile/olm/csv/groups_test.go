package csv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestTooManyOperatorGroups: a CSV in a namespace with two groups fails with OLM's reason and
// message, and recovers to Pending, then installs, once one group is left (seed 000).
func TestTooManyOperatorGroups(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "too-many")
	operatorGroup(t, env, ns, "first", ns)
	second := operatorGroup(t, env, ns, "second", ns)
	csv := loadCSV(t, dir, ns)
	create(t, env, csv)

	failed := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonTooManyOperatorGroups)
	if failed.Status.Message != groups.MessageTooManyOperatorGroups {
		t.Errorf("message = %q, want %q", failed.Status.Message, groups.MessageTooManyOperatorGroups)
	}
	// The metric is set after the status write the test just saw.
	eventually(t, "csv_abnormal{Failed,TooManyOperatorGroups}", func() error {
		if v := testutil.ToFloat64(metrics.CSVAbnormal.WithLabelValues(ns, csv.Name, "0.9.4", "Failed", "TooManyOperatorGroups")); v != 1 {
			return fmt.Errorf("= %v, want 1", v)
		}
		return nil
	})
	assertNoDeployments(t, env, ns)

	deleteAndWait(t, env, second)
	eventually(t, "recovery through Pending", func() error {
		got := getCSV(t, env, ns, csv.Name)
		for _, c := range got.Status.Conditions {
			if c.Phase == v1alpha1.CSVPhasePending && c.Message == groups.MessageRecoveredInstallModes {
				return nil
			}
		}
		return fmt.Errorf("no Pending condition %q in %+v", groups.MessageRecoveredInstallModes, got.Status.Conditions)
	})
	waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	eventually(t, "csv_abnormal series", func() error {
		if series := abnormalSeries(t, ns, csv.Name); len(series) != 1 || series[0] != "Installing/InstallWaiting" {
			return fmt.Errorf("%v, want only Installing/InstallWaiting", series)
		}
		return nil
	})
}

// TestUnsupportedOperatorGroup: etcd supports OwnNamespace and SingleNamespace only; in a global
// group it fails with UnsupportedOperatorGroup and OLM's message, and recovers when the group
// targets its own namespace.
func TestUnsupportedOperatorGroup(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "unsupported")
	og := operatorGroup(t, env, ns, "global")
	csv := loadCSV(t, dir, ns)
	create(t, env, csv)

	failed := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonUnsupportedOperatorGroup)
	const want = "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"
	if failed.Status.Message != want {
		t.Errorf("message = %q, want %q", failed.Status.Message, want)
	}
	if failed.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] != "" {
		t.Errorf("olm.targetNamespaces = %q, want \"\" (all namespaces)", failed.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey])
	}
	if copies := listCopies(t, env, ns, csv.Name); len(copies) != 0 {
		t.Errorf("a csv that fails UnsupportedOperatorGroup was copied to %d namespaces", len(copies))
	}
	assertNoDeployments(t, env, ns)

	eventually(t, "group retargeted", func() error {
		current := &operatorsv1.OperatorGroup{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(og), current); err != nil {
			return err
		}
		current.Spec.TargetNamespaces = []string{ns}
		return env.Client.Update(ctx, current)
	})
	waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	got := getCSV(t, env, ns, csv.Name)
	if got.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] != ns {
		t.Errorf("olm.targetNamespaces = %q, want %q", got.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey], ns)
	}
	recovered := false
	for _, c := range got.Status.Conditions {
		recovered = recovered || (c.Phase == v1alpha1.CSVPhasePending && c.Message == groups.MessageRecoveredInstallModes)
	}
	if !recovered {
		t.Errorf("no Pending %q in the history: %+v", groups.MessageRecoveredInstallModes, got.Status.Conditions)
	}
}

// assertNoDeployments fails when the namespace holds a deployment.
func assertNoDeployments(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	var list appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d deployments in %s, want none", len(list.Items), ns)
	}
}
