package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/<name>, or rewrites the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run the test with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, rerun with -update:\n%s", path, diff)
	}
}

// Object references of the fixture.
var (
	subEtcd = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "etcd", Name: "etcd"}
	ogLog   = ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "openshift-logging", Name: "logging"}
	csvLog  = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Namespace: "openshift-logging", Name: "cluster-logging.v5.9.1"}
	csvOdh  = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Namespace: "opendatahub", Name: "opendatahub-operator.v2.4.0"}
	ipOdh   = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Namespace: "opendatahub", Name: "install-abcde"}
	subOdh  = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "opendatahub", Name: "opendatahub-operator"}
	subLoki = ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "openshift-operators-redhat", Name: "loki-operator"}
	cmApp   = ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "etcd", Name: "settings"}
	nsEtcd  = ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "etcd"}
	ogOld   = ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "etcd", Name: "etcd"}
)

// The file that holds the logging objects has a space, '%', ':' and ',' in its name, as
// GitHub's and SARIF's escaping must cope with.
const logFile = "cluster-scope/base/logging: 100%, v5/operatorgroup.yaml"

func catalog() []Rule {
	return []Rule{
		{
			ID: "OP002", Title: "An OperatorGroup is global or names exactly one target namespace",
			Description: "An OperatorGroup either selects all namespaces (no targetNamespaces, no selector) or names exactly one target namespace; no other shape is supported.",
			Help:        "Remove `spec.selector`, and list **one** namespace:\n\n```yaml\nspec:\n  targetNamespaces: [my-namespace]\n```",
			HelpURI:     "https://github.com/olmsync/olmsync/blob/main/docs/policy.md#op002",
			Severity:    SeverityError, Kinds: []string{"OperatorGroup"},
		},
		{
			ID: "OP005", Title: "A Subscription's namespace has an OperatorGroup",
			Description: "OLM installs nothing for a Subscription in a namespace without exactly one OperatorGroup.",
			Help:        "Declare an OperatorGroup in the cluster-scope app, or list the cluster's own under `operatorGroups:` in olmsync.yaml.",
			Severity:    SeverityError, Kinds: []string{"Subscription"},
		},
		{
			ID: "OP007", Title: "A Subscription in an individual app is in the app's destination namespace",
			Severity: SeverityError, Kinds: []string{"Subscription"},
		},
		{
			ID: "OP009", Title: "A ClusterServiceVersion is only in the cluster-scope app",
			Description: "CSVs come from catalogs. One declared in Git must be in the cluster-scope app (error), and is flagged even there (warning).",
			Severity:    SeverityError, Kinds: []string{"ClusterServiceVersion"},
		},
		{
			ID: "OP010", Title: "No InstallPlan is declared in Git",
			Description: "InstallPlans are written by OLM from a Subscription; one in Git is never what OLM would plan.",
			Severity:    SeverityError, Kinds: []string{"InstallPlan"},
		},
	}
}

