package catalogsource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
	"github.com/olmsync/olmsync/reconcile/olm/pullsecret"
)

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "catalogsource"

// DefaultRetryInterval is how soon a source that could not be read is tried again.
const DefaultRetryInterval = 30 * time.Second

// The kstatus condition types and reasons the controller writes besides OLM's status fields.
const (
	ConditionReady     = "Ready"
	ConditionStalled   = "Stalled"
	ReasonLoaded       = "CatalogLoaded"
	ReasonServingStale = "ServingLastGoodContent"
	ReasonNotLoaded    = "CatalogNotLoaded"
)

// Options are the settings of the CatalogSource controller.
type Options struct {
	// Image says how catalog images are pulled and where they are cached by digest.
	Image catalog.ImageOptions
	// RetryInterval is how soon a source that could not be read is tried again;
	// DefaultRetryInterval when zero.
	RetryInterval time.Duration
}

// Reconciler reconciles CatalogSources into the Registry.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads the CatalogSource being reconciled straight from the API server
	// (required). The status patch is the difference between the copy read and the copy
	// reconciled: from a copy older than the controller's last status write, a field the
	// reconcile clears is no difference, and what that write put there stays — a
	// ConfigMapError written before the ConfigMap existed would outlive the load. The cache
	// often is that old: a ConfigMap event can wake the reconcile before the cache holds the
	// write, and the controller's own status writes do not wake it again.
	APIReader client.Reader
	Registry  *Registry
	Recorder  events.EventRecorder
	Options   Options
}

func (r *Reconciler) retryInterval() time.Duration {
	if r.Options.RetryInterval > 0 {
		return r.Options.RetryInterval
	}
	return DefaultRetryInterval
}

