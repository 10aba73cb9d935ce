package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestCanceledCallersDoNotBreakTheBatch: callers that give up while their
// write is queued or running never take other callers' writes down with
// them, and every write reported as done is there.
func TestCanceledCallersDoNotBreakTheBatch(t *testing.T) {
	s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	ids := make([]string, 8)
	for i := range ids {
		ids[i] = storetest.Create(t, s, ws)
	}
	const n = 400
	var wg sync.WaitGroup
	ok := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%2 == 0 {
				go func() { time.Sleep(time.Duration(i%7) * 50 * time.Microsecond); cancel() }()
			}
			_, err := s.Guarded(ctx, storetest.AppendLine(ws, ids[i%len(ids)], fmt.Sprintf("cancel-key-%04d", i), 0, fmt.Sprint(i)))
			ok[i] = err == nil
		}()
	}
	wg.Wait()
	present := map[string]bool{}
	for _, id := range ids {
		r, err := s.Get(context.Background(), store.TypeNote, id)
		if err != nil {
			t.Fatal(err)
		}
		var d storetest.CounterDoc
		json.Unmarshal(r.Doc, &d)
		for _, l := range d.Log {
			present[l] = true
		}
	}
	done := 0
	for i := range n {
		if ok[i] {
			done++
			if !present[fmt.Sprint(i)] {
				t.Fatalf("write %d was reported done but is not there", i)
			}
		}
	}
	if len(present) != done {
		t.Fatalf("%d lines present, %d writes reported done: a refusal must mean nothing was written", len(present), done)
	}
	if done < n/2 {
		t.Fatalf("only %d of %d writes succeeded: canceled callers took others down", done, n)
	}
	t.Logf("%d of %d writes done (the rest were canceled by their callers); %d lines present", done, n, len(present))
}
