package csv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestReplacement upgrades the real etcd 0.9.2 to 0.9.4 (which replaces it): the old CSV moves
// to Replacing while the new one installs over the same deployment, then to Deleting once the
// new one Succeeded, and is gone; csv_upgrade_count counts the upgrade (olm-behaviour 3.5).
func TestReplacement(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	ctx := context.Background()
	oldDir, newDir := bundleDir(t, "etcd", "0.9.2"), bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, oldDir)
	installCRDs(t, env, newDir)
	ns := newNamespace(t, env, "upgrade")
	operatorGroup(t, env, ns, "og", ns)
	old := installAndSucceed(t, env, loadCSV(t, oldDir, ns))
	upgrades := testutil.ToFloat64(metrics.CSVUpgradeCount)

	next := loadCSV(t, newDir, ns)
	if next.Spec.Replaces != old.Name {
		t.Fatalf("%s replaces %q, not %s", next.Name, next.Spec.Replaces, old.Name)
	}
	create(t, env, next)
	replacing := waitPhase(t, env, ns, old.Name, v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced)
	if want := "being replaced by csv: " + next.Name; replacing.Status.Message != want {
		t.Errorf("message = %q, want %q", replacing.Status.Message, want)
	}
	eventually(t, "csv_upgrade_count counts the upgrade", func() error { // set after the status write
		if got := testutil.ToFloat64(metrics.CSVUpgradeCount); got != upgrades+1 {
			return fmt.Errorf("csv_upgrade_count = %v, want %v", got, upgrades+1)
		}
		return nil
	})

	waitPhase(t, env, ns, next.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	newCSV := getCSV(t, env, ns, next.Name)
	eventually(t, "deployment taken over by the new csv", func() error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-operator"}, d); err != nil {
			return err
		}
		if len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != newCSV.UID || d.Labels["olm.owner"] != next.Name {
			return fmt.Errorf("owners %+v, labels %v", d.OwnerReferences, d.Labels)
		}
		return nil
	})
	sa := &corev1.ServiceAccount{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-operator"}, sa); err != nil {
		t.Fatal(err)
	}
	if len(sa.OwnerReferences) != 2 {
		t.Errorf("service account owners %+v, want both csvs of the chain", sa.OwnerReferences)
	}
	if getCSV(t, env, ns, old.Name).Status.Phase != v1alpha1.CSVPhaseReplacing {
		t.Error("the old csv left Replacing before the new one succeeded")
	}

	markAvailable(t, env, ns, "etcd-operator")
	waitPhase(t, env, ns, next.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	deleteAndWaitGone(t, env, old)
	eventually(t, "Replaced event of the old csv", func() error {
		return eventWith(env, ns, old.Name, "Replaced", "has been replaced by a newer ClusterServiceVersion that has successfully installed.")
	})
	if got := testutil.ToFloat64(metrics.CSVUpgradeCount); got != upgrades+1 {
		t.Errorf("csv_upgrade_count = %v after the upgrade, want %v", got, upgrades+1)
	}
}

