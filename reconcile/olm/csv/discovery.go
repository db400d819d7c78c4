package csv

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Discovery is the part of client-go's discovery client the controller uses.
type Discovery interface {
	ServerVersion() (*version.Info, error)
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// serverVersionTTL is how long the server's version is trusted: it only changes when the
// control plane is upgraded, and minKubeVersion is checked on every sync of a pending CSV.
const serverVersionTTL = 5 * time.Minute

// versionCache remembers the server's version.
type versionCache struct {
	mu      sync.Mutex
	version string
	read    time.Time
}

// serverVersion returns the API server's gitVersion, read at most every serverVersionTTL; ""
// when discovery fails (the requirement check then says so).
func (r *Reconciler) serverVersion(ctx context.Context) string {
	c := &r.versions
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.version != "" && now.Sub(c.read) < serverVersionTTL {
		return c.version
	}
	info, err := r.Discovery.ServerVersion()
	if err != nil {
		log.FromContext(ctx).Error(err, "read server version")
		return ""
	}
	c.version, c.read = info.GitVersion, now
	return c.version
}

// served returns which of gvks discovery serves. A group version discovery cannot list counts
// as not serving them.
func (r *Reconciler) served(gvks []metav1.GroupVersionKind) map[metav1.GroupVersionKind]bool {
	out := map[metav1.GroupVersionKind]bool{}
	lists := map[string]*metav1.APIResourceList{}
	for _, gvk := range gvks {
		gv := metav1.GroupVersion{Group: gvk.Group, Version: gvk.Version}.String()
		list, ok := lists[gv]
		if !ok {
			list, _ = r.Discovery.ServerResourcesForGroupVersion(gv)
			lists[gv] = list
		}
		if list == nil {
			continue
		}
		for _, res := range list.APIResources {
			if res.Kind == gvk.Kind {
				out[gvk] = true
				break
			}
		}
	}
	return out
}
