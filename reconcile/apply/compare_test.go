package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDrift(t *testing.T) {
	const live = `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: og
  namespace: ops
  uid: 1b7e
  resourceVersion: "41"
  generation: 2
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: olmsync, operation: Apply}]
  labels: {olmsync.dev/sync-name: s}
  annotations: {olm.providedAPIs: EtcdCluster.v1beta2.etcd.database.coreos.com}
spec:
  targetNamespaces: [ops]
  upgradeStrategy: Default
status:
  lastUpdated: "2026-01-01T00:00:00Z"
  namespaces: [ops]
`
	for _, tc := range []struct {
		name, dryRun string
		want         []string
	}{{
		name: "server metadata, status and OLM's annotation do not count",
		dryRun: `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: og
  namespace: ops
  uid: 1b7e
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: olmsync, operation: Apply}, {manager: olm, operation: Update}]
  labels: {olmsync.dev/sync-name: s}
  annotations: {olm.providedAPIs: ""}
spec:
  targetNamespaces: [ops]
  upgradeStrategy: Default
status:
  namespaces: [ops, other]
`,
	}, {
		name: "an annotation OLM rewrites does not count even when it is the only one",
		dryRun: `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: ops, labels: {olmsync.dev/sync-name: s}}
spec: {targetNamespaces: [ops], upgradeStrategy: Default}
`,
	}, {
		name: "a changed list, a new label and a removed field count",
		dryRun: `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: og
  namespace: ops
  labels: {olmsync.dev/sync-name: s, team: a}
spec:
  targetNamespaces: [ops, other]
`,
		want: []string{"metadata.labels.team", "spec.targetNamespaces", "spec.upgradeStrategy"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			l, d := obj(t, live), obj(t, tc.dryRun)
			liveCopy := l.DeepCopy()
			if diff := cmp.Diff(tc.want, Drift(l, d)); diff != "" {
				t.Errorf("Drift() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(liveCopy.Object, l.Object); diff != "" {
				t.Errorf("Drift() changed the live object (-before +after):\n%s", diff)
			}
		})
	}
}

func TestDriftOnlyIgnoresOLMFieldsOfOLMKinds(t *testing.T) {
	live := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ops, annotations: {olm.providedAPIs: a}}}`)
	dry := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ops, annotations: {olm.providedAPIs: b}}}`)
	if diff := cmp.Diff([]string{"metadata.annotations.olm.providedAPIs"}, Drift(live, dry)); diff != "" {
		t.Errorf("Drift() (-want +got):\n%s", diff)
	}
}

// TestNormalized: the form Drift compares, which olmsync diff renders, has none of the
// fields Drift leaves out, and the object itself is left as it was.
func TestNormalized(t *testing.T) {
	o := obj(t, `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: og
  namespace: ops
  uid: 1b7e
  resourceVersion: "41"
  generation: 2
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: olmsync, operation: Apply}]
  annotations: {olm.providedAPIs: EtcdCluster.v1beta2.etcd.database.coreos.com}
  labels: {olmsync.dev/sync-name: s}
spec: {targetNamespaces: [ops]}
status: {namespaces: [ops]}
`)
	before := o.DeepCopy()
	want := obj(t, `
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: ops, labels: {olmsync.dev/sync-name: s}}
spec: {targetNamespaces: [ops]}
`)
	if diff := cmp.Diff(want.Object, Normalized(o)); diff != "" {
		t.Errorf("Normalized() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Object, o.Object); diff != "" {
		t.Errorf("Normalized() changed the object (-before +after):\n%s", diff)
	}
}
