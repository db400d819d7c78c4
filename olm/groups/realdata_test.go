package groups_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/groups"
)

// realCluster is the cluster the real OperatorGroups are placed in: the namespaces they name,
// and some labelled ones for their selectors.
var realCluster = []corev1.Namespace{
	namespace("default"),
	namespace("kuadrant-system"),
	namespace("my-namespace"),
	namespace("my-other-namespace"),
	namespace("prod-a", "cool.io/prod", "true"),
	namespace("prod-b", "cool.io/prod", "true"),
	namespace("staging", "cool.io/prod", "false"),
	namespace("monitoring-a", "something.cool.io/cluster-monitoring", "true"),
	namespace("monitoring-b", "something.cool.io/cluster-monitoring", "true"),
	namespace("cluster-monitoring"),
}

// TestRealOperatorGroups decodes every OperatorGroup in ../shared/data/manifests/operatorgroups
// and checks the target set it selects in realCluster and what kind of set that is.
func TestRealOperatorGroups(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests/operatorgroups")
	tests := map[string]struct {
		// namespace the group is deployed in when the manifest leaves it to kustomize.
		namespace     string
		want          []string
		kind          v1alpha1.InstallModeType
		static        bool
		providedAPIs  string
		unknownFields bool
	}{
		"gc-compliance-operator.yaml":          {namespace: "openshift-compliance", want: []string{"openshift-compliance"}, kind: own},
		"gc-migration-toolkit-containers.yaml": {want: []string{"openshift-migration"}, kind: own},
		"gc-redhat-connectivity-link.yaml":     {want: []string{""}, kind: all},
		"of-cluster-logging.yaml":              {namespace: "openshift-logging", want: []string{"openshift-logging"}, kind: own},
		"of-global-operators.yaml":             {namespace: "openshift-operators", want: []string{""}, kind: all},
		"of-openshift-operators-redhat.yaml":   {namespace: "openshift-operators-redhat", want: []string{""}, kind: all},
		"of-opf-kafka.yaml":                    {namespace: "opf-kafka", want: []string{"opf-kafka"}, kind: own},
		"of-rapidast-null-spec.yaml":           {want: []string{""}, kind: all},
		"olm-quickstart-global-operators.yaml": {want: []string{""}, kind: all},
		"olm-quickstart-olm-operators.yaml":    {want: []string{"olm"}, kind: own},
		"olmdocs-all-namespaces.yaml":          {want: []string{""}, kind: all},
		"olmdocs-multi-namespace.yaml": {
			want: []string{"my-namespace", "my-other-namespace", "my-other-other-namespace"}, kind: multi,
		},
		// The published selector holds the label directly, not under matchLabels: Decode reports
		// the field, and what is left is an empty selector, which selects all namespaces. This is
		// why the check must refuse manifests with unknown fields.
		"olmdocs-selector-bare-labels.yaml":   {want: []string{""}, kind: all, unknownFields: true},
		"olmdocs-selector.yaml":               {want: []string{"prod-a", "prod-b"}, kind: multi},
		"olmdocs-service-account.yaml":        {want: []string{"own-namespace"}, kind: own},
		"olmdocs-single-namespace-other.yaml": {want: []string{"some-other-namespace"}, kind: single},
		"olmdocs-static-provided-apis.yaml": {
			want: []string{"monitoring-a", "monitoring-b"}, kind: multi, static: true,
			providedAPIs: "Alertmanager.v1.monitoring.coreos.com,Prometheus.v1.monitoring.coreos.com,PrometheusRule.v1.monitoring.coreos.com,ServiceMonitor.v1.monitoring.coreos.com",
		},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no OperatorGroups in %s: %v", dir, err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		tt, ok := tests[name]
		if !ok {
			t.Errorf("%s: no expectation for this real OperatorGroup; add one", name)
			continue
		}
		delete(tests, name)
		t.Run(name, func(t *testing.T) {
			group, d := decodeGroup(t, file)
			if group.Namespace == "" {
				group.Namespace = tt.namespace
			}
			if got := len(d.UnknownFields) > 0; got != tt.unknownFields {
				t.Errorf("unknown fields %q, want some: %v", d.UnknownFields, tt.unknownFields)
			}
			got, err := groups.TargetNamespaces(group, realCluster)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
			kind, err := groups.ClassifyTargets(group.Namespace, got)
			if err != nil || kind != tt.kind {
				t.Errorf("kind = %q, %v; want %q", kind, err, tt.kind)
			}
			if group.Spec.StaticProvidedAPIs != tt.static {
				t.Errorf("static = %v, want %v", group.Spec.StaticProvidedAPIs, tt.static)
			}
			if apis := groups.GroupProvidedAPIs(group).String(); apis != tt.providedAPIs {
				t.Errorf("provided APIs = %q, want %q", apis, tt.providedAPIs)
			}
		})
	}
	for name := range tests {
		t.Errorf("%s: expected in %s but not found", name, dir)
	}
}

