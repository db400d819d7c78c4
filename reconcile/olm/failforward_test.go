package olm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// TestFailForward is OLM's fail-forward (issue 16, item 4; OLM's resolver/fail_forward.go and
// TestResolver's FailForward cases): widget 1.0.0 is installed, the upgrade to 1.1.0 fails
// (its Deployment never becomes ready: ProgressDeadlineExceeded), and then the catalog gets
// 1.2.0, which replaces the failed 1.1.0.
//
//   - Default: the Failed CSV stays; resolution fails as OLM's does, because the Replacing
//     1.0.0 is referenced by no Subscription, and no 1.2.0 CSV is made.
//   - TechPreviewUnsafeFailForward: the Replacing 1.0.0 whose chain ends in the Failed 1.1.0
//     is hidden from resolution, 1.2.0 is installed over the Failed CSV (which moves to
//     Replacing with OLM's message) and Succeeds.
func TestFailForward(t *testing.T) {
	for _, strategy := range []operatorsv1.UpgradeStrategy{operatorsv1.UpgradeStrategyDefault, operatorsv1.UpgradeStrategyUnsafeFailForward} {
		t.Run(string(strategy), func(t *testing.T) {
			env := testenv.Get(t)
			ctx := context.Background()
			ns := olmtest.NewNamespace(t, env, "failforward")
			olmtest.Create(t, env, &operatorsv1.OperatorGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
				Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}, UpgradeStrategy: strategy},
			})
			olmtest.StartManager(t, env, olm.Options{})
			kctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			broken := func(d *appsv1.Deployment) bool {
				return len(d.Spec.Template.Spec.Containers) > 0 && strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":1.1.0")
			}
			go func() { olmtest.KeepDeployments(kctx, env.Client, broken, ns); close(done) }()
			t.Cleanup(func() { cancel(); <-done })

			api := olmtest.API{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}
			v100 := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{api}}
			v110 := olmtest.Bundle{Package: "widget", Version: "1.1.0", Replaces: "widget.v1.0.0", Owns: []olmtest.API{api}}
			v120 := olmtest.Bundle{Package: "widget", Version: "1.2.0", Replaces: "widget.v1.1.0", Owns: []olmtest.API{api}}
			olmtest.ConfigMapCatalog(t, env, ns, "cat", v100)
			subscribe(t, env, ns, "widget", "widget", "stable", "cat", "")
			waitCSV(t, env, ns, "widget.v1.0.0", v1alpha1.CSVPhaseSucceeded)

			olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110)
			waitCSV(t, env, ns, "widget.v1.1.0", v1alpha1.CSVPhaseFailed)
			waitCSV(t, env, ns, "widget.v1.0.0", v1alpha1.CSVPhaseReplacing)

			olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110, v120)
			if strategy == operatorsv1.UpgradeStrategyDefault {
				sub := &v1alpha1.Subscription{}
				olmtest.Eventually(t, "resolution fails once it sees 1.2.0", func() error {
					if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget"}, sub); err != nil {
						return err
					}
					for _, c := range sub.Status.Conditions {
						if c.Type == v1alpha1.SubscriptionResolutionFailed && c.Status == corev1.ConditionTrue &&
							c.Reason == v1alpha1.ConstraintsNotSatisfiable && strings.Contains(c.Message, "widget.v1.2.0") {
							return nil
						}
					}
					return fmt.Errorf("conditions %+v", sub.Status.Conditions)
				})
				msg := ""
				for _, c := range sub.Status.Conditions {
					if c.Type == v1alpha1.SubscriptionResolutionFailed {
						msg = c.Message
					}
				}
				if want := "clusterserviceversion widget.v1.0.0 exists and is not referenced by a subscription"; !strings.Contains(msg, want) {
					t.Errorf("ResolutionFailed message %q does not say %q", msg, want)
				}
				csv := &v1alpha1.ClusterServiceVersion{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.2.0"}, csv); err == nil {
					t.Errorf("widget.v1.2.0 was created under the Default strategy (%s)", csv.Status.Phase)
				}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.1.0"}, csv); err != nil || csv.Status.Phase != v1alpha1.CSVPhaseFailed {
					t.Errorf("widget.v1.1.0: %v %s", err, csv.Status.Phase)
				}
				return
			}
			replaced := waitCSV(t, env, ns, "widget.v1.1.0", v1alpha1.CSVPhaseReplacing)
			if want := "Fail Forward is enabled, allowing Failed csv to be replaced by csv: widget.v1.2.0"; replaced.Status.Message != want {
				t.Errorf("1.1.0 Replacing with %q, want OLM's %q", replaced.Status.Message, want)
			}
			waitCSV(t, env, ns, "widget.v1.2.0", v1alpha1.CSVPhaseSucceeded)
			olmtest.Eventually(t, "subscription at 1.2.0", func() error {
				sub := &v1alpha1.Subscription{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget"}, sub); err != nil {
					return err
				}
				if sub.Status.InstalledCSV != "widget.v1.2.0" || sub.Status.State != v1alpha1.SubscriptionStateAtLatest {
					return fmt.Errorf("installed %q state %q conditions %+v", sub.Status.InstalledCSV, sub.Status.State, sub.Status.Conditions)
				}
				return nil
			})
		})
	}
}
