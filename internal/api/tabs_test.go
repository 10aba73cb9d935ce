package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/server/servertest"
)

// tabsOf is the Note's tabs as (tab_id, type, label), in strip order.
func (e *notesEnv) tabsOf(t *testing.T, id string) [][3]string {
	t.Helper()
	r := e.do(t, req{method: "GET", path: "/api/notes/" + id})
	r.want(t, "GET note", http.StatusOK, "")
	var out [][3]string
	for _, x := range r.body["tabs"].([]any) {
		tab := x.(map[string]any)
		out = append(out, [3]string{tab["tab_id"].(string), tab["type"].(string), tab["label"].(string)})
	}
	return out
}

func TestTabs(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Tabs", true)
		base := "/api/notes/" + id + "/tabs"

		e.do(t, req{method: "POST", path: base, body: map[string]any{"type": "slides"}}).
			want(t, "create a tab without a precondition", http.StatusPreconditionRequired, "precondition_required")
		r := e.do(t, req{method: "POST", path: base, body: map[string]any{"type": "markdown"}, header: ifMatch(v)})
		if r.status != http.StatusBadRequest || r.body["field"] != "type" {
			t.Fatalf("a markdown tab: %d %s; want 400 naming type", r.status, r.raw)
		}
		e.do(t, req{method: "POST", path: base, body: map[string]any{"label": "x"}, header: ifMatch(v)}).want(t, "no type", http.StatusBadRequest, "invalid_argument")

		create := req{method: "POST", path: base, body: map[string]any{"type": "slides", "label": "  Deck  "}, header: map[string]string{"If-Match": `"1"`, api.HeaderKey: "tab-create-0001"}}
		r = e.do(t, create)
		r.want(t, "create a slides tab", http.StatusCreated, "")
		slides, _ := r.body["tab_id"].(string)
		if r.num("version") != 2 || !strings.HasPrefix(slides, "slides-") || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{slides}) ||
			r.header.Get("Location") != base+"/"+slides || r.header.Get("ETag") != `"2"` {
			t.Fatalf("create tab = %s (%v)", r.raw, r.header)
		}
		again := e.do(t, create)
		again.want(t, "create resent", http.StatusCreated, "")
		if again.body["tab_id"] != slides || again.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("resent create = %s (%v); want the first tab, replayed", again.raw, again.header)
		}
		if n := len(e.tabsOf(t, id)); n != 4 {
			t.Fatalf("a create sent twice made %d tabs; want 4", n)
		}
		reuse := create
		reuse.body = map[string]any{"type": "sheet"}
		e.do(t, reuse).want(t, "the key for another tab", http.StatusUnprocessableEntity, "idempotency_key_reused")

		r = e.do(t, req{method: "POST", path: base, body: map[string]any{"type": "sheet"}, header: ifMatch(2)})
		r.want(t, "create a sheet tab", http.StatusCreated, "")
		sheet := r.body["tab_id"].(string)

		// Rename two tabs to the same label: trimmed, both kept.
		r = e.do(t, req{method: "PATCH", path: base + "/" + slides, body: map[string]any{"label": "  Same  "}, header: ifMatch(3)})
		r.want(t, "rename", http.StatusOK, "")
		r = e.do(t, req{method: "PATCH", path: base + "/" + sheet, body: map[string]any{"label": "Same", "expected_version": 4}})
		r.want(t, "rename to the same label", http.StatusOK, "")
		if r.num("version") != 5 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{sheet}) {
			t.Fatalf("rename = %s", r.raw)
		}
		tabs := e.tabsOf(t, id)
		if tabs[3] != [3]string{slides, "slides", "Same"} || tabs[4] != [3]string{sheet, "sheet", "Same"} {
			t.Fatalf("tabs after renames = %v", tabs)
		}
		// Reorder: the sheet to the front.
		r = e.do(t, req{method: "PATCH", path: base + "/" + sheet, body: map[string]any{"position": 0}, header: ifMatch(5)})
		r.want(t, "move", http.StatusOK, "")
		if tabs = e.tabsOf(t, id); tabs[0][0] != sheet || len(tabs) != 5 {
			t.Fatalf("tabs after the move = %v", tabs)
		}
		e.do(t, req{method: "PATCH", path: base + "/" + sheet, body: map[string]any{"position": 5}, header: ifMatch(6)}).
			want(t, "a position past the strip", http.StatusBadRequest, "invalid_argument")
		r = e.do(t, req{method: "PATCH", path: base + "/" + sheet, body: map[string]any{"label": " "}, header: ifMatch(6)})
		if r.status != http.StatusBadRequest || r.body["field"] != "label" {
			t.Fatalf("an empty label: %d %s", r.status, r.raw)
		}
		r = e.do(t, req{method: "PATCH", path: base + "/" + sheet, body: map[string]any{}, header: ifMatch(6)})
		r.want(t, "nothing to change", http.StatusBadRequest, "invalid_argument")
		// An agent writes in between: the stale rename is 412 and changes nothing.
		cs := e.Client(t, e.WriteToken(t), "")
		md := e.markdownTab(t, id)
		agentV := agentText(t, cs, id, md, 6, "agent-tabs-0001", "theirs")
		r = e.do(t, req{method: "PATCH", path: base + "/" + slides, body: map[string]any{"label": "Late"}, header: ifMatch(6)})
		r.want(t, "a stale rename", http.StatusPreconditionFailed, "version_conflict")
		if r.num("current_version") != agentV || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{md}) {
			t.Fatalf("412 = %s", r.raw)
		}

		// Fixed tabs cannot be deleted.
		for _, fixed := range []string{"markdown", "sources", "files"} {
			r = e.do(t, req{method: "DELETE", path: base + "/" + fixed, header: ifMatch(agentV)})
			if r.status != http.StatusUnprocessableEntity || r.body["code"] != "fixed_tab" || r.body["field"] != "tab_id" || !strings.Contains(r.body["detail"].(string), "fixed") {
				t.Fatalf("delete %s: %d %s; want 422 fixed_tab", fixed, r.status, r.raw)
			}
		}
		writeTok := e.Token(t, []string{id}, auth.ScopeRead, auth.ScopeWrite)
		e.do(t, req{method: "DELETE", path: base + "/" + slides, header: ifMatch(agentV), bearer: writeTok}).want(t, "a token deletes a tab", http.StatusForbidden, "person_only")
		e.do(t, req{method: "DELETE", path: base + "/" + slides}).want(t, "delete without a precondition", http.StatusPreconditionRequired, "precondition_required")
		r = e.do(t, req{method: "DELETE", path: base + "/" + slides, header: ifMatch(agentV)})
		if r.status != http.StatusNoContent || r.header.Get("ETag") == "" {
			t.Fatalf("delete tab: %d %s", r.status, r.raw)
		}
		if tabs = e.tabsOf(t, id); len(tabs) != 4 || slices.ContainsFunc(tabs, func(x [3]string) bool { return x[0] == slides }) {
			t.Fatalf("tabs after the delete = %v", tabs)
		}
		e.do(t, req{method: "DELETE", path: base + "/" + slides, header: ifMatch(agentV + 1)}).want(t, "delete a deleted tab", http.StatusNotFound, "unknown_tab")
		// The agent sees the person's tab strip.
		res := servertest.MustCall(t, cs, "list_note_tabs", map[string]any{"note_id": id})
		if res.IsError || len(res.List("tabs")) != 4 || res.Int("version") != agentV+1 {
			t.Fatalf("list_note_tabs = %v", res.Data)
		}
	})
}

