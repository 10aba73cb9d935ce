package ratelimit

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestBucketRefusesPastItsBurstAndSaysWhenToRetry(t *testing.T) {
	l := New[string](Options{Rate: 2, Burst: 3})
	for i := range 3 {
		if _, r := l.Take("a", t0, false); r.Which != Allowed {
			t.Fatalf("request %d of a burst of 3 refused: %+v", i+1, r)
		}
	}
	_, r := l.Take("a", t0, false)
	if r.Which != ByRate {
		t.Fatalf("4th request at once: %+v, want ByRate", r)
	}
	// 2 a second: the next token is 0.5 s away; Retry-After rounds up.
	if r.RetryAfter != time.Second || r.RetrySeconds() != 1 {
		t.Errorf("retry after %v (%d s), want 1s (at least a second)", r.RetryAfter, r.RetrySeconds())
	}
	if _, r := l.Take("b", t0, false); r.Which != Allowed {
		t.Errorf("another key refused while a is over its rate: %+v", r)
	}
	if _, r := l.Take("a", t0.Add(500*time.Millisecond), false); r.Which != Allowed {
		t.Errorf("a refused after its next token was due: %+v", r)
	}
}

func TestRetryAfterIsTheWaitForTheNextToken(t *testing.T) {
	l := New[string](Options{Rate: rate.Limit(1.0 / 60), Burst: 1}) // 1/m
	l.Take("a", t0, false)
	_, r := l.Take("a", t0.Add(15*time.Second), false)
	if r.Which != ByRate || r.RetrySeconds() != 45 {
		t.Fatalf("got %+v (%d s), want ByRate after 45 s", r, r.RetrySeconds())
	}
}

func TestARefusedRequestTakesNothing(t *testing.T) {
	l := New[string](Options{Rate: 1, Burst: 1})
	l.Take("a", t0, false)
	for range 5 {
		l.Take("a", t0, false) // refused, each
	}
	if _, r := l.Take("a", t0.Add(time.Second), false); r.Which != Allowed {
		t.Fatalf("refusals used up tokens: %+v", r)
	}
}

func TestUndoGivesTheTokenBack(t *testing.T) {
	l := New[string](Options{Rate: rate.Limit(1.0 / 3600), Burst: 1})
	tk, _ := l.Take("a", t0, false)
	tk.Undo()
	if _, r := l.Take("a", time.Now(), false); r.Which != Allowed {
		t.Fatalf("after Undo: %+v", r)
	}
}

func TestInFlightCapRefusesTheNextUntilOneIsDone(t *testing.T) {
	l := New[string](Options{MaxInFlight: 2})
	a1, _ := l.Take("a", t0, true)
	a2, _ := l.Take("a", t0, true)
	if _, r := l.Take("a", t0, true); r.Which != InFlight || r.RetrySeconds() != 1 {
		t.Fatalf("3rd concurrent request: %+v, want InFlight, retry after 1 s", r)
	}
	if _, r := l.Take("a", t0, false); r.Which != Allowed {
		t.Errorf("a request held elsewhere (hold false) was refused: %+v", r)
	}
	if _, r := l.Take("b", t0, true); r.Which != Allowed {
		t.Errorf("another key refused: %+v", r)
	}
	if got := l.Stats().InFlight; got != 3 {
		t.Errorf("in flight %d, want 3", got)
	}
	a1.Done()
	a1.Done() // once only
	if got := l.Stats().InFlight; got != 2 {
		t.Errorf("in flight %d after one Done (twice), want 2", got)
	}
	a3, r := l.Take("a", t0, true)
	if r.Which != Allowed {
		t.Fatalf("after Done: %+v", r)
	}
	a2.Undo()
	a3.Done()
	if s := l.Stats(); s.InFlight != 1 { // b's
		t.Errorf("in flight %d, want 1", s.InFlight)
	}
}

