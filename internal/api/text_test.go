package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/api"
	"foundry/internal/auth"
)

// TestLiveTextREST: two editors push change sets at the text's revision;
// the one that is behind is not accepted, pulls, and pushes its rebased
// change; an agent's whole-tab write is an update like any other; bad
// pushes are refused by field.
func TestLiveTextREST(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Live", true)
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/text", body: map[string]any{"text": "Hello world"}, header: ifMatch(v)}).want(t, "put text", http.StatusOK, "")
		tab := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/markdown"})
		if tab.body["text"] != "Hello world" || tab.num("text_rev") != 1 {
			t.Fatalf("the markdown tab after one save: %s", tab.raw)
		}
		// Ada inserts "," after Hello (rev 1 → 2).
		push := func(rev int64, client string, updates ...any) resp {
			return e.do(t, req{method: "POST", path: "/api/notes/" + id + "/text", body: map[string]any{"rev": rev, "client_id": client, "updates": updates}})
		}
		a := push(1, "ada-1", []any{5, []any{0, ","}, 6})
		a.want(t, "ada's push", http.StatusOK, "")
		if a.body["accepted"] != true || a.num("rev") != 2 || a.num("version") != v+2 {
			t.Fatalf("ada's push: %s", a.raw)
		}
		// Bo, still at rev 1, appends "!": not accepted, nothing written.
		b := push(1, "bo-1", []any{11, []any{0, "!"}})
		b.want(t, "bo's stale push", http.StatusOK, "")
		if b.body["accepted"] != false || b.num("rev") != 2 || b.num("version") != v+2 {
			t.Fatalf("bo's stale push: %s", b.raw)
		}
		pull := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/text?after=1"})
		pull.want(t, "pull", http.StatusOK, "")
		ups := pull.body["updates"].([]any)
		if len(ups) != 1 || pull.num("rev") != 2 {
			t.Fatalf("pull after 1: %s", pull.raw)
		}
		u := ups[0].(map[string]any)
		if u["client_id"] != "ada-1" || u["rev"].(float64) != 2 || u["actor"].(map[string]any)["kind"] != "person" {
			t.Fatalf("the update: %v", u)
		}
		if got, _ := json.Marshal(u["changes"]); string(got) != `[5,[0,","],6]` {
			t.Fatalf("the update's changes: %s", got)
		}
		// Bo rebased: "!" now goes at 12.
		push(2, "bo-1", []any{12, []any{0, "!"}}).want(t, "bo's rebased push", http.StatusOK, "")
		// An agent's replacement is logged as its diff.
		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		cur := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/markdown"})
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/text", bearer: tok, body: map[string]any{"text": "Hello, big world!"}, header: ifMatch(cur.num("version"))}).want(t, "agent's save", http.StatusOK, "")
		pull = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/text?after=3"})
		ups = pull.body["updates"].([]any)
		if len(ups) != 1 {
			t.Fatalf("pull after 3: %s", pull.raw)
		}
		if got, _ := json.Marshal(ups[0].(map[string]any)["changes"]); string(got) != `[7,[0,"big "],6]` || ups[0].(map[string]any)["client_id"] != "" {
			t.Fatalf("the agent's update: %s", pull.raw)
		}
		tab = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/markdown"})
		if tab.body["text"] != "Hello, big world!" || tab.num("text_rev") != 4 {
			t.Fatalf("the text at the end: %s", tab.raw)
		}
		if up := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/text?after=4"}); len(up.body["updates"].([]any)) != 0 || up.body["resync"] != false {
			t.Fatalf("pull at the head: %s", up.raw)
		}

		for _, c := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"a change set of another length", map[string]any{"rev": 4, "client_id": "ada-1", "updates": []any{[]any{3, []any{0, "x"}}}}, "updates[0]"},
			{"not a change set", map[string]any{"rev": 4, "client_id": "ada-1", "updates": []any{"hello"}}, "updates[0]"},
			{"no updates", map[string]any{"rev": 4, "client_id": "ada-1", "updates": []any{}}, "updates"},
			{"a bad client id", map[string]any{"rev": 4, "client_id": "ada 1", "updates": []any{[]any{17}}}, "client_id"},
			{"no rev", map[string]any{"client_id": "ada-1", "updates": []any{[]any{17}}}, "rev"},
		} {
			r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/text", body: c.body})
			if r.status < 400 || r.status >= 500 || r.body["field"] != c.field {
				t.Errorf("%s: %d %s; want a refusal naming %s", c.name, r.status, r.raw, c.field)
			}
		}
		if r := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/text?after=9"}); r.status != http.StatusBadRequest || r.body["field"] != "after" {
			t.Errorf("a pull from the future: %d %s", r.status, r.raw)
		}
		if r := e.do(t, req{method: "GET", path: "/api/notes/note_nope/text?after=0"}); r.status != http.StatusNotFound {
			t.Errorf("a pull of no Note: %d %s", r.status, r.raw)
		}
	})
}

