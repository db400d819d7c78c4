package receiver

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// limiter is a token bucket per source address. It remembers at most maxRemembered
// sources, and never forgets one that is limited: a flood from more addresses than that
// makes it forget the sources that are not limited (whose bucket a new one would give back
// at most its burst), never hand a limited source a new bucket.
type limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	off     bool
	now     func() time.Time
	sources map[string]*source
}

type source struct {
	bucket *rate.Limiter
	last   time.Time
}

func newLimiter(perMinute, burst int, now func() time.Time) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, off: perMinute < 0, now: now,
		sources: map[string]*source{}}
}

// allow takes a token of the source's bucket; when there is none, it says how long until
// there is one. A new source, when every source remembered is limited, waits as they do
// until the first of them has a token again.
func (l *limiter) allow(addr string) (time.Duration, bool) {
	if l.off {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s, ok := l.sources[addr]
	if !ok {
		if len(l.sources) >= maxRemembered {
			if wait := l.makeRoom(now); wait > 0 {
				return wait, false
			}
		}
		s = &source{bucket: rate.NewLimiter(l.every, l.burst)}
		l.sources[addr] = s
	}
	s.last = now
	r := s.bucket.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// makeRoom forgets sources so that a new one can be remembered: first those whose bucket
// has filled up again (nothing of theirs is remembered that a new bucket would not have),
// then, were that not enough, those that are not limited, the fullest buckets first, down
// to three quarters of maxRemembered (so that a flood does not sort them at every request).
// A limited source is never forgotten: when every one is, nothing is, and makeRoom says how
// long until the first of them has a token again.
func (l *limiter) makeRoom(now time.Time) time.Duration {
	full := time.Duration(float64(l.burst) / float64(l.every) * float64(time.Second))
	for addr, s := range l.sources {
		if now.Sub(s.last) > full {
			delete(l.sources, addr)
		}
	}
	if len(l.sources) < maxRemembered {
		return 0
	}
	type candidate struct {
		addr   string
		tokens float64
	}
	var free []candidate
	soonest := time.Duration(-1)
	for addr, s := range l.sources {
		tokens := s.bucket.TokensAt(now)
		if tokens >= 1 {
			free = append(free, candidate{addr, tokens})
			continue
		}
		if wait := time.Duration((1 - tokens) / float64(l.every) * float64(time.Second)); soonest < 0 || wait < soonest {
			soonest = wait
		}
	}
	slices.SortFunc(free, func(a, b candidate) int { return cmp.Compare(b.tokens, a.tokens) })
	for _, c := range free {
		if len(l.sources) <= maxRemembered*3/4 {
			break
		}
		delete(l.sources, c.addr)
	}
	if len(l.sources) < maxRemembered {
		return 0
	}
	return max(soonest, time.Millisecond)
}

// deliveries remembers the deliveries handled within a window.
type deliveries struct {
	mu     sync.Mutex
	window time.Duration
	now    func() time.Time
	at     map[string]time.Time
}

// deliveryKeys identify a verified delivery to a Sync: its delivery ID, when it has one,
// and the digest of its body (a replay with the delivery header changed or left out is
// the same body, and the signature covers only the body).
func deliveryKeys(key types.NamespacedName, header http.Header, body []byte) []string {
	sum := sha256.Sum256(body)
	keys := []string{key.String() + " sha256:" + hex.EncodeToString(sum[:])}
	if id := deliveryID(header); id != "" {
		keys = append(keys, key.String()+" id:"+id)
	}
	return keys
}

// deliveryID is the provider's ID of a delivery, or "".
func deliveryID(header http.Header) string {
	for _, h := range deliveryHeaders {
		if v := header.Get(h); v != "" {
			return h + "=" + v
		}
	}
	return ""
}

// add records a delivery and reports whether it is new: false when any of its keys was
// seen within the window.
func (d *deliveries) add(keys []string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for _, k := range keys {
		if at, ok := d.at[k]; ok && now.Sub(at) < d.window {
			return false
		}
	}
	if len(d.at)+len(keys) > maxRemembered {
		for k, at := range d.at {
			if now.Sub(at) >= d.window {
				delete(d.at, k)
			}
		}
		if len(d.at)+len(keys) > maxRemembered {
			clear(d.at) // a flood of verified deliveries: forget rather than grow
		}
	}
	for _, k := range keys {
		d.at[k] = now
	}
	return true
}

// forget drops a delivery whose trigger failed, so that a redelivery can try again.
func (d *deliveries) forget(keys []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range keys {
		delete(d.at, k)
	}
}
