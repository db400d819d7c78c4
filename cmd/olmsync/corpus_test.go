package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/report"
)

// The tests of this file run `olmsync check` on a real public GitOps repository with its
// history (../shared/data/corpora), with no configuration, as a new user would (issue 29).

// gitopsCatalog is a clone of redhat-cop/gitops-catalog.
func gitopsCatalog(t *testing.T) string {
	t.Helper()
	return shareddata.Corpus(t, t.TempDir(), shareddata.GitOpsCatalog)
}

// TestCorpusGitOpsCatalog: at 7727f24 the check found 865 errors in 319 apps, about four
// of them real: every root was an app, none of them the cluster-scope app, and channel
// overlay folders were taken for clusters. The repository deploys nothing itself: its
// roots are library roots, and what is left is what is wrong with them wherever they are
// deployed. Each error below is a real defect:
//   - loki-operator's Subscription is in openshift-operators-redhat, where its root (each
//     of its channel overlays) declares no OperatorGroup: OLM resolves nothing there;
//   - custom-metrics-autoscaler's base has an operatorgroup.yaml its kustomization does not
//     list, so openshift-keda has no OperatorGroup;
//   - business-automation-operator's and patch-operator's Subscriptions have no namespace:
//     applied as they are, they land in whatever namespace the user is in, with no
//     OperatorGroup (patch-operator's own group is in namespace patch-operator).
//
// No OperatorGroups of two operators' entries are compared (OP004), and no placement rule
// fires. The ten remote resources it names (remote bases are off) are problems: exit 2.
func TestCorpusGitOpsCatalog(t *testing.T) {
	dir := gitopsCatalog(t)
	r, err := checkJSON(t, dir, "--ref", shareddata.GitOpsCatalogHead)
	wantExit(t, err, exitUsage)
	want := []string{
		"OP005 business-automation-operator/operator/base/subscription.yaml business-automation-operator/aggregate/overlays/default",
		"OP005 loki-operator/operator/base/subscription.yaml loki-operator/operator/overlays/stable,loki-operator/operator/overlays/stable-5.8,loki-operator/operator/overlays/stable-5.9",
		"OP005 openshift-custom-metrics-autoscaler/operator/base/subscription.yaml openshift-custom-metrics-autoscaler/operator/overlays/stable",
		"OP005 patch-operator/operator/base/subscription.yaml patch-operator/operator/overlays/alpha",
	}
	if diff := cmp.Diff(want, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if r.Summary.Errors != len(want) || r.Summary.Apps != 319 || r.Summary.LibraryRoots != 319 {
		t.Errorf("summary %+v", r.Summary)
	}
	for _, v := range r.Violations {
		if v.Rule == "OP004" {
			t.Errorf("OP004 between catalog entries: %+v", v)
		}
	}
	for _, p := range r.Problems {
		if !strings.Contains(p.Message, "remote bases are off (enable them with --allow-remote-bases)") {
			t.Errorf("problem %+v: want only remote references, in the CLI's words", p)
		}
	}
	if len(r.Problems) != 3 {
		t.Errorf("%d problems, want 3: one per remote reference, however many apps include it: %+v", len(r.Problems), r.Problems)
	}
}

// TestCorpusGitOpsCatalogPullRequests replays merged pull requests with --base (the first
// parent) and --fail-on new. Four only move or rename folders and files: before, the
// violations of every moved root were new and each failed (#404 with 12 "new" errors).
// #391 adds custom-metrics-autoscaler with an OperatorGroup its kustomization leaves out:
// a real new OP005, and the OperatorGroup file an unchecked change.
func TestCorpusGitOpsCatalogPullRequests(t *testing.T) {
	dir := gitopsCatalog(t)
	for _, pr := range []struct {
		number, merge string
		exit          int
		newErrors     []string
	}{
		{"404", "15ec622", 0, nil},
		{"288", "1d4139a", 0, nil},
		{"281", "cb6a517", 0, nil},
		{"261", "a3af896", 0, nil},
		{"391", "d160284", exitFindings, []string{"OP005 openshift-custom-metrics-autoscaler/operator/base/subscription.yaml openshift-custom-metrics-autoscaler/operator/overlays/stable"}},
	} {
		t.Run("#"+pr.number, func(t *testing.T) {
			r, err := checkJSON(t, dir, "--ref", pr.merge, "--base", pr.merge+"^1", "--fail-on", "new")
			wantExit(t, err, pr.exit)
			var news []string
			rows := violationRows(r)
			for i, v := range r.Violations {
				if v.Status == report.StatusNew && v.Severity == report.SeverityError {
					news = append(news, rows[i])
				}
			}
			if diff := cmp.Diff(pr.newErrors, news); diff != "" {
				t.Errorf("new errors (-want +got):\n%s", diff)
			}
			for _, p := range r.Problems {
				if !p.Base && p.Status == report.StatusNew {
					t.Errorf("new problem %+v", p)
				}
			}
		})
	}
	r, _ := checkJSON(t, dir, "--ref", "d160284", "--base", "d160284^1", "--fail-on", "new")
	var unchecked []string
	for _, w := range r.Warnings {
		if w.Unchecked {
			unchecked = append(unchecked, w.File)
		}
	}
	if diff := cmp.Diff([]string{"openshift-custom-metrics-autoscaler/operator/base/operatorgroup.yaml"}, unchecked); diff != "" {
		t.Errorf("#391's unchecked changes (-want +got):\n%s", diff)
	}
}