// TestPresenceOnTheLiveStream: a person's presence reaches another
// person's live stream as a presence event, with their name and colour,
// and leaving takes them out; a token may not post presence.
func TestPresenceOnTheLiveStream(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Together", true)
		s := e.openStream(t, liveQuery("note:"+id), "", "")
		defer s.close()
		liveData[api.LiveReady](t, s.raw(t), "ready")
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/presence", body: map[string]any{"client_id": "c-1", "tab_id": "markdown", "rev": 0, "selection": map[string]any{"anchor": 0, "head": 0}}}).want(t, "presence", http.StatusOK, "")
		p := liveData[api.LivePresence](t, s.raw(t), "presence")
		if p.NoteID != id || len(p.Peers) != 1 || p.Peers[0].ClientID != "c-1" || p.Peers[0].TabID != "markdown" || p.Peers[0].Person.Name == "" ||
			!strings.HasPrefix(p.Peers[0].Color, "#") || p.Peers[0].Selection == nil {
			t.Fatalf("presence: %+v", p)
		}
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/presence", body: map[string]any{"client_id": "c-1", "tab_id": ""}}).want(t, "leave", http.StatusOK, "")
		if p := liveData[api.LivePresence](t, s.raw(t), "presence"); len(p.Peers) != 0 {
			t.Fatalf("after leaving: %+v", p)
		}
		bad := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/presence", body: map[string]any{"client_id": "c-1", "tab_id": "markdown", "slide": map[string]any{"slide_id": "slide-1", "field": "colour"}}})
		if bad.status != http.StatusBadRequest || bad.body["field"] != "slide.field" {
			t.Errorf("a bad slide field: %d %s", bad.status, bad.raw)
		}
		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		if r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/presence", bearer: tok, body: map[string]any{"client_id": "c-2", "tab_id": "markdown"}}); r.status != http.StatusForbidden && r.status != http.StatusUnauthorized {
			t.Errorf("a token posted presence: %d %s", r.status, r.raw)
		}
	})
}

// TestLiveWritesCarryTheText: a write of the markdown text reaches a live
// stream with its updates, an editor's as it pushed them and an agent's as
// its diff; a write of another tab carries none.
func TestLiveWritesCarryTheText(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Carried", true)
		s := e.openStream(t, liveQuery("note:"+id), "", "")
		defer s.close()
		liveData[api.LiveReady](t, s.raw(t), "ready")
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/text", body: map[string]any{"rev": 0, "client_id": "ada-1", "updates": []any{[]any{[]any{0, "Hi"}}, []any{2, []any{0, "!"}}}}}).want(t, "push", http.StatusOK, "")
		_, w := liveWrite(t, s, id, v+1)
		if len(w.Text) != 2 || w.Text[0].Rev != 1 || w.Text[1].Rev != 2 || w.Text[0].ClientID != "ada-1" {
			t.Fatalf("the push's event carries %+v", w.Text)
		}
		if got, _ := json.Marshal(w.Text[1].Changes); string(got) != `[2,[0,"!"]]` {
			t.Fatalf("the second update: %s", got)
		}
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/markdown/text", body: map[string]any{"text": "Hi there!"}, header: ifMatch(v + 1)}).want(t, "save", http.StatusOK, "")
		_, w = liveWrite(t, s, id, v+2)
		if got, _ := json.Marshal(w.Text); len(w.Text) != 1 || w.Text[0].Rev != 3 || !strings.Contains(string(got), `[2,[0," there"],1]`) {
			t.Fatalf("the save's event carries %s", got)
		}
		e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "Renamed"}, header: ifMatch(v + 2)}).want(t, "rename", http.StatusOK, "")
		if _, w = liveWrite(t, s, id, v+3); w.Text != nil {
			t.Fatalf("a rename carries text %+v", w.Text)
		}
	})
}
