package main

import (
	"os"
	"strings"
	"testing"
)

func TestRows(t *testing.T) {
	rows, err := Rows([]byte(`image:
  # -- The image.
  repository: example/olmsync
  # -- Its tag,
  # the appVersion when empty.
  tag: ""
# -- Replicas.
replicaCount: 1
# -- Resources, documented whole.
resources:
  limits:
    memory: 1Gi
`))
	if err != nil {
		t.Fatal(err)
	}
	got := Table(rows)
	want := "| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n" +
		"| `image.repository` | string | `\"example/olmsync\"` | The image. |\n" +
		"| `image.tag` | string | `\"\"` | Its tag, the appVersion when empty. |\n" +
		"| `replicaCount` | int | `1` | Replicas. |\n" +
		"| `resources` | object | `{\"limits\":{\"memory\":\"1Gi\"}}` | Resources, documented whole. |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// A value without a description is an error naming its line.
func TestRowsUndocumented(t *testing.T) {
	_, err := Rows([]byte("image:\n  # -- The image.\n  repository: x\n  tag: \"\"\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4: image.tag has no `# --` description") {
		t.Errorf("error %v", err)
	}
}

// The chart's README holds the table its values.yaml makes: make generate was run.
func TestChartREADMECurrent(t *testing.T) {
	values, err := os.ReadFile("../../charts/olmsync/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Rows(values)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../charts/olmsync/README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Splice(readme, Table(rows))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(readme) {
		t.Error("charts/olmsync/README.md's values table is stale: run make generate")
	}
}
