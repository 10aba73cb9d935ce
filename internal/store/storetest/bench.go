package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
)

// benchNoteDoc is a Note-sized document (~2 KiB) for list benchmarks.
var benchNoteDoc = json.RawMessage(fmt.Sprintf(`{"title":"t","markdown":%q,"tabs":[],"sources":[],"files":[]}`,
	strings.Repeat("A line of a Note's markdown text.\n", 60)))

// SeedListNotes creates n approved Notes in a fresh workspace, with titles
// like "Weekly planning 01234"; every 1000th title also says "Zephyr", so
// a query for it matches n/1000 Notes, and every title says "n" (as in
// "planning"). It writes from 32 goroutines, so a group-committing store
// seeds in batches.
func SeedListNotes(tb testing.TB, s store.Store, n int) (ws string) {
	tb.Helper()
	ws = Seed(tb, s)
	words := []string{"Weekly planning", "Research notes", "Design review", "Budget draft", "Interview transcript", "Reading list", "Team retro", "Launch checklist"}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				title := fmt.Sprintf("%s %05d", words[i%len(words)], i)
				if i%1000 == 0 {
					title += " Zephyr"
				}
				_, err := s.Guarded(context.Background(), store.Mutation{
					Workspace: ws, Type: store.TypeNote, ID: store.NewID("note"), Actor: "bench",
					Create: &store.Resource{Owner: "o", Title: title, Approved: true, Doc: benchNoteDoc},
					Apply: func(cur *store.Resource) (*store.Change, error) {
						return &store.Change{Kind: "note_created", Result: json.RawMessage(`{}`)}, nil
					},
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return ws
}

// BenchListNotesQuery measures list_notes' store read over the Notes of
// ws (seeded by SeedListNotes): a page of 51 with no query, with a query
// few titles match ("zephyr") and with one every title matches ("n"), each
// op doing all three. It reports each one's time and the ratio of each
// query to no query.
func BenchListNotesQuery(b *testing.B, s store.Store, ws string) {
	ctx := context.Background()
	q := func(query string) store.ListQuery {
		return store.ListQuery{Workspace: ws, Type: store.TypeNote, ApprovedOnly: true, Query: query, Limit: 51}
	}
	cases := []struct {
		name string
		q    store.ListQuery
		want int
	}{{"noquery", q(""), 51}, {"rare", q("zephyr"), -1}, {"common", q("n"), 51}}
	took := make([]time.Duration, len(cases))
	for _, c := range cases { // warm the caches and check the answers
		rows, err := s.List(ctx, c.q)
		if err != nil {
			b.Fatal(err)
		}
		if c.want >= 0 && len(rows) != c.want || c.want < 0 && len(rows) == 0 {
			b.Fatalf("%s: %d rows", c.name, len(rows))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for i, c := range cases {
			start := time.Now()
			if _, err := s.List(ctx, c.q); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(start)
		}
	}
	n := float64(b.N)
	for i, c := range cases {
		b.ReportMetric(float64(took[i].Microseconds())/n, c.name+"-µs/op")
		if i > 0 {
			b.ReportMetric(float64(took[i])/float64(took[0]), c.name+"/noquery")
		}
	}
}
