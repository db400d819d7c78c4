package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClusterVerbsAreTheFullBuilds: the light build (olmsync) hands clusterVerbs to the
// full build (olmsync-cluster) and shows their help lines in its own help: they are the
// full build's commands, name for name and line for line.
func TestClusterVerbsAreTheFullBuilds(t *testing.T) {
	var want, got []string
	for _, c := range clusterCommands() {
		want = append(want, c.Name()+": "+c.Short)
	}
	for _, v := range clusterVerbs {
		got = append(got, v.use+": "+v.short)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusterVerbs (-full build +table):\n%s", diff)
	}
}

// TestLightBuildLinksNoClusterClient: `olmsync check` must not pay for the controllers, a
// Kubernetes client, kubectl's scheme or Helm it does not run (issue 32: the one binary
// took 79 MB resident before doing anything), nor for the OLM preview, which only runs
// when a catalog or a cluster state is named (its resolver's CEL, the CRD upgrade check's
// apiextensions validation and its API types took 14 MB resident more). The light build
// links none of them.
func TestLightBuildLinksNoClusterClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "olmsync_light", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime", "helm.sh/", "k8s.io/kubectl", "github.com/olmsync/olmsync/reconcile",
			"github.com/olmsync/olmsync/check/preview", "github.com/olmsync/olmsync/olm/resolve", "github.com/olmsync/olmsync/olm/crdupgrade",
			"github.com/google/cel-go", "k8s.io/apiextensions-apiserver/pkg/apiserver"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("the light build links %s", pkg)
			}
		}
	}
}