// deleteAndWaitGone waits until the controllers have deleted a CSV themselves.
func deleteAndWaitGone(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion) {
	t.Helper()
	eventually(t, "csv "+csv.Name+" gone", func() error {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(csv), &v1alpha1.ClusterServiceVersion{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
}

// eventWith finds an Event about the object with the reason and message.
func eventWith(env *testenv.Env, namespace, name, reason, message string) error {
	var list corev1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason && e.Message == message {
			return nil
		}
	}
	return fmt.Errorf("no event %s %q about %s", reason, message, name)
}

// TestRestartMidInstall stops the manager while a CSV is Installing, lets its deployment become
// available meanwhile, and starts a new manager: the install finishes with one deployment, one
// set of RBAC and a history without failures.
func TestRestartMidInstall(t *testing.T) {
	env := testenv.Get(t)
	first := startManager(t, env, olm.Options{})
	ctx := context.Background()
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "restart")
	operatorGroup(t, env, ns, "og", ns)
	csv := loadCSV(t, dir, ns)
	create(t, env, csv)
	waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)

	first.shutdown()
	markAvailable(t, env, ns, "etcd-operator")
	if got := getCSV(t, env, ns, csv.Name); got.Status.Phase != v1alpha1.CSVPhaseInstalling {
		t.Fatalf("csv moved to %s with no manager running", got.Status.Phase)
	}
	startManager(t, env, olm.Options{})
	got := waitPhase(t, env, ns, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)

	var phases []string
	for _, c := range got.Status.Conditions {
		phases = append(phases, string(c.Phase))
		if c.Phase == v1alpha1.CSVPhaseFailed {
			t.Errorf("history has a failure: %+v", c)
		}
	}
	if strings.Count(strings.Join(phases, ","), "InstallReady") != 1 {
		t.Errorf("history %v: want exactly one InstallReady (the install ran once)", phases)
	}
	var deployments appsv1.DeploymentList
	if err := env.Client.List(ctx, &deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(deployments.Items) != 1 {
		t.Errorf("%d deployments, want 1", len(deployments.Items))
	}
	var sas corev1.ServiceAccountList
	if err := env.Client.List(ctx, &sas, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(sas.Items) != 1 || len(sas.Items[0].OwnerReferences) != 1 {
		t.Errorf("service accounts %d (owners %v), want one owned once", len(sas.Items), sas.Items)
	}
}

// TestMinKubeVersion checks minKubeVersion against the real API server's version (v1.36.x): a
// CSV needing a newer Kubernetes waits in Pending with OLM's requirement message; one that
// runs on this version installs.
func TestMinKubeVersion(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, olm.Options{})
	server, err := env.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(server, "v1.36.") {
		t.Fatalf("server version %s; the envtest apiserver must report v1.36.x", server)
	}
	dir := bundleDir(t, "etcd", "0.9.4")
	installCRDs(t, env, dir)

	tests := []struct {
		minKubeVersion string
		phase          v1alpha1.ClusterServiceVersionPhase
		reason         v1alpha1.ConditionReason
		status         v1alpha1.StatusReason
		message        string
	}{
		{"1.99.0", v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, v1alpha1.RequirementStatusReasonPresentNotSatisfied,
			"CSV version requirement not met: minKubeVersion (1.99.0) > server version (" + strings.TrimPrefix(server, "v") + ")"},
		{"1.19.0", v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, v1alpha1.RequirementStatusReasonPresent,
			"CSV minKubeVersion (1.19.0) less than server version (" + server + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.minKubeVersion, func(t *testing.T) {
			ns := newNamespace(t, env, "minkube")
			operatorGroup(t, env, ns, "og", ns)
			csv := loadCSV(t, dir, ns)
			csv.Spec.MinKubeVersion = tt.minKubeVersion
			create(t, env, csv)
			got := waitPhase(t, env, ns, csv.Name, tt.phase, tt.reason)
			if tt.phase == v1alpha1.CSVPhasePending && got.Status.Message != "one or more requirements couldn't be found" {
				t.Errorf("message = %q", got.Status.Message)
			}
			found := false
			for _, r := range got.Status.RequirementStatus {
				if r.Kind == "ClusterServiceVersion" && r.Name == csv.Name {
					found = true
					if r.Status != tt.status || r.Message != tt.message || r.Group != "operators.coreos.com" || r.Version != "v1alpha1" {
						t.Errorf("requirement %+v, want status %s message %q", r, tt.status, tt.message)
					}
				}
			}
			if !found {
				t.Errorf("no minKubeVersion requirement in %+v", got.Status.RequirementStatus)
			}
		})
	}
}

// TestLeaderElection starts two managers: only one is elected and acts, and the other takes
// over once the first stops.
func TestLeaderElection(t *testing.T) {
	env := testenv.Get(t)
	first := startManager(t, env, olm.Options{})
	standby := startManagerUnelected(t, env)
	select {
	case <-standby.Elected():
		t.Fatal("a second manager was elected while the first holds the lease")
	case <-time.After(3 * time.Second):
	}
	first.shutdown()
	select {
	case <-standby.Elected():
	case <-time.After(waitTimeout):
		t.Fatal("the standby manager did not take over the lease")
	}
}