func TestZeroOptionsLimitNothing(t *testing.T) {
	l := New[string](Options{})
	for i := range 1000 {
		tk, r := l.Take(fmt.Sprint(i%3), t0, true)
		if r.Which != Allowed {
			t.Fatalf("refused: %+v", r)
		}
		tk.Done()
	}
	if s := l.Stats(); s.Keys != 0 {
		t.Errorf("remembers %d keys with nothing to limit", s.Keys)
	}
}

// A hostile client rotating keys (addresses, made-up tokens) must not grow
// memory without bound.
func TestKeysStayBoundedUnderChurn(t *testing.T) {
	const max = 1000
	l := New[int](Options{Rate: 1, Burst: 5, MaxInFlight: 4, MaxKeys: max})
	for i := range 200_000 {
		tk, r := l.Take(i, t0, true) // every bucket just used: none idle
		if r.Which != Allowed {
			t.Fatalf("a new key refused: %+v", r)
		}
		tk.Done()
		if n := l.Stats().Keys; n > max {
			t.Fatalf("after %d keys the limiter holds %d, over its cap %d", i+1, n, max)
		}
	}
	s := l.Stats()
	if s.Keys != max || s.Evicted != 200_000-max {
		t.Errorf("stats %+v, want %d keys, %d evicted", s, max, 200_000-max)
	}
	if len(l.keys) != l.order.Len() {
		t.Errorf("map %d and order %d disagree with nothing in flight", len(l.keys), l.order.Len())
	}
}

func TestIdleKeysAreForgotten(t *testing.T) {
	l := New[int](Options{Rate: 10, Burst: 10})
	for i := range 100 {
		l.Take(i, t0, false)
	}
	// A second later every bucket is full again: new traffic sweeps them.
	later := t0.Add(time.Second)
	for i := range 100 {
		l.Take(1000+i%2, later, false)
	}
	if n := l.Stats().Keys; n != 2 {
		t.Errorf("%d keys remembered, want the 2 in use", n)
	}
	if e := l.Stats().Evicted; e != 0 {
		t.Errorf("%d evicted: idle keys are forgotten, not evicted", e)
	}
}

// A key with requests in flight keeps its count: forgetting it would let
// its client past the cap.
func TestKeysInFlightAreNeverEvicted(t *testing.T) {
	l := New[int](Options{MaxInFlight: 1, MaxKeys: 4})
	held, _ := l.Take(-1, t0, true)
	for i := range 100 {
		tk, _ := l.Take(i, t0, true)
		tk.Done()
	}
	if _, r := l.Take(-1, t0, true); r.Which != InFlight {
		t.Fatalf("the held key was forgotten: %+v", r)
	}
	held.Done()
	if _, r := l.Take(-1, t0, true); r.Which != Allowed {
		t.Fatalf("after Done: %+v", r)
	}
}

// Keys all in flight past the look-ahead: the map grows past MaxKeys by
// at most the requests in flight.
func TestInFlightKeysBoundTheOverflow(t *testing.T) {
	l := New[int](Options{MaxInFlight: 1, MaxKeys: 4})
	var held []Ticket[int]
	for i := range 40 {
		tk, _ := l.Take(i, t0, true)
		held = append(held, tk)
	}
	if s := l.Stats(); s.Keys > 4+s.InFlight {
		t.Fatalf("%+v", s)
	}
	for _, tk := range held {
		tk.Done()
	}
	for i := range 40 {
		tk, _ := l.Take(100+i, t0, true)
		tk.Done()
	}
	if s := l.Stats(); s.Keys > 4 {
		t.Errorf("after the requests ended: %+v, want at most 4 keys", s)
	}
}

