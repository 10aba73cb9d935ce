package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/sqlite"
)

// searchOf runs a search and fails the test on an error.
func searchOf(t *testing.T, f *fixture, c service.Caller, q string) []service.SearchHit {
	t.Helper()
	res, err := f.svc.SearchNotes(context.Background(), c, service.SearchArgs{Query: q, Page: service.Page{Limit: 50}})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res.Hits
}

// hitPlaces are the hits as "note|tab|where" strings, for comparing.
func hitPlaces(hits []service.SearchHit) []string {
	var out []string
	for _, h := range hits {
		w := h.Where.Field
		switch {
		case h.Where.Line > 0:
			w += fmt.Sprintf(":%d", h.Where.Line)
		case h.Where.Cell != "":
			w += ":" + h.Where.Cell
		case h.Where.SlideIndex != nil:
			w += fmt.Sprintf(":%d", *h.Where.SlideIndex)
		}
		out = append(out, h.NoteID+"|"+h.TabID+"|"+w)
	}
	return out
}

func TestSearchFindsEveryKindOfTab(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		lines := make([]string, 0, 120)
		for i := 1; i <= 120; i++ {
			lines = append(lines, fmt.Sprintf("line %d of the plan", i))
		}
		lines[79] = "the Zanzibar quarterly budget is here"
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr(strings.Join(lines, "\n")), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		sheet, err := f.svc.CreateNoteTab(ctx, agent, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "search-sheet-1", TabType: note.TypeSheet, Label: "Numbers"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: sheet.TabID, ExpectedVersion: f.version(t), IdempotencyKey: "search-cells-1", Operation: "sheet_set_range",
			StartRow: ptr(39), StartCol: ptr(3), Values: [][]any{{"Marrakesh café total", 42.5}}}); err != nil {
			t.Fatal(err)
		}
		slides, err := f.svc.CreateNoteTab(ctx, agent, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "search-slides-1", TabType: note.TypeSlides,
			Slides: []note.SlideInput{{Title: "One"}, {Title: "Two"}, {Title: "Three", Body: "北京大学 visit", Notes: "speaker: mention the 🚀 launch"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.AddNoteSource(ctx, agent, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "search-src-1", Title: "Ministry report", URL: "https://example.org/reports/kilimanjaro"}); err != nil {
			t.Fatal(err)
		}

		cases := []struct{ q, place, snippet string }{
			{"zanzibar budget", f.noteID + "|markdown|text:80", "the «Zanzibar» quarterly «budget» is here"},
			{`"quarterly budget"`, f.noteID + "|markdown|text:80", "«quarterly budget»"},
			{"Zanzi*", f.noteID + "|markdown|text:80", "«Zanzibar»"},
			{"CAFE marrakesh", f.noteID + "|" + sheet.TabID + "|cell:D40", "«Marrakesh» «café» total"},
			{"42.5", f.noteID + "|" + sheet.TabID + "|cell:E40", "«42.5»"},
			{"北京", f.noteID + "|" + slides.TabID + "|slide_body:2", "«北京»大学 visit"},
			{"🚀", f.noteID + "|" + slides.TabID + "|slide_notes:2", "«🚀»"},
			{"kilimanjaro", f.noteID + "|sources|source", "«kilimanjaro»"},
			{"research", f.noteID + "|markdown|title", "«Research»"},
		}
		for _, c := range cases {
			hits := searchOf(t, f, agent, c.q)
			got := hitPlaces(hits)
			if len(got) != 1 || got[0] != c.place {
				t.Errorf("search %q: hits %v, want exactly %s", c.q, got, c.place)
				continue
			}
			if !strings.Contains(hits[0].Snippet, c.snippet) {
				t.Errorf("search %q: snippet %q does not hold %q", c.q, hits[0].Snippet, c.snippet)
			}
			if hits[0].Version != f.version(t) || hits[0].Title != "Research" {
				t.Errorf("search %q: hit says version %d title %q, want %d Research", c.q, hits[0].Version, hits[0].Title, f.version(t))
			}
		}
		if hits := searchOf(t, f, agent, "zanzibar kilimanjaro"); len(hits) != 0 {
			t.Errorf("words in two units matched: %v", hitPlaces(hits))
		}
		if hits := searchOf(t, f, agent, `"budget quarterly"`); len(hits) != 0 {
			t.Errorf("a phrase in the wrong order matched: %v", hitPlaces(hits))
		}
		res, err := f.svc.SearchNotes(ctx, agent, service.SearchArgs{Query: "marrakesh", TabType: note.TypeMarkdown})
		if err != nil || len(res.Hits) != 0 {
			t.Errorf("tab_type markdown found the sheet's cell: %v %v", res.Hits, err)
		}
	})
}

