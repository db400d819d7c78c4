package installplan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

// TestBundleLookupStrings holds OLM's literals (operator-lifecycle-manager
// pkg/controller/bundle/bundle_unpacker.go, pkg/controller/operators/catalog/operator.go and
// the Job controller's words OLM copies): a change to any of them is a change of OLM's
// observable contract.
func TestBundleLookupStrings(t *testing.T) {
	for got, want := range map[string]string{
		string(v1alpha1.BundleLookupPending):                 "BundleLookupPending",
		string(v1alpha1.BundleLookupFailed):                  "BundleLookupFailed",
		string(v1alpha1.BundleLookupNotPersisted):            "BundleLookupNotPersisted",
		v1alpha1.BundleLookupReasonNotUnpacked:               "BundleNotUnpacked",
		v1alpha1.BundleLookupMessageNotUnpacked:              "bundle contents have not yet been persisted to installplan status",
		v1alpha1.BundleLookupReasonJobNotStarted:             "JobNotStarted",
		v1alpha1.BundleLookupMessageJobNotStarted:            "unpack job not yet started",
		v1alpha1.BundleLookupReasonJobIncomplete:             "JobIncomplete",
		v1alpha1.BundleLookupMessageJobIncomplete:            "unpack job not completed",
		v1alpha1.BundleLookupReasonCatalogSourceMissing:      "CatalogSourceMissing",
		v1alpha1.BundleLookupMessageCatalogSourceMissing:     "referenced catalogsource not found",
		v1alpha1.BundleLookupReasonDeadlineExceeded:          "DeadlineExceeded",
		v1alpha1.BundleLookupMessageDeadlineExceeded:         "Job was active longer than specified deadline",
		v1alpha1.MessageBundleUnpackingFailed:                "bundle unpacking failed. Reason: %v, and Message: %v",
		string(v1alpha1.InstallPlanReasonInstallCheckFailed): "InstallCheckFailed",
		BundleUnpackTimeoutAnnotation:                        "operatorframework.io/bundle-unpack-timeout",
		DefaultBundleUnpackTimeout.String():                  "10m0s",
	} {
		if got != want {
			t.Errorf("%q, OLM's is %q", got, want)
		}
	}
}

