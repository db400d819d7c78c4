package olm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

func operatorsDir(tb testing.TB, pkg string) string {
	tb.Helper()
	return shareddata.Path(tb, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", pkg))
}

// imageCatalog creates a grpc CatalogSource of the image in ns and waits until it is READY.
func imageCatalog(t *testing.T, env *testenv.Env, ns, name, image string, secrets ...string) {
	t.Helper()
	olmtest.ImageCatalog(t, env, ns, name, image, secrets...)
}

func subscribe(t *testing.T, env *testenv.Env, ns, name, pkg, channel, source, startingCSV string) {
	t.Helper()
	olmtest.Create(t, env, &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.SubscriptionSpec{
			Package: pkg, Channel: channel, CatalogSource: source, CatalogSourceNamespace: ns, StartingCSV: startingCSV,
		},
	})
}

func waitCSV(t *testing.T, env *testenv.Env, ns, name string, phase v1alpha1.ClusterServiceVersionPhase) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	olmtest.Eventually(t, fmt.Sprintf("csv %s %s", name, phase), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != phase {
			return fmt.Errorf("phase %s (%s: %s)", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
		}
		return nil
	})
	return csv
}

func plans(t *testing.T, env *testenv.Env, ns string) []v1alpha1.InstallPlan {
	t.Helper()
	var list v1alpha1.InstallPlanList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.InstallPlan) int { return a.Spec.Generation - b.Spec.Generation })
	return list.Items
}

