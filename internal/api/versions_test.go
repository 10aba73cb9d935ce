package api_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/service"
)

func TestVersionView(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Past", true)
		md := e.markdownTab(t, id)
		text := "/api/notes/" + id + "/tabs/" + md + "/text"
		e.do(t, req{method: "PUT", path: text, body: map[string]any{"text": "# One"}, header: ifMatch(1)}).want(t, "save one", http.StatusOK, "")
		e.do(t, req{method: "PUT", path: text, body: map[string]any{"text": "# Two"}, header: ifMatch(2)}).want(t, "save two", http.StatusOK, "")
		deck := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "slides", "label": "Deck"}, header: ifMatch(3)})
		deck.want(t, "add a slides tab", http.StatusCreated, "")
		deckID := deck.body["tab_id"].(string)
		base := "/api/notes/" + id + "/versions/"

		// The strip at version 2 has no slides tab; at 4 it has.
		r := e.do(t, req{method: "GET", path: base + "2"})
		r.want(t, "version 2", http.StatusOK, "")
		if r.num("version") != 2 || r.num("current_version") != 4 || r.body["title"] != "Past" || r.header.Get("ETag") != `"4"` {
			t.Fatalf("version 2 = %s (%v)", r.raw, r.header)
		}
		strip := func(r resp) []string {
			var out []string
			for _, x := range r.body["tabs"].([]any) {
				out = append(out, x.(map[string]any)["tab_id"].(string))
			}
			return out
		}
		if s := strings.Join(strip(r), ","); strings.Contains(s, deckID) || !strings.Contains(s, md) {
			t.Fatalf("the strip at version 2 = %s; want %s and no %s", s, md, deckID)
		}
		if s := strings.Join(strip(e.do(t, req{method: "GET", path: base + "4"})), ","); !strings.Contains(s, deckID) {
			t.Fatalf("the strip at version 4 = %s; want %s", s, deckID)
		}

		// Each tab's data as it was.
		for v, want := range map[string]string{"1": "", "2": "# One", "3": "# Two", "4": "# Two"} {
			r := e.do(t, req{method: "GET", path: base + v + "/tabs/" + md})
			r.want(t, "markdown at version "+v, http.StatusOK, "")
			if r.body["text"] != want || r.body["type"] != "markdown" || r.num("version") != int64(v[0]-'0') {
				t.Fatalf("markdown at version %s = %s; want text %q", v, r.raw, want)
			}
		}
		r = e.do(t, req{method: "GET", path: base + "2/tabs/" + deckID})
		if r.status != http.StatusNotFound || r.body["field"] != "tab_id" || !strings.Contains(r.body["detail"].(string), "version 2") {
			t.Fatalf("a tab that did not exist yet: %d %s; want 404 naming tab_id and the version", r.status, r.raw)
		}
		r = e.do(t, req{method: "GET", path: base + "4/tabs/" + deckID})
		r.want(t, "the slides tab at version 4", http.StatusOK, "")
		if r.body["label"] != "Deck" || r.body["type"] != "slides" {
			t.Fatalf("the slides tab at version 4 = %s", r.raw)
		}

		// Bad and absent versions name version.
		for _, v := range []string{"0", "-1", "5", "999999999999999999999", "abc", "1.5", "%20", "1e3"} {
			for _, p := range []string{base + v, base + v + "/tabs/" + md} {
				r := e.do(t, req{method: "GET", path: p})
				if r.status != http.StatusBadRequest || r.body["field"] != "version" {
					t.Fatalf("GET %s: %d %s; want 400 naming version", p, r.status, r.raw)
				}
			}
		}
		e.do(t, req{method: "GET", path: "/api/notes/note_nope/versions/1"}).want(t, "an unknown Note", http.StatusNotFound, "not_found")
		e.do(t, req{method: "GET", path: base + "1", anon: true}).want(t, "signed out", http.StatusUnauthorized, "")

		// A token reaches only the Notes of its grant, and only approved ones.
		other := e.Token(t, []string{e.NoteID}, auth.ScopeRead)
		e.do(t, req{method: "GET", path: base + "1", bearer: other}).want(t, "a token without the grant", http.StatusNotFound, "not_found")
		mine := e.Token(t, []string{id}, auth.ScopeRead)
		e.do(t, req{method: "GET", path: base + "2/tabs/" + md, bearer: mine}).want(t, "a token with the grant", http.StatusOK, "")
		e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"approved": false}, header: ifMatch(4)}).want(t, "switch access off", http.StatusOK, "")
		e.do(t, req{method: "GET", path: base + "2/tabs/" + md, bearer: mine}).want(t, "a token once access is off", http.StatusNotFound, "not_found")

		// A restore is a new version whose tabs are the old one's; the old
		// versions stay as they were.
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 2}, header: ifMatch(5)}).want(t, "restore 2", http.StatusOK, "")
		r = e.do(t, req{method: "GET", path: base + "6/tabs/" + md})
		if r.status != http.StatusOK || r.body["text"] != "# One" {
			t.Fatalf("markdown at version 6, restored from 2 = %d %s", r.status, r.raw)
		}
		if s := strings.Join(strip(e.do(t, req{method: "GET", path: base + "6"})), ","); strings.Contains(s, deckID) {
			t.Fatalf("the strip restored from version 2 = %s; want no %s", s, deckID)
		}
		if r := e.do(t, req{method: "GET", path: base + "3/tabs/" + md}); r.body["text"] != "# Two" {
			t.Fatalf("version 3 after the restore = %s", r.raw)
		}

		// Deleted: gone from the past too.
		e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(6)}).want(t, "delete", http.StatusNoContent, "")
		e.do(t, req{method: "GET", path: base + "2"}).want(t, "a deleted Note's version", http.StatusNotFound, "not_found")
	})
}

