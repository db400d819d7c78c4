package check

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteApps(t *testing.T) {
	fs := passingRepo()
	fs["olmsync.yaml"] = `
apps:
- {name: cluster-scope, path: cluster-scope, cluster: cl1}
- {name: team-a, path: team-a, namespace: team-a, cluster: cl1}
- {name: "team-\x1b[31mb", path: team-a, namespace: team-b}
`
	d, err := Apps(t.Context(), writeRepo(t, fs), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteApps(&text, d, AppsText); err != nil {
		t.Fatal(err)
	}
	want := `3 apps in 2 clusters, listed in olmsync.yaml.

the default cluster (apps with no destination cluster)
  team-?[31mb
      path:      team-a
      namespace: team-b
      individual app: neither its path nor its name has a "cluster-scope" segment
      cluster:   default: olmsync.yaml gives it no cluster: it is in the default cluster with the other apps without one
      found:     olmsync.yaml:4: listed in olmsync.yaml as apps[2]

cluster "cl1"
  cluster-scope
      path:      cluster-scope
      cluster-scope app: its path has a "cluster-scope" segment
      cluster:   cl1: olmsync.yaml gives cluster "cl1"
      found:     olmsync.yaml:2: listed in olmsync.yaml as apps[0]
  team-a
      path:      team-a
      namespace: team-a
      individual app: neither its path nor its name has a "cluster-scope" segment
      cluster:   cl1: olmsync.yaml gives cluster "cl1"
      found:     olmsync.yaml:3: listed in olmsync.yaml as apps[1]
`
	if diff := cmp.Diff(want, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}

	var js bytes.Buffer
	if err := WriteApps(&js, d, AppsJSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Method string
		Apps   []struct{ Name, Cluster string }
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Method != "config" || len(doc.Apps) != 3 || doc.Apps[1].Name != "cluster-scope" || doc.Apps[1].Cluster != "cl1" {
		t.Errorf("JSON: %+v", doc)
	}
	if err := WriteApps(&js, d, "yaml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
