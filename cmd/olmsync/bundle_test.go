package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
)

func communityBundle(t *testing.T, rel string) string {
	t.Helper()
	return shareddata.Path(t, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", rel))
}

// TestBundleInspectFolder: the real mercury-operator bundle, as text and as JSON: its
// CRDs, the dependencies that bring camel-k and strimzi, its namespaced and cluster-wide
// rules told apart, its image.
func TestBundleInspectFolder(t *testing.T) {
	dir := communityBundle(t, "mercury-operator/1.0.2")
	out, err := run(t, "bundle", "inspect", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"mercury-operator.v1.0.2 (Mercury Operator)\n",
		"  install modes: OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces\n",
		"    servicedomains.mercury.redhat.io (ServiceDomain) v1alpha1*\n",
		"  required CRDs:\n    integrations.camel.apache.org\n",
		"    namespaced, service account mercury-operator:\n      get configmaps (core)\n",
		"    CLUSTER-WIDE, service account mercury-operator:\n",
		"    package camel-k, versions 1.9.0\n",
		"    API Kafka.v1beta2.kafka.strimzi.io\n",
		"  images:\n    quay.io/ecosystem-appeng/mercury-operator:v1.0.2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	out, err = run(t, "bundle", "inspect", dir, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var s catalog.BundleSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.CSV != "mercury-operator.v1.0.2" || s.Package != "mercury-operator" || len(s.OwnedCRDs) != 2 || len(s.RequiredCRDs) != 4 ||
		!s.ClusterWide() || len(s.Dependencies) != 6 || s.Source == nil || s.Source.Ref != dir {
		t.Errorf("json summary %+v", s)
	}
}

// TestBundleInspectImage: the etcd bundle pushed as an image to a registry on loopback
// (plain HTTP, so --insecure), inspected by tag; a corrupt image is an error, not a summary.
func TestBundleInspectImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/bundles/etcd:v0.9.4"
	if err := crane.Push(ocitest.BundleImage(t, communityBundle(t, "etcd/0.9.4"), nil), ref); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "bundle", "inspect", ref, "--insecure", "--cache-dir", t.TempDir(), "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var s catalog.BundleSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.CSV != "etcdoperator.v0.9.4" || len(s.OwnedCRDs) != 3 || s.Source == nil || !strings.HasPrefix(s.Source.Digest, "sha256:") ||
		len(s.Images) != 1 || !strings.HasPrefix(s.Images[0], "quay.io/coreos/etcd-operator@sha256:") || s.ClusterWide() {
		t.Errorf("json summary %+v", s)
	}
	if out, err := run(t, "bundle", "inspect", ref); err == nil || !strings.Contains(out, "plain HTTP") {
		t.Errorf("without --insecure: %v\n%s", err, out)
	}

	notBundle := host + "/bundles/empty:v1"
	img := ocitest.Files(t, map[string][]byte{"README": []byte("not a bundle")}, nil)
	if err := crane.Push(img, notBundle); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "bundle", "inspect", notBundle, "--insecure", "--cache-dir", ""); err == nil || exitCode(err) != 2 || !strings.Contains(out, "annotations") {
		t.Errorf("an image that is no bundle: %v (exit %d)\n%s", err, exitCode(err), out)
	}
}

// TestBundleInspectWebhooks: cert-manager's real bundle says the webhooks OLM registers for
// it, cluster-wide (an AllNamespaces-only operator), in text and JSON; mercury's has none.
func TestBundleInspectWebhooks(t *testing.T) {
	dir := communityBundle(t, "cert-manager/1.14.2")
	out, err := run(t, "bundle", "inspect", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "  webhooks:\n" +
		"    CLUSTER-WIDE validating webhook validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE,UPDATE cert-manager.io/v1,acme.cert-manager.io/v1 */*\n" +
		"    CLUSTER-WIDE mutating webhook mutate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE cert-manager.io/v1 certificaterequests\n" +
		"  API services: none\n"
	if !strings.Contains(out, want) {
		t.Errorf("text output lacks %q:\n%s", want, out)
	}
	out, err = run(t, "bundle", "inspect", dir, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var s catalog.BundleSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(s.Webhooks) != 2 || s.Webhooks[0].Type != "ValidatingAdmissionWebhook" || !s.Webhooks[0].ClusterWide || s.Webhooks[0].FailurePolicy != "Fail" ||
		s.Webhooks[1].Rules[0] != "CREATE cert-manager.io/v1 certificaterequests" || s.APIServices == nil {
		t.Errorf("json webhooks %+v, api services %+v", s.Webhooks, s.APIServices)
	}
	out, err = run(t, "bundle", "inspect", communityBundle(t, "mercury-operator/1.0.2"))
	if err != nil || !strings.Contains(out, "  webhooks: none\n") {
		t.Errorf("mercury: %v\n%s", err, out)
	}
}
