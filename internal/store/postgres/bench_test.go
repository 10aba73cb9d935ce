package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/store"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/storetest"
)

const benchClients = 16

// smallEdit is a guarded edit with a tiny Apply: the Note's counter is set.
func smallEdit(ws, id, key string, expected int64) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Key: key, Fingerprint: key,
		ExpectedVersion: expected, Actor: "bench",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			doc := fmt.Appendf(nil, `{"n":%d,"log":[]}`, cur.Version)
			return &store.Change{Doc: doc, Result: json.RawMessage(`{}`), Kind: "edited", Changed: []string{"t1"}}, nil
		},
	}
}

// runClients runs n operations split over benchClients goroutines and
// answers the operations per second.
func runClients(b *testing.B, n int, op func(client, i int) error) float64 {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	start := time.Now()
	for c := range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += benchClients {
				if err := op(c, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(n) / el.Seconds()
}

// foundryWrites runs n small guarded edits from benchClients clients, each
// on its own Note, and answers writes/s.
func foundryWrites(b *testing.B, s *Store, n int) float64 {
	b.Helper()
	ctx := context.Background()
	ws := storetest.Seed(b, s)
	ids := make([]string, benchClients)
	vers := make([]int64, benchClients)
	for c := range ids {
		ids[c] = storetest.Create(b, s, ws)
		vers[c] = 1
	}
	return runClients(b, n, func(c, i int) error {
		out, err := s.Guarded(ctx, smallEdit(ws, ids[c], fmt.Sprintf("k-%d", i), vers[c]))
		if err != nil {
			return err
		}
		vers[c] = out.Version
		return nil
	})
}

// bareWrites runs n insert-per-transaction loops over plain pgx connections
// (BEGIN, INSERT, COMMIT), one connection per client, and answers writes/s.
func bareWrites(b *testing.B, u string, n int) float64 {
	b.Helper()
	ctx := context.Background()
	conns := make([]*pgx.Conn, benchClients)
	for c := range conns {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		conns[c] = conn
	}
	if _, err := conns[0].Exec(ctx, `CREATE TABLE IF NOT EXISTS bare_writes (id BIGINT PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	base := time.Now().UnixNano()
	return runClients(b, n, func(c, i int) error {
		return pgx.BeginFunc(ctx, conns[c], func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO bare_writes (id, body) VALUES ($1, $2)`, base+int64(i), `{"n":1}`)
			return err
		})
	})
}

func openBench(b *testing.B) (*Store, string) {
	b.Helper()
	u, _ := pgtest.Schema(b)
	s, err := OpenWith(context.Background(), u, Options{Retention: store.Retention{Every: -1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, u
}

// BenchmarkSmallEdits16: Foundry's guarded small edit from 16 clients
// against a bare pgx insert-per-transaction loop, in the same run.
// b.N is the number of writes of each kind.
//
//	go test ./internal/store/postgres/ -run '^$' -bench SmallEdits16 -benchtime 3000x -count 1
func BenchmarkSmallEdits16(b *testing.B) {
	s, u := openBench(b)
	n := max(b.N, benchClients)
	b.ResetTimer()
	bare := bareWrites(b, u, n)
	foundry := foundryWrites(b, s, n)
	b.StopTimer()
	b.ReportMetric(foundry, "foundry_writes/s")
	b.ReportMetric(bare, "bare_writes/s")
	b.ReportMetric(foundry/bare, "ratio")
}

// BenchmarkNotify: the same small edits with a NOTIFY per write in the
// write's transaction, heard by a LISTEN connection (earlier releases), and
// with none, other nodes following the event feed instead (this one), in
// the same run. The follower polls in both.
//
//	go test ./internal/store/postgres/ -run '^$' -bench Notify -benchtime 3000x -count 1
func BenchmarkNotify(b *testing.B) {
	s, u := openBench(b)
	ctx := context.Background()
	n := max(b.N, benchClients)
	b.ResetTimer()
	bare := bareWrites(b, u, n)

	listener, err := pgx.Connect(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := listener.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		b.Fatal(err)
	}
	lctx, stop := context.WithCancel(ctx)
	heard := make(chan int)
	go func() {
		k := 0
		for {
			if _, err := listener.WaitForNotification(lctx); err != nil {
				heard <- k
				return
			}
			k++
		}
	}()
	s.notifyPerWrite = true
	perWrite := foundryWrites(b, s, n)
	s.notifyPerWrite = false
	time.Sleep(100 * time.Millisecond)
	stop()
	if k := <-heard; k < n {
		b.Errorf("the listener heard %d notifications of %d writes", k, n)
	}
	listener.Close(ctx)

	feed := foundryWrites(b, s, n)
	b.StopTimer()
	b.ReportMetric(perWrite, "notify_writes/s")
	b.ReportMetric(feed, "feed_writes/s")
	b.ReportMetric(perWrite/bare, "notify_ratio")
	b.ReportMetric(feed/bare, "feed_ratio")
}