func TestSources(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Cited", true)
		path := "/api/notes/" + id + "/sources"
		add := req{method: "POST", path: path, body: map[string]any{"title": "Example", "url": "https://Example.com/a/?utm_source=x#top"},
			header: map[string]string{"If-Match": `"1"`, api.HeaderKey: "source-add-0001"}}
		r := e.do(t, add)
		r.want(t, "add a source", http.StatusCreated, "")
		src, _ := r.body["source_id"].(string)
		if src == "" || r.num("version") != 2 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{"sources"}) {
			t.Fatalf("add source = %s", r.raw)
		}
		again := e.do(t, add)
		if again.status != http.StatusCreated || again.body["source_id"] != src || again.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("resent add = %d %s", again.status, again.raw)
		}
		// The same page in another spelling: 409 with the existing ID.
		r = e.do(t, req{method: "POST", path: path, body: map[string]any{"title": "Again", "url": "https://example.com/a"}, header: ifMatch(2)})
		if r.status != http.StatusConflict || r.body["code"] != "source_exists" || r.body["detail"] != "This source is already attached" || r.body["source_id"] != src {
			t.Fatalf("the same page again: %d %s; want 409 source_exists naming %s", r.status, r.raw, src)
		}
		e.do(t, req{method: "POST", path: path, body: map[string]any{"title": "x", "url": "https://example.com/b"}}).
			want(t, "no precondition", http.StatusPreconditionRequired, "precondition_required")
		r = e.do(t, req{method: "POST", path: path, body: map[string]any{"title": "x", "url": "ftp://example.com/b"}, header: ifMatch(2)})
		if r.status != http.StatusBadRequest || r.body["field"] != "url" {
			t.Fatalf("an ftp URL: %d %s; want 400 naming url", r.status, r.raw)
		}
		r = e.do(t, req{method: "POST", path: path, body: map[string]any{"url": "https://example.com/b"}, header: ifMatch(2)})
		if r.status != http.StatusBadRequest || r.body["field"] != "title" {
			t.Fatalf("no title: %d %s; want 400 naming title", r.status, r.raw)
		}
		// An agent sees the person's source and gets the same dedupe.
		cs := e.Client(t, e.WriteToken(t), "")
		res := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": id, "expected_version": 2, "idempotency_key": "agent-src-00001",
			"title": "Agent's", "url": "https://example.com/a/"})
		if res.IsError || !res.Bool("already_attached") || res.Str("source_id") != src {
			t.Fatalf("add_note_source of the same page = %v", res.Data)
		}
		read := e.Token(t, []string{id}, auth.ScopeRead)
		e.do(t, req{method: "DELETE", path: path + "/" + src, header: ifMatch(2), bearer: read}).want(t, "a read token deletes", http.StatusForbidden, "insufficient_scope")
		writeTok := e.Token(t, []string{id}, auth.ScopeRead, auth.ScopeWrite)
		e.do(t, req{method: "DELETE", path: path + "/" + src, header: ifMatch(2), bearer: writeTok}).want(t, "a write token deletes", http.StatusForbidden, "person_only")
		e.do(t, req{method: "DELETE", path: path + "/src-999", header: ifMatch(2)}).want(t, "delete an unknown source", http.StatusNotFound, "not_found")
		r = e.do(t, req{method: "DELETE", path: path + "/" + src, header: ifMatch(2)})
		if r.status != http.StatusNoContent || r.header.Get("ETag") != `"3"` {
			t.Fatalf("delete source: %d %s %v", r.status, r.raw, r.header)
		}
		tab := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/sources"})
		if tab.body["sources"] != nil && len(tab.body["sources"].([]any)) != 0 {
			t.Fatalf("the sources tab after the delete = %s", tab.raw)
		}
	})
}

