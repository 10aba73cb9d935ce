package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/benchtest"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// BenchmarkGroupCommitRatio16: 16 writers, each on its own Note, durable
// guarded writes (synchronous=FULL; the same mutation as
// BenchmarkDurableWrites16), FOUNDRY_BENCH_WRITES writes (1600) per round
// on each of, one after the other in the same round:
//
//   - group-commit: Foundry's default batching, one fsync per batch;
//   - fsync-per-commit: the same store, schema and writes with MaxBatch 1:
//     one transaction and one fsync per write, the plain loop;
//   - bare-insert-per-tx: a database/sql loop beside Foundry (no guarded
//     write), BEGIN IMMEDIATE, one small INSERT, COMMIT, 16 goroutines on
//     one connection: what one fsync per commit allows on this disk.
//
// Reports writes/s of each and group-commit/fsync-per-commit (target ≥ 3)
// and group-commit/bare-insert-per-tx.
func BenchmarkGroupCommitRatio16(b *testing.B) {
	const writers = 16
	n := benchWrites(b)
	type side struct {
		s   store.Store
		ws  string
		ids []string
		ver []int64
	}
	open := func(opts sqlite.Options) *side {
		s := openSQLite(b, opts)
		sd := &side{s: s, ws: benchSeed(b, s), ver: make([]int64, writers)}
		for w := range writers {
			sd.ids = append(sd.ids, benchCreate(b, s, sd.ws))
			sd.ver[w] = 1
		}
		return sd
	}
	group := open(sqlite.Options{Sync: "full"})
	single := open(sqlite.Options{Sync: "full", MaxBatch: 1})
	bare := openBare(b)
	round := 0

	guarded := func(b *testing.B, sd *side) time.Duration {
		return benchtest.Spread(b, writers, n, func(w int, i int64) error {
			out, err := sd.s.Guarded(context.Background(), benchEdit(sd.ws, sd.ids[w], fmt.Sprintf("ratio-%d-%d-%d", round, w, i), sd.ver[w], fmt.Sprint(i)))
			if err == nil {
				sd.ver[w] = out.Version
			}
			return err
		})
	}
	b.Run("writes", func(b *testing.B) {
		var tg, ts, tp time.Duration
		for range b.N {
			round++
			tg += guarded(b, group)
			ts += guarded(b, single)
			tp += benchtest.Spread(b, writers, n, func(w int, i int64) error { return bare.insert(w, i) })
		}
		rate := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
		b.ReportMetric(rate(tg), "group-commit-writes/s")
		b.ReportMetric(rate(ts), "fsync-per-commit-writes/s")
		b.ReportMetric(rate(tp), "bare-insert-per-tx/s")
		b.ReportMetric(rate(tg)/rate(ts), "group/fsync-per-commit")
		b.ReportMetric(rate(tg)/rate(tp), "group/bare")
	})
}

// benchWrites is FOUNDRY_BENCH_WRITES, or 1600.
func benchWrites(tb testing.TB) int {
	n := 1600
	if v := os.Getenv("FOUNDRY_BENCH_WRITES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			tb.Fatalf("FOUNDRY_BENCH_WRITES=%q: want a positive integer", v)
		}
	}
	return n
}

// bareDB is a plain SQLite database in WAL mode with synchronous=FULL, as
// Foundry opens its own, and one connection.
type bareDB struct {
	db  *sql.DB
	seq atomic.Int64
}

func openBare(b *testing.B) *bareDB {
	v := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(full)"} {
		v.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "bare.db")+"?"+v.Encode())
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE writes (id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, n INTEGER NOT NULL, text TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return &bareDB{db: db}
}

// insert is one transaction of one row, committed (and fsynced) alone.
func (d *bareDB) insert(w int, i int64) error {
	ctx := context.Background()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO writes (id, writer, n, text) VALUES (?, ?, ?, ?)`, d.seq.Add(1), w, i, benchText); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	_, err = conn.ExecContext(ctx, `COMMIT`)
	return err
}