func TestSearchFollowsWritesAndDeletes(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr("alpha wolverine\n"), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, agent, "wolverine")); n != 1 {
			t.Fatalf("after the write: %d hits, want 1", n)
		}
		if _, err := f.svc.EditNoteText(ctx, agent, service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "search-edit-1",
			Edits: []note.TextEdit{{OldText: "wolverine", NewText: "badger"}}}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, agent, "wolverine")); n != 0 {
			t.Errorf("the replaced word is still found (%d hits)", n)
		}
		if n := len(searchOf(t, f, agent, "badger")); n != 1 {
			t.Errorf("the new word: %d hits, want 1", n)
		}
		sheet, err := f.svc.CreateNoteTab(ctx, agent, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "search-sheet-2", TabType: note.TypeSheet})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: sheet.TabID, ExpectedVersion: f.version(t), IdempotencyKey: "search-cells-2", Operation: "sheet_set_range",
			StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{"ocelot"}}}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, agent, "ocelot")); n != 1 {
			t.Fatalf("cell: %d hits, want 1", n)
		}
		if _, err := f.svc.DeleteTab(ctx, f.person, service.TabWriteArgs{NoteID: f.noteID, TabID: sheet.TabID, Guard: service.Guard{ExpectedVersion: f.version(t)}}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, f.person, "ocelot")); n != 0 {
			t.Errorf("a deleted tab's cell is still found (%d hits)", n)
		}
		if _, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: f.version(t)}}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, f.person, "badger")); n != 0 {
			t.Errorf("a deleted Note is still found (%d hits)", n)
		}
		if _, err := f.svc.UntrashNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID}); err != nil {
			t.Fatal(err)
		}
		if n := len(searchOf(t, f, f.person, "badger")); n != 1 {
			t.Errorf("a Note back from the trash: %d hits, want 1", n)
		}
	})
}

func TestSearchInsideTheGrant(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		other, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: "Other pangolin notes", Approved: true})
		if err != nil {
			t.Fatal(err)
		}
		hidden, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: "Private pangolin diary"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr("pangolin census\n"), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		notesOf := func(hits []service.SearchHit) map[string]int {
			m := map[string]int{}
			for _, h := range hits {
				m[h.NoteID]++
			}
			return m
		}
		if got := notesOf(searchOf(t, f, f.person, "pangolin")); len(got) != 3 {
			t.Errorf("a person finds %v, want all 3 Notes", got)
		}
		if got := notesOf(searchOf(t, f, service.Agent(f.read), "pangolin")); len(got) != 2 || got[hidden.NoteID] != 0 {
			t.Errorf("an agent finds %v: want the 2 approved Notes, never %s", got, hidden.NoteID)
		}
		narrow := f.read
		narrow.Notes = []string{other.NoteID}
		if got := notesOf(searchOf(t, f, service.Agent(narrow), "pangolin")); len(got) != 1 || got[other.NoteID] != 1 {
			t.Errorf("a token narrowed to %s finds %v", other.NoteID, got)
		}
		// Another workspace's Note with the same word is never found.
		now := time.Now()
		if err := f.svc.Store.CreateWorkspace(ctx, store.Workspace{ID: "ws_second", Name: "second", CreatedAt: now},
			store.User{ID: "usr_second", Workspace: "ws_second", Email: "second@example.org", Name: "Second", Role: service.RoleOwner, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CreateNote(ctx, service.Person("ws_second", "usr_second", service.RoleOwner), service.CreateNoteArgs{Title: "pangolin elsewhere", Approved: true}); err != nil {
			t.Fatal(err)
		}
		if got := notesOf(searchOf(t, f, f.person, "pangolin")); len(got) != 3 {
			t.Errorf("with a second workspace a person finds %v", got)
		}
		if got := notesOf(searchOf(t, f, service.Person("ws_second", "usr_second", service.RoleOwner), "pangolin")); len(got) != 1 {
			t.Errorf("the second workspace's person finds %v", got)
		}
	})
}

func TestSearchPages(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		for i := range 7 {
			if _, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: fmt.Sprintf("armadillo %d", i), Approved: true}); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page > 10 {
				t.Fatal("paging does not end")
			}
			res, err := f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: "armadillo", Page: service.Page{Limit: 3, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				if seen[h.NoteID] {
					t.Errorf("%s on two pages", h.NoteID)
				}
				seen[h.NoteID] = true
			}
			if res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
		if len(seen) != 7 {
			t.Errorf("paging found %d Notes, want 7", len(seen))
		}
	})
}

