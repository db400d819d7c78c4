package operators_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/olmsync/olmsync/api/operators"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// TestSchemaDifferences holds each row of docs/olm.md's "Where the schema differs from
// OLM's, on purpose": what a manifest from Git may hold that OLM's schema or Go types would
// refuse or rewrite, and that olmsync keeps as written.
func TestSchemaDifferences(t *testing.T) {
	const csv = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: etcd.v0.9.4, namespace: ns}
spec:
  version: v0.9
  install: {strategy: deployment}
  customresourcedefinitions:
    owned:
    - name: etcdclusters.etcd.database.coreos.com
      version: v1beta2
      kind: EtcdCluster
      resources:
      - {kind: Service, version: v1}
      specDescriptors:
      - path: size
        value: {min: 1, max: 7}
`
	d := decode(t, csv)
	got := d.Object.(*v1alpha1.ClusterServiceVersion)
	owned := got.Spec.CustomResourceDefinitions.Owned[0]

	t.Run("descriptor value is any JSON", func(t *testing.T) {
		if v := owned.SpecDescriptors[0].Value; v == nil || string(v.Raw) != `{"max":7,"min":1}` {
			t.Errorf("specDescriptors[0].value = %v, want the object as written", v)
		}
	})
	t.Run("resources name is optional", func(t *testing.T) {
		if r := owned.Resources[0]; r.Name != "" || r.Kind != "Service" {
			t.Errorf("resources[0] = %+v, want kind Service with no name", r)
		}
	})
	t.Run("spec.version kept as written", func(t *testing.T) {
		if got.Spec.Version != "v0.9" {
			t.Errorf("spec.version = %q, want v0.9 as written", got.Spec.Version)
		}
		v, err := got.Spec.Version.Semver()
		if err != nil || v.String() != "0.9.0" {
			t.Errorf("Semver() = %v, %v; want 0.9.0 as OLM parses it", v, err)
		}
		if out := encode(t, got); !strings.Contains(out, `"version":"v0.9"`) {
			t.Errorf("encoded CSV lost the version as written: %s", out)
		}
	})
	t.Run("status omitted when empty", func(t *testing.T) {
		if out := encode(t, got); strings.Contains(out, `"status"`) {
			t.Errorf("a CSV without status encodes one: %s", out)
		}
	})
	t.Run("registryPoll.interval kept as written", func(t *testing.T) {
		for _, c := range []struct {
			interval string
			want     time.Duration
			err      string
		}{
			{"45m", 45 * time.Minute, ""},
			{"soon", v1alpha1.DefaultRegistryPollDuration, "error parsing spec.updateStrategy.registryPoll.interval. Using the default value of 15m0s instead. Error: time: invalid duration \"soon\""},
		} {
			d := decode(t, `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: c, namespace: olm}
spec: {sourceType: grpc, image: quay.io/x/c:latest, updateStrategy: {registryPoll: {interval: `+c.interval+`}}}
`)
			cs := d.Object.(*v1alpha1.CatalogSource)
			if cs.Spec.UpdateStrategy.RegistryPoll.Interval != c.interval {
				t.Errorf("interval = %q, want %q as written", cs.Spec.UpdateStrategy.RegistryPoll.Interval, c.interval)
			}
			got, on, err := cs.PollInterval()
			if !on || got != c.want || errString(err) != c.err {
				t.Errorf("PollInterval(%q) = %v, %v, %q; want %v, true, %q", c.interval, got, on, errString(err), c.want, c.err)
			}
		}
	})
}

func decode(t *testing.T, manifest string) *operators.Decoded {
	t.Helper()
	d, err := operators.Decode([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.UnknownFields) > 0 {
		t.Fatalf("unknown fields: %v", d.UnknownFields)
	}
	return d
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