// realCSV names a real CSV of ../shared/data/manifests/clusterserviceversions.
type realCSV struct {
	providedAPIs string
	// supported lists the target-set kinds its install modes support.
	supported []v1alpha1.InstallModeType
}

var realCSVs = map[string]realCSV{
	"cert-manager.v1.14.2.yaml": {
		providedAPIs: "Certificate.v1.cert-manager.io,CertificateRequest.v1.cert-manager.io,Challenge.v1.acme.cert-manager.io,ClusterIssuer.v1.cert-manager.io,Issuer.v1.cert-manager.io,Order.v1.acme.cert-manager.io",
		supported:    []v1alpha1.InstallModeType{all},
	},
	"etcdoperator.v0.9.4.yaml": {
		providedAPIs: "EtcdBackup.v1beta2.etcd.database.coreos.com,EtcdCluster.v1beta2.etcd.database.coreos.com,EtcdRestore.v1beta2.etcd.database.coreos.com",
		supported:    []v1alpha1.InstallModeType{own, single},
	},
	"mercury-operator.v1.0.2.yaml": {
		providedAPIs: "ServiceDomain.v1alpha1.mercury.redhat.io,ServiceDomainInfra.v1alpha1.mercury.redhat.io",
		supported:    allModes,
	},
	"node-healthcheck-operator.v0.8.0.yaml": {
		providedAPIs: "NodeHealthCheck.v1alpha1.remediation.medik8s.io",
		supported:    []v1alpha1.InstallModeType{all},
	},
	"olm-quickstart-packageserver.yaml": {
		providedAPIs: "PackageManifest.v1.packages.operators.coreos.com",
		supported:    allModes,
	},
	"prometheusoperator.0.27.0.yaml": {
		providedAPIs: "Alertmanager.v1.monitoring.coreos.com,Prometheus.v1.monitoring.coreos.com,PrometheusRule.v1.monitoring.coreos.com,ServiceMonitor.v1.monitoring.coreos.com",
		supported:    []v1alpha1.InstallModeType{own, single, multi},
	},
	"skupper-operator.v1.9.0.yaml": {
		providedAPIs: "",
		supported:    []v1alpha1.InstallModeType{own, all},
	},
}

