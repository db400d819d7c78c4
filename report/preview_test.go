package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// previewReport is the fixture with an OLM preview against its base: an upgrade along a
// path that skips a version, a failed CSV, a group with a conflict.
func previewReport(t testing.TB) *Report {
	t.Helper()
	r := fixtureReport(t)
	r.Subscriptions = []SubscriptionPreview{
		{
			Cluster: "c1", App: "etcd", File: "apps/etcd/subscription.yaml", Line: 3,
			Namespace: "etcd", Name: "etcd", Package: "etcd", Channel: "stable",
			Source: "community-operators", SourceNamespace: "openshift-marketplace", Approval: "Automatic",
			Installed: "etcd.v0.9.2",
			Resolution: PreviewResolution{Status: ResolutionResolved, Next: "etcd.v0.9.4", Head: "etcd.v0.9.4",
				Path: []string{"etcd.v0.9.4"}, Skipped: []string{"etcd.v0.9.3"}},
			Dependencies: []PreviewDependency{{Name: "backup.v1.0.0", Package: "backup", Channel: "stable",
				Source: "openshift-marketplace/community-operators", RequiredBy: "etcd.v0.9.4", Requirement: "providing an API with group: b, version: v1, kind: B"}},
			Outcome: &PreviewOutcome{CSV: "etcd.v0.9.4", Phase: "Succeeded", Reason: "InstallSucceeded", Message: "install strategy completed with no errors"},
			Change:  &SubscriptionChange{Type: ChangeUpgrade, From: "etcd.v0.9.2", To: "etcd.v0.9.4"},
			End: &PreviewEnd{CurrentCSV: "etcd.v0.9.4", InstalledCSV: "etcd.v0.9.4", Reason: "ConstraintsNotSatisfiable", Message: "constraints not satisfiable: …",
				Outcome: &PreviewOutcome{CSV: "etcd.v0.9.4", Phase: "Succeeded", Reason: "InstallSucceeded", Message: "install strategy completed with no errors"}},
			Brings: &PreviewBrings{CSV: "etcd.v0.9.4", Image: "quay.io/operatorhubio/etcd@sha256:0123",
				CRDs: []PreviewCRD{
					{Name: "etcdbackups.etcd.database.coreos.com", Versions: []string{"v1beta2*"}, Change: CRDAdded},
					{Name: "etcdclusters.etcd.database.coreos.com", Versions: []string{"v1beta1", "v1beta2*"}, Change: CRDChanged, Verdict: CRDUpgradeSafe},
					{Name: "etcdrestores.etcd.database.coreos.com", Versions: []string{"v1beta2*"}, Change: CRDChanged,
						Verdict: `risk of data loss updating "etcdrestores.etcd.database.coreos.com": new CRD removes version v1beta1 that is listed as a stored version on the existing CRD`},
				},
				InstallModes: []string{"OwnNamespace", "AllNamespaces"},
				Permissions: []PreviewPermission{
					{ServiceAccount: "etcd-operator", Rules: []string{"get secrets (core)"}},
					{ServiceAccount: "etcd-operator", ClusterWide: true, Rules: []string{"* pods,services (core)", "* deployments (apps)"}},
				},
				Images: []string{"quay.io/coreos/etcd-operator@sha256:66a3"}},
		},
		{
			Cluster: "c1", App: "cluster-scope", File: "cluster-scope/subscription.yaml", Line: 1,
			Namespace: "team-c", Name: "etcd", Package: "etcd", Channel: "stable",
			Source: "community-operators", SourceNamespace: "openshift-marketplace", Approval: "Manual",
			Resolution: PreviewResolution{Status: ResolutionResolved, Next: "etcd.v0.9.4", Head: "etcd.v0.9.4", Path: []string{"etcd.v0.9.4"}},
			Outcome: &PreviewOutcome{CSV: "etcd.v0.9.4", Phase: "Failed", Reason: "UnsupportedOperatorGroup",
				Message: "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
			Change: &SubscriptionChange{Type: ChangeChannelSwitch, From: "etcd.v0.9.2", FromChannel: "alpha", To: "etcd.v0.9.4"},
			Brings: &PreviewBrings{CSV: "etcd.v0.9.4", Unseen: "bundle etcd.v0.9.4 is listed by image only (quay.io/operatorhubio/etcd:v0.9.4), which could not be pulled: no route to host"},
		},
	}
	r.OperatorGroups = []OperatorGroupPreview{{
		Cluster: "c1", App: "cluster-scope", File: "cluster-scope/og.yaml", Line: 1, Namespace: "etcd", Name: "etcd", Origin: "git",
		TargetNamespaces: []string{"etcd"}, ProvidedAPIs: []string{"EtcdCluster.v1beta2.etcd.database.coreos.com"},
		Conflicts: []GroupConflict{{Namespace: "other", Name: "other", APIs: []string{"EtcdCluster.v1beta2.etcd.database.coreos.com"}}},
	}}
	if err := Complete(r, FailOnNew); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPreviewForPeople: text and Markdown say what OLM does as a pull request would.
func TestPreviewForPeople(t *testing.T) {
	r := previewReport(t)
	for _, format := range []Format{FormatText, FormatMarkdown} {
		var b strings.Builder
		if err := Write(&b, r, format, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"upgrade: upgrades to etcd.v0.9.4 from community-operators, channel stable; upgrade path etcd.v0.9.2 → etcd.v0.9.4 (skips etcd.v0.9.3); with dependency backup.v1.0.0",
			"channel switch alpha → stable: installs etcd.v0.9.4 from community-operators, channel stable",
			"Failed (UnsupportedOperatorGroup): AllNamespaces InstallModeType not supported",
			"targets etcd; provides EtcdCluster.v1beta2.etcd.database.coreos.com; also provided by other/other",
			"CRDs: etcdbackups.etcd.database.coreos.com v1beta2* (added), etcdclusters.etcd.database.coreos.com v1beta1,v1beta2* (changed, upgrade safe), " +
				`etcdrestores.etcd.database.coreos.com v1beta2* (changed, OLM REFUSES: risk of data loss updating "etcdrestores.etcd.database.coreos.com"`,
			"CLUSTER-WIDE permissions of etcd-operator: * pods,services (core); * deployments (apps)",
			"namespaced permissions of etcd-operator: get secrets (core)",
			"install modes: OwnNamespace, AllNamespaces",
			"images: quay.io/coreos/etcd-operator@sha256:66a3",
			"brings: not seen: bundle etcd.v0.9.4 is listed by image only (quay.io/operatorhubio/etcd:v0.9.4), which could not be pulled",
		} {
			if format == FormatMarkdown {
				want = mdText(want)
			}
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q:\n%s", format, want, b.String())
			}
		}
	}
}

// TestPreviewBringsJSON: what a Subscription brings is in the JSON report, lists never
// null, the cluster-wide rules marked.
func TestPreviewBringsJSON(t *testing.T) {
	var got struct {
		Subscriptions []struct {
			Brings *PreviewBrings `json:"brings"`
		} `json:"subscriptions"`
	}
	out := writeJSONBytes(t, previewReport(t))
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	var b0, b1 *PreviewBrings
	for _, s := range got.Subscriptions {
		if s.Brings != nil && s.Brings.Unseen == "" {
			b0 = s.Brings
		} else if s.Brings != nil {
			b1 = s.Brings
		}
	}
	if b0 == nil || len(b0.CRDs) != 3 || b0.CRDs[1].Change != CRDChanged || !b0.Permissions[1].ClusterWide || b0.Image == "" {
		t.Errorf("brings %+v", b0)
	}
	if b1 == nil || b1.CRDs == nil || b1.Permissions == nil || b1.Images == nil || b1.InstallModes == nil {
		t.Errorf("unseen brings %+v: lists must be [] in JSON", b1)
	}
	for _, key := range []string{`"brings":`, `"clusterWide":true`, `"unseen":`} {
		if !strings.Contains(strings.ReplaceAll(string(out), " ", ""), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

// TestPreviewBringsOtherFormats: the GitHub format annotates each Subscription that
// brings something with a notice on its line; JUnit adds a suite with one case per such
// Subscription, what it brings in the case's output; SARIF a note of the run's invocation
// located on the Subscription.
func TestPreviewBringsOtherFormats(t *testing.T) {
	r := previewReport(t)
	var gh strings.Builder
	if err := Write(&gh, r, FormatGitHub, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"::notice file=apps/etcd/subscription.yaml,line=3,title=olmsync%3A what etcd/etcd brings (etcd.v0.9.4)::CRDs: etcdbackups.etcd.database.coreos.com v1beta2* (added)",
		"(changed, OLM REFUSES: risk of data loss updating",
		"%0ACLUSTER-WIDE permissions of etcd-operator: * pods,services (core); * deployments (apps)%0A",
		"title=olmsync%3A what team-c/etcd brings (etcd.v0.9.4)::brings: not seen: bundle etcd.v0.9.4 is listed by image only",
	} {
		if !strings.Contains(gh.String(), want) {
			t.Errorf("GitHub output lacks %q:\n%s", want, gh.String())
		}
	}
	var ju strings.Builder
	if err := Write(&ju, r, FormatJUnit, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<testsuite name="olmsync: what the Subscriptions bring" tests="2" failures="0" errors="0" skipped="0">`,
		`<testcase name="c1: etcd/etcd brings etcd.v0.9.4" classname="olm-preview" file="apps/etcd/subscription.yaml" time="0">`,
		"CLUSTER-WIDE permissions of etcd-operator: * pods,services (core); * deployments (apps)",
	} {
		if !strings.Contains(ju.String(), want) {
			t.Errorf("JUnit output lacks %q:\n%s", want, ju.String())
		}
	}
	var sa strings.Builder
	if err := Write(&sa, r, FormatSARIF, Options{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Invocations []struct {
				Notifications []struct {
					Level   string `json:"level"`
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct {
								URI string `json:"uri"`
							} `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sa.String()), &log); err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, n := range log.Runs[0].Invocations[0].Notifications {
		if n.Level == "note" && strings.HasPrefix(n.Message.Text, "Subscription etcd/etcd brings etcd.v0.9.4:\nCRDs: ") &&
			strings.Contains(n.Message.Text, "CLUSTER-WIDE permissions of etcd-operator") &&
			len(n.Locations) == 1 && n.Locations[0].PhysicalLocation.ArtifactLocation.URI == "apps/etcd/subscription.yaml" {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("SARIF: %d notes on what etcd/etcd brings, want 1:\n%s", notes, sa.String())
	}
}

// TestBringsLinesWebhooks: the webhooks and API services a bundle brings each get a line, the
// webhook's as the preview wrote it (cluster-wide ones called out there).
func TestBringsLinesWebhooks(t *testing.T) {
	b := &PreviewBrings{CSV: "cert-manager.v1.14.2",
		Webhooks: []PreviewWebhook{{Name: "validate.webhooks.cert-manager.io", Type: "ValidatingAdmissionWebhook", ClusterWide: true,
			Summary: "CLUSTER-WIDE validating webhook validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE,UPDATE cert-manager.io/v1 */*"}},
		APIServices: []PreviewAPIService{{Name: "v1.packages.example.com", Kind: "Package", Deployment: "server"}},
	}
	want := []string{
		"CLUSTER-WIDE validating webhook validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE,UPDATE cert-manager.io/v1 */*",
		"API service v1.packages.example.com (Package), served by deployment server",
	}
	if got := bringsLines(b); !slices.Equal(got, want) {
		t.Errorf("bringsLines = %q, want %q", got, want)
	}
}