// fixtureReport is the report every golden file is written from: errors and warnings,
// new and pre-existing, waived by annotation and by olmsync.yaml, a custom rule missing
// from the catalog, OLM changes, problems in both revisions, a warning met by two apps,
// and messages and paths full of characters the formats must escape.
func fixtureReport(t testing.TB) *Report {
	t.Helper()
	r := &Report{
		Tool:     Tool{Name: "olmsync", Version: "v0.4.0"},
		Revision: Revision{Ref: "feature/etcd", Commit: "3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f"},
		Base:     &Revision{Ref: "main", Commit: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"},
		Apps: []App{
			{Name: "cluster-scope", Path: "cluster-scope/overlays/prod/us-east-1/c1", Cluster: "c1", ClusterScope: true},
			{Name: "etcd", Path: "apps/etcd", Cluster: "c1"},
			{Name: "odh", Path: "./apps/odh", Cluster: "c1"},
		},
		Rules: catalog(),
		Violations: []Violation{
			{
				Rule: "OP007", Severity: SeverityError, App: "etcd", Cluster: "c1",
				File: "apps/etcd/subscription.yaml", Line: 3, Object: subEtcd,
				Message: `Subscription etcd/etcd is in namespace "etcd", but app etcd deploys to "etcd-prod"`,
				Status:  StatusNew,
			},
			{
				Rule: "OP002", Severity: SeverityError, App: "cluster-scope", Cluster: "c1",
				File: logFile, Line: 12, Object: ogLog,
				Message: "OperatorGroup openshift-logging/logging names 2 target namespaces:\n- openshift-logging\n- 100%: all, of them",
				Status:  StatusPreExisting,
			},
			{
				Rule: "OP009", Severity: SeverityWarning, App: "cluster-scope", Cluster: "c1",
				File: logFile, Line: 30, Object: csvLog,
				Message: "ClusterServiceVersion cluster-logging.v5.9.1 is declared in Git; CSVs come from catalogs",
				Status:  StatusNew,
			},
			{
				Rule: "OP009", Severity: SeverityWarning, App: "odh", Cluster: "c1",
				File: "apps/odh/csv.yaml", Line: 1, Object: csvOdh,
				Message: "ClusterServiceVersion opendatahub-operator.v2.4.0 is declared in Git",
				Waiver:  &Waiver{Reason: "pinned until ODH 2.5 ships", Source: WaiverAnnotation},
				Status:  StatusPreExisting,
			},
			{
				Rule: "OP010", Severity: SeverityError, App: "odh", Cluster: "c1",
				File: "apps/odh/installplan.yaml", Line: 1, Object: ipOdh,
				Message: "InstallPlan install-abcde is declared in Git",
				Waived:  true, Waiver: &Waiver{Reason: "reviewed by platform team, see OPS-1234", Source: WaiverConfig, Expires: "2027-03-31"},
				Status: StatusNew,
			},
			{
				Rule: "OP005", Severity: SeverityError, App: "odh", Cluster: "c1",
				File: "apps/odh/subscription.yaml", Line: 9, Object: subOdh,
				Message: "no OperatorGroup in namespace `opendatahub` | ask @platform-team (see <none>, *not* _this_, $x$, [link](http://x) & ~old~)\r\n::error::injected\\",
				Status:  StatusNew,
			},
			{
				Rule: "CUSTOM-1", Severity: SeverityWarning, App: "etcd", Cluster: "c1",
				File: "apps/etcd/configmap.yaml", Object: cmApp,
				Message: "custom rule: ConfigMap settings has no owner label",
				Status:  StatusPreExisting,
			},
		},
		Changes: []Change{
			{
				Type: ChangeAdded, Object: subEtcd, App: "etcd", Cluster: "c1", File: "apps/etcd/subscription.yaml", Line: 3,
				Fields: []FieldChange{
					{Path: "spec.channel", New: "stable"}, {Path: "spec.installPlanApproval", New: "Manual"},
					{Path: "spec.name", New: "etcd"}, {Path: "spec.source", New: "community-operators"},
					{Path: "spec.sourceNamespace", New: "openshift-marketplace"}, {Path: "spec.startingCSV", New: "etcdoperator.v0.9.4"},
				},
			},
			{
				Type: ChangeModified, Object: subLoki, App: "cluster-scope", Cluster: "c1", File: "cluster-scope/base/loki/subscription.yaml", Line: 1,
				Fields: []FieldChange{
					{Path: "spec.channel", Old: "stable-5.8", New: "stable-5.9"},
					{Path: "spec.installPlanApproval", Old: "", New: "Manual"},
				},
			},
			{
				Type: ChangeModified, Object: ogLog, App: "cluster-scope", Cluster: "c1", File: logFile, Line: 12,
				Fields: []FieldChange{
					{Path: "spec.targetNamespaces", Old: "[openshift-logging]", New: "[openshift-logging, 100%: all, of them]"},
					{Path: "spec.upgradeStrategy", Omitted: true},
				},
			},
			{
				Type: ChangeRemoved, Object: ogOld, App: "etcd", Cluster: "c1", File: "apps/etcd/operatorgroup.yaml", Line: 1,
				Fields: []FieldChange{{Path: "spec.targetNamespaces", Old: "[etcd]"}},
			},
		},
		Problems: []Problem{
			{App: "broken", File: "apps/broken/kustomization.yaml", Line: 7, Message: "accumulate resources: evalsymlink failure on 'apps/broken/base': lstat apps/broken/base: no such file or directory"},
			{App: "legacy", File: "apps/legacy/kustomization.yaml", Message: "base revision: kustomization has an unknown field \"bases\"", Base: true},
		},
		Warnings: []Warning{
			{File: "apps/common/kustomization.yaml", Message: "'commonLabels' is deprecated; run 'kustomize edit fix' to use 'labels'", Apps: []string{"odh"}},
			{File: "apps/common/kustomization.yaml", Message: "'commonLabels' is deprecated; run 'kustomize edit fix' to use 'labels'", Apps: []string{"etcd"}},
		},
		Objects: []Object{
			{App: "etcd", Cluster: "c1", File: "apps/etcd/subscription.yaml", Line: 3, Object: subEtcd},
			{App: "etcd", Cluster: "c1", File: "apps/etcd/namespace.yaml", Line: 1, Object: nsEtcd},
			{App: "etcd", Cluster: "c1", File: "apps/etcd/configmap.yaml", Line: 1, Object: cmApp},
			{App: "cluster-scope", Cluster: "c1", File: logFile, Line: 12, Object: ogLog},
			{App: "cluster-scope", Cluster: "c1", File: logFile, Line: 30, Object: csvLog},
			{App: "cluster-scope", Cluster: "c1", File: "cluster-scope/base/loki/subscription.yaml", Line: 1, Object: subLoki},
			{App: "odh", Cluster: "c1", File: "apps/odh/csv.yaml", Line: 1, Object: csvOdh},
			{App: "odh", Cluster: "c1", File: "apps/odh/installplan.yaml", Line: 1, Object: ipOdh},
			{App: "odh", Cluster: "c1", File: "apps/odh/subscription.yaml", Line: 9, Object: subOdh},
		},
	}
	if err := Complete(r, FailOnNew); err != nil {
		t.Fatalf("complete fixture: %v", err)
	}
	return r
}

// noBaseReport is the fixture as a check without --base would report it.
func noBaseReport(t testing.TB) *Report {
	t.Helper()
	r := fixtureReport(t)
	r.Base, r.Changes = nil, nil
	for i := range r.Violations {
		r.Violations[i].Status = ""
	}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatalf("complete fixture: %v", err)
	}
	return r
}

// cleanReport is a check that found nothing.
func cleanReport(t testing.TB) *Report {
	t.Helper()
	r := &Report{
		Tool:     Tool{Name: "olmsync", Version: "devel"},
		Revision: Revision{Ref: "worktree"},
		Apps:     []App{{Name: "cluster-scope", Path: "cluster-scope", ClusterScope: true}},
		Rules:    catalog(),
	}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatalf("complete fixture: %v", err)
	}
	return r
}
