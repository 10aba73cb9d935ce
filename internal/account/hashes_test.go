package account_test

import (
	"context"
	"math"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"foundry/internal/account"
	"foundry/internal/auth"
)

// TestDummyHashCostsAsMuchAsARealOne: the hash an unknown email or an
// account without a password is compared against is made with the
// parameters of every new hash, so a refusal takes the time and memory of
// a wrong password.
func TestDummyHashCostsAsMuchAsARealOne(t *testing.T) {
	t.Parallel()
	real, err := account.HashPassword("a password here")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, err := argon2id.DecodeHash(real)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := argon2id.DecodeHash(account.DummyHash())
	if err != nil {
		t.Fatal(err)
	}
	if *got != *want {
		t.Fatalf("dummy hash parameters %+v; a real hash's are %+v", *got, *want)
	}
}

// TestHashSlots: a quarter of the memory limit in 19 MiB hashes, at least
// one and at most one per CPU; without a limit, one per CPU.
func TestHashSlots(t *testing.T) {
	t.Parallel()
	cpus := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		limit int64
		want  int
	}{
		{math.MaxInt64, cpus},
		{0, cpus},
		{64 << 20, 1},             // a quarter is 16 MiB: less than one hash, still one
		{256 << 20, min(cpus, 3)}, // foundry serve's default --memory-limit
		{1 << 40, cpus},
	} {
		if got := account.HashSlots(c.limit); got != c.want {
			t.Errorf("HashSlots(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
	if n := account.HashSlotCount(account.New(nil, account.Options{PasswordHashes: 5})); n != 5 {
		t.Errorf("PasswordHashes 5: %d slots", n)
	}
}

// TestSignInWhileEveryHashSlotIsBusy: a sign-in that finds every password
// check slot taken waits a bounded time, then is answered 429 with
// Retry-After and a page that says why; nothing is counted as a failure,
// and once a slot is free the same sign-in works.
func TestSignInWhileEveryHashSlotIsBusy(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{PasswordHashes: 1, PasswordHashWait: 50 * time.Millisecond, AccountAddressFailures: 1})
		release := account.HoldHashSlots(e.m)
		b := newBrowser(t, e.srv.URL)
		for range 2 { // not counted as failures: the limit is 1
			resp, page := b.signIn(adaEmail, adaPass, "")
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("sign-in with every slot busy: %d, Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), page)
			}
			if msg := errorText(page); !strings.Contains(msg, "too many passwords at once") || !strings.Contains(msg, "Try again in 1 second") {
				t.Errorf("the refusal says %q", msg)
			}
			if b.cookie(auth.SessionCookie) != "" {
				t.Fatal("a refused sign-in got a session")
			}
		}
		release()
		b.mustSignIn(adaEmail, adaPass)
		if b.whoami() != adaEmail {
			t.Fatal("not signed in once a slot was free")
		}
	})
}

// TestOldHashesAreHashedAnewAtSignIn: a password hashed with the earlier
// parameters (64 MiB, one pass, two lanes) signs in, and is stored hashed
// with the current ones; the person's other sessions stay; a wrong
// password changes nothing.
func TestOldHashesAreHashedAnewAtSignIn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		ctx := context.Background()
		old, err := argon2id.CreateHash(adaPass, &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32})
		if err != nil {
			t.Fatal(err)
		}
		if done, err := e.st.RehashPassword(ctx, e.ada.ID, e.ada.PasswordHash, old); err != nil || !done {
			t.Fatalf("storing the old hash: %v %v", done, err)
		}
		first := newBrowser(t, e.srv.URL)
		if resp, _ := first.signIn(adaEmail, adaPass+"x", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", resp.StatusCode)
		}
		if u, _ := e.st.UserByID(ctx, e.ada.ID); u.PasswordHash != old {
			t.Fatal("a wrong password changed the stored hash")
		}
		first.mustSignIn(adaEmail, adaPass)
		u, err := e.st.UserByID(ctx, e.ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") || !account.PasswordMatches(u.PasswordHash, adaPass) {
			t.Fatalf("after signing in with an old hash, the stored hash is %.40q", u.PasswordHash)
		}
		// The rehash kept the session it was made in, and the next sign-in
		// uses the new hash.
		second := newBrowser(t, e.srv.URL)
		second.mustSignIn(adaEmail, adaPass)
		if first.whoami() != adaEmail || second.whoami() != adaEmail {
			t.Fatal("a session ended with the rehash")
		}
		if again, _ := e.st.UserByID(ctx, e.ada.ID); again.PasswordHash != u.PasswordHash {
			t.Fatal("a current hash was hashed anew")
		}
	})
}
