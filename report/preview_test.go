package report

import (
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
		},
		{
			Cluster: "c1", App: "cluster-scope", File: "cluster-scope/subscription.yaml", Line: 1,
			Namespace: "team-c", Name: "etcd", Package: "etcd", Channel: "stable",
			Source: "community-operators", SourceNamespace: "openshift-marketplace", Approval: "Manual",
			Resolution: PreviewResolution{Status: ResolutionResolved, Next: "etcd.v0.9.4", Head: "etcd.v0.9.4", Path: []string{"etcd.v0.9.4"}},
			Outcome: &PreviewOutcome{CSV: "etcd.v0.9.4", Phase: "Failed", Reason: "UnsupportedOperatorGroup",
				Message: "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
			Change: &SubscriptionChange{Type: ChangeChannelSwitch, From: "etcd.v0.9.2", FromChannel: "alpha", To: "etcd.v0.9.4"},
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
