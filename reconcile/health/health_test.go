package health

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	// Through JSON and the unstructured decoder, so numbers are int64 as the API server's are.
	j, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatalf("fixture: %v\n%s", err, manifest)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("fixture: %v\n%s", err, manifest)
	}
	return u
}

// cluster is a Lookup over a few objects.
func cluster(t *testing.T, manifests ...string) Lookup {
	objs := map[string]*unstructured.Unstructured{}
	for _, m := range manifests {
		o := obj(t, m)
		objs[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o
	}
	return func(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
		return objs[gvk.Kind+"/"+ns+"/"+name]
	}
}

const (
	csvSucceeded = `{apiVersion: operators.coreos.com/v1alpha1, kind: ClusterServiceVersion, metadata: {name: etcdoperator.v0.9.4, namespace: ops},
  status: {phase: Succeeded, reason: InstallSucceeded, message: install strategy completed with no errors}}`
	csvFailed = `{apiVersion: operators.coreos.com/v1alpha1, kind: ClusterServiceVersion, metadata: {name: etcdoperator.v0.9.4, namespace: ops},
  status: {phase: Failed, reason: InstallCheckFailed, message: "install timeout"}}`
	csvInstalling = `{apiVersion: operators.coreos.com/v1alpha1, kind: ClusterServiceVersion, metadata: {name: etcdoperator.v0.9.4, namespace: ops},
  status: {phase: Installing, reason: InstallWaiting, message: "installing: waiting for deployment etcd-operator to become ready"}}`
	ipRequiresApproval = `{apiVersion: operators.coreos.com/v1alpha1, kind: InstallPlan, metadata: {name: install-abcde, namespace: ops},
  spec: {approval: Manual, approved: false, clusterServiceVersionNames: [etcdoperator.v0.9.4]}, status: {phase: RequiresApproval}}`
)

func sub(status string) string {
	return `{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: etcd, namespace: ops},
  spec: {name: etcd, source: community, sourceNamespace: olm}, status: ` + status + `}`
}

type healthCase struct {
	name     string
	obj      string // "" is a missing object
	related  []string
	want     Status
	reason   string
	inMesage string
}

func run(t *testing.T, cases []healthCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o *unstructured.Unstructured
			if tc.obj != "" {
				o = obj(t, tc.obj)
			}
			got := Of(o, cluster(t, tc.related...))
			if got.Status != tc.want || (tc.reason != "" && got.Reason != tc.reason) {
				t.Errorf("Of() = %+v, want %s with reason %q", got, tc.want, tc.reason)
			}
			if !strings.Contains(got.Message, tc.inMesage) {
				t.Errorf("message %q does not contain %q", got.Message, tc.inMesage)
			}
		})
	}
}