func TestSearchHostileQueries(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text",
			Text: ptr("Ärger über Straße — شكرا جزيلا — שלום עולם — नमस्ते दुनिया — naïve CAFÉ — AND OR NOT NEAR\n"), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"arger", "STRASSE", "uber", "شكرا", "שלום", "नमस्ते", "naive", "café", "and", "near", `"OR NOT"`, "NOT(NEAR", "näi*", "ärger*"} {
			if n := len(searchOf(t, f, f.person, q)); n != 1 {
				t.Errorf("search %q: %d hits, want 1", q, n)
			}
		}
		for _, q := range []string{`"`, `*`, `***`, `()`, `"" ""`, "-", "\x00", "   "} {
			_, err := f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: q})
			wantProblem(t, err, problem.Invalid, "query", "no word")
		}
		for _, q := range []string{`title:x OR y`, `a* b* c*`, `{col}: x`, `x^2 NEAR/3 y`, `'quote' "dq" \back`, "🙂🙃", "\u202eRTL", "a\x00b"} {
			if _, err := f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: q}); err != nil {
				t.Errorf("search %q: %v", q, err)
			}
		}
		many := strings.Repeat("x ", 100)
		_, err := f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: strings.Repeat("wörd", 60)})
		wantProblem(t, err, problem.Limit, "query", "200")
		_, err = f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: many})
		if err != nil {
			t.Errorf("100 copies of one word: %v", err)
		}
		terms := ""
		for i := range 40 {
			terms += fmt.Sprintf("w%d ", i)
		}
		_, err = f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: terms})
		wantProblem(t, err, problem.Invalid, "query", "at most 16")
		_, err = f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: "x", TabType: "spreadsheet"})
		wantProblem(t, err, problem.Invalid, "tab_type", "sheet")
		for _, c := range []string{"x", b64("s:[true]"), b64(`s:[true,1,"n",""]`), b64(`s:[true,-1,"n","k"]`), strings.Repeat("A", 300)} {
			_, err = f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: "arger", Page: service.Page{Cursor: c}})
			wantProblem(t, err, problem.Invalid, "cursor")
		}
		_, err = f.svc.SearchNotes(ctx, f.person, service.SearchArgs{Query: "arger", Page: service.Page{Limit: 51}})
		wantProblem(t, err, problem.Invalid, "limit")
		// A snippet is at most 200 characters, however long the line.
		long := strings.Repeat("lorem ipsum dolor ", 40) + "quokka " + strings.Repeat("sit amet ", 40)
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr(long), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		hits := searchOf(t, f, f.person, "quokka")
		if len(hits) != 1 || utf8.RuneCountInString(hits[0].Snippet) > 200 || !strings.Contains(hits[0].Snippet, "«quokka»") {
			t.Errorf("long line: %+v", hits)
		}
	})
}

// TestSearchIndexesOlderNotes: Notes the index does not hold (written
// before it existed) are found once IndexNotes ran, which goes on while
// people write; a Note in the trash stays out.
func TestSearchIndexesOlderNotes(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var ids []string
		for i := range 30 {
			n, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: fmt.Sprintf("Older %d", i), Approved: true})
			if err != nil {
				t.Fatal(err)
			}
			v := int64(1)
			if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: n.NoteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr(fmt.Sprintf("capybara number%d\n", i)), ExpectedVersion: v}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.NoteID)
		}
		if _, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: ids[0], Guard: service.Guard{ExpectedVersion: 2}}); err != nil {
			t.Fatal(err)
		}
		// Forget the whole index, as a database from before it has none.
		forgetIndex(t, baseOf(t, f.svc.Store))
		if n := len(searchOf(t, f, f.person, "capybara")); n != 0 {
			t.Fatalf("the emptied index still finds %d", n)
		}
		// A person writes while the index is built: a bounded loop.
		stop := make(chan struct{})
		wrote := make(chan int)
		go func() {
			k := 0
			defer func() { wrote <- k }()
			for ; k < 200; k++ {
				select {
				case <-stop:
					return
				default:
				}
				id := ids[1+k%29]
				r, err := f.svc.Store.Head(ctx, store.TypeNote, id)
				if err != nil {
					return
				}
				if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: id, TabID: note.TypeMarkdown, Operation: "replace_text",
					Text: ptr(fmt.Sprintf("capybara number%d edit%d\n", 1+k%29, k)), ExpectedVersion: r.Version}); err != nil {
					return
				}
			}
		}()
		n, err := service.IndexNotes(ctx, f.svc.Store, nil)
		close(stop)
		k := <-wrote
		if err != nil {
			t.Fatal(err)
		}
		if n < 31 {
			t.Errorf("IndexNotes indexed %d Notes, want the 31 there are", n)
		}
		left, err := f.svc.Store.Unindexed(ctx, "", 10)
		if err != nil || len(left) != 0 {
			t.Errorf("after IndexNotes, %d Notes are left unindexed (%v)", len(left), err)
		}
		got := map[string]bool{}
		for _, h := range searchOf(t, f, f.person, "capybara") {
			got[h.NoteID] = true
		}
		if len(got) != 29 || got[ids[0]] {
			t.Errorf("after indexing a person finds %d Notes (the trashed one: %v), want the 29 not in the trash", len(got), got[ids[0]])
		}
		if k > 0 {
			last := k - 1
			if hits := searchOf(t, f, f.person, fmt.Sprintf("edit%d", last)); len(hits) != 1 {
				t.Errorf("the last write during indexing (edit%d) is found %d times, want 1", last, len(hits))
			}
		}
		t.Logf("%d writes ran while %d Notes were indexed", k, n)
	})
}

