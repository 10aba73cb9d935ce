package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"foundry/internal/store"
)

// RetentionBatch is the prune batch size RunRetention opens its stores with,
// small so that a handful of rows takes several transactions.
const RetentionBatch = 3

// RunRetention runs the retention contract against stores made by open with
// the given retention (the background pruner off: the tests call Prune).
func RunRetention(t *testing.T, open func(t *testing.T, r store.Retention) store.Store) {
	r := store.Retention{Keys: time.Hour, Events: time.Hour, Every: -1, Batch: RetentionBatch, UnusedClients: UnusedClients}
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"old keys and events are pruned in bounded batches, young ones stay", testPruneBatches},
		{"the newest event of a resource is never pruned", testPruneKeepsNewest},
	}
	tests = append(tests, identityRetentionCases...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t, r)) })
	}
}

// after returns a wall-clock instant strictly later, to the microsecond the
// stores record, than every write made so far (bounded: the clock moves).
func after(t *testing.T) time.Time {
	t.Helper()
	mark := time.Now().UnixMicro()
	for range 1_000_000 {
		if now := time.Now(); now.UnixMicro() > mark {
			return now
		}
	}
	t.Fatal("the wall clock did not move")
	return time.Time{}
}

func testPruneBatches(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	id := Create(t, s, ws)
	// 7 old keyed writes (after the create: 8 old events), then 2 young ones.
	for i := range 7 {
		if _, err := s.Guarded(ctx, AppendLine(ws, id, fmt.Sprintf("key-old-%d", i), int64(i+1), fmt.Sprint("old", i))); err != nil {
			t.Fatal(err)
		}
	}
	cut := after(t)
	var young []store.Outcome
	for i := range 2 {
		o, err := s.Guarded(ctx, AppendLine(ws, id, fmt.Sprintf("key-young-%d", i), int64(8+i), fmt.Sprint("young", i)))
		if err != nil {
			t.Fatal(err)
		}
		young = append(young, o)
	}
	before, err := s.History(ctx, store.TypeNote, id)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := s.LastCursor(ctx, ws, store.TypeNote, id)
	all, _ := s.Events(ctx, ws, store.TypeNote, id, 0, 50)
	if len(all) != 10 {
		t.Fatalf("%d events before the prune, want 10", len(all))
	}

	// Cutoff = cut: exactly the 7 old keys go (3 + 3 + 1 rows: three
	// transactions) and the 8 events before cut (3 + 3 + 2: three more).
	rep, err := s.Prune(ctx, cut.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Keys != 7 || rep.Events != 8 {
		t.Errorf("pruned %d keys and %d events, want the 7 and 8 older than the period", rep.Keys, rep.Events)
	}
	// Each loop ends on the first batch smaller than RetentionBatch.
	if rep.Batches != 3+3 {
		t.Errorf("%d transactions, want 6 (3 key and 3 event batches of at most %d rows)", rep.Batches, RetentionBatch)
	}

	// The young keys replay; an old key is gone: resent with its old
	// version it is a new write, refused as stale (no duplicate), and with
	// the current version it applies again.
	for i, o := range young {
		out, err := s.Guarded(ctx, AppendLine(ws, id, fmt.Sprintf("key-young-%d", i), int64(8+i), fmt.Sprint("young", i)))
		if err != nil || !out.Replayed || out.Version != o.Version {
			t.Fatalf("young key %d after the prune: %+v, %v; want its first result replayed", i, out, err)
		}
	}
	_, err = s.Guarded(ctx, AppendLine(ws, id, "key-old-0", 1, "old0"))
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Current != 10 {
		t.Fatalf("pruned key resent with its old version: %v, want a version conflict at 10", err)
	}
	if out, err := s.Guarded(ctx, AppendLine(ws, id, "key-old-0", 10, "old0")); err != nil || out.Replayed || out.Version != 11 {
		t.Fatalf("pruned key with the current version: %+v, %v; want a new write at version 11", out, err)
	}

	// Events: only the two young ones (and the new write) are left, the
	// horizon is the newest pruned one; history is whole.
	left, err := s.Events(ctx, ws, store.TypeNote, id, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 3 || left[0].Cursor != all[8].Cursor || left[1].Cursor != last {
		t.Fatalf("events after the prune: %+v; want the two young ones and the new write", left)
	}
	if h, err := s.EventHorizon(ctx, store.TypeNote, id); err != nil || h != all[7].Cursor {
		t.Fatalf("event horizon %d, %v; want %d (the newest pruned event)", h, err, all[7].Cursor)
	}
	hist, err := s.History(ctx, store.TypeNote, id)
	if err != nil || len(hist) != len(before)+1 {
		t.Fatalf("history has %d versions after the prune (%v), want %d: history is never pruned", len(hist), err, len(before)+1)
	}
	// Pruning again is harmless.
	if rep, err := s.Prune(ctx, cut.Add(time.Hour)); err != nil || rep.Keys != 0 || rep.Events != 0 {
		t.Fatalf("second prune: %+v, %v; want nothing deleted", rep, err)
	}
}

func testPruneKeepsNewest(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	a, b := Create(t, s, ws), Create(t, s, ws)
	for i := range 4 {
		if _, err := s.Guarded(ctx, AppendLine(ws, a, fmt.Sprint("key-a-", i), int64(i+1), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	lastA, _ := s.LastCursor(ctx, ws, store.TypeNote, a)
	lastB, _ := s.LastCursor(ctx, ws, store.TypeNote, b)
	rep, err := s.Prune(ctx, time.Now().Add(365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 4 {
		t.Errorf("pruned %d events, want 4 (all but Note a's newest; Note b has only its newest)", rep.Events)
	}
	for _, c := range []struct {
		id   string
		last int64
	}{{a, lastA}, {b, lastB}} {
		if got, err := s.LastCursor(ctx, ws, store.TypeNote, c.id); err != nil || got != c.last {
			t.Errorf("LastCursor after the prune = %d, %v; want %d", got, err, c.last)
		}
		evs, _ := s.Events(ctx, ws, store.TypeNote, c.id, 0, 50)
		if len(evs) != 1 || evs[0].Cursor != c.last {
			t.Errorf("events left: %+v, want only the newest (%d)", evs, c.last)
		}
	}
	if h, _ := s.EventHorizon(ctx, store.TypeNote, b); h != 0 {
		t.Errorf("Note b lost nothing, but its horizon is %d", h)
	}
}
