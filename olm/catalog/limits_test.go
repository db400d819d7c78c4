package catalog

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// TestHostileInputIsRefused: every reader of a catalog refuses, with safeyaml.ErrLimit
// and where it can the line, a document whose aliases expand too far, an anchor holding
// itself and a document over the size limit, before any decoder builds values from it.
// Under a memory ceiling, so that a regression fails instead of exhausting the machine.
func TestHostileInputIsRefused(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	bomb := yamltest.Laughs(9)
	huge := "a: " + strings.Repeat("x", int(safeyaml.DefaultMaxDocumentBytes)) + "\n"
	readers := map[string]func(data string) error{
		"package manifest": func(d string) error { _, err := ParsePackageManifest([]byte(d)); return err },
		"bundle annotations": func(d string) error {
			_, err := ParseBundleAnnotations([]byte(d))
			return err
		},
		"bundle dependencies": func(d string) error { _, err := ParseDependencies([]byte(d)); return err },
		"bundle properties":   func(d string) error { _, err := ParsePropertiesFile([]byte(d)); return err },
		"ConfigMap file":      func(d string) error { _, err := ReadConfigMap([]byte(d), "cm.yaml"); return err },
		"bundle manifests": func(d string) error {
			_, err := parseManifests([]byte(nsManifest+"---\n"+d), "manifests/x.yaml")
			return err
		},
	}
	inputs := map[string]string{"billion laughs": bomb, "anchor containing itself": yamltest.SelfAnchor, "document over 3 MiB": huge}
	for rname, read := range readers {
		for iname, in := range inputs {
			t.Run(rname+"/"+iname, func(t *testing.T) {
				if err := read(in); !errors.Is(err, safeyaml.ErrLimit) {
					t.Fatalf("err = %v, want safeyaml.ErrLimit", err)
				}
			})
		}
	}
	t.Run("bundle manifests name the line in the file", func(t *testing.T) {
		_, err := parseManifests([]byte(nsManifest+"---\n"+bomb), "manifests/x.yaml")
		var se *StreamError
		if !errors.As(err, &se) || se.Line != 5+yamltest.LaughsLine {
			t.Errorf("err = %v, want a StreamError at line %d", err, 5+yamltest.LaughsLine)
		}
	})
	t.Run("a ConfigMap's list value", func(t *testing.T) {
		c := LoadConfigMap(configMap("", bomb, "[]"))
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Message, "excessive aliasing") {
			t.Errorf("problems = %v, want one naming the aliasing of clusterServiceVersions", c.Problems)
		}
	})
	t.Run("an FBC JSON value over 3 MiB", func(t *testing.T) {
		big := `{"schema":"olm.package","name":"p","description":"` + strings.Repeat("x", int(safeyaml.DefaultMaxDocumentBytes)) + `"}`
		c := ReadFBC(strings.NewReader(etcdJSON+big+"\n"), "catalog.json")
		if len(c.Problems) != 1 || c.Problems[0].Origin.Line != 18 || !strings.Contains(c.Problems[0].Message, "JSON value of more than 3145728 bytes") {
			t.Errorf("problems = %v, want one at catalog.json:18 naming the limit", c.Problems)
		}
		if c.Package("etcd") == nil {
			t.Error("the values before the large one are lost")
		}
	})
	t.Run("an FBC folder of YAML", func(t *testing.T) {
		c, err := LoadFBC(fstest.MapFS{"c/p.yaml": {Data: []byte(bomb)}}, "c")
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Problems) != 1 || c.Problems[0].Origin.Line != yamltest.LaughsLine || !strings.Contains(c.Problems[0].Message, "excessive aliasing") {
			t.Errorf("problems = %v, want one at c/p.yaml:%d naming the aliasing", c.Problems, yamltest.LaughsLine)
		}
	})
}

const nsManifest = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n"
