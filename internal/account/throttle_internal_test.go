package account

import (
	"net/http"
	"testing"
	"time"

	"foundry/internal/store"
)

// TestDoubling: the back-off doubles from its base and stops at its cap,
// however many failures there were.
func TestDoubling(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{0: time.Second, 1: 2 * time.Second, 3: 8 * time.Second, 9: 512 * time.Second, 10: 15 * time.Minute, 1000: 15 * time.Minute} {
		if got := doubling(n, time.Second, 15*time.Minute); got != want {
			t.Errorf("doubling(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestThrottleLimits: the pair and address counters refuse at their limit
// until they expire, the longer of the two named; the account's back-off
// starts at its threshold, from the last failure.
func TestThrottleLimits(t *testing.T) {
	t.Parallel()
	l := limits{pair: 5, address: 20, window: 15 * time.Minute, backoffAfter: 10, backoffBase: time.Second, backoffMax: 15 * time.Minute}
	k := keysFor("ada@example.com", "192.0.2.7")
	if k.pair == k.account || k.account == k.address || keysFor("ada@example.com", "192.0.2.8").pair == k.pair || keysFor("bob@example.com", "192.0.2.7").pair == k.pair {
		t.Fatalf("keys collide: %+v", k)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(3 * time.Minute)
	cs := map[string]store.SignInCounter{
		k.pair:    {Failures: 4, First: t0, Last: now, Expires: t0.Add(15 * time.Minute)},
		k.account: {Failures: 9, First: t0, Last: now, Expires: t0.Add(accountMemory)},
		k.address: {Failures: 19, First: t0.Add(time.Minute), Last: now, Expires: t0.Add(16 * time.Minute)},
	}
	if w, which := l.strict(k, cs, now); w != 0 || which != "" {
		t.Errorf("below every limit: %s by %q", w, which)
	}
	if w := l.backoff(k, cs, now); w != 0 {
		t.Errorf("below the back-off's threshold: %s", w)
	}
	bump := func(key string) {
		c := cs[key]
		c.Failures++
		cs[key] = c
	}
	bump(k.pair)
	if w, which := l.strict(k, cs, now); w != 12*time.Minute || which != byPair {
		t.Errorf("at the pair's limit: %s by %q, want 12m by pair", w, which)
	}
	bump(k.address)
	if w, which := l.strict(k, cs, now); w != 13*time.Minute || which != byAddress {
		t.Errorf("at both limits: %s by %q, want the longer, 13m by address", w, which)
	}
	bump(k.account)
	if w := l.backoff(k, cs, now); w != time.Second {
		t.Errorf("at the back-off's threshold: %s, want 1s", w)
	}
	bump(k.account)
	bump(k.account)
	if w := l.backoff(k, cs, now.Add(time.Second)); w != 3*time.Second {
		t.Errorf("two failures on: %s, want 3s (4s from the last failure, 1s ago)", w)
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