func TestUnpackTimeout(t *testing.T) {
	group := func(annotations map[string]string) operatorsv1.OperatorGroup {
		g := operatorsv1.OperatorGroup{}
		g.Namespace, g.Name, g.Annotations = "ns", "og", annotations
		return g
	}
	const def = 7 * time.Minute
	tests := []struct {
		name    string
		groups  []operatorsv1.OperatorGroup
		want    time.Duration
		wantErr string
	}{
		{"no group", nil, def, "found 0 operatorGroups, expected 1"},
		{"two groups", []operatorsv1.OperatorGroup{group(nil), group(nil)}, def, "found 2 operatorGroups, expected 1"},
		{"no annotation", []operatorsv1.OperatorGroup{group(nil)}, def, ""},
		{"annotation", []operatorsv1.OperatorGroup{group(map[string]string{BundleUnpackTimeoutAnnotation: "1m30s"})}, 90 * time.Second, ""},
		{"no limit", []operatorsv1.OperatorGroup{group(map[string]string{BundleUnpackTimeoutAnnotation: "0"})}, 0, ""},
		{"negative: ignored", []operatorsv1.OperatorGroup{group(map[string]string{BundleUnpackTimeoutAnnotation: "-1m"})}, def, ""},
		{"invalid", []operatorsv1.OperatorGroup{group(map[string]string{BundleUnpackTimeoutAnnotation: "invalid"})}, def,
			`failed to parse unpack timeout annotation(operatorframework.io/bundle-unpack-timeout: invalid): time: invalid duration "invalid"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UnpackTimeout(tt.groups, def)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("got %v, %q; want %v, %q", got, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}

// conds renders a lookup's conditions as type/reason: message, in order.
func conds(l *v1alpha1.BundleLookup) string {
	var out []string
	for _, c := range l.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}

func TestUpdateLookup(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fresh := func() *v1alpha1.BundleLookup {
		l, err := resolve.NewBundleLookup(resolve.Bundle{Name: "a.v1", Package: "a", Content: nil, Source: resolve.CatalogKey{Name: "c", Namespace: "ns"}})
		if err != nil {
			t.Fatal(err)
		}
		return &l
	}
	pulling := func() *v1alpha1.BundleLookup {
		l := fresh()
		UpdateLookup(l, Attempt{}, start, time.Minute)
		return l
	}
	boom := errors.New("GET https://r.example/v2/a/manifests/v1: UNAUTHORIZED")
	const notPersisted = "BundleLookupNotPersisted=True/BundleNotUnpacked: bundle contents have not yet been persisted to installplan status"
	tests := []struct {
		name    string
		lookup  *v1alpha1.BundleLookup
		attempt Attempt
		after   time.Duration
		timeout time.Duration
		want    LookupState
		conds   string
	}{
		{"new", fresh(), Attempt{}, 0, time.Minute, LookupPending,
			notPersisted + "; BundleLookupPending=True/JobIncomplete: unpack job not completed"},
		{"catalog missing", fresh(), Attempt{CatalogSourceMissing: true}, 0, time.Minute, LookupPending,
			notPersisted + "; BundleLookupPending=True/CatalogSourceMissing: referenced catalogsource not found"},
		{"a try failed", pulling(), Attempt{Done: true, Err: boom}, 30 * time.Second, time.Minute, LookupPending,
			notPersisted + "; BundleLookupPending=True/JobIncomplete: unpack job not completed: " + boom.Error()},
		{"past the deadline", pulling(), Attempt{Done: true, Err: boom}, time.Minute, time.Minute, LookupFailed,
			notPersisted + "; BundleLookupPending=True/JobIncomplete: unpack job not completed: " + boom.Error() +
				"; BundleLookupFailed=True/DeadlineExceeded: Job was active longer than specified deadline"},
		{"no deadline", pulling(), Attempt{Done: true, Err: boom}, time.Hour, 0, LookupPending,
			notPersisted + "; BundleLookupPending=True/JobIncomplete: unpack job not completed: " + boom.Error()},
		{"permanent", pulling(), Attempt{Done: true, Err: errors.New("not a bundle"), Permanent: true}, 0, time.Minute, LookupFailed,
			notPersisted + "; BundleLookupPending=True/JobIncomplete: unpack job not completed; BundleLookupFailed=True/UnpackFailed: not a bundle"},
		{"unpacked", pulling(), Attempt{Done: true}, 0, time.Minute, LookupUnpacked, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UpdateLookup(tt.lookup, tt.attempt, metav1.NewTime(start.Add(tt.after)), tt.timeout)
			if got != tt.want || conds(tt.lookup) != tt.conds {
				t.Errorf("state %v, conditions\n%s\nwant %v,\n%s", got, conds(tt.lookup), tt.want, tt.conds)
			}
			if got != StateOf(tt.lookup) {
				t.Errorf("StateOf says %v, UpdateLookup %v", StateOf(tt.lookup), got)
			}
		})
	}

	t.Run("the pending time is when unpacking started", func(t *testing.T) {
		l := pulling()
		UpdateLookup(l, Attempt{Done: true, Err: boom}, metav1.NewTime(start.Add(10*time.Second)), time.Minute)
		UpdateLookup(l, Attempt{Done: true, Err: errors.New("other")}, metav1.NewTime(start.Add(20*time.Second)), time.Minute)
		if c := lookupCondition(l, v1alpha1.BundleLookupPending); !c.LastTransitionTime.Equal(&start) {
			t.Errorf("transition time %v, want %v", c.LastTransitionTime, start)
		}
		if got := LastUnpackError(l); got != "other" {
			t.Errorf("last error %q", got)
		}
	})
	t.Run("a failed lookup stays failed", func(t *testing.T) {
		l := pulling()
		UpdateLookup(l, Attempt{Done: true, Err: errors.New("x"), Permanent: true}, start, time.Minute)
		if got := UpdateLookup(l, Attempt{Done: true}, start, time.Minute); got != LookupFailed || lookupCondition(l, v1alpha1.BundleLookupFailed).Status != corev1.ConditionTrue {
			t.Errorf("state %v, conditions %s", got, conds(l))
		}
	})
}
