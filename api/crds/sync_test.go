package crds_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
)

// syncManifest is a valid Sync; the cases below change one field of it.
const syncManifest = `
apiVersion: olmsync.dev/v1alpha1
kind: Sync
metadata:
  name: NAME
spec:
  source:
    url: https://git.example.com/platform/clusters.git
    interval: 1m
  interval: 10m
  prune: true
`

// TestSyncValidation creates Syncs on the API server: the schema and its CEL rules must
// refuse every spec olmsync could never act on, with a message naming the field, and
// accept (and default) the valid ones.
func TestSyncValidation(t *testing.T) {
	env := testenv.Get(t)
	createNamespace(t, env, "sync-validation")
	cases := []struct {
		name    string
		edit    func(spec map[string]any)
		wantErr string // "" accepts
	}{
		{name: "minimal", edit: func(map[string]any) {}},
		{name: "branch-and-commit", edit: func(s map[string]any) {
			src(s)["ref"] = map[string]any{"branch": "main", "commit": strings.Repeat("a", 40)}
		}},
		{name: "semver", edit: func(s map[string]any) { src(s)["ref"] = map[string]any{"semver": ">=1.0.0 <2.0.0"} }},
		{name: "scp-like-url", edit: func(s map[string]any) { src(s)["url"] = "git@github.com:acme/clusters.git" }},
		{name: "everything", edit: func(s map[string]any) {
			src(s)["secretRef"] = map[string]any{"name": "git-creds"}
			src(s)["timeout"] = "30s"
			s["cluster"] = "alpha"
			s["path"] = "./clusters/prod"
			s["apps"] = []any{"team-a", "cluster-scope"}
			s["policy"] = map[string]any{"mode": "audit", "rules": []any{"policies/acme", "more/rules"}}
			s["suspend"] = true
			s["serviceAccountName"] = "olmsync-apply"
			s["webhook"] = map[string]any{"secretRef": map[string]any{"name": "hook"}}
		}},
		{name: "tag-and-semver", wantErr: "set at most one of tag, semver and commit", edit: func(s map[string]any) {
			src(s)["ref"] = map[string]any{"tag": "v1.0.0", "semver": ">=1.0.0"}
		}},
		{name: "branch-and-tag", wantErr: "a branch goes only with a commit", edit: func(s map[string]any) {
			src(s)["ref"] = map[string]any{"branch": "main", "tag": "v1.0.0"}
		}},
		{name: "short-commit", wantErr: "spec.source.ref.commit", edit: func(s map[string]any) {
			src(s)["ref"] = map[string]any{"commit": "abc123"}
		}},
		{name: "url-without-scheme", wantErr: "spec.source.url", edit: func(s map[string]any) { src(s)["url"] = "/srv/git/clusters" }},
		{name: "ftp-url", wantErr: "spec.source.url", edit: func(s map[string]any) { src(s)["url"] = "ftp://example.com/x.git" }},
		{name: "rules-escape", wantErr: "rule folders must stay inside the repository", edit: func(s map[string]any) {
			s["policy"] = map[string]any{"rules": []any{"policies/../../etc"}}
		}},
		{name: "rules-absolute", wantErr: "spec.policy.rules[0]", edit: func(s map[string]any) {
			s["policy"] = map[string]any{"rules": []any{"/etc/rules"}}
		}},
		{name: "path-escape", wantErr: "the path must stay inside the repository", edit: func(s map[string]any) { s["path"] = "clusters/../../etc" }},
		{name: "bad-mode", wantErr: "spec.policy.mode", edit: func(s map[string]any) { s["policy"] = map[string]any{"mode": "warn"} }},
		{name: "bad-interval", wantErr: "spec.interval", edit: func(s map[string]any) { s["interval"] = "ten minutes" }},
		{name: "no-prune", wantErr: "spec.prune", edit: func(s map[string]any) { delete(s, "prune") }},
		{name: "url-with-password", wantErr: "spec.source.url must not carry credentials (a password, http(s) userinfo, or a token in its query): put them in a Secret named by spec.source.secretRef", edit: func(s map[string]any) {
			src(s)["url"] = "https://user:hunter22@git.example.com/platform/clusters.git"
		}},
		{name: "url-with-token", wantErr: "must not carry credentials", edit: func(s map[string]any) {
			src(s)["url"] = "https://ghp_token@git.example.com/platform/clusters.git"
		}},
		{name: "ssh-url-with-password", wantErr: "must not carry credentials", edit: func(s map[string]any) {
			src(s)["url"] = "ssh://git:hunter22@git.example.com/platform/clusters.git"
		}},
		// A token in the query (issue 30: the CRD took it, and it reached the Ready
		// message, a Warning Event and the logs).
		{name: "url-with-query-private-token", wantErr: "must not carry credentials", edit: func(s map[string]any) {
			src(s)["url"] = "https://gitlab.example.com/platform/clusters.git?private_token=S3CRET"
		}},
		{name: "url-with-query-access-token", wantErr: "must not carry credentials", edit: func(s map[string]any) {
			src(s)["url"] = "http://git.example.com/clusters.git?x=1&Access_Token=S3CRET"
		}},
		{name: "url-with-query-signature", wantErr: "must not carry credentials", edit: func(s map[string]any) {
			src(s)["url"] = "https://git.example.com/clusters.git?X-Amz-Signature=abc"
		}},
		{name: "ssh-url-with-user", edit: func(s map[string]any) { src(s)["url"] = "ssh://git@git.example.com:2222/platform/clusters.git" }},
		{name: "https-url-with-port", edit: func(s map[string]any) { src(s)["url"] = "https://git.example.com:8443/platform/clusters.git?ref=a@b" }},
		{name: "prune-options", edit: func(s map[string]any) {
			s["pruneOptions"] = map[string]any{"allowEmpty": true, "maxDeletions": "25%", "operators": "Keep"}
		}},
		{name: "prune-options-count", edit: func(s map[string]any) { s["pruneOptions"] = map[string]any{"maxDeletions": 10} }},
		{name: "max-deletions-negative", wantErr: "maxDeletions is a count (0 or more) or a percentage (0% to 100%)", edit: func(s map[string]any) {
			s["pruneOptions"] = map[string]any{"maxDeletions": -1}
		}},
		{name: "max-deletions-not-a-percentage", wantErr: "maxDeletions is a count", edit: func(s map[string]any) {
			s["pruneOptions"] = map[string]any{"maxDeletions": "ten"}
		}},
		{name: "max-deletions-over-100", wantErr: "maxDeletions is a count", edit: func(s map[string]any) {
			s["pruneOptions"] = map[string]any{"maxDeletions": "150%"}
		}},
		{name: "prune-operators-unknown", wantErr: "spec.pruneOptions.operators", edit: func(s map[string]any) {
			s["pruneOptions"] = map[string]any{"operators": "Orphan"}
		}},
		{name: "no-source-interval", wantErr: "spec.source.interval", edit: func(s map[string]any) { delete(src(s), "interval") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(strings.Replace(syncManifest, "NAME", tc.name, 1)), &u.Object); err != nil {
				t.Fatal(err)
			}
			u.SetNamespace("sync-validation")
			tc.edit(u.Object["spec"].(map[string]any))
			err := env.Client.Create(t.Context(), u)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("accepted, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}

	// The typed client reads what was stored, defaults included.
	got := &olmsyncv1alpha1.Sync{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: "sync-validation", Name: "minimal"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Policy.Mode != olmsyncv1alpha1.PolicyModeEnforce {
		t.Errorf("policy.mode defaulted to %q, want enforce", got.Spec.Policy.Mode)
	}
	if got.Spec.Interval.Duration.String() != "10m0s" {
		t.Errorf("interval = %s, want 10m", got.Spec.Interval.Duration)
	}
	if got.Spec.PruneOptions.Operators != olmsyncv1alpha1.PruneOperatorsDelete || got.Spec.PruneOptions.AllowEmpty || got.Spec.PruneOptions.MaxDeletions != nil {
		t.Errorf("pruneOptions defaulted to %+v, want operators Delete and nothing else", got.Spec.PruneOptions)
	}
}

func src(spec map[string]any) map[string]any { return spec["source"].(map[string]any) }

// TestSyncStatusRoundTrip writes a full status through the status subresource and reads it
// back unchanged: every field the reconciler reports survives the schema.
func TestSyncStatusRoundTrip(t *testing.T) {
	env := testenv.Get(t)
	createNamespace(t, env, "sync-status")
	obj := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: "sync-status", Name: "clusters"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: "https://git.example.com/c.git", Interval: metav1.Duration{Duration: 60e9}},
			Interval: metav1.Duration{Duration: 600e9},
			Prune:    true,
		},
	}
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	sub := olmsyncv1alpha1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-a", Name: "etcd"}
	want := olmsyncv1alpha1.SyncStatus{
		ObservedGeneration:     1,
		LastHandledReconcileAt: "2026-11-23T10:00:00Z",
		LastFetchedRevision:    "main@sha1:" + strings.Repeat("b", 40),
		LastAppliedRevision:    "main@sha1:" + strings.Repeat("a", 40),
		Conditions: []metav1.Condition{{
			Type: olmsyncv1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: olmsyncv1alpha1.PolicyViolationReason,
			Message: "1 object breaks a rule", LastTransitionTime: metav1.Now().Rfc3339Copy(), ObservedGeneration: 1,
		}},
		Inventory: &olmsyncv1alpha1.ResourceInventory{Entries: []olmsyncv1alpha1.ResourceRef{
			{ID: "_team-a__Namespace", Version: "v1"},
			{ID: "team-a_etcd_operators.coreos.com_Subscription", Version: "v1alpha1"},
		}},
		Apps: []olmsyncv1alpha1.AppStatus{{
			Name: "team-a", Path: "team-a/overlays/alpha", Namespace: "team-a",
			Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: olmsyncv1alpha1.HealthWaitingForApproval,
			Message: "1 object waits for a Manual approval", Objects: 2,
			Resources: []olmsyncv1alpha1.ResourceStatus{{
				ObjectReference: sub, Sync: olmsyncv1alpha1.SyncStatusSynced, Health: olmsyncv1alpha1.HealthWaitingForApproval,
				Reason: olmsyncv1alpha1.WaitingForApprovalReason, Message: "InstallPlan install-abcde requires approval",
			}},
		}},
		Violations: []olmsyncv1alpha1.PolicyViolation{{
			Rule: "OP007", Severity: "error", Message: "Subscription outside its app's namespace", App: "team-a",
			File: "team-a/base/subscription.yaml", Line: 1, Object: &sub, Gated: true,
		}},
		ViolationCount: 1,
		LastPrune: &olmsyncv1alpha1.PruneSummary{Revision: "main@sha1:" + strings.Repeat("a", 40), Stale: 7,
			Deleted: 3, Gone: 1, Kept: 1, Failed: 2, Message: "2 object(s) could not be deleted: forbidden"},
		LastRevisionChange: &olmsyncv1alpha1.RevisionChange{From: "main@sha1:" + strings.Repeat("c", 40),
			To: "main@sha1:" + strings.Repeat("a", 40), Relation: olmsyncv1alpha1.RevisionBackward},
	}
	obj.Status = *want.DeepCopy()
	if err := env.Client.Status().Update(t.Context(), obj); err != nil {
		t.Fatalf("status update: %v", err)
	}
	got := &olmsyncv1alpha1.Sync{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if diff := semanticDiff(want, got.Status); diff != "" {
		t.Errorf("status came back changed (-want +got):\n%s", diff)
	}
}
