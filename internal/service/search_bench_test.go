package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// BenchmarkSearch10k: full-text search over 10,000 Notes of about 10 KB
// each (words drawn from a vocabulary of 20,000 with a Zipf law, as
// natural text has them; every fifth Note also holds a sheet of 200 text
// cells), on SQLite (durable, Foundry's default options) and on PostgreSQL
// (FOUNDRY_TEST_POSTGRES_URL). Each op is one SearchNotes of the whole use
// case (the store's match, then locating and cutting the snippet of every
// hit in its Note), by a person, limit 20. Reports the p50 and p99 of
// two-word queries (two words of one line of a random Note), of one-word
// queries, and of a phrase; the index's size as a share of the text it
// indexes; and how fast the background indexing of an upgrade goes.
//
//	go test ./internal/service/ -run '^$' -bench BenchmarkSearch10k -benchtime=400x -count=1 -timeout 30m
func BenchmarkSearch10k(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			w := searchWorld(b, db)
			for _, kind := range []string{"two-words", "one-word", "phrase"} {
				b.Run(kind, func(b *testing.B) {
					ctx := context.Background()
					qs := w.queries[kind]
					lat := make([]time.Duration, 0, b.N)
					hits := 0
					b.ResetTimer()
					for i := range b.N {
						t0 := time.Now()
						res, err := w.svc.SearchNotes(ctx, w.person, service.SearchArgs{Query: qs[i%len(qs)]})
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						hits += len(res.Hits)
					}
					b.StopTimer()
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(hits)/float64(b.N), "hits/query")
				})
			}
			b.Run("index-size", func(b *testing.B) {
				for range b.N {
				}
				b.ReportMetric(float64(w.indexBytes(b))/float64(w.textBytes), "index/text")
				b.ReportMetric(float64(w.textBytes)/1e6, "text-MB")
			})
		})
	}
}

// BenchmarkSearchBackfill: how fast IndexNotes indexes Notes written
// before the index (the upgrade's background work), on the same 10,000
// Notes: the index is emptied, then rebuilt; reports Notes per second.
//
//	go test ./internal/service/ -run '^$' -bench BenchmarkSearchBackfill -benchtime=1x -count=1 -timeout 30m
func BenchmarkSearchBackfill(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			w := searchWorld(b, db)
			ctx := context.Background()
			n := 0
			var took time.Duration
			for range b.N {
				forgetIndex(b, w.base)
				t0 := time.Now()
				k, err := service.IndexNotes(ctx, w.svc.Store, nil)
				took += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				n += k
			}
			b.ReportMetric(float64(n)/took.Seconds(), "notes/s")
		})
	}
}

