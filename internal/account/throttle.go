package account

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"foundry/internal/store"
)

// Sign-in throttling counts failed sign-ins in the store, so every node
// counts every failure, under three keys:
//
//   - the account from one address: the strict limit (AccountAddressFailures
//     in ThrottleWindow), which someone failing elsewhere never reaches;
//   - the address, whatever the account (AddressFailures in ThrottleWindow);
//   - the account from every address: after AccountBackoffAfter failures
//     (within accountMemory) each further attempt waits a doubling time
//     from the last failure, 1 s, 2 s, 4 s… up to AccountBackoffMax. A
//     browser that signed in to the account before (its device cookie)
//     is not held back by it, so an attacker guessing from many addresses
//     slows the account's new devices but never locks its owner out.
//
// A throttled attempt is refused before its password is checked and is
// not counted. Keys are hashed: the store keeps no email or address typed.

// accountMemory is how long the account's count of failures lasts from
// its first failure.
const accountMemory = 24 * time.Hour

// limits are the throttle's numbers.
type limits struct {
	pair, address int           // failures allowed per account and address, per address, in window
	window        time.Duration // of the pair and address counters
	backoffAfter  int           // account failures before the back-off
	backoffBase   time.Duration // the first back-off
	backoffMax    time.Duration // the longest back-off
}

// Which counter refused a sign-in.
const (
	byPair    = "pair"
	byAddress = "address"
	byAccount = "account"
)

// throttleKeys are the counters' keys of an account and an address.
type throttleKeys struct{ pair, account, address string }

func keysFor(acct, addr string) throttleKeys {
	h := func(kind, v string) string {
		sum := sha256.Sum256([]byte(kind + "\x00" + v))
		return kind + ":" + hex.EncodeToString(sum[:16])
	}
	return throttleKeys{pair: h(byPair, acct+"\x00"+addr), account: h(byAccount, acct), address: h(byAddress, addr)}
}

func (k throttleKeys) all() []string { return []string{k.pair, k.account, k.address} }

// windows are how long each counter of k lasts from its first failure.
func (l limits) windows(k throttleKeys) map[string]time.Duration {
	return map[string]time.Duration{k.pair: l.window, k.account: accountMemory, k.address: l.window}
}

// strict is how long the pair or address counter refuses a sign-in from
// now (0: neither does), and which.
func (l limits) strict(k throttleKeys, cs map[string]store.SignInCounter, now time.Time) (time.Duration, string) {
	var wait time.Duration
	which := ""
	for _, c := range []struct {
		key, which string
		limit      int
	}{{k.pair, byPair, l.pair}, {k.address, byAddress, l.address}} {
		if n, ok := cs[c.key]; ok && n.Failures >= c.limit && n.Expires.Sub(now) > wait {
			wait, which = n.Expires.Sub(now), c.which
		}
	}
	return wait, which
}

// backoff is how long the account's back-off holds a sign-in without a
// device cookie from now (0: it does not).
func (l limits) backoff(k throttleKeys, cs map[string]store.SignInCounter, now time.Time) time.Duration {
	c, ok := cs[k.account]
	if !ok || c.Failures < l.backoffAfter {
		return 0
	}
	return max(0, c.Last.Add(doubling(c.Failures-l.backoffAfter, l.backoffBase, l.backoffMax)).Sub(now))
}

// doubling is base doubled n times, at most limit.
func doubling(n int, base, limit time.Duration) time.Duration {
	d := base
	for range min(n, 62) {
		if d >= limit {
			break
		}
		d *= 2
	}
	return min(d, limit)
}