func TestDefaultBurstIsTwoSecondsOfRate(t *testing.T) {
	for _, c := range []struct {
		r    rate.Limit
		want int
	}{{20, 40}, {0.1, 1}, {1.5, 3}} {
		if got := New[int](Options{Rate: c.r}).Options().Burst; got != c.want {
			t.Errorf("rate %v: burst %d, want %d", c.r, got, c.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want rate.Limit
	}{{"20/s", 20}, {"0", 0}, {"off", 0}, {"600/m", 10}, {"3600/h", 1}, {" 0.5/s ", 0.5}} {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "20", "20/d", "-1/s", "0/s", "x/s", "NaN/s", "Inf/s", "1e10/s", "/s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	for _, r := range []rate.Limit{20, 0.5, 10.0 / 60, 1.0 / 3600, 0} {
		back, err := ParseRate(FormatRate(r))
		if err != nil || float64(back-r) > 1e-9 || float64(r-back) > 1e-9 {
			t.Errorf("FormatRate(%v) = %q reads back as %v, %v", r, FormatRate(r), back, err)
		}
	}
}

func BenchmarkTake(b *testing.B) {
	l := New[int](Options{Rate: 1e6, Burst: 1e6, MaxInFlight: 1 << 20})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tk, _ := l.Take(i&1023, time.Now(), true)
		tk.Done()
		i++
	}
}

// BenchmarkMemoryPerKey reports what a full limiter holds per key (the
// bound operators.md quotes).
func BenchmarkMemoryPerKey(b *testing.B) {
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l := New[netip.Prefix](Options{Rate: 100, Burst: 200, MaxInFlight: 16})
		for i := range DefaultMaxKeys {
			a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			l.Take(netip.PrefixFrom(a, 32), t0, false)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(l.Stats().Keys), "bytes/key")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/full")
		runtime.KeepAlive(l)
	}
}

func TestStreakCountsRefusalsInARowUntilOneIsAdmitted(t *testing.T) {
	l := New[string](Options{Rate: 1, Burst: 1, MaxInFlight: 1})
	held, _ := l.Take("a", t0, true)
	for i := 1; i <= 3; i++ {
		if _, r := l.Take("a", t0, true); r.Which != InFlight || r.Streak != i {
			t.Fatalf("refusal %d: %+v", i, r)
		}
	}
	if _, r := l.Take("a", t0, false); r.Which != ByRate || r.Streak != 4 {
		t.Fatalf("a refusal by rate continues the streak: %+v", r)
	}
	held.Done()
	if _, r := l.Take("a", t0.Add(time.Second), true); r.Which != Allowed {
		t.Fatalf("%+v", r)
	}
	if _, r := l.Take("a", t0.Add(time.Second), false); r.Streak != 1 {
		t.Fatalf("an admitted request ends the streak: %+v", r)
	}
}

// Many keys held at the old end must not stop eviction: while they are in
// flight, new keys still replace the others.
func TestHeldKeysDoNotOpenTheBound(t *testing.T) {
	const max, held = 8, 40
	l := New[int](Options{Rate: 1, Burst: 5, MaxInFlight: 1, MaxKeys: max})
	var tickets []Ticket[int]
	for i := range held {
		tk, r := l.Take(i, t0, true)
		if r.Which != Allowed {
			t.Fatal(r)
		}
		tickets = append(tickets, tk)
	}
	for i := range 10_000 {
		tk, _ := l.Take(held+i, t0, true)
		tk.Done()
		if n := l.Stats().Keys; n > max+held {
			t.Fatalf("after %d new keys: %d keys, over %d + %d held", i+1, n, max, held)
		}
	}
	for i, tk := range tickets {
		if _, r := l.Take(i, t0, true); r.Which != InFlight {
			t.Fatalf("held key %d was forgotten: %+v", i, r)
		}
		tk.Done()
	}
	for i := range 100 {
		tk, _ := l.Take(1_000_000+i, t0, true)
		tk.Done()
	}
	if n := l.Stats().Keys; n > max {
		t.Errorf("%d keys once nothing is in flight, want at most %d", n, max)
	}
}

func TestConcurrentTakersKeepTheCounts(t *testing.T) {
	l := New[int](Options{Rate: 1e6, Burst: 1e6, MaxInFlight: 3, MaxKeys: 16})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				tk, r := l.Take((g*7+i)%40, time.Now(), true)
				if r.Which == Allowed {
					if i%3 == 0 {
						tk.Undo()
					} else {
						tk.Done()
					}
				}
			}
		}()
	}
	wg.Wait()
	if s := l.Stats(); s.InFlight != 0 || s.Keys > 16 {
		t.Fatalf("after every request ended: %+v", s)
	}
}