func TestSlides(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Deck", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "slides"}, header: ifMatch(1)})
		r.want(t, "create slides tab", http.StatusCreated, "")
		tab := r.body["tab_id"].(string)
		path := "/api/notes/" + id + "/tabs/" + tab + "/slides"

		r = e.do(t, req{method: "POST", path: path, body: map[string]any{"title": " One ", "body": "first", "notes": "n1"}, header: ifMatch(2)})
		r.want(t, "add slide", http.StatusCreated, "")
		one := r.body["slide_id"].(string)
		add2 := req{method: "POST", path: path, body: map[string]any{"title": "Two", "position": 0}, header: map[string]string{"If-Match": `"3"`, api.HeaderKey: "slide-add-00001"}}
		r = e.do(t, add2)
		r.want(t, "add a second slide at the front", http.StatusCreated, "")
		two := r.body["slide_id"].(string)
		if two == one || r.num("version") != 4 {
			t.Fatalf("second slide = %s", r.raw)
		}
		if again := e.do(t, add2); again.body["slide_id"] != two || again.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("resent slide add = %s", again.raw)
		}
		slidesOf := func() []map[string]any {
			r := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + tab})
			var out []map[string]any
			for _, x := range r.body["slides"].([]any) {
				out = append(out, x.(map[string]any))
			}
			return out
		}
		ss := slidesOf()
		if len(ss) != 2 || ss[0]["slide_id"] != two || ss[1]["slide_id"] != one || ss[1]["title"] != "One" || ss[1]["notes"] != "n1" {
			t.Fatalf("slides = %v", ss)
		}
		e.do(t, req{method: "POST", path: path, body: map[string]any{"body": "no title"}, header: ifMatch(4)}).want(t, "no title", http.StatusBadRequest, "invalid_argument")
		r = e.do(t, req{method: "POST", path: path, body: map[string]any{"title": "x", "body": strings.Repeat("b", 40000)}, header: ifMatch(4)})
		if r.status != http.StatusRequestEntityTooLarge || r.body["field"] != "body" {
			t.Fatalf("a huge body: %d %s; want 413 naming body", r.status, r.raw)
		}
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs/markdown/slides", body: map[string]any{"title": "x"}, header: ifMatch(4)}).
			want(t, "a slide on the markdown tab", http.StatusUnprocessableEntity, "wrong_tab_type")

		r = e.do(t, req{method: "PATCH", path: path + "/" + one, body: map[string]any{"body": "changed", "position": 0}, header: ifMatch(4)})
		r.want(t, "update slide", http.StatusOK, "")
		if ss = slidesOf(); ss[0]["slide_id"] != one || ss[0]["body"] != "changed" || ss[0]["title"] != "One" {
			t.Fatalf("slides after the update = %v", ss)
		}
		e.do(t, req{method: "PATCH", path: path + "/" + one, body: map[string]any{"title": ""}, header: ifMatch(5)}).want(t, "an empty title", http.StatusBadRequest, "invalid_argument")
		e.do(t, req{method: "PATCH", path: path + "/slide-999", body: map[string]any{"title": "x"}, header: ifMatch(5)}).want(t, "an unknown slide", http.StatusNotFound, "not_found")
		// A person's stale write applies on the current version (people
		// are ordered by the server); a token's is refused, as published.
		e.do(t, req{method: "PATCH", path: path + "/" + one, body: map[string]any{"title": "x"}, header: ifMatch(4), bearer: e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)}).want(t, "a token's stale update", http.StatusPreconditionFailed, "version_conflict")
		e.do(t, req{method: "PATCH", path: path + "/" + one, body: map[string]any{"title": "x"}, header: ifMatch(9)}).want(t, "an update ahead of the Note", http.StatusPreconditionFailed, "version_conflict")
		e.do(t, req{method: "DELETE", path: path + "/" + two}).want(t, "delete without a precondition", http.StatusPreconditionRequired, "precondition_required")
		r = e.do(t, req{method: "DELETE", path: path + "/" + two, header: ifMatch(5)})
		if r.status != http.StatusNoContent {
			t.Fatalf("delete slide: %d %s", r.status, r.raw)
		}
		if ss = slidesOf(); len(ss) != 1 || ss[0]["slide_id"] != one {
			t.Fatalf("slides after the delete = %v", ss)
		}
	})
}

