package gitsync

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/notify"
)

// NotificationFailedReason is the Warning Event of a commit status the forge did not take.
const NotificationFailedReason = "NotificationFailed"

// notify posts the outcome of this reconcile's revision as a commit status (spec.notify),
// once per change of what it says: a Sync at the same revision and state posts nothing
// more; one the forge refused is tried again at the next reconcile. A reconcile that did not
// read the revision (a failed fetch, a dependency not ready, suspended) posts nothing.
func (r *Reconciler) notify(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) {
	spec := obj.Spec.Notify
	if spec == nil || p.tree == nil || p.fetchErr != nil || obj.Spec.Suspend {
		return
	}
	commit := commitOf(p.tree.Revision)
	if commit == "" {
		return // a working tree (file:// with local changes) has no commit to post on
	}
	st := commitStatus(obj)
	st.Commit, st.Context, st.TargetURL = commit, "olmsync/"+obj.Namespace+"/"+obj.Name, spec.TargetURL
	last := obj.Status.LastCommitStatus
	if last != nil && last.Revision == p.tree.Revision && last.State == string(st.State) && last.Description == st.Description && last.Error == "" {
		return
	}
	record := &olmsyncv1alpha1.CommitStatus{Revision: p.tree.Revision, State: string(st.State), Description: st.Description}
	if err := r.postStatus(ctx, obj, st); err != nil {
		record.Error = err.Error()
		r.eventf(obj, corev1.EventTypeWarning, NotificationFailedReason, "Notify", "commit status for %s not posted: %s", commit, err)
	} else {
		log.FromContext(ctx).Info("commit status posted", "commit", commit, "state", st.State, "provider", spec.Provider)
	}
	obj.Status.LastCommitStatus = record
}

// postStatus reads the token and posts.
func (r *Reconciler) postStatus(ctx context.Context, obj *olmsyncv1alpha1.Sync, st notify.Status) error {
	spec := obj.Spec.Notify
	address := spec.Address
	if address == "" {
		address = obj.Spec.Source.URL
	}
	target, err := notify.TargetOf(notify.Provider(spec.Provider), address, spec.APIURL)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: spec.SecretRef.Name}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		return fmt.Errorf("read Secret %s of spec.notify.secretRef: %w", key, err)
	}
	token := strings.TrimSpace(string(secret.Data["token"]))
	if token == "" {
		return fmt.Errorf("spec.notify.secretRef: Secret %s has %w under the key \"token\"", key, notify.ErrNoToken)
	}
	return notify.Post(ctx, r.Options.HTTPClient, target, st, token)
}

// commitStatus says what the Sync's Ready condition means for the commit.
func commitStatus(obj *olmsyncv1alpha1.Sync) notify.Status {
	ready := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition)
	name := obj.Namespace + "/" + obj.Name
	switch {
	case ready == nil || ready.Status == metav1.ConditionUnknown:
		return notify.Status{State: notify.Pending, Description: "applied by " + name + "; waiting for the apps to become healthy"}
	case ready.Status == metav1.ConditionTrue:
		return notify.Status{State: notify.Success, Description: "applied by " + name + ", every app healthy"}
	case ready.Reason == olmsyncv1alpha1.PolicyViolationReason:
		return notify.Status{State: notify.Failure, Description: fmt.Sprintf("blocked by the placement rules in %s: %d violation(s)", name, obj.Status.ViolationCount)}
	case ready.Reason == olmsyncv1alpha1.WaitingForApprovalReason:
		return notify.Status{State: notify.Pending, Description: "applied by " + name + "; an InstallPlan waits for a manual approval"}
	}
	return notify.Status{State: notify.Failure, Description: fmt.Sprintf("%s in %s: %s", ready.Reason, name, ready.Message)}
}

// commitOf is the SHA of a revision ("main@sha1:<hex>"), empty for a dirty tree.
func commitOf(revision string) string {
	if strings.HasSuffix(revision, "+dirty") {
		return ""
	}
	_, hash, ok := strings.Cut(revision, "sha1:")
	if !ok {
		_, hash, ok = strings.Cut(revision, "sha256:")
	}
	if !ok {
		return ""
	}
	return hash
}
