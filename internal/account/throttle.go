package account

import (
	"sync"
	"time"
)

// throttle counts failures per key in a sliding window: once a key has
// limit failures in the last window, it is refused until the oldest of
// them leaves the window.
//
// It is per node: each node counts the failures it saw, so with n nodes an
// attacker gets up to n times the limit. The map is bounded: at max keys,
// expired keys are swept and, if it is still full, the key whose last
// failure is oldest is forgotten.
type throttle struct {
	limit  int
	window time.Duration
	max    int

	mu   sync.Mutex
	keys map[string][]time.Time // failures in the window, oldest first; at most limit
}

func newThrottle(limit int, window time.Duration, max int) *throttle {
	return &throttle{limit: limit, window: window, max: max, keys: map[string][]time.Time{}}
}

// live drops k's failures that left the window; the caller holds mu.
func (t *throttle) live(k string, now time.Time) []time.Time {
	fs := t.keys[k]
	i := 0
	for i < len(fs) && !now.Before(fs[i].Add(t.window)) {
		i++
	}
	if i == len(fs) {
		delete(t.keys, k)
		return nil
	}
	if i > 0 {
		fs = append(fs[:0], fs[i:]...)
		t.keys[k] = fs
	}
	return fs
}

// wait is how long k is refused from now; 0 when it is not.
func (t *throttle) wait(k string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	fs := t.live(k, now)
	if len(fs) < t.limit {
		return 0
	}
	return fs[len(fs)-t.limit].Add(t.window).Sub(now)
}

// fail records a failure of k.
func (t *throttle) fail(k string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fs := t.live(k, now)
	if fs == nil && len(t.keys) >= t.max {
		t.evict(now)
	}
	fs = append(fs, now)
	if len(fs) > t.limit {
		fs = fs[len(fs)-t.limit:]
	}
	t.keys[k] = fs
}

// reset forgets k's failures (a successful sign-in of the account).
func (t *throttle) reset(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys, k)
}

// evict makes room for one key; the caller holds mu.
func (t *throttle) evict(now time.Time) {
	for k := range t.keys {
		t.live(k, now)
	}
	if len(t.keys) < t.max {
		return
	}
	oldest, at := "", time.Time{}
	for k, fs := range t.keys {
		if last := fs[len(fs)-1]; oldest == "" || last.Before(at) {
			oldest, at = k, last
		}
	}
	delete(t.keys, oldest)
}

// size is how many keys are held.
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.keys)
}
