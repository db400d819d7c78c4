package operators_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/api/operators"
	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// TestDecodeRefusesHostileYAML: a manifest whose aliases expand too far, whose anchor
// holds itself, or over the document limit is refused before it is decoded, naming the
// line.
func TestDecodeRefusesHostileYAML(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	sub := "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: s\n"
	for name, tt := range map[string]struct {
		manifest, msg string
	}{
		"billion laughs": {strings.Replace(yamltest.Laughs(9), "apiVersion: v1\nkind: ConfigMap", "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription", 1),
			"line 9: document contains excessive aliasing"},
		"anchor containing itself": {sub + "spec: &s\n  config: *s\n", "line 5: anchor 's' value contains itself"},
		"over 3 MiB":               {sub + "spec:\n  channel: " + strings.Repeat("x", 3<<20) + "\n", "YAML document of"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := operators.Decode([]byte(tt.manifest))
			if !errors.Is(err, safeyaml.ErrLimit) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Decode: %v, want safeyaml.ErrLimit saying %q", err, tt.msg)
			}
		})
	}
}
