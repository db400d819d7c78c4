package phase

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
)

// TestNextWithWebhooksAndAPIServices holds OLM's transitions and literal messages for a CSV
// that serves webhooks or owns API services (OLM's transitionCSVState and
// updateInstallStatus, pkg/controller/operators/olm/operator.go).
func TestNextWithWebhooksAndAPIServices(t *testing.T) {
	waiting := &install.StrategyError{Reason: install.ReasonWaiting,
		Message: `waiting for deployment cert-manager-webhook to become ready: deployment "cert-manager-webhook" not available: missing condition "Available"`}
	withWebhooks := func(c *v1alpha1.ClusterServiceVersion, ws ...v1alpha1.WebhookDescription) *v1alpha1.ClusterServiceVersion {
		c.Spec.WebhookDefinitions = ws
		return c
	}
	vwh := v1alpha1.WebhookDescription{GenerateName: "vetcd.kb.io", Type: v1alpha1.ValidatingAdmissionWebhook}
	conversion := v1alpha1.WebhookDescription{GenerateName: "cetcd.kb.io", Type: v1alpha1.ConversionWebhook, ConversionCRDs: []string{"etcdclusters.etcd.database.coreos.com"}}
	ownNamespace := func(c *v1alpha1.ClusterServiceVersion) *v1alpha1.ClusterServiceVersion {
		c.Spec.InstallModes = []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true}, {Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true}}
		c.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com"}}
		return c
	}
	since := now.Add(-time.Minute)
	installing := func() *v1alpha1.ClusterServiceVersion {
		return csvIn(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonInstallSuccessful, MessageInstallWaiting, since)
	}
	succeeded := func() *v1alpha1.ClusterServiceVersion {
		return csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, since)
	}
	failed := func() *v1alpha1.ClusterServiceVersion {
		return csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy, "installing: webhooks not installed", since)
	}
	tests := []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		f    Facts
		want Decision
	}{
		{
			name: "Pending with two webhooks of one name",
			csv:  withWebhooks(csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, since), vwh, vwh),
			f:    Facts{Requirements: met},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidWebhookDescription, "CSV contains repeated WebhookDescription name"), WriteRequirements: true},
		},
		{
			name: "Pending with a webhook on OLM's group",
			csv: withWebhooks(csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, since), v1alpha1.WebhookDescription{
				GenerateName: "v.kb.io", Rules: []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{APIGroups: []string{"operators.coreos.com"}}}},
			}),
			f:    Facts{Requirements: met},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidWebhookDescription, "webhook rules cannot include the OLM group"), WriteRequirements: true},
		},
		{
			name: "an invalid webhook waits for the requirements first",
			csv:  withWebhooks(csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, since), vwh, vwh),
			f:    Facts{},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound), WriteRequirements: true},
		},
		{
			name: "Pending with an APIService another CSV owns",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, since),
			f:    Facts{Requirements: met, APIServiceOwnerConflict: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, "unable to adopt APIService"), WriteRequirements: true},
		},
		{
			name: "InstallReady with a conversion webhook of an operator not only for all namespaces",
			csv:  withWebhooks(ownNamespace(csvIn(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet, since)), conversion),
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed,
				"install strategy failed: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces")},
		},
		{
			name: "that failure stays: OLM would reinstall and fail again forever",
			csv: withWebhooks(ownNamespace(csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed,
				"install strategy failed: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces", since)), conversion),
			f:    Facts{Requirements: met},
			want: Decision{Wait: "install strategy failed: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces"},
		},
		{
			name: "Installing while the webhook's deployment is not ready",
			csv:  installing(),
			f:    Facts{Now: now, Installed: waiting},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "installing: "+waiting.Message), Wait: waiting.Message, RequeueAfter: InstallTimeout - time.Minute},
		},
		{
			name: "Installing while an APIService is not Available comes before the deployments",
			csv:  installing(),
			f:    Facts{Now: now, Installed: waiting, APIServicesMissing: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "apiServices not installed"), Wait: "apiServices not installed", RequeueAfter: InstallTimeout - time.Minute},
		},
		{
			name: "Installing with a webhook configuration missing",
			csv:  installing(),
			f:    Facts{Now: now, WebhooksMissing: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "webhooks not installed"), Wait: "webhooks not installed", RequeueAfter: InstallTimeout - time.Minute},
		},
		{
			name: "Installing with a conversion webhook not in its CRD yet",
			csv:  installing(),
			f:    Facts{Now: now, WebhooksErr: install.ErrConversionNotReady},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonWaiting, "Webhook install failed: conversionWebhook not ready")},
		},
		{
			name: "Installing when the APIServices cannot be read",
			csv:  installing(),
			f:    Facts{Now: now, APIServicesErr: errors.New("boom")},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonAPIServiceInstallFailed, "APIService install failed: boom")},
		},
		{
			name: "Installing without the CA a deployment mounts",
			csv:  installing(),
			f:    Facts{Now: now, ExpectedErr: errors.New("unable to get secret x-service-cert")},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, "calculated deployment install is bad")},
		},
		{
			name: "Installing succeeds with everything there",
			csv:  installing(),
			f:    Facts{Now: now},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded)},
		},
		{
			name: "Succeeded with an API service's resources broken",
			csv:  succeeded(),
			f:    Facts{Requirements: met, CertResourcesErr: errors.New("secret x-service-cert CA cert hash does not match expected")},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonAPIServiceResourceIssue, "secret x-service-cert CA cert hash does not match expected")},
		},
		{
			name: "Succeeded with a certificate due",
			csv:  succeeded(),
			f:    Facts{Requirements: met, RotateCerts: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsCertRotation, "CSV owns resources that require a cert refresh")},
		},
		{
			name: "Succeeded with a webhook configuration deleted",
			csv:  succeeded(),
			f:    Facts{Requirements: met, WebhooksMissing: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy, "webhooks not installed")},
		},
		{
			name: "Failed with a certificate due",
			csv:  failed(),
			f:    Facts{Requirements: met, RotateCerts: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsCertRotation, "owned APIServices need cert refresh")},
		},
		{
			name: "Failed with API service resources a reinstall fixes",
			csv:  failed(),
			f:    Facts{Requirements: met, CertResourcesErr: errors.New(`service "x-service" not found`)},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonAPIServiceResourcesNeedReinstall, `service "x-service" not found`)},
		},
		{
			name: "Failed with an APIService of another owner stays",
			csv:  failed(),
			f:    Facts{Requirements: met, CertResourcesErr: errors.New("v1.example.com is unadoptable"), CertResourcesUnadoptable: true},
			want: Decision{Wait: "v1.example.com is unadoptable"},
		},
		{
			name: "Failed with the webhooks missing goes back to Pending",
			csv:  failed(),
			f:    Facts{Requirements: met, WebhooksMissing: true},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, "webhooks not installed")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.csv, tt.f)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
}
