package gitsync

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

func TestAddToHistory(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(m int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(m) * time.Minute)) }
	snap := func(rev, result string, first, last int, total int64, applied bool) olmsyncv1alpha1.ReconcileSnapshot {
		return olmsyncv1alpha1.ReconcileSnapshot{Revision: rev, FirstReconciled: at(first), LastReconciled: at(last),
			LastReconciledDuration: metav1.Duration{Duration: 2 * time.Second}, LastReconciledStatus: result, Applied: applied, TotalReconciles: total}
	}
	run := func(rev, result string, m int, applied, changed bool) reconcileRun {
		return reconcileRun{revision: rev, started: t0.Add(time.Duration(m) * time.Minute), took: 2 * time.Second, result: result, applied: applied, changed: changed}
	}
	full := make([]olmsyncv1alpha1.ReconcileSnapshot, 0, olmsyncv1alpha1.MaxHistory)
	for i := range olmsyncv1alpha1.MaxHistory {
		full = append(full, snap(fmt.Sprintf("main@sha1:%d", i), "ReconciliationSucceeded", -i, -i, 1, true))
	}
	tests := []struct {
		name   string
		before []olmsyncv1alpha1.ReconcileSnapshot
		run    reconcileRun
		want   []olmsyncv1alpha1.ReconcileSnapshot
	}{
		{"first apply", nil, run("main@sha1:a", "ReconciliationSucceeded", 0, true, true),
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 0, 0, 1, true)}},
		{"a health look that changes nothing adds nothing",
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 0, 0, 1, true)},
			run("main@sha1:a", "ReconciliationSucceeded", 5, false, false),
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 0, 0, 1, true)}},
		{"the same revision applied again with the same result is counted",
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 0, 0, 1, true)},
			run("main@sha1:a", "ReconciliationSucceeded", 10, true, false),
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 0, 10, 2, true)}},
		{"a new result of the same revision is a new entry, without an apply",
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "Progressing", 0, 0, 1, true)},
			run("main@sha1:a", "ReconciliationSucceeded", 1, false, true),
			[]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:a", "ReconciliationSucceeded", 1, 1, 1, false), snap("main@sha1:a", "Progressing", 0, 0, 1, true)}},
		{"a new revision pushes the oldest out", full, run("main@sha1:new", "ReconciliationSucceeded", 1, true, false),
			append([]olmsyncv1alpha1.ReconcileSnapshot{snap("main@sha1:new", "ReconciliationSucceeded", 1, 1, 1, true)}, full[:olmsyncv1alpha1.MaxHistory-1]...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]olmsyncv1alpha1.ReconcileSnapshot(nil), tc.before...)
			got := addToHistory(tc.before, tc.run)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.before); diff != "" {
				t.Errorf("the history passed in was changed (-before +after)\n%s", diff)
			}
		})
	}
}
