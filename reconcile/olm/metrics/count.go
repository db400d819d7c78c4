package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// countTimeout bounds the list a scrape makes: a cache whose informer has not synced yet
// waits for it, and a scrape must not.
const countTimeout = 5 * time.Second

// CacheCount is one of OLM's *_count gauges, computed when scraped: the number of objects of
// its kind in a reader — the manager's cache, set by the controller of that kind (CountFrom).
// OLM sets these gauges on every informer event; counting at scrape time gives the same
// number without listing the cache after every reconcile. Until a reader is set it is 0, as
// OLM's gauge is before its first event; a scrape whose list fails leaves the series out.
type CacheCount struct {
	desc    *prometheus.Desc
	newList func() client.ObjectList
	// keep says which objects count; all when nil.
	keep func(client.Object) bool

	mu     sync.Mutex
	reader client.Reader
}

func newCacheCount(name, help string, newList func() client.ObjectList, keep func(client.Object) bool) *CacheCount {
	return &CacheCount{desc: prometheus.NewDesc(name, help, nil, nil), newList: newList, keep: keep}
}

// CountFrom makes the gauge count the objects r holds. The last reader set is the one
// counted (one manager per process, but for tests).
func (c *CacheCount) CountFrom(r client.Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader = r
}

// Describe sends the gauge's description.
func (c *CacheCount) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect counts the objects and sends the gauge.
func (c *CacheCount) Collect(ch chan<- prometheus.Metric) {
	n, err := c.count()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}

func (c *CacheCount) count() (int, error) {
	c.mu.Lock()
	r := c.reader
	c.mu.Unlock()
	if r == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
	defer cancel()
	list := c.newList()
	// Read only: the cache's own objects, not copies of them.
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	if c.keep == nil {
		return meta.LenList(list), nil
	}
	n := 0
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && c.keep(obj) {
			n++
		}
		return nil
	})
	return n, err
}

// notCopied keeps the CSVs that are not copies (OLM's csv_count counts those).
func notCopied(o client.Object) bool {
	csv, ok := o.(*v1alpha1.ClusterServiceVersion)
	return ok && !groups.IsCopied(csv)
}