// forgetIndex empties the whole index, as a database from before it has
// none.
func forgetIndex(b testing.TB, base *store.Base) {
	ctx := context.Background()
	err := base.Tx(ctx, func(q store.Querier) error {
		stmts := []string{`DELETE FROM search_indexed`, `DELETE FROM search_docs`}
		if base.D.Name == "sqlite" {
			stmts = append(stmts, `INSERT INTO search_terms (search_terms) VALUES ('delete-all')`)
		}
		for _, s := range stmts {
			if _, err := q.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// world is a store seeded once per process and database.
type world struct {
	svc       *service.Service
	base      *store.Base
	person    service.Caller
	textBytes int64
	queries   map[string][]string
}

var (
	worldsMu sync.Mutex
	worlds   = map[string]*world{}
)

// benchNotes is how many Notes the world holds (FOUNDRY_BENCH_NOTES
// changes it, for a quick look).
func benchNotes() int {
	if n, err := strconv.Atoi(os.Getenv("FOUNDRY_BENCH_NOTES")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

func searchWorld(b *testing.B, db string) *world {
	worldsMu.Lock()
	defer worldsMu.Unlock()
	if w := worlds[db]; w != nil {
		return w
	}
	ctx := context.Background()
	var st store.Store
	var base *store.Base
	switch db {
	case "sqlite":
		dir, err := os.MkdirTemp("", "foundry-search-bench-")
		if err != nil {
			b.Fatal(err)
		}
		s, err := sqlite.Open(ctx, dir, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close(); os.RemoveAll(dir) })
		st, base = s, &s.Base
	default:
		u, _ := pgtest.Schema(b)
		s, err := postgres.Open(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st, base = s, &s.Base
	}
	// The world lives as long as the benchmark that made it (the
	// PostgreSQL schema is dropped with it).
	b.Cleanup(func() {
		worldsMu.Lock()
		delete(worlds, db)
		worldsMu.Unlock()
	})
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "bench", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	w := &world{svc: svc, base: base, person: service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner), queries: map[string][]string{}}
	vocab := benchVocab(20_000)
	total := benchNotes()
	t0 := time.Now()
	var mu sync.Mutex
	var lines []string
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 99))
			z := rand.NewZipf(rnd, 1.07, 1, uint64(len(vocab)-1))
			for i := g; i < total; i += 4 {
				var text strings.Builder
				var mine []string
				for text.Len() < 10_000 {
					n := 6 + rnd.IntN(9)
					ws := make([]string, n)
					for k := range ws {
						ws[k] = vocab[z.Uint64()]
					}
					line := strings.Join(ws, " ")
					if rnd.IntN(50) == 0 {
						mine = append(mine, line)
					}
					text.WriteString(line + ".\n")
				}
				var cells [][]any
				if i%5 == 0 {
					for r := range 20 {
						row := make([]any, 10)
						for c := range row {
							row[c] = vocab[z.Uint64()] + " " + vocab[z.Uint64()]
							if r == 0 && c == 0 {
								row[c] = fmt.Sprintf("total %d", i)
							}
						}
						cells = append(cells, row)
					}
				}
				title := fmt.Sprintf("%s %s %d", vocab[z.Uint64()], vocab[z.Uint64()], i)
				size := int64(text.Len() + len(title))
				_, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: title}, func(d *note.Doc) error {
					if err := note.ReplaceText(d, note.TypeMarkdown, text.String()); err != nil {
						return err
					}
					if cells == nil {
						return nil
					}
					t, err := note.CreateTab(d, note.TypeSheet, "", nil, svc.Now())
					if err != nil {
						return err
					}
					_, err = note.SheetSetRange(d, t.ID, "", 0, 0, cells)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				for _, row := range cells {
					for _, c := range row {
						size += int64(len(c.(string)))
					}
				}
				mu.Lock()
				w.textBytes += size
				lines = append(lines, mine...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	slices.Sort(lines)
	rnd := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		ws := strings.Fields(strings.TrimSuffix(lines[rnd.IntN(len(lines))], "."))
		i, j := rnd.IntN(len(ws)), rnd.IntN(len(ws))
		w.queries["two-words"] = append(w.queries["two-words"], ws[i]+" "+ws[j])
		w.queries["one-word"] = append(w.queries["one-word"], ws[i])
		k := rnd.IntN(len(ws) - 1)
		w.queries["phrase"] = append(w.queries["phrase"], `"`+ws[k]+" "+ws[k+1]+`"`)
	}
	b.Logf("%s: seeded %d Notes, %.1f MB of text, in %s", db, total, float64(w.textBytes)/1e6, time.Since(t0).Round(time.Second))
	worlds[db] = w
	return w
}

// indexBytes is what the index takes on disk: the FTS5 table's shadow
// tables and search_docs (SQLite, by dbstat), or search_docs with its GIN
// index and TOAST (PostgreSQL).
func (w *world) indexBytes(b *testing.B) int64 {
	var n int64
	q := `SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'search%' OR name LIKE 'sqlite_autoindex_search%'`
	if w.base.D.Name == "postgres" {
		q = `SELECT pg_total_relation_size('search_docs') + pg_total_relation_size('search_indexed')`
	}
	if err := w.base.R.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		b.Fatal(err)
	}
	if w.base.D.Name == "postgres" {
		var heap, idx, toast int64
		if err := w.base.R.QueryRowContext(context.Background(), `SELECT pg_relation_size('search_docs'), pg_indexes_size('search_docs'),
			pg_total_relation_size('search_docs') - pg_relation_size('search_docs') - pg_indexes_size('search_docs')`).Scan(&heap, &idx, &toast); err == nil {
			b.Logf("postgres: search_docs %d MB, its indexes %d MB, TOAST %d MB", heap>>20, idx>>20, toast>>20)
		}
	}
	return n
}

// benchVocab is n made-up words of two to four syllables, the same every
// run.
func benchVocab(n int) []string {
	syl := []string{"ka", "lo", "mi", "ren", "to", "sa", "vu", "del", "pri", "zo", "an", "bel", "cor", "dun", "ex", "fi", "gra", "hol", "ist", "jum", "qua", "tor", "ule", "wy"}
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		k := 2 + rnd.IntN(3)
		var s strings.Builder
		for range k {
			s.WriteString(syl[rnd.IntN(len(syl))])
		}
		if w := s.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
