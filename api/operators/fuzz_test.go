package operators_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/olmsync/olmsync/api/operators"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// FuzzDecode: Decode never panics on any manifest, and what it decodes encodes to JSON
// that decodes again to the same kind with no field lost (every unknown field was
// reported the first time and is not in the object). Seeded with the shared data's real
// OLM manifests.
func FuzzDecode(f *testing.F) {
	for _, file := range shareddata.Files(f, "data/manifests", shareddata.HasExt(".yaml", ".yml"), 0) {
		if len(file.Data) <= 32<<10 {
			f.Add(file.Data)
		}
	}
	for _, seed := range []string{
		"apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: s}\nspec: {name: etcd, startingCSV: x, config: {env: [{name: A}]}}\n",
		"apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og}\nspec: {selector: {matchLabels: {a: b}}, upgradeStrategy: {name: Default}}\n",
		"{\"apiVersion\": \"operators.coreos.com/v1alpha1\", \"kind\": \"CatalogSource\", \"spec\": {\"updateStrategy\": {\"registryPoll\": {\"interval\": \"10x\"}}}}",
		"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nspec: {version: 1.0.0-rc.1, minKubeVersion: 1.2, install: {strategy: deployment}}\n",
		yamltest.Laughs(9), yamltest.SelfAnchor,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, manifest []byte) {
		d, err := operators.Decode(manifest)
		if err != nil {
			return
		}
		data, err := json.Marshal(d.Object)
		if err != nil {
			t.Fatalf("encode a decoded %s: %v", d.GVK.Kind, err)
		}
		again, err := operators.Decode(data)
		if errors.Is(err, operators.ErrNotOLMKind) || err != nil {
			t.Fatalf("decode an encoded %s: %v\n%s", d.GVK.Kind, err, data)
		}
		if again.GVK != d.GVK || len(again.UnknownFields) > 0 {
			t.Fatalf("round trip: %s with unknown fields %v, want %s with none\n%s", again.GVK, again.UnknownFields, d.GVK, data)
		}
	})
}
