package operators_test

import (
	"errors"
	"strings"
	"testing"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"

	"github.com/olmsync/olmsync/api/operators"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name        string
		manifest    string
		wantErr     string
		wantUnknown []string
		check       func(t *testing.T, d *operators.Decoded)
	}{
		{
			name: "subscription",
			manifest: `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: operators}
spec: {name: etcd, channel: alpha, source: community, sourceNamespace: olm}`,
			check: func(t *testing.T, d *operators.Decoded) {
				sub := d.Object.(*operatorsv1alpha1.Subscription)
				if sub.Spec.Package != "etcd" || sub.Spec.Channel != "alpha" || sub.InstallPlanApproval() != operatorsv1alpha1.ApprovalAutomatic {
					t.Errorf("decoded %+v", sub.Spec)
				}
			},
		},
		{
			name: "global operatorgroup with null spec",
			manifest: `apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: global, namespace: operators}
spec:`,
			check: func(t *testing.T, d *operators.Decoded) {
				og := d.Object.(*operatorsv1.OperatorGroup)
				if og.Spec.Selector != nil || len(og.Spec.TargetNamespaces) != 0 {
					t.Errorf("decoded %+v", og.Spec)
				}
			},
		},
		{
			name: "unknown fields are reported",
			manifest: `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
"metadata": {"name": "x"}, "spec": {"name": "a", "approval": "Manual", "config": {"envs": []}}}`,
			wantUnknown: []string{`unknown field "spec.approval"`, `unknown field "spec.config.envs"`},
		},
		{
			name:     "a duplicate key is an error naming its line",
			manifest: "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nspec:\n  name: a\n  name: b\n",
			wantErr:  "line 5",
		},
		{
			name:     "a duplicate key in JSON is the same error",
			manifest: `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "spec": {"name": "a", "name": "b"}}`,
			wantErr:  `line 1: key "name" already set in map`,
		},
		{
			name: "JSON that only YAML reads decodes as YAML reads it",
			manifest: `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "x"},
"spec": {"install": {"strategy": "deployment", "spec": {"deployments": [{"name": "d", "spec": {"replicas": 2.0, "selector": null, "template": {}}}]}}}}`,
			check: func(t *testing.T, d *operators.Decoded) {
				deps := d.Object.(*operatorsv1alpha1.ClusterServiceVersion).Spec.InstallStrategy.StrategySpec.DeploymentSpecs
				if len(deps) != 1 || deps[0].Spec.Replicas == nil || *deps[0].Spec.Replicas != 2 {
					t.Errorf("decoded %+v", deps)
				}
			},
		},
		{
			name:     "not an OLM kind",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			wantErr:  "not an operators.coreos.com kind",
		},
		{
			name:     "unknown OLM kind",
			manifest: "apiVersion: operators.coreos.com/v1alpha1\nkind: Operator\n",
			wantErr:  "not an operators.coreos.com kind",
		},
		{
			name:     "malformed YAML names the line",
			manifest: "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nspec:\n  name: [unclosed\n",
			wantErr:  "line 4",
		},
		{
			name:     "wrong value type",
			manifest: "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nspec:\n  approved: yes-please\n",
			wantErr:  "decode InstallPlan",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := operators.Decode([]byte(tt.manifest))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "not an") && !errors.Is(err, operators.ErrNotOLMKind) {
					t.Errorf("error %v is not ErrNotOLMKind", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(d.UnknownFields, "|") != strings.Join(tt.wantUnknown, "|") {
				t.Errorf("unknown fields = %q, want %q", d.UnknownFields, tt.wantUnknown)
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}