// Reconcile loads one CatalogSource's content into the registry and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, retErr error) {
	obj := &v1alpha1.CatalogSource{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Registry.Delete(req.NamespacedName)
			metrics.ForgetCatalogSource(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	before := obj.Status.DeepCopy()
	patcher := patch.NewSerialPatcher(obj, r.Client)
	defer func() {
		if err := patcher.Patch(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patch catalogsource %s: %w", req.NamespacedName, err)})
		}
		r.recordChange(obj, before)
		if cs := obj.Status.GRPCConnectionState; cs != nil {
			metrics.CatalogSourceState(obj.Namespace, obj.Name, cs.LastObservedState)
		}
	}()

	obj.Status.Reason, obj.Status.Message = "", ""
	if err := validate(obj); err != nil {
		r.Registry.Delete(req.NamespacedName)
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceSpecInvalidError, err.Error()
		setCondition(obj, ConditionReady, metav1.ConditionFalse, string(v1alpha1.CatalogSourceSpecInvalidError), err.Error())
		setCondition(obj, ConditionStalled, metav1.ConditionTrue, string(v1alpha1.CatalogSourceSpecInvalidError), err.Error())
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	apimeta.RemoveStatusCondition(&obj.Status.Conditions, ConditionStalled)

	var (
		next time.Duration
		err  error
	)
	switch obj.Spec.SourceType {
	case v1alpha1.SourceTypeConfigmap, v1alpha1.SourceTypeInternal:
		err = r.loadConfigMap(ctx, obj)
	case v1alpha1.SourceTypeGrpc:
		next, err = r.loadImage(ctx, obj, patcher)
	}
	r.writeState(obj, err)
	if err != nil {
		log.FromContext(ctx).Info("catalog not loaded", "error", err.Error())
		return reconcile.Result{RequeueAfter: r.retryInterval()}, nil
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// validate refuses what OLM's catalog operator refuses, with its messages (OLM's
// validateSourceType), and what olmsync cannot serve: a grpc source without an image (a
// running registry server at spec.address) needs OLM's gRPC registry API, which olmsync does
// not speak (docs/olm.md).
func validate(obj *v1alpha1.CatalogSource) error {
	switch t := obj.Spec.SourceType; t {
	case v1alpha1.SourceTypeConfigmap, v1alpha1.SourceTypeInternal:
		if obj.Spec.ConfigMap == "" {
			return fmt.Errorf("configmap name unset: must be set for sourcetype: %s", t)
		}
	case v1alpha1.SourceTypeGrpc:
		switch {
		case obj.Spec.Image == "" && obj.Spec.Address == "":
			return fmt.Errorf("image and address unset: at least one must be set for sourcetype: %s", t)
		case obj.Spec.Image == "":
			return errors.New("grpc catalog sources without spec.image (a registry server at spec.address) are not supported by olmsync")
		}
	default:
		return fmt.Errorf("unknown sourcetype: %s", t)
	}
	return nil
}

// loadConfigMap reads the ConfigMap catalog when its resourceVersion is not the one loaded.
func (r *Reconciler) loadConfigMap(ctx context.Context, obj *v1alpha1.CatalogSource) error {
	key := client.ObjectKeyFromObject(obj)
	prev, _ := r.Registry.Get(key)
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ConfigMap}, cm); err != nil {
		err = fmt.Errorf("failed to get catalog config map %s: %w", obj.Spec.ConfigMap, err)
		r.keepLastGood(key, obj, prev, err)
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceConfigMapError, err.Error()
		return err
	}
	if err := r.ownConfigMap(ctx, obj, cm); err != nil {
		r.keepLastGood(key, obj, prev, err)
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceConfigMapError, err.Error()
		return err
	}
	revision := string(cm.UID) + "/" + cm.ResourceVersion
	if prev.Content == nil || prev.Revision != revision || prev.Err != nil || prev.Priority != obj.Spec.Priority {
		content := prev.Content
		loadedAt := prev.LoadedAt
		if prev.Content == nil || prev.Revision != revision {
			content, loadedAt = catalog.LoadConfigMap(cm), time.Now()
			// OLM's configmap-server exits on what its loader refuses, so OLM serves
			// nothing from this ConfigMap; the content loaded last stays, as for images.
			if err := content.PopulateError(); err != nil {
				r.keepLastGood(key, obj, prev, err)
				return err
			}
		}
		r.Registry.Set(key, Entry{Content: content, Priority: obj.Spec.Priority, Revision: revision, LoadedAt: loadedAt})
	}
	obj.Status.ConfigMapResource = &v1alpha1.ConfigMapResourceReference{
		Name: cm.Name, Namespace: cm.Namespace, UID: cm.UID, ResourceVersion: cm.ResourceVersion,
		LastUpdateTime: metav1.NewTime(loadedTime(r.Registry, key)),
	}
	return nil
}

// ownConfigMap marks the ConfigMap a catalog is served from as OLM's catalog operator does:
// olm.managed: "false" (OLM's, but not one it manages) and a non-blocking owner reference to
// the CatalogSource (deleting the CatalogSource garbage-collects it). cm is updated in place.
func (r *Reconciler) ownConfigMap(ctx context.Context, obj *v1alpha1.CatalogSource, cm *corev1.ConfigMap) error {
	owned := false
	for _, ref := range cm.OwnerReferences {
		if ref.UID == obj.UID {
			owned = true
		}
	}
	if owned && cm.Labels[groups.ManagedLabel] == configMapManagedValue {
		return nil
	}
	patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels[groups.ManagedLabel] = configMapManagedValue
	if !owned {
		cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{
			APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CatalogSourceKind, Name: obj.Name, UID: obj.UID,
			BlockOwnerDeletion: ptr.To(false), Controller: ptr.To(false),
		})
	}
	if err := r.Client.Patch(ctx, cm, patch); err != nil {
		return fmt.Errorf("unable to write owner onto catalog source configmap - %w", err) // OLM's words
	}
	return nil
}

// configMapManagedValue is the olm.managed label OLM puts on a ConfigMap catalog's ConfigMap.
const configMapManagedValue = "false"

func loadedTime(reg *Registry, key types.NamespacedName) time.Time {
	e, _ := reg.Get(key)
	return e.LoadedAt.Truncate(time.Second)
}

// loadImage polls a catalog image: when the source is due (never loaded, the image changed, or
// the poll interval passed), it resolves the image's digest and pulls it when the digest is not
// the one loaded. It returns when to poll next (0: never, as without a registryPoll).
func (r *Reconciler) loadImage(ctx context.Context, obj *v1alpha1.CatalogSource, patcher *patch.SerialPatcher) (time.Duration, error) {
	key := client.ObjectKeyFromObject(obj)
	prev, _ := r.Registry.Get(key)
	interval, polled, intervalErr := obj.PollInterval()
	now := time.Now()
	sameImage := prev.Content != nil && prev.Content.Source.Ref == obj.Spec.Image
	if sameImage && prev.Err == nil && prev.Priority == obj.Spec.Priority {
		if !polled {
			return 0, intervalProblem(obj, intervalErr)
		}
		if last := obj.Status.LatestImageRegistryPoll; last != nil {
			if wait := last.Add(interval).Sub(now); wait > 0 {
				return wait, intervalProblem(obj, intervalErr)
			}
		}
	}
	if obj.Status.GRPCConnectionState == nil {
		// The first attempt: say so before the pull, which may take a while.
		setConnection(obj, v1alpha1.ConnectionStateConnecting, nil)
		if err := patcher.Patch(ctx, obj); err != nil {
			return 0, fmt.Errorf("patch catalogsource %s: %w", key, err)
		}
	}
	// The pull secrets the source names (spec.secrets), then the process's own credentials.
	creds, err := pullsecret.ForCatalogSource(ctx, r.APIReader, obj, r.Options.Image.Keychain)
	if err != nil {
		r.keepLastGood(key, obj, prev, err)
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceRegistryServerError, err.Error()
		return 0, err
	}
	images := r.Options.Image
	images.Keychain = creds
	digest, err := catalog.ImageDigest(ctx, obj.Spec.Image, images)
	if err == nil && (!sameImage || digest != prev.Revision) {
		var content *catalog.Catalog
		pinned, perr := catalog.DigestReference(obj.Spec.Image, digest)
		if err = perr; err == nil {
			content, err = catalog.LoadImage(ctx, pinned, images)
		}
		if err == nil {
			// The catalog is known by the reference the user wrote, not the digest pulled.
			content.Source.Ref = obj.Spec.Image
			// Held as OLM's registry serves it: its bundles' manifests unpacked, without the
			// olm.bundle.object properties they came in (most of a catalog's memory else).
			content.DropBundleObjectProperties()
			r.Registry.Set(key, Entry{Content: content, Priority: obj.Spec.Priority, Revision: digest, LoadedAt: now})
		}
	} else if err == nil {
		r.Registry.Set(key, Entry{Content: prev.Content, Priority: obj.Spec.Priority, Revision: prev.Revision, LoadedAt: prev.LoadedAt})
	}
	if err != nil {
		// Credentials never reach the status, an event or the log.
		err = errors.New(creds.Explain(err))
		r.keepLastGood(key, obj, prev, err)
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceRegistryServerError, err.Error()
		return 0, err
	}
	// Only a successful poll counts: a failing one would rewrite the status at every retry.
	obj.Status.LatestImageRegistryPoll = &metav1.Time{Time: now.Truncate(time.Second)}
	if !polled {
		return 0, intervalProblem(obj, intervalErr)
	}
	return interval, intervalProblem(obj, intervalErr)
}

// intervalProblem writes OLM's InvalidIntervalError status for an interval that does not
// parse (the default interval is used); it is not an error of the load.
func intervalProblem(obj *v1alpha1.CatalogSource, err error) error {
	if err != nil {
		obj.Status.Reason, obj.Status.Message = v1alpha1.CatalogSourceIntervalInvalidError, err.Error()
	}
	return nil
}

// keepLastGood records a failed load: the last good content stays in the registry (served on)
// with the error beside it.
func (r *Reconciler) keepLastGood(key types.NamespacedName, obj *v1alpha1.CatalogSource, prev Entry, err error) {
	prev.Err = err
	prev.Priority = obj.Spec.Priority
	r.Registry.Set(key, prev)
}

// writeState writes connectionState and the Ready condition from the registry entry and the
// outcome of the load.
func (r *Reconciler) writeState(obj *v1alpha1.CatalogSource, loadErr error) {
	e, _ := r.Registry.Get(client.ObjectKeyFromObject(obj))
	switch {
	case loadErr == nil:
		setConnection(obj, v1alpha1.ConnectionStateReady, &e)
		msg := fmt.Sprintf("catalog loaded: %d packages (%s)", len(e.Content.Packages), e.Revision)
		setCondition(obj, ConditionReady, metav1.ConditionTrue, ReasonLoaded, msg)
	case e.Content != nil:
		setConnection(obj, v1alpha1.ConnectionStateTransientFailure, nil)
		setCondition(obj, ConditionReady, metav1.ConditionFalse, ReasonServingStale,
			fmt.Sprintf("serving the content loaded last (%s): %v", e.Revision, loadErr))
	default:
		setConnection(obj, v1alpha1.ConnectionStateTransientFailure, nil)
		setCondition(obj, ConditionReady, metav1.ConditionFalse, ReasonNotLoaded, loadErr.Error())
	}
}

// setConnection sets connectionState.lastObservedState; a READY load also moves lastConnect
// to when the content was loaded.
func setConnection(obj *v1alpha1.CatalogSource, state string, loaded *Entry) {
	cs := obj.Status.GRPCConnectionState
	if cs == nil {
		cs = &v1alpha1.GRPCConnectionState{}
		obj.Status.GRPCConnectionState = cs
	}
	cs.LastObservedState = state
	if loaded != nil {
		if t := obj.Status.LatestImageRegistryPoll; t != nil && obj.Spec.SourceType == v1alpha1.SourceTypeGrpc {
			cs.LastConnectTime = *t
		} else if cs.LastConnectTime.IsZero() || loaded.LoadedAt.After(cs.LastConnectTime.Time) {
			cs.LastConnectTime = metav1.NewTime(loaded.LoadedAt.Truncate(time.Second))
		}
	}
}

func setCondition(obj *v1alpha1.CatalogSource, t string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: obj.Generation,
	})
}

// recordChange records an Event when the connection state changes: Normal for READY, Warning
// otherwise.
func (r *Reconciler) recordChange(obj *v1alpha1.CatalogSource, before *v1alpha1.CatalogSourceStatus) {
	if r.Recorder == nil || obj.Status.GRPCConnectionState == nil {
		return
	}
	was := ""
	if before.GRPCConnectionState != nil {
		was = before.GRPCConnectionState.LastObservedState
	}
	now := obj.Status.GRPCConnectionState.LastObservedState
	if now == was || now == v1alpha1.ConnectionStateConnecting {
		return
	}
	eventType, msg := corev1.EventTypeNormal, "catalog loaded"
	if c := apimeta.FindStatusCondition(obj.Status.Conditions, ConditionReady); c != nil {
		msg = c.Message
		if c.Status != metav1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
	}
	r.Recorder.Eventf(obj, nil, eventType, now, "Load", "%s", msg)
}
