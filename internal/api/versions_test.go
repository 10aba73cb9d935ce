package api_test

import (
	"net/http"
	"strings"
	"testing"

	"foundry/internal/auth"
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