// TestInstallFromBundleImages is issue 13's install: a catalog image whose FBC lists the real
// community bundles by image only. A Subscription to etcd installs etcdoperator.v0.9.2 (its
// startingCSV) from the unpacked bundle image — the plan's bundle lookup unpacked, its steps
// naming the image by digest, the CRDs established, the CSV Succeeded — and the next bundle
// of the channel, v0.9.4, upgrades it through replaces. A Subscription to mercury-operator
// brings its dependencies, unpacked and installed with it: camel-k (olm.package) and strimzi
// (olm.package, and the olm.gvk APIs mercury requires).
func TestInstallFromBundleImages(t *testing.T) {
	env := testenv.Get(t)
	reg := olmtest.ServeRegistry(t)
	bc := reg.PushBundleCatalog(t, "catalogs/community:1", olmtest.BundleCatalogOptions{RepoPrefix: "bundles/"},
		operatorsDir(t, "etcd"), operatorsDir(t, "mercury-operator"), operatorsDir(t, "camel-k"), operatorsDir(t, "strimzi-kafka-operator"))
	olmtest.StartManager(t, env, olm.Options{CatalogImages: reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := olmtest.NewNamespace(t, env, "bundles")
	olmtest.OwnGroup(t, env, ns)
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	imageCatalog(t, env, ns, "community", bc.Ref)

	subscribe(t, env, ns, "etcd", "etcd", "singlenamespace-alpha", "community", "etcdoperator.v0.9.2")
	waitCSV(t, env, ns, "etcdoperator.v0.9.4", v1alpha1.CSVPhaseSucceeded)
	olmtest.Eventually(t, "etcd subscription at v0.9.4", func() error {
		s := &v1alpha1.Subscription{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd"}, s); err != nil {
			return err
		}
		if s.Status.State != v1alpha1.SubscriptionStateAtLatest || s.Status.InstalledCSV != "etcdoperator.v0.9.4" {
			return fmt.Errorf("state %s, installed %q, conditions %+v", s.Status.State, s.Status.InstalledCSV, s.Status.Conditions)
		}
		for _, c := range s.Status.Conditions {
			if c.Type == v1alpha1.SubscriptionBundleUnpacking || c.Type == v1alpha1.SubscriptionBundleUnpackFailed {
				return fmt.Errorf("condition %s left: %+v", c.Type, c)
			}
		}
		return nil
	})
	ps := plans(t, env, ns)
	if len(ps) != 2 {
		t.Fatalf("%d plans, want the install of v0.9.2 and the upgrade to v0.9.4", len(ps))
	}
	for i, csv := range []string{"etcdoperator.v0.9.2", "etcdoperator.v0.9.4"} {
		ip := ps[i]
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseComplete || len(ip.Status.BundleLookups) != 1 || ip.Status.BundleLookups[0].Identifier != csv {
			t.Fatalf("plan %s: phase %s, lookups %+v; want Complete with the lookup of %s", ip.Name, ip.Status.Phase, ip.Status.BundleLookups, csv)
		}
		if l := ip.Status.BundleLookups[0]; len(l.Conditions) != 0 || l.Path != bc.Images[csv] {
			t.Errorf("plan %s: lookup %+v; want path %s and its conditions gone once unpacked", ip.Name, l, bc.Images[csv])
		}
		var kinds []string
		for _, s := range ip.Status.Plan {
			ref, ok := resolve.ParseBundleImageReference(s.Resource.Manifest)
			if !ok || ref.Image != bc.Images[csv] || !strings.Contains(ref.Image, "@sha256:") {
				t.Errorf("plan %s: step %s %s manifest %.120s; want a reference to %s", ip.Name, s.Resource.Kind, s.Resource.Name, s.Resource.Manifest, bc.Images[csv])
			}
			kinds = append(kinds, s.Resource.Kind)
		}
		if got := strings.Join(kinds, ","); !strings.HasPrefix(got, "ClusterServiceVersion,CustomResourceDefinition,CustomResourceDefinition,CustomResourceDefinition,") {
			t.Errorf("plan %s steps %s: want the CSV, then the three CRDs, then the rest", ip.Name, got)
		}
	}
	upgraded := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcdoperator.v0.9.4"}, upgraded); err != nil {
		t.Fatal(err)
	}
	if upgraded.Spec.Replaces != "etcdoperator.v0.9.2" {
		t.Errorf("v0.9.4 replaces %q, want etcdoperator.v0.9.2", upgraded.Spec.Replaces)
	}
	for _, name := range []string{"etcdclusters.etcd.database.coreos.com", "etcdbackups.etcd.database.coreos.com", "etcdrestores.etcd.database.coreos.com"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if !established(crd) {
			t.Errorf("crd %s is not established: %+v", name, crd.Status.Conditions)
		}
	}

	subscribe(t, env, ns, "mercury", "mercury-operator", "stable", "community", "")
	for _, csv := range []string{"mercury-operator.v1.0.2", "camel-k-operator.v1.9.0", "strimzi-cluster-operator.v0.28.0"} {
		waitCSV(t, env, ns, csv, v1alpha1.CSVPhaseSucceeded)
	}
	var subs v1alpha1.SubscriptionList
	if err := env.Client.List(ctx, &subs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	generated := 0
	for _, s := range subs.Items {
		if s.Annotations[installplan.GeneratedByAnnotation] != "" {
			generated++
		}
	}
	if generated != 2 {
		t.Errorf("%d generated subscriptions, want camel-k's and strimzi's", generated)
	}
	last := plans(t, env, ns)
	mercury := last[len(last)-1]
	var lookups []string
	for _, l := range mercury.Status.BundleLookups {
		lookups = append(lookups, l.Identifier)
	}
	slices.Sort(lookups)
	if got := strings.Join(lookups, ","); got != "camel-k-operator.v1.9.0,mercury-operator.v1.0.2,strimzi-cluster-operator.v0.28.0" {
		t.Errorf("mercury's plan unpacked %s; want mercury and both dependencies", got)
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// timeoutGroup makes the OperatorGroup "og" of ns targeting ns, with OLM's bundle unpack
// timeout annotation.
func timeoutGroup(t *testing.T, env *testenv.Env, ns, timeout string) {
	t.Helper()
	olmtest.Create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og", Annotations: map[string]string{installplan.BundleUnpackTimeoutAnnotation: timeout}},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	})
}

// failedPlan waits for the namespace's one plan to fail and returns it with its Installed
// condition, after checking that nothing of the bundle was created: no step ran, no CSV,
// no ServiceAccount of the operator.
func failedPlan(t *testing.T, env *testenv.Env, ns string) (*v1alpha1.InstallPlan, *v1alpha1.InstallPlanCondition) {
	t.Helper()
	var ip v1alpha1.InstallPlan
	olmtest.Eventually(t, "plan Failed in "+ns, func() error {
		ps := plans(t, env, ns)
		if len(ps) != 1 {
			return fmt.Errorf("%d plans", len(ps))
		}
		ip = ps[0]
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseFailed {
			return fmt.Errorf("phase %s, lookups %+v", ip.Status.Phase, ip.Status.BundleLookups)
		}
		return nil
	})
	var installed *v1alpha1.InstallPlanCondition
	for i, c := range ip.Status.Conditions {
		if c.Type == v1alpha1.InstallPlanInstalled {
			installed = &ip.Status.Conditions[i]
		}
	}
	if installed == nil || installed.Status != corev1.ConditionFalse || installed.Reason != "InstallCheckFailed" {
		t.Fatalf("plan %s: Installed %+v, want False/InstallCheckFailed", ip.Name, installed)
	}
	for _, s := range ip.Status.Plan {
		if s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			t.Errorf("plan %s: step %s %s ran (%s)", ip.Name, s.Resource.Kind, s.Resource.Name, s.Status)
		}
	}
	var csvs v1alpha1.ClusterServiceVersionList
	var sas corev1.ServiceAccountList
	if err := env.Client.List(context.Background(), &csvs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(context.Background(), &sas, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, sa := range sas.Items {
		if sa.Name != "default" {
			t.Errorf("service account %s created by a plan that failed", sa.Name)
		}
	}
	if len(csvs.Items) > 0 {
		t.Errorf("%d CSVs created by a plan that failed", len(csvs.Items))
	}
	return &ip, installed
}

// unpackFailed waits for the Subscription's BundleUnpackFailed condition and returns its
// message.
func unpackFailed(t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	var msg string
	olmtest.Eventually(t, "subscription "+name+" BundleUnpackFailed", func() error {
		s := &v1alpha1.Subscription{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		for _, c := range s.Status.Conditions {
			if c.Type == v1alpha1.SubscriptionBundleUnpackFailed && c.Status == corev1.ConditionTrue && c.Reason == "BundleUnpackFailed" {
				msg = c.Message
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", s.Status.Conditions)
	})
	return msg
}

// TestBundleUnpackFailures: a bundle image that is missing, one with a corrupt layer, and
// one whose annotations name another package than the catalog's each fail the plan with
// OLM's Installed condition (InstallCheckFailed, "bundle unpacking failed. Reason: …, and
// Message: …") and the Subscription's BundleUnpackFailed, say what went wrong, and leave
// nothing installed. The missing image is retried until the OperatorGroup's unpack timeout,
// as OLM's Job would be (DeadlineExceeded); the two others cannot get better and fail at
// once (UnpackFailed).
func TestBundleUnpackFailures(t *testing.T) {
	env := testenv.Get(t)
	reg := olmtest.ServeRegistry(t)
	etcd := operatorsDir(t, "etcd")
	// Both broken images differ from the good one, so corrupting one blob breaks one image.
	corrupt := ocitest.BundleImage(t, filepath.Join(etcd, "0.9.2"), func(files map[string][]byte) {
		files["metadata/annotations.yaml"] = append(files["metadata/annotations.yaml"], "\n# corrupt\n"...)
	})
	corruptRef, _ := reg.Push(t, "broken/corrupt:v0.9.2", corrupt)
	reg.Corrupt(ocitest.LayerDigest(t, corrupt))
	otherPackage := ocitest.BundleImage(t, filepath.Join(etcd, "0.9.2"), func(files map[string][]byte) {
		files["metadata/annotations.yaml"] = []byte(strings.ReplaceAll(string(files["metadata/annotations.yaml"]),
			"operators.operatorframework.io.bundle.package.v1: etcd", "operators.operatorframework.io.bundle.package.v1: not-etcd"))
	})
	otherRef, _ := reg.Push(t, "broken/other:v0.9.2", otherPackage)
	missingRef := reg.Host + "/broken/missing@sha256:" + strings.Repeat("0", 64)
	olmtest.StartManager(t, env, olm.Options{CatalogImages: reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})})

	tests := []struct {
		name, image, timeout string
		// reason and message of the failed lookup; detail is in the plan's message and
		// the Subscription's.
		reason, message, detail string
	}{
		{"missing image", missingRef, "3s", "DeadlineExceeded", "Job was active longer than specified deadline", "NAME_UNKNOWN"},
		{"corrupt layer", corruptRef, "10m", "UnpackFailed", "", "sha256"},
		{"annotations disagree", otherRef, "10m", "UnpackFailed", "", "not-etcd"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bc := reg.PushBundleCatalog(t, fmt.Sprintf("catalogs/broken-%d:1", i), olmtest.BundleCatalogOptions{
				RepoPrefix: fmt.Sprintf("bundles-%d/", i),
				Edit: func(c *catalog.Catalog) {
					c.Package("etcd").Bundle("etcdoperator.v0.9.2").Image = tt.image
				},
			}, etcd)
			ns := olmtest.NewNamespace(t, env, "unpack-failure")
			timeoutGroup(t, env, ns, tt.timeout)
			imageCatalog(t, env, ns, "broken", bc.Ref)
			subscribe(t, env, ns, "etcd", "etcd", "singlenamespace-alpha", "broken", "etcdoperator.v0.9.2")

			ip, installed := failedPlan(t, env, ns)
			l, c := installplan.FailedLookup(ip.Status.BundleLookups)
			if l == nil || c.Reason != tt.reason || (tt.message != "" && c.Message != tt.message) {
				t.Fatalf("failed lookup %+v, condition %+v; want reason %s", l, c, tt.reason)
			}
			if l.Path != tt.image {
				t.Errorf("lookup path %s, want %s", l.Path, tt.image)
			}
			want := fmt.Sprintf("bundle unpacking failed. Reason: %s, and Message: %s", c.Reason, c.Message)
			if installed.Message != want {
				t.Errorf("Installed message %q, want %q", installed.Message, want)
			}
			if tt.reason == "DeadlineExceeded" && !strings.Contains(ip.Status.Message, tt.detail) {
				t.Errorf("plan message %q does not say what went wrong (%s)", ip.Status.Message, tt.detail)
			}
			if tt.reason == "UnpackFailed" && !strings.Contains(c.Message, tt.detail) {
				t.Errorf("lookup message %q does not say what went wrong (%s)", c.Message, tt.detail)
			}
			msg := unpackFailed(t, env, ns, "etcd")
			if !strings.HasPrefix(msg, want) || !strings.Contains(msg, tt.detail) {
				t.Errorf("subscription BundleUnpackFailed %q; want OLM's %q and %s", msg, want, tt.detail)
			}
		})
	}
}

// TestBundleImagePullSecret: bundle images in a repository behind basic auth. A
// CatalogSource naming no Secret gets its (public) catalog, but its bundle cannot be pulled:
// the plan fails with OLM's DeadlineExceeded after the OperatorGroup's unpack timeout,
// nothing installed, the registry's refusal on the plan and the Subscription. A
// CatalogSource whose catalog image is private too and that names a dockerconfigjson
// Secret (spec.secrets) loads its catalog and installs the bundle with those credentials;
// the password reaches no status.
func TestBundleImagePullSecret(t *testing.T) {
	env := testenv.Get(t)
	reg := olmtest.ServeRegistry(t)
	const user, password = "olmsync", "s3cret-pull-password"
	reg.Private("private/", user, password)
	etcd := operatorsDir(t, "etcd")
	public := reg.PushBundleCatalog(t, "catalogs/public:1", olmtest.BundleCatalogOptions{RepoPrefix: "private/bundles/"}, etcd)
	private := reg.PushBundleCatalog(t, "private/catalogs/etcd:1", olmtest.BundleCatalogOptions{RepoPrefix: "private/bundles/"}, etcd)
	olmtest.StartManager(t, env, olm.Options{CatalogImages: reg.ImageOptions(catalog.ImageOptions{
		CacheDir: t.TempDir(),
		// Not the docker config of whoever runs the tests.
		Keychain: authn.NewMultiKeychain(),
	})})

	t.Run("without the secret", func(t *testing.T) {
		ns := olmtest.NewNamespace(t, env, "pull-denied")
		timeoutGroup(t, env, ns, "3s")
		imageCatalog(t, env, ns, "public", public.Ref)
		subscribe(t, env, ns, "etcd", "etcd", "singlenamespace-alpha", "public", "etcdoperator.v0.9.2")
		ip, installed := failedPlan(t, env, ns)
		if want := "bundle unpacking failed. Reason: DeadlineExceeded, and Message: Job was active longer than specified deadline"; installed.Message != want {
			t.Errorf("Installed message %q, want %q", installed.Message, want)
		}
		if !strings.Contains(ip.Status.Message, "UNAUTHORIZED") {
			t.Errorf("plan message %q does not say the registry refused the pull", ip.Status.Message)
		}
		if msg := unpackFailed(t, env, ns, "etcd"); !strings.Contains(msg, "UNAUTHORIZED") {
			t.Errorf("subscription message %q does not say the registry refused the pull", msg)
		}
	})

	t.Run("with the secret", func(t *testing.T) {
		ns := olmtest.NewNamespace(t, env, "pull-secret")
		olmtest.OwnGroup(t, env, ns)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
		olmtest.Create(t, env, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: reg.DockerConfigJSON(user, password)},
		})
		imageCatalog(t, env, ns, "private", private.Ref, "registry")
		subscribe(t, env, ns, "etcd", "etcd", "singlenamespace-alpha", "private", "etcdoperator.v0.9.2")
		waitCSV(t, env, ns, "etcdoperator.v0.9.4", v1alpha1.CSVPhaseSucceeded)
		for _, ip := range plans(t, env, ns) {
			if ip.Status.Phase != v1alpha1.InstallPlanPhaseComplete {
				t.Errorf("plan %s: %s", ip.Name, ip.Status.Phase)
			}
			data, err := json.Marshal(ip.Status)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), password) {
				t.Errorf("plan %s: the password is in its status", ip.Name)
			}
		}
	})
	if reg.Unauthorized() == 0 {
		t.Error("the registry refused nothing: the repository is not private")
	}
}

// TestInstallCertManagerFromItsCatalog is issue 31's first report, end to end: a catalog image
// listing cert-manager's real bundles by image, a global OperatorGroup and a Subscription to
// its stable channel. The InstallPlan unpacks and installs cert-manager.v1.14.2 with the
// objects its bundle carries, and the CSV, whose webhooks OLM serves with certificates it
// makes, reaches Succeeded with its validating and mutating webhook configured (deployments
// marked available as the other tests do). Deleting the CSV takes its webhook
// configurations with it.
func TestInstallCertManagerFromItsCatalog(t *testing.T) {
	env := testenv.Get(t)
	reg := olmtest.ServeRegistry(t)
	bc := reg.PushBundleCatalog(t, "catalogs/cert-manager:1", olmtest.BundleCatalogOptions{RepoPrefix: "bundles/"}, operatorsDir(t, "cert-manager"))
	olmtest.StartManager(t, env, olm.Options{CatalogImages: reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := olmtest.NewNamespace(t, env, "cert-manager")
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "global"}}
	olmtest.Create(t, env, og)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), og) })
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	imageCatalog(t, env, ns, "community", bc.Ref)
	subscribe(t, env, ns, "cert-manager", "cert-manager", "stable", "community", "")
	csv := waitCSV(t, env, ns, "cert-manager.v1.14.2", v1alpha1.CSVPhaseSucceeded)
	owner := client.MatchingLabels{"olm.owner": csv.Name, "olm.owner.namespace": ns}
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	if err := env.Client.List(ctx, &validating, owner); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(ctx, &mutating, owner); err != nil {
		t.Fatal(err)
	}
	if len(validating.Items) != 1 || len(mutating.Items) != 1 ||
		validating.Items[0].Webhooks[0].Name != "validate.webhooks.cert-manager.io" || len(validating.Items[0].Webhooks[0].ClientConfig.CABundle) == 0 ||
		mutating.Items[0].Webhooks[0].Name != "mutate.webhooks.cert-manager.io" {
		t.Fatalf("webhook configurations: %d validating, %d mutating", len(validating.Items), len(mutating.Items))
	}
	// The bundle's own Service of the webhook stays beside OLM's.
	for _, name := range []string{"cert-manager-webhook", "cert-manager-webhook-service"} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{}); err != nil {
			t.Errorf("service %s: %v", name, err)
		}
	}
	// The Subscription goes first, so that no later manager of this test binary installs
	// cert-manager again.
	if err := env.Client.Delete(ctx, &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert-manager"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, csv); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the webhook configurations gone with the csv", func() error {
		if err := env.Client.List(ctx, &validating, owner); err != nil {
			return err
		}
		if err := env.Client.List(ctx, &mutating, owner); err != nil {
			return err
		}
		if n := len(validating.Items) + len(mutating.Items); n != 0 {
			return fmt.Errorf("%d left", n)
		}
		return nil
	})
}