func TestCells(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Grid", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "sheet"}, header: ifMatch(1)})
		r.want(t, "create sheet tab", http.StatusCreated, "")
		tab := r.body["tab_id"].(string)
		path := "/api/notes/" + id + "/tabs/" + tab + "/cells"

		// A pasted 50 × 20 range.
		values := make([][]any, 50)
		for i := range values {
			values[i] = make([]any, 20)
			for j := range values[i] {
				values[i][j] = strings.Repeat("x", 1+(i+j)%3)
			}
		}
		values[3][4] = 12.5
		put := req{method: "PUT", path: path, body: map[string]any{"start_row": 2, "start_col": 1, "values": values}, header: map[string]string{"If-Match": `"2"`, api.HeaderKey: "cells-put-00001"}}
		r = e.do(t, put)
		r.want(t, "put cells", http.StatusOK, "")
		if r.num("version") != 3 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{tab}) {
			t.Fatalf("put cells = %s", r.raw)
		}
		if again := e.do(t, put); again.num("version") != 3 || again.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("resent put = %s", again.raw)
		}
		r = e.do(t, req{method: "GET", path: path + "?row=2&col=1&rows=50&cols=20"})
		r.want(t, "get cells", http.StatusOK, "")
		got := r.body["values"].([]any)
		if len(got) != 50 || got[3].([]any)[4] != 12.5 || got[49].([]any)[19] != values[49][19] || r.header.Get("ETag") != `"3"` {
			t.Fatalf("get cells = %.300s", r.raw)
		}
		// An agent reads the same cells.
		cs := e.Client(t, e.WriteToken(t), "")
		res := servertest.MustCall(t, cs, "read_sheet_range", map[string]any{"note_id": id, "tab_id": tab, "start_row": 5, "start_col": 5, "rows": 1, "cols": 1})
		if res.IsError || res.List("values")[0].([]any)[0] != 12.5 {
			t.Fatalf("read_sheet_range = %v", res.Data)
		}
		e.do(t, req{method: "PUT", path: path, body: map[string]any{"start_row": 0, "start_col": 0, "values": [][]any{{"a"}}}}).
			want(t, "no precondition", http.StatusPreconditionRequired, "precondition_required")
		big := make([][]any, 101)
		for i := range big {
			big[i] = []any{"v"}
		}
		r = e.do(t, req{method: "PUT", path: path, body: map[string]any{"start_row": 0, "start_col": 0, "values": big}, header: ifMatch(3)})
		if r.status < 400 || r.body["field"] != "values" {
			t.Fatalf("101 rows: %d %s; want a refusal naming values", r.status, r.raw)
		}
		r = e.do(t, req{method: "PUT", path: path, body: map[string]any{"start_col": 0, "values": [][]any{{"a"}}}, header: ifMatch(3)})
		if r.status != http.StatusBadRequest || r.body["field"] != "start_row" {
			t.Fatalf("no start_row: %d %s", r.status, r.raw)
		}
		r = e.do(t, req{method: "GET", path: path + "?rows=abc"})
		if r.status != http.StatusBadRequest || r.body["field"] != "rows" {
			t.Fatalf("rows=abc: %d %s", r.status, r.raw)
		}
		r = e.do(t, req{method: "GET", path: path + "?bogus=1"})
		if r.status != http.StatusBadRequest || r.body["field"] != "bogus" {
			t.Fatalf("bogus=1: %d %s", r.status, r.raw)
		}
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/cells", body: map[string]any{"start_row": 0, "start_col": 0, "values": [][]any{{"a"}}}, header: ifMatch(3)}).
			want(t, "cells on the markdown tab", http.StatusUnprocessableEntity, "wrong_tab_type")
		read := e.Token(t, []string{id}, auth.ScopeRead)
		e.do(t, req{method: "PUT", path: path, body: map[string]any{"start_row": 0, "start_col": 0, "values": [][]any{{"a"}}}, header: ifMatch(3), bearer: read}).
			want(t, "a read token writes cells", http.StatusForbidden, "insufficient_scope")
		e.do(t, req{method: "GET", path: path + "?rows=1&cols=1", bearer: read}).want(t, "a read token reads cells", http.StatusOK, "")
	})
}

