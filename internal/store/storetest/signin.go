package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
)

// wantCounter checks the counter of key read at now: failures since first
// (0: no live counter), expiring at expires.
func wantCounter(t *testing.T, s store.Store, key string, now time.Time, failures int, first, last, expires time.Time) {
	t.Helper()
	got, err := s.SignInCounters(context.Background(), []string{key, store.NewID("absent")}, now)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := got[key]
	if failures == 0 {
		if ok || len(got) != 0 {
			t.Fatalf("counters at %s: %+v, want none", now, got)
		}
		return
	}
	want := store.SignInCounter{Key: key, Failures: failures, First: first.UTC(), Last: last.UTC(), Expires: expires.UTC()}
	if !ok || len(got) != 1 || c != want {
		t.Fatalf("counters at %s: %+v, want only %+v", now, got, want)
	}
}

// testSignInCounters: a failure starts a counter for its window; later
// ones add to it; once expired it is not read and the next failure starts
// it again; Forget deletes it; concurrent failures are all counted.
func testSignInCounters(t *testing.T, s store.Store) {
	ctx := context.Background()
	t0 := time.UnixMicro(time.Now().UnixMicro())
	short, long := store.NewID("pair"), store.NewID("account")
	windows := map[string]time.Duration{short: 15 * time.Minute, long: 24 * time.Hour}
	for i := range 3 {
		if err := s.CountSignInFailure(ctx, t0.Add(time.Duration(i)*time.Minute), windows); err != nil {
			t.Fatal(err)
		}
	}
	t2 := t0.Add(2 * time.Minute)
	wantCounter(t, s, short, t2, 3, t0, t2, t0.Add(15*time.Minute))
	wantCounter(t, s, long, t2, 3, t0, t2, t0.Add(24*time.Hour))
	// Expired: not read, and the next failure starts it again.
	wantCounter(t, s, short, t0.Add(15*time.Minute), 0, time.Time{}, time.Time{}, time.Time{})
	t16 := t0.Add(16 * time.Minute)
	if err := s.CountSignInFailure(ctx, t16, windows); err != nil {
		t.Fatal(err)
	}
	wantCounter(t, s, short, t16, 1, t16, t16, t16.Add(15*time.Minute))
	wantCounter(t, s, long, t16, 4, t0, t16, t0.Add(24*time.Hour))
	if err := s.ForgetSignInFailures(ctx, short, store.NewID("unknown")); err != nil {
		t.Fatal(err)
	}
	wantCounter(t, s, short, t16, 0, time.Time{}, time.Time{}, time.Time{})
	wantCounter(t, s, long, t16, 4, t0, t16, t0.Add(24*time.Hour))
	if got, err := s.SignInCounters(ctx, nil, t16); err != nil || len(got) != 0 {
		t.Fatalf("no keys: %v, %v", got, err)
	}
	countConcurrently(t, []store.Store{s}, t0)
}

// countConcurrently counts 24 failures of two keys at once, spread over
// stores, and checks none was lost.
func countConcurrently(t *testing.T, stores []store.Store, at time.Time) {
	t.Helper()
	a, b := store.NewID("address"), store.NewID("account")
	var wg sync.WaitGroup
	errs := make([]error, 24)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = stores[i%len(stores)].CountSignInFailure(context.Background(), at, map[string]time.Duration{a: time.Hour, b: time.Hour})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range stores {
		wantCounter(t, s, a, at, 24, at, at, at.Add(time.Hour))
		wantCounter(t, s, b, at, 24, at, at, at.Add(time.Hour))
	}
}

// SignInCountersShared checks that two store handles on one database (two
// nodes) count into the same sign-in counters: a failure counted on one is
// read on the other, and failures counted on both at once all add up.
// b is read through the token cache, as a server wraps its store.
func SignInCountersShared(t *testing.T, a, b store.Store) {
	t.Helper()
	ctx := context.Background()
	b = store.WithTokenCache(b)
	t0 := time.UnixMicro(time.Now().UnixMicro())
	k := store.NewID("pair")
	if err := a.CountSignInFailure(ctx, t0, map[string]time.Duration{k: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := b.CountSignInFailure(ctx, t0.Add(time.Second), map[string]time.Duration{k: time.Hour}); err != nil {
		t.Fatal(err)
	}
	wantCounter(t, a, k, t0.Add(time.Second), 2, t0, t0.Add(time.Second), t0.Add(time.Hour))
	if err := a.ForgetSignInFailures(ctx, k); err != nil {
		t.Fatal(err)
	}
	wantCounter(t, b, k, t0.Add(time.Second), 0, time.Time{}, time.Time{}, time.Time{})
	countConcurrently(t, []store.Store{a, b}, t0)
}

// testPruneSignInCounters: Prune deletes counters expired before it runs
// and keeps the others.
func testPruneSignInCounters(t *testing.T, s store.Store) {
	ctx := context.Background()
	t0 := time.UnixMicro(time.Now().UnixMicro())
	var old []string
	for range RetentionBatch + 1 { // more than one batch
		k := store.NewID("old")
		old = append(old, k)
		if err := s.CountSignInFailure(ctx, t0, map[string]time.Duration{k: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	live := store.NewID("live")
	if err := s.CountSignInFailure(ctx, t0, map[string]time.Duration{live: time.Hour}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Prune(ctx, t0.Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identity != int64(len(old)) {
		t.Errorf("Prune deleted %d identity rows, want the %d expired counters", rep.Identity, len(old))
	}
	// Read at a time they were live, to tell deleted from expired.
	for _, k := range old {
		wantCounter(t, s, k, t0, 0, time.Time{}, time.Time{}, time.Time{})
	}
	wantCounter(t, s, live, t0, 1, t0, t0, t0.Add(time.Hour))
}
