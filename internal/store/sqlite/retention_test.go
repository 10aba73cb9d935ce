package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T, r store.Retention) store.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// The background pruner that Open starts removes old keys by itself, and
// Close stops it (the test's Close returns).
func TestBackgroundPrunerRuns(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{Retention: store.Retention{Keys: time.Nanosecond, Every: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	if _, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "key-background", 1, "x")); err != nil {
		t.Fatal(err)
	}
	// Resent with its old version, the write replays while its key is
	// kept, and is refused as stale (a new write) once the key is pruned.
	for range 2000 {
		_, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "key-background", 1, "x"))
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the background pruner did not remove a key older than its period within 10 s")
}