// The target set of each kind for an operator in namespace "operators", and OLM's message when
// the kind is not supported.
var targetSets = []struct {
	kind    v1alpha1.InstallModeType
	targets []string
	message string
}{
	{own, []string{"operators"}, "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"},
	{single, []string{"apps"}, "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace"},
	{multi, []string{"apps", "team-b"}, "MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces"},
	{all, []string{""}, "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
}

// TestRealCSVs checks the provided APIs of every real CSV and whether its install modes support
// an own, single, multi and all-namespaces target set.
func TestRealCSVs(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests/clusterserviceversions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		want, ok := realCSVs[e.Name()]
		if !ok {
			t.Errorf("%s: no expectation for this real CSV; add one", e.Name())
			continue
		}
		seen++
		t.Run(e.Name(), func(t *testing.T) {
			c := decodeCSV(t, filepath.Join(dir, e.Name()))
			c.Namespace = "operators"
			apis, err := groups.ProvidedAPIs(c)
			if err != nil {
				t.Fatal(err)
			}
			if apis.String() != want.providedAPIs {
				t.Errorf("provided APIs = %q, want %q", apis.String(), want.providedAPIs)
			}
			set, err := groups.NewInstallModeSet(c.Spec.InstallModes)
			if err != nil {
				t.Fatal(err)
			}
			for _, ts := range targetSets {
				err := set.Supports(c.Namespace, ts.targets)
				if slices.Contains(want.supported, ts.kind) {
					if err != nil {
						t.Errorf("%s: %v, want supported", ts.kind, err)
					}
				} else if err == nil || err.Error() != ts.message {
					t.Errorf("%s: %v, want %q", ts.kind, err, ts.message)
				}
			}
		})
	}
	if seen != len(realCSVs) {
		t.Errorf("found %d of the %d expected CSVs in %s", seen, len(realCSVs), dir)
	}
}

// TestRealPrometheusAndTheStaticGroup replays seed 000's static OperatorGroup example with the
// real documents: the olm-docs static group protecting Prometheus APIs and the real prometheus
// 0.27.0 CSV (MultiNamespace).
func TestRealPrometheusAndTheStaticGroup(t *testing.T) {
	staticGroup, _ := decodeGroup(t, shareddata.Path(t, "data/manifests/operatorgroups/olmdocs-static-provided-apis.yaml"))
	targets, err := groups.TargetNamespaces(staticGroup, realCluster)
	if err != nil {
		t.Fatal(err)
	}
	staticGroup.Status.Namespaces = targets
	prometheus := decodeCSV(t, shareddata.Path(t, "data/manifests/clusterserviceversions/prometheusoperator.0.27.0.yaml"))
	etcd := decodeCSV(t, shareddata.Path(t, "data/manifests/clusterserviceversions/etcdoperator.v0.9.4.yaml"))
	mercury := decodeCSV(t, shareddata.Path(t, "data/manifests/clusterserviceversions/mercury-operator.v1.0.2.yaml"))
	certManager := decodeCSV(t, shareddata.Path(t, "data/manifests/clusterserviceversions/cert-manager.v1.14.2.yaml"))

	// A second Prometheus operator in a global group elsewhere.
	globalGroup, _ := decodeGroup(t, shareddata.Path(t, "data/manifests/operatorgroups/olm-quickstart-global-operators.yaml"))
	globalGroup.Status.Namespaces = []string{""}
	cluster := []operatorsv1.OperatorGroup{*staticGroup, *globalGroup}

	place := func(c *v1alpha1.ClusterServiceVersion, ns string) *v1alpha1.ClusterServiceVersion {
		c = c.DeepCopy()
		c.Namespace = ns
		return c
	}
	tests := []struct {
		name       string
		csv        *v1alpha1.ClusterServiceVersion
		want       *groups.Transition
		wantSteps  []groups.APIReconciliation
		wantGroup  string
		wantChange bool
	}{
		{
			name: "prometheus in the static group: its APIs are the group's",
			csv:  place(prometheus, "cluster-monitoring"), wantSteps: []groups.APIReconciliation{groups.NoAPIConflict},
			wantGroup: staticGroup.Annotations["olm.providedAPIs"],
		},
		{
			name: "etcd in the static group: etcd supports no MultiNamespace",
			csv:  place(etcd, "cluster-monitoring"),
			want: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonUnsupportedOperatorGroup,
				Message: "MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces"},
		},
		{
			name: "prometheus 0.27.0 in the global group: it supports no AllNamespaces",
			csv:  place(prometheus, "operators"),
			want: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonUnsupportedOperatorGroup,
				Message: "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
		},
		{
			name: "mercury in the static group: it cannot add its APIs",
			csv:  place(mercury, "cluster-monitoring"), wantSteps: []groups.APIReconciliation{groups.AddAPIs},
			want: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs,
				Message: "static provided api operatorgroup cannot be modified by these apis"},
			wantGroup: staticGroup.Annotations["olm.providedAPIs"],
		},
		{
			name: "cert-manager in the global group: no conflict, its APIs are added",
			csv:  place(certManager, "operators"), wantSteps: []groups.APIReconciliation{groups.AddAPIs, groups.NoAPIConflict},
			wantGroup:  "Certificate.v1.cert-manager.io,CertificateRequest.v1.cert-manager.io,Challenge.v1.acme.cert-manager.io,ClusterIssuer.v1.cert-manager.io,Issuer.v1.cert-manager.io,Order.v1.acme.cert-manager.io",
			wantChange: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := groups.Evaluate(tt.csv, cluster)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ev.Transition); diff != "" {
				t.Errorf("transition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSteps, ev.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if ev.GroupProvidedAPIs != tt.wantGroup || ev.GroupAnnotationChanged != tt.wantChange {
				t.Errorf("group APIs = %q (changed %v), want %q (changed %v)", ev.GroupProvidedAPIs, ev.GroupAnnotationChanged, tt.wantGroup, tt.wantChange)
			}
		})
	}

	// A Prometheus operator that does support AllNamespaces, in the global group, meets the
	// static group's claim: InterOperatorGroupOwnerConflict, the conflict seed 000 describes.
	allNS := place(prometheus, "operators")
	for i := range allNS.Spec.InstallModes {
		allNS.Spec.InstallModes[i].Supported = true
	}
	ev, err := groups.Evaluate(allNS, cluster)
	if err != nil {
		t.Fatal(err)
	}
	want := &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonInterOperatorGroupOwnerConflict,
		Message: "intersecting operatorgroups provide the same apis"}
	if diff := cmp.Diff(want, ev.Transition); diff != "" {
		t.Errorf("all-namespaces prometheus (-want +got):\n%s", diff)
	}
	if len(ev.Intersection.Conflicts) != 1 || ev.Intersection.Conflicts[0].Name != "cluster-monitoring" {
		t.Errorf("conflicts = %+v, want the cluster-monitoring group", ev.Intersection.Conflicts)
	}
}

