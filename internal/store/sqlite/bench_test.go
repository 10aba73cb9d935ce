package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// The benchmarks here measure durable guarded writes: each one is a whole
// store.Guarded call (load, key check, version compare, apply, resource row,
// history row, key row, event row) acknowledged only after COMMIT.
//
// The edited document has a constant size (a counter and a ~1 KiB text that
// every write replaces, like replace_text on a markdown tab), so later writes
// cost what earlier ones did however large b.N is.

// benchText is the ~1 KiB text each write stores.
var benchText = strings.Repeat("Foundry benchmark line of markdown text.\n", 25)

type benchDoc struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

func benchSeed(tb testing.TB, s store.Store) (ws string) {
	tb.Helper()
	ws = store.NewID("ws")
	now := time.Now()
	if err := s.CreateWorkspace(context.Background(), store.Workspace{ID: ws, Name: "bench", CreatedAt: now},
		store.User{ID: store.NewID("usr"), Email: ws + "@example.org", Name: "Owner", Role: "owner", CreatedAt: now}); err != nil {
		tb.Fatal(err)
	}
	return ws
}

func benchCreate(tb testing.TB, s store.Store, ws string) string {
	tb.Helper()
	id := store.NewID("note")
	doc, _ := json.Marshal(benchDoc{Text: benchText})
	_, err := s.Guarded(context.Background(), store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "bench",
		Create: &store.Resource{Owner: "o", Title: "Bench", Approved: true, Doc: doc},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "created", Result: json.RawMessage(`{}`)}, nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// benchEdit is a guarded edit with a key and a compare-and-swap on expected:
// it bumps the counter and replaces the text, answering the new version.
func benchEdit(ws, id, key string, expected int64, line string) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Key: key, Fingerprint: "edit:" + line,
		ExpectedVersion: expected, Actor: "bench",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d benchDoc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, err
			}
			d.N++
			d.Text = line + "\n" + benchText
			doc, _ := json.Marshal(d)
			res, _ := json.Marshal(map[string]any{"n": d.N, "version": cur.Version + 1})
			return &store.Change{Doc: doc, Result: res, Kind: "edited", Changed: []string{"markdown"}}, nil
		},
	}
}

func openSQLite(tb testing.TB, opts sqlite.Options) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkGuardedWrite: one writer, sequential guarded writes on one Note,
// default options (synchronous=FULL, group commit on; with one writer every
// batch holds one write, so each write pays its own fsync). Reports the
// latency of one call at the 50th and 99th percentile, and writes per second.
func BenchmarkGuardedWrite(b *testing.B) {
	s := openSQLite(b, sqlite.Options{})
	ws := benchSeed(b, s)
	id := benchCreate(b, s, ws)
	ctx := context.Background()
	lat := make([]time.Duration, b.N)
	version := int64(1)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		out, err := s.Guarded(ctx, benchEdit(ws, id, fmt.Sprintf("bench-key-%d", i), version, fmt.Sprint(i)))
		lat[i] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		version = out.Version
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(lat, 99).Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // ceil(n·p/100), 1-based
	return sorted[max(i, 1)-1]
}

// BenchmarkDurableWrites16: 16 goroutines doing guarded writes, each on its
// own Note (so the compare-and-swap never conflicts), b.N writes in total.
// The sub-benchmarks run in one go so their ratio is fair:
//
//   - group-commit: SQLite, synchronous=FULL, default batching (one fsync per
//     batch of whatever is queued);
//   - fsync-per-commit: SQLite, synchronous=FULL, MaxBatch 1 (one transaction
//     and one fsync per write);
//   - postgres: PostgreSQL at FOUNDRY_TEST_POSTGRES_URL in a fresh schema
//     (skipped when unset), the same mutation.
func BenchmarkDurableWrites16(b *testing.B) {
	b.Run("group-commit", func(b *testing.B) {
		durableWrites16(b, openSQLite(b, sqlite.Options{Sync: "full"}))
	})
	b.Run("fsync-per-commit", func(b *testing.B) {
		durableWrites16(b, openSQLite(b, sqlite.Options{Sync: "full", MaxBatch: 1}))
	})
	b.Run("postgres", func(b *testing.B) {
		u, _ := pgtest.Schema(b)
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		durableWrites16(b, s)
	})
}

func durableWrites16(b *testing.B, s store.Store) {
	const writers = 16
	ws := benchSeed(b, s)
	ids := make([]string, writers)
	for i := range ids {
		ids[i] = benchCreate(b, s, ws)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.ResetTimer()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			version := int64(1)
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				out, err := s.Guarded(context.Background(), benchEdit(ws, ids[w], fmt.Sprintf("bench-%d-%d", w, n), version, fmt.Sprint(n)))
				if err != nil {
					errs <- err
					return
				}
				version = out.Version
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
