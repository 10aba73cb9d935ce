package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
// benchmarks: titles like "Weekly planning 01234"; one (i = 5) also says
// "Quokka"; one in 1,000 says "Zephyr" (i%1000 == 0), as does a deleted
// one (i%1000 == 500); one in 50 is deleted and one in 10 is not
// approved. The store then has the upkeep its pruner gives it within the
// hour (Prune), and PostgreSQL's table the vacuum autovacuum gives it.
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
		if i == 5 {
			title += " Quokka"
		}
		notes[i] = storetest.BulkNote{Title: title, Approved: i%10 != 3}
		if i%50 == 7 || i%1000 == 500 {
			notes[i].Approved, notes[i].Mark = false, service.KindNoteDeleted
		}
	}
	storetest.BulkNotes(b, base, o.Workspace.ID, notes)
	if _, err := st.Prune(ctx, time.Now()); err != nil {
		b.Fatal(err)
	}
	if kind == "postgres" {
		if _, err := base.R.ExecContext(ctx, `VACUUM ANALYZE resources`); err != nil {
			b.Fatal(err)
		}
	}
	p := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead}}
	return listFixture{svc: svc, person: service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner), agent: service.Agent(p)}
}

// BenchmarkListNotesScale: list_notes through the service at 10 Notes and
// at 10,000, on each store, for a person (the web app's list) and for an
// agent: a title query one title matches in either workspace ("quokka":
// what costs more at 10,000 is the workspace, not the answer), one that
// one title in 1,000 matches ("zephyr": 1 Note, then 10), and the first
// page (50) with no query. Each op runs a slice of ten calls of each kind
// at each size in turn, so a change in the machine's load falls on both
// sizes alike. It reports each call's ns/op (the median slice's) and, per
// kind, the ratio of 10,000 Notes to 10 (target: ≤ 2 for a title query
// whose answer is the same size). The fixtures are bulk-inserted
// (storetest.BulkNotes).
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
	one, permille := service.ListNotesArgs{Query: "quokka"}, service.ListNotesArgs{Query: "zephyr"}
	page := service.ListNotesArgs{Page: service.Page{Limit: 50}}
	smallPage := 9 // 10 Notes, one of them (i = 7) deleted
	if who == "agent" {
		smallPage = 8 // and one (i = 3) not approved
	}
	calls := []call{
		{"one-10", small, one, 1},
		{"one-10000", large, one, 1},
		{"permille-10", small, permille, 1},
		{"permille-10000", large, permille, 10},
		{"page-10", small, page, smallPage},
		{"page-10000", large, page, 50},
	}
	call1 := func(c call) {
		l, err := c.f.svc.ListNotes(ctx, caller(c.f), c.args)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Notes) != c.want {
			b.Fatalf("%s: %d Notes, want %d", c.name, len(l.Notes), c.want)
		}
	}
	for _, c := range calls { // warm the caches and check the answers
		call1(c)
	}
	// Each kind and size runs in slices of calls in a row, the kinds and
	// sizes taking turns; what is reported is the median slice, which a
	// burst of load on a shared machine moves less than the mean.
	const slice = 10
	took := make([][]time.Duration, len(calls))
	b.ResetTimer()
	for b.Loop() {
		for i, c := range calls {
			start := time.Now()
			for range slice {
				call1(c)
			}
			took[i] = append(took[i], time.Since(start)/slice)
		}
	}
	median := make([]float64, len(calls))
	for i, c := range calls {
		slices.Sort(took[i])
		median[i] = float64(took[i][len(took[i])/2].Nanoseconds())
		b.ReportMetric(median[i], c.name+"-ns/op")
	}
	for i := 0; i < len(calls); i += 2 {
		b.ReportMetric(median[i+1]/median[i], strings.TrimSuffix(calls[i].name, "-10")+"-ratio")
	}
}
