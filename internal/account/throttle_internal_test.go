package account

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestThrottleWindow: a key is refused once it has limit failures in the
// window, until the oldest leaves it; reset forgets it.
func TestThrottleWindow(t *testing.T) {
	t.Parallel()
	th := newThrottle(3, 10*time.Minute, 100)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 {
		if w := th.wait("k", t0.Add(time.Duration(i)*time.Minute)); w != 0 {
			t.Fatalf("refused after %d failures", i)
		}
		th.fail("k", t0.Add(time.Duration(i)*time.Minute))
	}
	if w := th.wait("k", t0.Add(3*time.Minute)); w != 7*time.Minute {
		t.Errorf("wait %s, want 7m (until the first failure is 10m old)", w)
	}
	if w := th.wait("other", t0.Add(3*time.Minute)); w != 0 {
		t.Errorf("another key waits %s", w)
	}
	if w := th.wait("k", t0.Add(10*time.Minute)); w != 0 {
		t.Errorf("still refused once the first failure left the window: %s", w)
	}
	th.fail("k", t0.Add(10*time.Minute))
	if w := th.wait("k", t0.Add(10*time.Minute)); w != time.Minute {
		t.Errorf("wait %s, want 1m (the second failure leaves at 11m)", w)
	}
	th.reset("k")
	if w := th.wait("k", t0.Add(10*time.Minute)); w != 0 {
		t.Errorf("refused after reset: %s", w)
	}
}

// TestThrottleBounded: however many keys fail, the counter holds at most
// its maximum, forgetting expired keys first and then the stalest one, so
// the keys failing now stay counted.
func TestThrottleBounded(t *testing.T) {
	t.Parallel()
	th := newThrottle(2, time.Minute, 50)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	th.fail("victim", t0)
	th.fail("victim", t0)
	for i := range 10000 {
		th.fail(fmt.Sprintf("spray%d", i), t0.Add(time.Duration(i)*time.Millisecond))
		if n := th.size(); n > 50 {
			t.Fatalf("%d keys held, max 50", n)
		}
	}
	if w := th.wait("spray9999", t0.Add(10*time.Second)); w != 0 {
		t.Errorf("one failure refuses: %s", w)
	}
	th.fail("spray9999", t0.Add(10*time.Second))
	if w := th.wait("spray9999", t0.Add(10*time.Second)); w == 0 {
		t.Error("the newest key was forgotten")
	}
	// Expired keys go first: after the window, a full map takes new keys
	// without dropping a live one.
	later := t0.Add(2 * time.Minute)
	th.fail("live", later)
	th.fail("live", later)
	for i := range 49 {
		th.fail(fmt.Sprintf("new%d", i), later)
	}
	if th.size() > 50 {
		t.Fatalf("%d keys", th.size())
	}
	if w := th.wait("live", later); w == 0 {
		t.Error("a live key was evicted while expired ones were held")
	}
}

// TestClientKey: the peer's IP, an IPv6 address by its /64, an
// IPv4-mapped address as IPv4.
func TestClientKey(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:5000":             "127.0.0.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:80":    "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":      "192.0.2.7",
		"not an address":             "not an address",
	} {
		r := &http.Request{RemoteAddr: addr}
		if got := clientKey(r); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}
