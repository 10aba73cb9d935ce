// Package ratelimit keeps one client from starving the rest: a token
// bucket (golang.org/x/time/rate) per key (a token, a client address) and,
// optionally, a cap on the key's requests in flight at once.
//
// Memory is bounded whatever clients send: the keys live in one map with a
// least-recently-used order, capped at Options.MaxKeys. A key whose bucket
// is full again and that has nothing in flight is forgotten as soon as it
// reaches the old end of that order (forgetting it changes nothing: it
// would start again with a full bucket); when the map is full, the least
// recently used key is forgotten even if its bucket is not (a client
// rotating keys faster than buckets refill then gives those keys a fresh
// bucket; Evicted counts it). A key with requests in flight is never
// forgotten (it leaves that order until they end), so the map holds at
// most MaxKeys plus the keys with requests in flight.
package ratelimit

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Code is the refusal's error code, on every door.
const Code = "rate_limited"

// DefaultMaxKeys is how many keys a Limiter remembers when Options leave
// it out: at about 290 bytes a key (BenchmarkMemoryPerKey), 9 MiB. Only
// keys seen within one refill of their bucket (2 s at the default burst)
// are worth remembering, and a node rarely sees that many clients in 2 s.
const DefaultMaxKeys = 1 << 15

// Options configure a Limiter. The zero value limits nothing.
type Options struct {
	// Rate is the requests a key may make per second, on average; zero or
	// less: no rate limit. Burst is how many it may make at once (zero:
	// twice the rate per second, at least 1).
	Rate  rate.Limit
	Burst int
	// MaxInFlight caps the key's requests in flight at once; zero or less:
	// no cap.
	MaxInFlight int
	// MaxKeys bounds the keys remembered (zero: DefaultMaxKeys).
	MaxKeys int
}

// On reports whether the options limit anything.
func (o Options) On() bool { return o.Rate > 0 || o.MaxInFlight > 0 }

// Which limit refused a request.
type Which int

const (
	Allowed  Which = iota
	ByRate         // the key's bucket is empty
	InFlight       // the key has MaxInFlight requests in flight
)

// Refusal says why a request was refused and when to retry.
type Refusal struct {
	Which      Which
	RetryAfter time.Duration // at least 1 s
	// Streak is how many requests of the key in a row were refused, this
	// one included: a client that reads its refusals waits; one that does
	// not keeps the streak growing.
	Streak int
}

// RetrySeconds is RetryAfter in whole seconds, rounded up (Retry-After).
func (r Refusal) RetrySeconds() int { return Seconds(r.RetryAfter) }

// Seconds is a wait as a Retry-After header gives it: whole seconds,
// rounded up, at least 1.
func Seconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Limiter holds the buckets and in-flight counts of its keys.
type Limiter[K comparable] struct {
	opts    Options
	mu      sync.Mutex
	keys    map[K]*entry[K]
	order   *list.List // of the keys with nothing in flight; front: most recently used
	evicted uint64
	flying  int
}

type entry[K comparable] struct {
	key      K
	el       *list.Element // in order; nil while requests are in flight
	bucket   *rate.Limiter // nil: no rate limit
	inFlight int
	refused  int // requests refused in a row
}

// New makes a Limiter.
func New[K comparable](o Options) *Limiter[K] {
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Rate > 0 && o.Burst <= 0 {
		o.Burst = max(1, int(math.Ceil(2*float64(o.Rate))))
	}
	return &Limiter[K]{opts: o, keys: map[K]*entry[K]{}, order: list.New()}
}

// Options are the limiter's options, defaults filled in.
func (l *Limiter[K]) Options() Options { return l.opts }

// Ticket is one admitted request. Done ends it (its place in flight is
// free again); Undo gives back what it took, for a request another limit
// refused. Each may be called once; the zero Ticket does nothing.
type Ticket[K comparable] struct {
	l    *Limiter[K]
	e    *entry[K]
	res  *rate.Reservation
	held bool
	once *sync.Once
}

// Done ends the request: its place in flight is free again.
func (t Ticket[K]) Done() {
	if t.l == nil || !t.held {
		return
	}
	t.once.Do(func() { t.l.release(t.e) })
}

// Undo gives the request's token back to the bucket (as far as
// x/time/rate can: see Reservation.CancelAt) and ends it.
func (t Ticket[K]) Undo() {
	if t.l == nil {
		return
	}
	t.once.Do(func() {
		if t.res != nil {
			t.res.CancelAt(time.Now())
		}
		if t.held {
			t.l.release(t.e)
		}
	})
}

