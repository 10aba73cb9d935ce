package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
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

// rounds interleaves the ways measured, so that a machine whose load
// changes during the run (this one is shared) weighs on each alike.
const rounds = 4

// rate is operations and the time they took, summed over rounds.
type rate struct {
	n  int
	el time.Duration
}

func (r rate) perSec() float64 { return float64(r.n) / r.el.Seconds() }

// runClients runs n operations split over benchClients goroutines and adds
// them to r.
func runClients(b *testing.B, r *rate, n int, op func(client, i int) error) {
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
	r.el += time.Since(start)
	r.n += n
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// foundryWriter runs small guarded edits from benchClients clients, each
// on its own Note.
func foundryWriter(b *testing.B, s *Store) func(r *rate, n int) {
	b.Helper()
	ctx := context.Background()
	ws := storetest.Seed(b, s)
	ids := make([]string, benchClients)
	vers := make([]int64, benchClients)
	for c := range ids {
		ids[c] = storetest.Create(b, s, ws)
		vers[c] = 1
	}
	seq := 0
	return func(r *rate, n int) {
		runClients(b, r, n, func(c, i int) error {
			out, err := s.Guarded(ctx, smallEdit(ws, ids[c], fmt.Sprintf("k-%d-%d", seq, i), vers[c]))
			if err != nil {
				return err
			}
			vers[c] = out.Version
			return nil
		})
		seq++
	}
}

// bareWriter runs an insert-per-transaction loop over plain pgx
// connections (BEGIN, INSERT, COMMIT), one connection per client.
func bareWriter(b *testing.B, u string) func(r *rate, n int) {
	b.Helper()
	ctx := context.Background()
	conns := make([]*pgx.Conn, benchClients)
	for c := range conns {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close(ctx) })
		conns[c] = conn
	}
	if _, err := conns[0].Exec(ctx, `CREATE TABLE IF NOT EXISTS bare_writes (id BIGINT PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	return func(r *rate, n int) {
		runClients(b, r, n, func(c, i int) error {
			return pgx.BeginFunc(ctx, conns[c], func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO bare_writes (id, body) VALUES ($1, $2)`, next.Add(1), `{"n":1}`)
				return err
			})
		})
	}
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
// against a bare pgx insert-per-transaction loop, in the same run (rounds
// interleaved). b.N is the number of writes of each kind.
//
//	go test ./internal/store/postgres/ -run '^$' -bench SmallEdits16 -benchtime 4000x -count 1
func BenchmarkSmallEdits16(b *testing.B) {
	s, u := openBench(b)
	bare, foundry := bareWriter(b, u), foundryWriter(b, s)
	per := max(b.N/rounds, benchClients)
	var rb, rf rate
	b.ResetTimer()
	for range rounds {
		bare(&rb, per)
		foundry(&rf, per)
	}
	b.StopTimer()
	b.ReportMetric(rf.perSec(), "foundry_writes/s")
	b.ReportMetric(rb.perSec(), "bare_writes/s")
	b.ReportMetric(rf.perSec()/rb.perSec(), "ratio")
}

// BenchmarkNotify: the same small edits three ways, in the same run,
// rounds interleaved: a NOTIFY per write in the write's transaction
// (earlier releases); the batched doorbell (this one); no NOTIFY at all,
// other nodes following the feed on their interval only. The follower runs
// in all three.
//
//	go test ./internal/store/postgres/ -run '^$' -bench Notify -benchtime 6000x -count 1
func BenchmarkNotify(b *testing.B) {
	s, u := openBench(b)
	bare, foundry := bareWriter(b, u), foundryWriter(b, s)
	per := max(b.N/rounds, benchClients)
	var rb, rn, rd, rf rate
	b.ResetTimer()
	for range rounds {
		bare(&rb, per)
		s.notifyPerWrite = true
		foundry(&rn, per)
		s.notifyPerWrite = false
		foundry(&rd, per)
		s.noBell = true
		foundry(&rf, per)
		s.noBell = false
	}
	b.StopTimer()
	b.ReportMetric(rb.perSec(), "bare_writes/s")
	b.ReportMetric(rn.perSec(), "notify_writes/s")
	b.ReportMetric(rd.perSec(), "doorbell_writes/s")
	b.ReportMetric(rf.perSec(), "feed_only_writes/s")
	b.ReportMetric(rn.perSec()/rb.perSec(), "notify_ratio")
	b.ReportMetric(rd.perSec()/rb.perSec(), "doorbell_ratio")
	b.ReportMetric(rf.perSec()/rb.perSec(), "feed_only_ratio")
}