// TestRealClusterRoles generates the per-API ClusterRoles of the real CSVs that support
// AllNamespaces, in a global group, and checks their names are valid and distinct.
func TestRealClusterRoles(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests/clusterserviceversions")
	group := og("operators", "global-operators", global())
	wantCounts := map[string]int{
		"cert-manager.v1.14.2.yaml":             6 * 4,
		"mercury-operator.v1.0.2.yaml":          2 * 4,
		"node-healthcheck-operator.v0.8.0.yaml": 1 * 4,
		"olm-quickstart-packageserver.yaml":     1 * 3,
		"skupper-operator.v1.9.0.yaml":          0,
		"etcdoperator.v0.9.4.yaml":              0, // no AllNamespaces
		"prometheusoperator.0.27.0.yaml":        0, // no AllNamespaces
	}
	for file, want := range wantCounts {
		c := decodeCSV(t, filepath.Join(dir, file))
		c.Namespace = "operators"
		roles, err := groups.ProvidedAPIClusterRoles(c, &group)
		if err != nil {
			t.Fatal(err)
		}
		if len(roles) != want {
			t.Errorf("%s: %d roles, want %d", file, len(roles), want)
		}
		for _, r := range roles {
			if errs := content.IsPathSegmentName(r.Name); len(errs) > 0 || len(r.Name) > 253 {
				t.Errorf("%s: invalid ClusterRole name %q: %v", file, r.Name, errs)
			}
		}
		if file == "olm-quickstart-packageserver.yaml" {
			if roles[0].Name != "packagemanifests-v1-admin" ||
				!slices.Equal(roles[0].Rules[0].Resources, []string{"packagemanifests"}) {
				t.Errorf("packageserver admin role = %s on %v", roles[0].Name, roles[0].Rules[0].Resources)
			}
		}
		if file == "cert-manager.v1.14.2.yaml" && roles[0].Name != "certificaterequests.cert-manager.io-v1-admin" {
			t.Errorf("cert-manager's first role is %s", roles[0].Name)
		}
	}
}
