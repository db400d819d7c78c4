package olm_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/internal/testenv"
	_ "github.com/olmsync/olmsync/reconcile/olm" // its init: CRDs as protobuf
)

// TestCRDsTravelAsProtobuf: a client of a process that links the controllers reads and
// writes CRDs as protobuf, as it does the built-in kinds, and OLM's custom resources as
// JSON, the only encoding the API server has for them — each as the API server answered.
func TestCRDsTravelAsProtobuf(t *testing.T) {
	env := testenv.Get(t)
	var mu sync.Mutex
	answered := map[string]string{} // path -> Content-Type of the answer
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				mu.Lock()
				answered[r.Method+" "+r.URL.Path] = resp.Header.Get("Content-Type")
				mu.Unlock()
			}
			return resp, err
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "subscriptions.operators.coreos.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Names.Kind != "Subscription" || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("the CRD read as protobuf lost its content: names %+v, %d versions", crd.Spec.Names, len(crd.Spec.Versions))
	}
	var subs operatorsv1alpha1.SubscriptionList
	if err := c.List(ctx, &subs); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]string{
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/subscriptions.operators.coreos.com": runtime.ContentTypeProtobuf,
		"GET /apis/operators.coreos.com/v1alpha1/subscriptions":                                          runtime.ContentTypeJSON,
	} {
		if got := answered[path]; got != want {
			t.Errorf("%s answered as %q, want %q (all: %v)", path, got, want, answered)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkCRDDecode decodes a real CRD (Strimzi's Kafka, from ../shared) as the
// controllers' CRD informer does each watch event, and their client each answer: JSON, as
// before CRDs travelled as protobuf, and protobuf.
func BenchmarkCRDDecode(b *testing.B) {
	data, err := os.ReadFile(shareddata.Path(b, "data/catalogs/community-operators-bundles/operators/strimzi-kafka-operator/0.28.0/manifests/kafkas.kafka.strimzi.io.crd.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		b.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(kube.Scheme())
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			b.Fatalf("no serializer for %s", mediaType)
		}
		var buf bytes.Buffer
		if err := info.Serializer.Encode(crd, &buf); err != nil {
			b.Fatal(err)
		}
		encoded := buf.Bytes()
		b.Run(mediaType, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(encoded)))
			for b.Loop() {
				into := &apiextensionsv1.CustomResourceDefinition{}
				if _, _, err := info.Serializer.Decode(encoded, nil, into); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
