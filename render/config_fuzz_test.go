package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzParseConfig feeds olmsync.yaml parser arbitrary input. It must never panic; every
// failure must be a *ConfigError naming the file; and a config it accepts must encode and
// parse back to the same config.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"",
		"apps:\n- name: a\n  path: a\n  clusterScope: true\n",
		"policy:\n  operatorGroups: []\n  metaOperators: [x]\n",
		"waivers:\n- rule: OP006\n  object: {kind: Subscription, name: s}\n  reason: r\n  expires: 2026-12-31\n",
		"catalogs:\n- {name: c, namespace: n, source: s}\n",
		"apps:\n- name: a\n  path: a\n- name: a\n  path: b\n",
		"a: &x [1]\nb: *x\n",
		"policy: {rules: [../x]}\n",
		"{apps: [{name: a, path: '.'}]}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("olmsync.yaml", data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is a %T, want *ConfigError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "olmsync.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("encode accepted config: %v", err)
		}
		again, err := ParseConfig("olmsync.yaml", out)
		if err != nil {
			t.Fatalf("re-parse of\n%s\nfailed: %v", out, err)
		}
		// Where a waiver or catalog is written moves when the file is written again.
		ignoreLines := cmp.Options{cmpopts.IgnoreFields(Waiver{}, "Line"), cmpopts.IgnoreFields(Catalog{}, "Line")}
		if diff := cmp.Diff(c, again, ignoreLines); diff != "" {
			t.Fatalf("round trip changed the config (-first +second):\n%s\nencoded:\n%s", diff, out)
		}
	})
}
