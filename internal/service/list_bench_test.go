package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// listFixture is a workspace of n Notes on its own store, for list
// benchmarks: titles like "Weekly planning 01234"; one in 1,000 also says
// "Zephyr" (i%1000 == 0), as does a deleted one (i%1000 == 500); one in 50
// is deleted and one in 10 is not approved.
type listFixture struct {
	svc    *service.Service
	person service.Caller // a person signed in to the web app (GET /api/notes)
	agent  service.Caller // an agent's token reaching every approved Note (list_notes)
}

func newListFixture(b *testing.B, kind string, n int) listFixture {
	b.Helper()
	ctx := context.Background()
	var st store.Store
	var base *store.Base
	switch kind {
	case "sqlite":
		s, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st, base = s, &s.Base
	case "postgres":
		u, _ := pgtest.Schema(b)
		s, err := postgres.Open(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st, base = s, &s.Base
	}
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "bench", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"Weekly planning", "Research notes", "Design review", "Budget draft", "Interview transcript", "Reading list", "Team retro", "Launch checklist"}
	notes := make([]storetest.BulkNote, n)
	for i := range notes {
		title := fmt.Sprintf("%s %05d", words[i%len(words)], i)
		if i%1000 == 0 || i%1000 == 500 {
			title += " Zephyr"
		}
		notes[i] = storetest.BulkNote{Title: title, Approved: i%10 != 3}
		if i%50 == 7 || i%1000 == 500 {
			notes[i].Approved, notes[i].Mark = false, service.KindNoteDeleted
		}
	}
	storetest.BulkNotes(b, base, o.Workspace.ID, notes)
	if kind == "postgres" {
		// As autovacuum would after a bulk load.
		if _, err := base.R.ExecContext(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	p := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead}}
	return listFixture{svc: svc, person: service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner), agent: service.Agent(p)}
}

// BenchmarkListNotesScale: list_notes through the service at 10 Notes and
// at 10,000, on each store, for a person (the web app's list) and for an
// agent: a title query few titles match ("zephyr") and the first page (50)
// with no query. Each op runs all four calls; it reports each one's time
// and, per kind of call, the ratio of 10,000 Notes to 10 (target: ≤ 2 for
// the title query). The fixtures are bulk-inserted (storetest.BulkNotes).
func BenchmarkListNotesScale(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			small, large := newListFixture(b, kind, 10), newListFixture(b, kind, 10_000)
			for _, who := range []string{"person", "agent"} {
				b.Run(who, func(b *testing.B) {
					benchListScale(b, who, small, large)
				})
			}
		})
	}
}

func benchListScale(b *testing.B, who string, small, large listFixture) {
	ctx := context.Background()
	caller := func(f listFixture) service.Caller {
		if who == "agent" {
			return f.agent
		}
		return f.person
	}
	type call struct {
		name string
		f    listFixture
		args service.ListNotesArgs
		want int // Notes in the answer
	}
	query, page := service.ListNotesArgs{Query: "zephyr"}, service.ListNotesArgs{Page: service.Page{Limit: 50}}
	smallPage := 9 // 10 Notes, one of them (i = 7) deleted
	if who == "agent" {
		smallPage = 8 // and one (i = 3) not approved
	}
	calls := []call{
		{"query-10", small, query, 1},
		{"query-10000", large, query, 10},
		{"page-10", small, page, smallPage},
		{"page-10000", large, page, 50},
	}
	took := make([]time.Duration, len(calls))
	run := func(i int) {
		c := calls[i]
		start := time.Now()
		l, err := c.f.svc.ListNotes(ctx, caller(c.f), c.args)
		took[i] += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Notes) != c.want {
			b.Fatalf("%s: %d Notes, want %d", c.name, len(l.Notes), c.want)
		}
	}
	for i := range calls { // warm the caches and check the answers
		run(i)
	}
	clear(took)
	b.ResetTimer()
	for b.Loop() {
		for i := range calls {
			run(i)
		}
	}
	n := float64(b.N)
	for i, c := range calls {
		b.ReportMetric(float64(took[i].Nanoseconds())/n, c.name+"-ns/op")
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "query-ratio")
	b.ReportMetric(float64(took[3])/float64(took[2]), "page-ratio")
}