// The history is paged newest first by cursor; a cursor the list never
// returned, and a limit outside 1–50, are refused naming the field; a 412
// lists the newest versions since its base, at most 50 of them.
func TestHistoryPages(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		ctx := context.Background()
		id, v := e.create(t, "Long", true)
		person := service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, e.Owner.User.Role)
		for v < 120 {
			text := fmt.Sprintf("line %d\n", v)
			res, err := e.Server.Service.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: "markdown", ExpectedVersion: v, Operation: "replace_text", Text: &text})
			if err != nil {
				t.Fatal(err)
			}
			v = res.Version
		}
		path := "/api/notes/" + id + "/history"
		var seen []int64
		var cursors []string
		cursor := ""
		for page := 0; ; page++ {
			q := path
			if cursor != "" {
				q += "?cursor=" + url.QueryEscape(cursor)
			}
			r := e.do(t, req{method: "GET", path: q})
			r.want(t, "history page", http.StatusOK, "")
			if r.num("version") != 120 || r.header.Get("ETag") != `"120"` {
				t.Fatalf("page %d says version %d, ETag %s; want 120", page, r.num("version"), r.header.Get("ETag"))
			}
			vs := r.body["versions"].([]any)
			for _, x := range vs {
				seen = append(seen, int64(x.(map[string]any)["version"].(float64)))
			}
			next, _ := r.body["next_cursor"].(string)
			if next == "" {
				if r.body["next_cursor"] != nil {
					t.Fatalf("the last page's next_cursor = %v; want null", r.body["next_cursor"])
				}
				break
			}
			if len(vs) != 50 {
				t.Fatalf("page %d holds %d versions; want 50 (the default) before the last", page, len(vs))
			}
			cursor = next
			cursors = append(cursors, next)
		}
		if len(seen) != 120 || seen[0] != 120 || seen[119] != 1 {
			t.Fatalf("the pages listed %d versions, from %v to %v; want 120 down to 1", len(seen), seen[0], seen[len(seen)-1])
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] != seen[i-1]-1 {
				t.Fatalf("the pages skip or repeat: %v after %v", seen[i], seen[i-1])
			}
		}
		r := e.do(t, req{method: "GET", path: path + "?limit=7&cursor=" + url.QueryEscape(cursors[0])})
		r.want(t, "a short page", http.StatusOK, "")
		if vs := r.body["versions"].([]any); len(vs) != 7 || vs[0].(map[string]any)["version"].(float64) != 70 {
			t.Fatalf("7 versions below 71 = %s", r.raw)
		}

		// Cursors this list never returned, and bad limits.
		mk := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, c := range []string{"nope", mk("h:0"), mk("h:1"), mk("h:121"), mk("h:-3"), mk("h:007"), mk("n:50"), mk("e:50"), cursors[0] + "=", strings.Repeat("A", 300)} {
			r := e.do(t, req{method: "GET", path: path + "?cursor=" + url.QueryEscape(c)})
			if r.status != http.StatusBadRequest || r.body["field"] != "cursor" {
				t.Fatalf("cursor %q: %d %s; want 400 naming cursor", c, r.status, r.raw)
			}
		}
		for _, l := range []string{"0", "51", "-1", "x"} {
			r := e.do(t, req{method: "GET", path: path + "?limit=" + l})
			if r.status != http.StatusBadRequest || r.body["field"] != "limit" {
				t.Fatalf("limit %s: %d %s; want 400 naming limit", l, r.status, r.raw)
			}
		}

		// A stale save: the 412 names the 50 newest versions since its
		// base, oldest of them first, with who made each.
		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/text", body: map[string]any{"text": "stale"}, header: ifMatch(1)})
		r.want(t, "a save based on version 1", http.StatusPreconditionFailed, "version_conflict")
		changes := r.body["changes"].([]any)
		if len(changes) != service.MaxConflictChanges {
			t.Fatalf("the 412 lists %d versions; want the newest %d", len(changes), service.MaxConflictChanges)
		}
		first, last := changes[0].(map[string]any), changes[len(changes)-1].(map[string]any)
		if first["version"].(float64) != 71 || last["version"].(float64) != 120 || last["who"].(map[string]any)["kind"] != "person" {
			t.Fatalf("the 412 lists versions %v … %v (last by %v); want 71 … 120", first["version"], last["version"], last["who"])
		}
		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/text", body: map[string]any{"text": "stale"}, header: ifMatch(118)})
		r.want(t, "a save based on version 118", http.StatusPreconditionFailed, "version_conflict")
		if changes := r.body["changes"].([]any); len(changes) != 2 || changes[0].(map[string]any)["version"].(float64) != 119 {
			t.Fatalf("a save based on 118 lists %s; want versions 119 and 120", r.raw)
		}
	})
}