// Take admits one request of k at now, or refuses it. With hold, the
// request takes a place in flight (when MaxInFlight caps them) until its
// Ticket is Done; a request held elsewhere (a long poll, which has its own
// cap) passes hold false. A refused request takes nothing.
func (l *Limiter[K]) Take(k K, now time.Time, hold bool) (Ticket[K], Refusal) {
	hold = hold && l.opts.MaxInFlight > 0
	if l.opts.Rate <= 0 && !hold {
		return Ticket[K]{}, Refusal{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(k, now)
	if hold && e.inFlight >= l.opts.MaxInFlight {
		// Nothing says when one ends: a second is the usual wait.
		e.refused++
		return Ticket[K]{}, Refusal{Which: InFlight, RetryAfter: time.Second, Streak: e.refused}
	}
	var res *rate.Reservation
	if e.bucket != nil {
		res = e.bucket.ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 || !res.OK() {
			if res.OK() {
				res.CancelAt(now)
			} else {
				d = time.Hour // burst 0 cannot happen (New sets it); be safe
			}
			e.refused++
			return Ticket[K]{}, Refusal{Which: ByRate, RetryAfter: max(d, time.Second), Streak: e.refused}
		}
	}
	e.refused = 0
	if hold {
		if e.inFlight++; e.el != nil { // not to be forgotten while in flight
			l.order.Remove(e.el)
			e.el = nil
		}
		l.flying++
	}
	return Ticket[K]{l: l, e: e, res: res, held: hold, once: new(sync.Once)}, Refusal{}
}

// entry is k's entry, made (and the map kept in bounds) when k is new, and
// moved to the front. l.mu is held.
func (l *Limiter[K]) entry(k K, now time.Time) *entry[K] {
	// First the old end (k itself may go: made again, it is the same).
	l.forgetIdle(now, 2)
	if e, ok := l.keys[k]; ok {
		if e.el != nil {
			l.order.MoveToFront(e.el)
		}
		return e
	}
	// Back under the bound (past it by the keys that were in flight).
	for len(l.keys) >= l.opts.MaxKeys && l.evictOne() {
	}
	e := &entry[K]{key: k}
	if l.opts.Rate > 0 {
		e.bucket = rate.NewLimiter(l.opts.Rate, l.opts.Burst)
	}
	e.el = l.order.PushFront(e)
	l.keys[k] = e
	return e
}

// forgetIdle drops up to n keys at the old end whose bucket is full (they
// have nothing in flight, or they would not be in order): remembering them
// changes nothing.
func (l *Limiter[K]) forgetIdle(now time.Time, n int) {
	for ; n > 0; n-- {
		el := l.order.Back()
		if el == nil {
			return
		}
		e := el.Value.(*entry[K])
		if e.bucket != nil && e.bucket.TokensAt(now) < float64(l.opts.Burst) {
			return
		}
		l.remove(e)
	}
}

// evictOne drops the least recently used key with nothing in flight, if
// there is one.
func (l *Limiter[K]) evictOne() bool {
	el := l.order.Back()
	if el == nil {
		return false
	}
	l.remove(el.Value.(*entry[K]))
	l.evicted++
	return true
}

func (l *Limiter[K]) remove(e *entry[K]) {
	l.order.Remove(e.el)
	delete(l.keys, e.key)
}

func (l *Limiter[K]) release(e *entry[K]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.inFlight--; e.inFlight == 0 {
		e.el = l.order.PushFront(e) // forgettable again
	}
	l.flying--
}

// Stats is what a Limiter holds now.
type Stats struct {
	Keys     int    // keys remembered
	InFlight int    // requests holding a place in flight
	Evicted  uint64 // keys forgotten before their bucket was full again, since New
}

// Stats reports the limiter's state.
func (l *Limiter[K]) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Keys: len(l.keys), InFlight: l.flying, Evicted: l.evicted}
}

// ParseRate reads a rate as a flag gives it: "0" or "off" (no limit), or
// N/s, N/m or N/h with N a positive number, e.g. 20/s or 600/m.
func ParseRate(s string) (rate.Limit, error) {
	s = strings.TrimSpace(s)
	if s == "0" || strings.EqualFold(s, "off") {
		return 0, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("%q is not a rate: give N/s, N/m or N/h (e.g. 20/s), or 0 for no limit", s)
	}
	var per time.Duration
	switch strings.TrimSpace(unit) {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		return 0, fmt.Errorf("%q: the unit must be s, m or h (e.g. 20/s)", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e9 {
		return 0, fmt.Errorf("%q: the count must be a number above 0 (e.g. 20/s), or give 0 for no limit", s)
	}
	return rate.Limit(v / per.Seconds()), nil
}

// FormatRate writes r as ParseRate reads it, in the unit that keeps the
// count whole where one does.
func FormatRate(r rate.Limit) string {
	if r <= 0 {
		return "0"
	}
	v := float64(r)
	switch {
	case v >= 1:
		return strconv.FormatFloat(v, 'f', -1, 64) + "/s"
	case v*60 >= 1:
		return strconv.FormatFloat(math.Round(v*60*1000)/1000, 'f', -1, 64) + "/m"
	}
	return strconv.FormatFloat(math.Round(v*3600*1000)/1000, 'f', -1, 64) + "/h"
}

type releaseKey struct{}

// WithRelease returns ctx carrying release, the end of the request's place
// in flight, so that a door that finds the request held by another cap (a
// long poll, an event stream) can give the place back early (Release).
func WithRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, releaseKey{}, release)
}

// Release gives back the place in flight of ctx's request, if it holds
// one: the request is counted by another cap from now on. It is safe to
// call more than once.
func Release(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
}