func TestSubscription(t *testing.T) {
	run(t, []healthCase{{
		name:    "AtLatestKnown with its CSV Succeeded is Healthy",
		obj:     sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4, currentCSV: etcdoperator.v0.9.4}`),
		related: []string{csvSucceeded},
		want:    Healthy, reason: "AtLatestKnown", inMesage: "etcdoperator.v0.9.4 is installed and Succeeded",
	}, {
		name: "AtLatestKnown without its CSV in the cluster is not Healthy",
		obj:  sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4}`),
		want: Progressing, inMesage: "CSV etcdoperator.v0.9.4 is not there yet",
	}, {
		name:    "AtLatestKnown with its CSV Failed is Degraded, with the CSV's reason",
		obj:     sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4}`),
		related: []string{csvFailed},
		want:    Degraded, reason: "InstallCheckFailed", inMesage: "CSV etcdoperator.v0.9.4: install timeout",
	}, {
		name:    "AtLatestKnown with its CSV installing is Progressing",
		obj:     sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4}`),
		related: []string{csvInstalling},
		want:    Progressing, reason: "InstallWaiting",
	}, {
		name: "AtLatestKnown with no installed CSV is Progressing",
		obj:  sub(`{state: AtLatestKnown, currentCSV: etcdoperator.v0.9.4}`),
		want: Progressing, inMesage: "no CSV is installed yet",
	}, {
		name: "not resolved yet",
		obj:  sub(`{}`),
		want: Progressing, inMesage: "not resolved",
	}, {
		name: "no status at all",
		obj:  `{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: etcd, namespace: ops}, spec: {name: etcd, source: c, sourceNamespace: olm}}`,
		want: Progressing,
	}, {
		name: "an upgrade under way",
		obj:  sub(`{state: UpgradePending, installedCSV: etcdoperator.v0.9.2, currentCSV: etcdoperator.v0.9.4}`),
		want: Progressing, reason: "UpgradePending", inMesage: "moving to etcdoperator.v0.9.4",
	}, {
		name: "an upgrade available",
		obj:  sub(`{state: UpgradeAvailable, installedCSV: etcdoperator.v0.9.2, currentCSV: etcdoperator.v0.9.4}`),
		want: Progressing, reason: "UpgradeAvailable",
	}, {
		name: "an upgrade failed",
		obj:  sub(`{state: UpgradeFailed, installedCSV: etcdoperator.v0.9.2}`),
		want: Degraded, reason: "UpgradeFailed",
	}, {
		name: "resolution failed is Degraded with OLM's reason",
		obj: sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4, conditions: [{type: ResolutionFailed, status: "True",
  reason: ConstraintsNotSatisfiable, message: "no operators found in package etcd"}]}`),
		related: []string{csvSucceeded},
		want:    Degraded, reason: "ConstraintsNotSatisfiable", inMesage: "no operators found",
	}, {
		name: "a false ResolutionFailed condition is no failure",
		obj: sub(`{state: AtLatestKnown, installedCSV: etcdoperator.v0.9.4, conditions: [{type: ResolutionFailed, status: "False",
  reason: ConstraintsNotSatisfiable}]}`),
		related: []string{csvSucceeded},
		want:    Healthy,
	}, {
		name: "the install plan failed",
		obj:  sub(`{state: UpgradePending, conditions: [{type: InstallPlanFailed, status: "True", reason: InstallPlanFailed, message: "plan failed"}]}`),
		want: Degraded, reason: "InstallPlanFailed",
	}, {
		name: "the bundle could not be unpacked",
		obj:  sub(`{conditions: [{type: BundleUnpackFailed, status: "True", message: "unpack job failed"}]}`),
		want: Degraded, reason: "BundleUnpackFailed",
	}, {
		name: "a Manual approval pending, as OLM's condition says",
		obj: sub(`{state: UpgradePending, currentCSV: etcdoperator.v0.9.4, installPlanRef: {name: install-abcde, namespace: ops},
  conditions: [{type: InstallPlanPending, status: "True", reason: RequiresApproval}]}`),
		want: WaitingForApproval, reason: "RequiresApproval", inMesage: "InstallPlan install-abcde for etcdoperator.v0.9.4 waits for a Manual approval",
	}, {
		name:    "a Manual approval pending, as the plan's phase says",
		obj:     sub(`{state: UpgradePending, currentCSV: etcdoperator.v0.9.4, installplan: {name: install-abcde, kind: InstallPlan, apiVersion: operators.coreos.com/v1alpha1, uuid: u}}`),
		related: []string{ipRequiresApproval},
		want:    WaitingForApproval, reason: "RequiresApproval",
	}, {
		name: "an installing plan is not an approval",
		obj: sub(`{state: UpgradePending, conditions: [{type: InstallPlanPending, status: "True", reason: Installing}],
  installPlanRef: {name: install-abcde, namespace: ops}}`),
		want: Progressing,
	}, {
		name: "an unhealthy catalog is Progressing: the CatalogSource tells starting from broken",
		obj:  sub(`{conditions: [{type: CatalogSourcesUnhealthy, status: "True", reason: UnhealthyCatalogSourceFound, message: "targeted catalogsource olm/community unhealthy"}]}`),
		want: Progressing, reason: "UnhealthyCatalogSourceFound",
	}, {
		name: "a status OLM never writes is Unknown, not a crash",
		obj:  sub(`{state: [not, a, string]}`),
		want: Unknown,
	}, {
		name: "missing",
		want: Missing,
	}})
}

func TestCSV(t *testing.T) {
	csv := func(status string) string {
		return `{apiVersion: operators.coreos.com/v1alpha1, kind: ClusterServiceVersion, metadata: {name: x.v1, namespace: ops}, status: ` + status + `}`
	}
	run(t, []healthCase{
		{name: "Succeeded", obj: csvSucceeded, want: Healthy, reason: "InstallSucceeded"},
		{name: "copied into a target namespace", obj: csv(`{phase: Succeeded, reason: Copied, message: "The operator is running in ops but is managing this namespace"}`), want: Healthy, reason: "Copied"},
		{name: "Failed", obj: csvFailed, want: Degraded, reason: "InstallCheckFailed", inMesage: "install timeout"},
		{name: "Failed for want of an OperatorGroup", obj: csv(`{phase: Failed, reason: NoOperatorGroup, message: "csv in namespace with no operatorgroups"}`), want: Degraded, reason: "NoOperatorGroup"},
		{name: "Pending on requirements", obj: csv(`{phase: Pending, reason: RequirementsNotMet, message: "one or more requirements couldn't be found"}`), want: Progressing, reason: "RequirementsNotMet"},
		{name: "InstallReady", obj: csv(`{phase: InstallReady, reason: AllRequirementsMet}`), want: Progressing, reason: "AllRequirementsMet"},
		{name: "Installing", obj: csvInstalling, want: Progressing, reason: "InstallWaiting"},
		{name: "Replacing", obj: csv(`{phase: Replacing, reason: BeingReplaced}`), want: Progressing, reason: "BeingReplaced"},
		{name: "Deleting", obj: csv(`{phase: Deleting, reason: Replaced}`), want: Progressing, reason: "Replaced"},
		{name: "Unknown phase", obj: csv(`{phase: Unknown}`), want: Unknown, reason: "Unknown"},
		{name: "no phase yet", obj: csv(`{}`), want: Progressing, inMesage: "not looked at"},
	})
}

func TestInstallPlan(t *testing.T) {
	ip := func(status string) string {
		return `{apiVersion: operators.coreos.com/v1alpha1, kind: InstallPlan, metadata: {name: install-x, namespace: ops},
  spec: {approval: Automatic, approved: true, clusterServiceVersionNames: [x.v1]}, status: ` + status + `}`
	}
	run(t, []healthCase{
		{name: "Complete", obj: ip(`{phase: Complete}`), want: Healthy, reason: "Complete"},
		{name: "Failed, with the failing step's message", obj: ip(`{phase: Failed, conditions: [{type: Installed, status: "False", reason: InstallComponentFailed, message: "error creating csv x.v1"}]}`),
			want: Degraded, reason: "Failed", inMesage: "error creating csv x.v1"},
		{name: "RequiresApproval", obj: ipRequiresApproval, want: WaitingForApproval, reason: "RequiresApproval", inMesage: "etcdoperator.v0.9.4"},
		{name: "Installing", obj: ip(`{phase: Installing}`), want: Progressing, reason: "Installing"},
		{name: "Planning", obj: ip(`{phase: Planning}`), want: Progressing},
		{name: "no status", obj: `{apiVersion: operators.coreos.com/v1alpha1, kind: InstallPlan, metadata: {name: i, namespace: ops}, spec: {approval: Manual, approved: false, clusterServiceVersionNames: [x]}}`, want: Progressing},
	})
}

func TestCatalogSourceAndOperatorGroup(t *testing.T) {
	cs := func(spec, status string) string {
		return `{apiVersion: operators.coreos.com/v1alpha1, kind: CatalogSource, metadata: {name: c, namespace: olm}, spec: ` + spec + `, status: ` + status + `}`
	}
	og := func(status string) string {
		return `{apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: og, namespace: ops}, status: ` + status + `}`
	}
	run(t, []healthCase{
		{name: "catalog READY", obj: cs(`{sourceType: grpc, image: c:1}`, `{connectionState: {lastObservedState: READY}}`), want: Healthy, reason: "READY"},
		{name: "catalog CONNECTING", obj: cs(`{sourceType: grpc, image: c:1}`, `{connectionState: {lastObservedState: CONNECTING}}`), want: Progressing, reason: "CONNECTING"},
		{name: "catalog TRANSIENT_FAILURE", obj: cs(`{sourceType: grpc, image: c:1}`, `{connectionState: {lastObservedState: TRANSIENT_FAILURE}}`), want: Degraded, reason: "TRANSIENT_FAILURE"},
		{name: "catalog never connected", obj: cs(`{sourceType: grpc, image: c:1}`, `{}`), want: Progressing},
		{name: "catalog OLM could not set up", obj: cs(`{sourceType: grpc}`, `{reason: SpecInvalidError, message: "image or address required"}`), want: Degraded, reason: "SpecInvalidError"},
		{name: "configmap catalog loaded", obj: cs(`{sourceType: configmap, configMap: cm}`, `{configMapReference: {name: cm, namespace: olm}}`), want: Healthy, inMesage: "cm"},
		{name: "group synced", obj: og(`{namespaces: [ops], lastUpdated: "2026-01-01T00:00:00Z"}`), want: Healthy, inMesage: "1 namespace"},
		{name: "group not synced yet", obj: og(`{lastUpdated: null}`), want: Progressing},
		{name: "two groups in one namespace", obj: og(`{lastUpdated: "2026-01-01T00:00:00Z", conditions: [{type: MultipleOperatorGroup, status: "True", reason: MultipleOperatorGroupsFound, message: "2 groups", lastTransitionTime: "2026-01-01T00:00:00Z"}]}`),
			want: Degraded, reason: "MultipleOperatorGroupsFound"},
	})
}

func TestBuiltinKinds(t *testing.T) {
	deploy := func(spec, status string) string {
		return `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: ops, generation: 2}, spec: ` + spec + `, status: ` + status + `}`
	}
	run(t, []healthCase{
		{name: "deployment available", obj: deploy(`{replicas: 2}`, `{observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [{type: Available, status: "True"}]}`), want: Healthy},
		{name: "deployment spec not yet observed", obj: deploy(`{replicas: 2}`, `{observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2}`), want: Progressing, reason: "LatestGenerationNotObserved"},
		{name: "deployment rolling out", obj: deploy(`{replicas: 2}`, `{observedGeneration: 2, replicas: 3, updatedReplicas: 1, availableReplicas: 2}`), want: Progressing, inMesage: "Updated: 1/2"},
		{name: "deployment old pods terminating", obj: deploy(`{replicas: 2}`, `{observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2}`), want: Progressing, inMesage: "Pending termination: 1"},
		{name: "deployment not yet available", obj: deploy(`{}`, `{observedGeneration: 2, replicas: 1, updatedReplicas: 1}`), want: Progressing, inMesage: "Available: 0/1"},
		{name: "deployment deadline exceeded", obj: deploy(`{replicas: 1}`, `{observedGeneration: 2, conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "took too long"}]}`), want: Degraded, reason: "ProgressDeadlineExceeded"},
		{name: "deployment paused", obj: deploy(`{paused: true}`, `{observedGeneration: 2}`), want: Suspended},
		{name: "statefulset ready", obj: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1, currentRevision: a, updateRevision: a}}`, want: Healthy},
		{name: "statefulset updating", obj: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {replicas: 1}, status: {readyReplicas: 1, currentRevision: a, updateRevision: b}}`, want: Progressing},
		{name: "daemonset rolling", obj: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d}, status: {desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3}}`, want: Progressing},
		{name: "daemonset available", obj: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3}}`, want: Healthy},
		{name: "job complete", obj: `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {conditions: [{type: Complete, status: "True"}]}}`, want: Healthy},
		{name: "job failed", obj: `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}}`, want: Degraded, reason: "JobFailed"},
		{name: "job suspended", obj: `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {suspend: true, template: {}}}`, want: Suspended},
		{name: "job running", obj: `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {active: 1}}`, want: Progressing},
		{name: "cronjob suspended", obj: `{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {suspend: true, schedule: "* * * * *"}}`, want: Suspended},
		{name: "pod crash looping", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running, containerStatuses: [{name: app, state: {waiting: {reason: CrashLoopBackOff, message: back-off}}}]}}`, want: Degraded, reason: "CrashLoopBackOff"},
		{name: "pod image pull failing (Argo CD's rule; kstatus waits)", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: ImagePullBackOff, message: "no such image"}}}]}}`, want: Degraded, reason: "ImagePullBackOff", inMesage: "container app: no such image"},
		{name: "daemonset without generation (kstatus waits for the controller)", obj: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d}, status: {desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}}`, want: Progressing},
		{name: "pod ready", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`, want: Healthy},
		{name: "pod pending", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Pending}}`, want: Progressing},
		{name: "pvc bound", obj: `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, status: {phase: Bound}}`, want: Healthy},
		{name: "pvc lost", obj: `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, status: {phase: Lost}}`, want: Degraded},
		{name: "load balancer without address", obj: `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}}`, want: Progressing},
		{name: "cluster IP service", obj: `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: ClusterIP}}`, want: Healthy},
		{name: "namespace terminating", obj: `{apiVersion: v1, kind: Namespace, metadata: {name: n, deletionTimestamp: "2026-01-01T00:00:00Z"}, status: {phase: Terminating}}`, want: Progressing, reason: "Deleting"},
		{name: "crd established", obj: `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: w.example.com}, status: {conditions: [{type: Established, status: "True"}]}}`, want: Healthy},
		{name: "crd names conflict", obj: `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: w.example.com}, status: {conditions: [{type: NamesAccepted, status: "False", reason: KindConflict}]}}`, want: Degraded, reason: "KindConflict"},
		{name: "configmap has no status: Healthy", obj: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, want: Healthy},
		{name: "custom resource Ready", obj: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {conditions: [{type: Ready, status: "True", reason: Succeeded}]}}`, want: Healthy, reason: "Succeeded"},
		{name: "custom resource not Ready", obj: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {conditions: [{type: Ready, status: "False", reason: Provisioning}]}}`, want: Progressing, reason: "Provisioning"},
		{name: "custom resource Stalled", obj: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {conditions: [{type: Ready, status: "False"}, {type: Stalled, status: "True", reason: InvalidSpec}]}}`, want: Degraded, reason: "InvalidSpec"},
		{name: "being deleted", obj: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, deletionTimestamp: "2026-01-01T00:00:00Z"}}`, want: Progressing, reason: "Deleting"},
	})
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct {
		in   []Status
		want Status
	}{
		{nil, Healthy},
		{[]Status{Healthy, Healthy}, Healthy},
		{[]Status{Healthy, Suspended}, Suspended},
		{[]Status{Suspended, Progressing, Healthy}, Progressing},
		{[]Status{Progressing, WaitingForApproval}, WaitingForApproval},
		{[]Status{WaitingForApproval, Unknown}, Unknown},
		{[]Status{Unknown, Missing, Progressing}, Missing},
		{[]Status{Missing, Degraded, Healthy}, Degraded},
	} {
		var results []Result
		for _, s := range tc.in {
			results = append(results, Result{Status: s})
		}
		if got := Worst(results...); got.Status != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.in, got.Status, tc.want)
		}
	}
}