func TestTabsHostileInput(t *testing.T) {
	e := startNotes(t, nil)
	id, _ := e.create(t, "Hostile", true)
	r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "sheet"}, header: ifMatch(1)})
	r.want(t, "create sheet tab", http.StatusCreated, "")
	sheet := r.body["tab_id"].(string)
	cells := "/api/notes/" + id + "/tabs/" + sheet + "/cells"
	cases := []struct {
		what, method, path, body, field string
		status                          int
	}{
		{"malformed JSON", "POST", "/api/notes/" + id + "/tabs", `{"type":`, "body", http.StatusBadRequest},
		{"a wrong type", "POST", "/api/notes/" + id + "/tabs", `{"type":7}`, "type", http.StatusBadRequest},
		{"an unknown member", "PATCH", "/api/notes/" + id + "/tabs/" + sheet, `{"lable":"x"}`, "lable", http.StatusBadRequest},
		{"a huge label", "PATCH", "/api/notes/" + id + "/tabs/" + sheet, `{"label":"` + strings.Repeat("é", 3000) + `"}`, "body", http.StatusRequestEntityTooLarge},
		{"a hidden rune in a label", "PATCH", "/api/notes/" + id + "/tabs/" + sheet, `{"label":"a\u202eb"}`, "label", http.StatusBadRequest},
		{"a huge cells body", "PUT", cells, `{"start_row":0,"start_col":0,"values":[["` + strings.Repeat("x", api.MaxCellsBody) + `"]]}`, "body", http.StatusRequestEntityTooLarge},
		{"a nested cell", "PUT", cells, `{"start_row":0,"start_col":0,"values":[[{"a":1}]]}`, "values[0][0]", http.StatusBadRequest},
		{"a negative row", "PUT", cells, `{"start_row":-1,"start_col":0,"values":[["a"]]}`, "start_row", http.StatusBadRequest},
		{"an unknown tab ID with a space", "PATCH", "/api/notes/" + id + "/tabs/a%20b", `{"label":"x"}`, "tab_id", http.StatusNotFound},
		{"a slide ID too long", "DELETE", "/api/notes/" + id + "/tabs/" + sheet + "/slides/" + strings.Repeat("s", 300), ``, "slide_id", http.StatusBadRequest},
		{"a source URL with a user", "POST", "/api/notes/" + id + "/sources", `{"title":"t","url":"https://user:pw@example.com/"}`, "url", http.StatusBadRequest},
	}
	for _, c := range cases {
		r := e.do(t, req{method: c.method, path: c.path, body: c.body, header: ifMatch(2)})
		if r.status != c.status || (c.field != "" && r.body["field"] != c.field) {
			t.Errorf("%s: %d %s; want %d naming %s", c.what, r.status, r.raw, c.status, c.field)
		}
	}
	// Nothing hostile wrote anything.
	if h := e.do(t, req{method: "GET", path: "/api/notes/" + id}); h.header.Get("ETag") != `"2"` {
		t.Fatalf("the Note moved to %s", h.header.Get("ETag"))
	}
}
