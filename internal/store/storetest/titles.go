package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"foundry/internal/store"
)

// titleMatches is what a title query means (ListQuery.Query): the title
// contains the query with case ignored rune by rune (unicode.ToLower).
func titleMatches(title, query string) bool {
	return strings.Contains(strings.ToLower(title), strings.ToLower(query))
}

// CreateTitled makes a resource of type typ with a title, approved or not.
func CreateTitled(t testing.TB, s store.Store, ws, typ, title string, approved bool) string {
	t.Helper()
	id := store.NewID(typ)
	_, err := s.Guarded(context.Background(), store.Mutation{
		Workspace: ws, Type: typ, ID: id, Actor: "test",
		Create: &store.Resource{Owner: "o", Title: title, Approved: approved, Doc: json.RawMessage(`{"n":0,"log":[]}`)},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "created", Result: json.RawMessage(`{}`)}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Retitle writes a new title (and bumps the version, as any write does).
func Retitle(t testing.TB, s store.Store, ws, typ, id, title string) {
	t.Helper()
	_, err := s.Guarded(context.Background(), store.Mutation{
		Workspace: ws, Type: typ, ID: id, Actor: "test",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Title: &title, Kind: "renamed", Result: json.RawMessage(`{}`)}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func listIDs(t *testing.T, s store.Store, q store.ListQuery) []string {
	t.Helper()
	rows, err := s.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// TitleQueries runs the title-query cases on s (a fresh store), for stores
// that want them on a variant (e.g. PostgreSQL without its trigram index).
func TitleQueries(t *testing.T, s store.Store) {
	testListQuery(t, s)
	testListQueryRandom(t, s)
}

// testListQuery: a title query finds every title that contains it, case
// ignored rune by rune and nothing else; %, _, \ and GLOB or regex syntax
// are plain characters; one- and two-character queries work; order, limit,
// cursor, approval and ID filters apply as without a query; a retitled
// resource is found by its new title only.
func testListQuery(t *testing.T, s store.Store) {
	ws, other := Seed(t, s), Seed(t, s)
	titles := []string{
		"Alpha report", "ALPHA", "alphabet soup", "Beta",
		"Ärger im Büro", "ärger", "ÄRGER", "Aerger",
		"İstanbul notes", "istanbul", "ISTANBUL", "ıstanbul",
		"日本語のノート", "🧪 lab notebook", "Ა georgian", "ა georgian",
		"100% done", "100 percent", "snake_case title", "snakeXcase title",
		`back\slash`, "back/slash", `say "hi"`, "O'Brien's notes",
		"star*glob", "starXglob", "what? now", "whatX now", "[draft] plan", "draft plan",
		"caret^up", "dash-ed", "dollar$sign", "dot.ted", "paren(s)", "brace{s}", "pipe|d", "plus+",
		"\u212A kelvin sign", "k lower", "straße", "STRASSE", "ǅungla", "ǆungla", "Ǆungla",
		"a", "ab", "x",
	}
	byID := map[string]string{}
	var unapproved []string
	for i, title := range titles {
		approved := i%7 != 3
		id := CreateTitled(t, s, ws, store.TypeNote, title, approved)
		byID[id] = title
		if !approved {
			unapproved = append(unapproved, id)
		}
	}
	// Same titles where no list of ws may look.
	CreateTitled(t, s, other, store.TypeNote, "Alpha report", true)
	CreateTitled(t, s, ws, store.TypeRoom, "Alpha room", true)

	want := func(query string, approvedOnly bool, ids []string) []string {
		out := []string{}
		for id, title := range byID {
			if approvedOnly && slices.Contains(unapproved, id) {
				continue
			}
			if ids != nil && !slices.Contains(ids, id) {
				continue
			}
			if titleMatches(title, query) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	titlesOf := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = byID[id]
		}
		return out
	}
	check := func(query string, approvedOnly bool, ids []string) []string {
		t.Helper()
		got := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: query, ApprovedOnly: approvedOnly, IDs: ids, Limit: 1000})
		if w := want(query, approvedOnly, ids); !slices.Equal(got, w) {
			t.Errorf("query %q (approved only %v): got %q, want %q", query, approvedOnly, titlesOf(got), titlesOf(w))
		}
		return got
	}

	// What some queries must find, spelled out.
	for query, wantTitles := range map[string][]string{
		"alpha":    {"Alpha report", "ALPHA", "alphabet soup"},
		"ÄRGER":    {"Ärger im Büro", "ärger", "ÄRGER"},
		"ärger im": {"Ärger im Büro"},
		"istanbul": {"İstanbul notes", "istanbul", "ISTANBUL"},
		"ıstanbul": {"ıstanbul"},
		"%":        {"100% done"},
		"0% d":     {"100% done"},
		"_":        {"snake_case title"},
		"e_c":      {"snake_case title"},
		`\`:        {`back\slash`},
		`k\s`:      {`back\slash`},
		"*":        {"star*glob"},
		"r*g":      {"star*glob"},
		"t? n":     {"what? now"},
		"[draft]":  {"[draft] plan"},
		"t^u":      {"caret^up"},
		"r$s":      {"dollar$sign"},
		"t.t":      {"dot.ted"},
		"n(s)":     {"paren(s)"},
		"e{s}":     {"brace{s}"},
		"e|d":      {"pipe|d"},
		"s+":       {"plus+"},
		`"hi"`:     {`say "hi"`},
		"n's n":    {"O'Brien's notes"},
		"本語":       {"日本語のノート"},
		"🧪":        {"🧪 lab notebook"},
		"ა geo":    {"Ა georgian", "ა georgian"},
		"Ა GEO":    {"Ა georgian", "ა georgian"},
		"k kel":    {"\u212A kelvin sign"},
		"straße":   {"straße"},
		"ǆung":     {"ǅungla", "ǆungla", "Ǆungla"},
		"ab":       {"alphabet soup", "🧪 lab notebook", "ab"},
		"zzz":      {},
		"a very long query that is longer than every title": {},
	} {
		got := titlesOf(check(query, false, nil))
		slices.Sort(got)
		w := slices.Clone(wantTitles)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("query %q found %q, want %q", query, got, w)
		}
	}

	// Filters, order, limit and cursor are what they are without a query.
	check("alpha", true, nil)
	all := want("", false, nil)
	check("a", false, all[:len(all)/2])
	check("ärger", true, all[len(all)/3:])
	check("ärger", false, []string{})
	full := want("o", false, nil)
	var paged []string
	after := ""
	for range len(full) + 1 {
		page := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: "o", AfterID: after, Limit: 3})
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("limit 3 gave %d", len(page))
		}
		paged = append(paged, page...)
		after = page[len(page)-1]
	}
	if !slices.Equal(paged, full) {
		t.Errorf("paging query %q by 3: %q, want %q", "o", titlesOf(paged), titlesOf(full))
	}

	// A retitled resource is found by its new title, not its old one; a
	// write that keeps the title keeps it found.
	var beta string
	for id, title := range byID {
		if title == "Beta" {
			beta = id
		}
	}
	Retitle(t, s, ws, store.TypeNote, beta, "Gamma rays")
	byID[beta] = "Gamma rays"
	if got := check("beta", false, nil); len(got) != 0 {
		t.Errorf("the old title is still found: %q", titlesOf(got))
	}
	if got := check("gamma ray", false, nil); !slices.Equal(got, []string{beta}) {
		t.Errorf("the new title is not found: %q", titlesOf(got))
	}
	Retitle(t, s, ws, store.TypeNote, beta, "Gamma rays")
	check("gamma ray", false, nil)
	check("amm", false, nil)
}

// testListQueryRandom compares title queries with titleMatches over random
// titles and queries drawn from runes whose case is tricky, and from runes
// that mean something to LIKE, GLOB, regular expressions or FTS5.
func testListQueryRandom(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	alphabet := []rune("aAäÄkKKiIİısSſßeE %_\\*?[]^$.()|+\"'-日🧪Აა ǅǆǄ")
	rng := rand.New(rand.NewPCG(10, 20))
	word := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	byID := map[string]string{}
	var titles []string
	for range 60 {
		title := word(1 + rng.IntN(12))
		titles = append(titles, title)
		byID[CreateTitled(t, s, ws, store.TypeNote, title, true)] = title
	}
	for i := range 300 {
		var query string
		if i%2 == 0 {
			// A piece of a title, case changed rune by rune at random.
			r := []rune(titles[rng.IntN(len(titles))])
			from := rng.IntN(len(r))
			to := from + 1 + rng.IntN(len(r)-from)
			piece := r[from:to]
			for j, c := range piece {
				if rng.IntN(2) == 0 {
					piece[j] = []rune(strings.ToUpper(string(c)))[0]
				}
			}
			query = string(piece)
		} else {
			query = word(1 + rng.IntN(4))
		}
		if strings.TrimSpace(query) == "" {
			continue
		}
		got := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: query, Limit: 1000})
		w := []string{}
		for id, title := range byID {
			if titleMatches(title, query) {
				w = append(w, id)
			}
		}
		slices.Sort(w)
		if i%3 == 0 {
			// Small pages: the statement tests a short prefix of the rows and
			// asks the index for the rest.
			got = []string{}
			after := ""
			for range len(byID) + 1 {
				page := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: query, AfterID: after, Limit: 1 + i%4})
				if len(page) == 0 {
					break
				}
				got = append(got, page...)
				after = page[len(page)-1]
			}
		}
		if !slices.Equal(got, w) {
			g, x := []string{}, []string{}
			for _, id := range got {
				g = append(g, byID[id])
			}
			for _, id := range w {
				x = append(x, byID[id])
			}
			t.Errorf("query %q: got %q, want %q", query, g, x)
		}
	}
}

// Mark gives a resource an object of kind under its own ID (as the
// service marks a deleted Note), in a guarded write.
func Mark(t testing.TB, s store.Store, ws, typ, id, kind string) {
	t.Helper()
	_, err := s.Guarded(context.Background(), store.Mutation{
		Workspace: ws, Type: typ, ID: id, Actor: "test",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "marked", Result: json.RawMessage(`{}`),
				Objects: []store.Object{{Workspace: ws, Kind: kind, ID: id, Parent: id, Doc: json.RawMessage(`{}`)}}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testListUnmarkedPaging: Unmarked leaves out the resources marked with an
// object of its kind (and only those: another kind, or the kind under
// another ID, leaves a resource in), with and without a title query, and
// pages of every size walk the same list: a page never comes up short of
// its limit while more follow, whether the index names few candidates
// (the rows it names are tested), as many as the bound or more (the rows
// are tested in ID order), or the query is too short for it.
func testListUnmarkedPaging(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	type row struct {
		title            string
		approved, marked bool
	}
	byID := map[string]row{}
	for i := range 90 {
		title := fmt.Sprintf("Plan %02d", i)
		switch {
		case i%9 == 0:
			title += " Zephyr Ärger" // 10 titles
		case i%30 == 1:
			title += " Quokka" // 3 titles
		}
		r := row{title: title, approved: i%4 != 1, marked: i%3 == 0}
		id := CreateTitled(t, s, ws, store.TypeNote, title, r.approved)
		switch {
		case r.marked:
			Mark(t, s, ws, store.TypeNote, id, "gone")
		case i%5 == 2:
			Mark(t, s, ws, store.TypeNote, id, "other")
		}
		byID[id] = r
	}
	// A mark of the kind whose ID is no Note of ws, and a marked Room with
	// a Note's title.
	room := CreateTitled(t, s, ws, store.TypeRoom, "Plan 00 Zephyr Ärger", true)
	Mark(t, s, ws, store.TypeRoom, room, "gone")

	for _, query := range []string{"", "plan", "zephyr", "ÄRGER", "quokka", "an 0", "pl", "ä", "zz"} {
		for _, approvedOnly := range []bool{false, true} {
			var want []string
			for id, r := range byID {
				if r.marked || approvedOnly && !r.approved || !titleMatches(r.title, query) {
					continue
				}
				want = append(want, id)
			}
			slices.Sort(want)
			if want == nil {
				want = []string{}
			}
			for _, limit := range []int{1, 2, 3, 7, 50, 1000} {
				got := []string{}
				after := ""
				for range len(byID) + 2 {
					page := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: query, ApprovedOnly: approvedOnly,
						Unmarked: "gone", AfterID: after, Limit: limit})
					if len(page) > limit {
						t.Fatalf("query %q limit %d: a page of %d", query, limit, len(page))
					}
					got = append(got, page...)
					if len(page) < limit {
						break
					}
					after = page[len(page)-1]
				}
				if !slices.Equal(got, want) {
					g, w := []string{}, []string{}
					for _, id := range got {
						g = append(g, byID[id].title)
					}
					for _, id := range want {
						w = append(w, byID[id].title)
					}
					t.Errorf("query %q (approved only %v) in pages of %d: got %q, want %q", query, approvedOnly, limit, g, w)
				}
			}
		}
	}
	// Without Unmarked, the marked rows are listed.
	all := listIDs(t, s, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: "zephyr", Limit: 1000})
	if len(all) != 10 {
		t.Errorf("query zephyr without Unmarked: %d Notes, want all 10", len(all))
	}
}