// What a version changed, over REST: its lines, cells and slides against
// the version before it, or a run of versions against since; bad versions
// name the parameter; a token reaches only its grant.
func TestVersionDiff(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		ctx := context.Background()
		id, _ := e.create(t, "Diffs", true)
		svc, person := e.Server.Service, service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, e.Owner.User.Role)
		text := "# Plan\n\nOne.\nTwo.\n"
		w, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: "markdown", ExpectedVersion: 1, Operation: "replace_text", Text: &text})
		if err != nil {
			t.Fatal(err)
		}
		grid, err := svc.CreateNoteTab(ctx, person, service.CreateTabArgs{NoteID: id, ExpectedVersion: w.Version, TabType: "sheet", Label: "Budget"})
		if err != nil {
			t.Fatal(err)
		}
		cells, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: grid.TabID, ExpectedVersion: grid.Version, Operation: "sheet_set_range", StartRow: ptr(2), StartCol: ptr(1), Values: [][]any{{12.5, "=B1*2"}}})
		if err != nil {
			t.Fatal(err)
		}
		text = "# Plan\n\nOne.\n2.\n"
		last, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: "markdown", ExpectedVersion: cells.Version, Operation: "replace_text", Text: &text})
		if err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("/api/notes/%s/versions/", id)
		r := e.do(t, req{method: "GET", path: base + fmt.Sprint(cells.Version) + "/diff"})
		r.want(t, "the cells' version", http.StatusOK, "")
		if r.num("since") != cells.Version-1 || r.num("current_version") != last.Version || r.num("changes") != 2 {
			t.Fatalf("the cells' version = %s", r.raw)
		}
		tab := r.body["tabs"].([]any)[0].(map[string]any)
		got := tab["cells"].([]any)
		if tab["tab_id"] != grid.TabID || tab["label"] != "Budget" || len(got) != 2 ||
			got[0].(map[string]any)["address"] != "B3" || got[0].(map[string]any)["after"] != 12.5 || got[0].(map[string]any)["before"] != nil ||
			got[1].(map[string]any)["address"] != "C3" || got[1].(map[string]any)["after"] != "=B1*2" {
			t.Fatalf("the cells' version lists %s", r.raw)
		}
		r = e.do(t, req{method: "GET", path: base + fmt.Sprint(last.Version) + "/diff"})
		lines := r.body["tabs"].([]any)[0].(map[string]any)["lines"].([]any)
		if len(lines) != 2 || lines[0].(map[string]any)["op"] != "removed" || lines[0].(map[string]any)["text"] != "Two." || lines[1].(map[string]any)["text"] != "2." || lines[1].(map[string]any)["line"] != 4.0 {
			t.Fatalf("the last text save lists %s", r.raw)
		}
		// The run from version 2 to the last: the tab added, its cells, one line.
		r = e.do(t, req{method: "GET", path: base + fmt.Sprint(last.Version) + "/diff?since=2"})
		r.want(t, "a run of versions", http.StatusOK, "")
		tabs := r.body["tabs"].([]any)
		if r.num("since") != 2 || len(tabs) != 2 || tabs[1].(map[string]any)["change"] != "added" || r.num("changes") != 5 {
			t.Fatalf("versions 3 to %d together = %s", last.Version, r.raw)
		}
		// The first version: the Note as it was made.
		r = e.do(t, req{method: "GET", path: base + "1/diff"})
		if r.status != http.StatusOK || r.num("since") != 0 || r.body["title"].(map[string]any)["after"] != "Diffs" {
			t.Fatalf("version 1 = %d %s", r.status, r.raw)
		}

		for _, c := range []struct{ path, field string }{
			{base + "0/diff", "version"}, {base + "99/diff", "version"}, {base + "x/diff", "version"},
			{base + "3/diff?since=3", "since"}, {base + "3/diff?since=9", "since"}, {base + "3/diff?since=0", "since"}, {base + "3/diff?since=x", "since"},
		} {
			r := e.do(t, req{method: "GET", path: c.path})
			if r.status != http.StatusBadRequest || r.body["field"] != c.field {
				t.Fatalf("GET %s: %d %s; want 400 naming %s", c.path, r.status, r.raw, c.field)
			}
		}
		other := e.Token(t, []string{e.NoteID}, auth.ScopeRead)
		e.do(t, req{method: "GET", path: base + "2/diff", bearer: other}).want(t, "a token without the grant", http.StatusNotFound, "not_found")
		mine := e.Token(t, []string{id}, auth.ScopeRead)
		e.do(t, req{method: "GET", path: base + "2/diff", bearer: mine}).want(t, "a token with the grant", http.StatusOK, "")
	})
}

func ptr[T any](v T) *T { return &v }
