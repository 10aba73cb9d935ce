package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/storetest"
)

func TestRetention(t *testing.T) {
	baseURL(t)
	storetest.RunRetention(t, func(t *testing.T, r store.Retention) store.Store {
		u, _ := freshSchema(t)
		s, err := postgres.OpenWith(context.Background(), u, postgres.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Two nodes pruning at once delete each old row once between them, and
// neither fails.
func TestTwoNodesPruneTogether(t *testing.T) {
	u, _ := freshSchema(t)
	r := store.Retention{Every: -1, Batch: storetest.RetentionBatch}
	var nodes []*postgres.Store
	for range 2 {
		s, err := postgres.OpenWith(context.Background(), u, postgres.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes = append(nodes, s)
	}
	ctx := context.Background()
	ws := storetest.Seed(t, nodes[0])
	id := storetest.Create(t, nodes[0], ws)
	const writes = 40
	for i := range writes {
		if _, err := nodes[i%2].Guarded(ctx, storetest.AppendLine(ws, id, fmt.Sprintf("key-two-nodes-%d", i), int64(i+1), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(31 * 24 * time.Hour)
	reps := make([]store.PruneReport, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = s.Prune(ctx, later)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if k, e := reps[0].Keys+reps[1].Keys, reps[0].Events+reps[1].Events; k != writes || e != writes {
		t.Fatalf("the nodes pruned %d keys and %d events between them, want %d and %d", k, e, writes, writes)
	}
}