// baseOf is the shared SQL of a test's store.
func baseOf(t *testing.T, st store.Store) *store.Base {
	switch s := st.(type) {
	case *sqlite.Store:
		return &s.Base
	case *postgres.Store:
		return &s.Base
	}
	t.Fatalf("no SQL under %T", st)
	return nil
}

// TestSearchStoresAgree: the same Notes, written in the same order to
// SQLite and PostgreSQL, give the same hits in the same order for every
// query of a battery (words, accents, CJK, emoji, phrases, prefixes,
// several words).
func TestSearchStoresAgree(t *testing.T) {
	vocab := []string{"budget", "Budgét", "quarter", "pangolin", "北京", "大学", "🚀", "naïve", "über", "शिक्षा", "مرحبا", "forecast", "forest", "for", "zebra", "plan", "plans"}
	seed := func(t *testing.T, f *fixture) {
		ctx := context.Background()
		rnd := uint32(7)
		next := func(n int) int {
			rnd = rnd*1664525 + 1013904223
			return int(rnd>>8) % n
		}
		words := func(n int) string {
			var b strings.Builder
			for i := range n {
				if i > 0 {
					b.WriteString([]string{" ", " ", ", ", "\n"}[next(4)])
				}
				b.WriteString(vocab[next(len(vocab))])
			}
			return b.String()
		}
		for i := range 40 {
			n, err := f.svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: fmt.Sprintf("Note %d %s", i, vocab[next(len(vocab))]), Approved: true})
			if err != nil {
				t.Fatal(err)
			}
			v := int64(1)
			if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: n.NoteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr(words(20 + next(60))), ExpectedVersion: v}); err != nil {
				t.Fatal(err)
			}
			v++
			if i%3 == 0 {
				sh, err := f.svc.CreateNoteTab(ctx, f.person, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: v, TabType: note.TypeSheet})
				if err != nil {
					t.Fatal(err)
				}
				v++
				if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: n.NoteID, TabID: sh.TabID, Operation: "sheet_set_range", ExpectedVersion: v,
					StartRow: ptr(next(50)), StartCol: ptr(next(40)), Values: [][]any{{words(2), float64(next(1000))}, {words(1), words(3)}}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	queries := []string{`"budget quarter"`, "plan*", "for*", "fore*", "budget pangolin", "北京", "北京大学", "🚀 plan", "naive", "UBER", "शिक्षा", "مرحبا", "zebra forest", "for", "quarter", "5*", "pla"}
	queries = append(queries, vocab...)
	answers := map[string][]string{}
	run := func(t *testing.T, f *fixture) []string {
		seed(t, f)
		var out []string
		for _, q := range queries {
			res, err := f.svc.SearchNotes(context.Background(), f.person, service.SearchArgs{Query: q, Page: service.Page{Limit: 50}})
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			for _, h := range res.Hits {
				w := fmt.Sprintf("%s %d %v %v %s", h.Where.Field, h.Where.Line, h.Where.Cell, h.Where.SlideIndex != nil, h.Snippet)
				out = append(out, q+" → "+h.Title+" / "+h.TabType+" / "+w)
			}
		}
		return out
	}
	eachStore(t, func(t *testing.T, f *fixture) {
		answers[t.Name()] = run(t, f)
	})
	a, b := answers["TestSearchStoresAgree/sqlite"], answers["TestSearchStoresAgree/postgres"]
	if b == nil {
		t.Skip("PostgreSQL not set (FOUNDRY_TEST_POSTGRES_URL): nothing to compare SQLite with")
	}
	if len(a) < 100 {
		t.Fatalf("the battery found only %d hits: it does not test much", len(a))
	}
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			t.Fatalf("hit %d differs:\n sqlite:   %s\n postgres: %s", i, x, y)
		}
	}
	t.Logf("%d hits, the same on both stores", len(a))
}
