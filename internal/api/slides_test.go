package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"foundry/internal/api"
	"foundry/internal/mcpclient"
	"foundry/internal/server/servertest"
)

// TestSlideLooks: people set a slide's layout and theme over REST, checked
// against the allowed sets; agents cannot set them, and an agent's
// replace_tab_data keeps the looks of the slides it rewrites.
func TestSlideLooks(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Looks", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "slides"}, header: ifMatch(1)})
		r.want(t, "create slides tab", http.StatusCreated, "")
		tab := r.body["tab_id"].(string)
		path := "/api/notes/" + id + "/tabs/" + tab + "/slides"
		slidesOf := func() []map[string]any {
			t.Helper()
			r := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + tab})
			r.want(t, "read the deck", http.StatusOK, "")
			var out []map[string]any
			for _, x := range r.body["slides"].([]any) {
				out = append(out, x.(map[string]any))
			}
			return out
		}

		// A new slide with a look.
		add := req{method: "POST", path: path, body: map[string]any{"title": "Intro", "layout": "two-column", "theme": "ocean"}, header: map[string]string{"If-Match": `"2"`, api.HeaderKey: "slide-look-0001"}}
		r = e.do(t, add)
		r.want(t, "add a slide with a layout and theme", http.StatusCreated, "")
		intro := r.body["slide_id"].(string)
		if again := e.do(t, add); again.body["slide_id"] != intro || again.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("resent add = %s", again.raw)
		}
		// The same key with another look is another request.
		other := add
		other.body = map[string]any{"title": "Intro", "layout": "quote", "theme": "ocean"}
		if r := e.do(t, other); r.status < 400 {
			t.Fatalf("the same key with another look: %d %s; want it refused", r.status, r.raw)
		}
		ss := slidesOf()
		if len(ss) != 1 || ss[0]["layout"] != "two-column" || ss[0]["theme"] != "ocean" {
			t.Fatalf("slides = %v", ss)
		}

		// Bad values name the field and list the allowed ones; nothing changes.
		for _, c := range []struct{ method, path, field, value string }{
			{"PATCH", path + "/" + intro, "layout", "grid"},
			{"PATCH", path + "/" + intro, "theme", "Ocean"},
			{"POST", path, "theme", "neon\u202e"},
			{"POST", path, "layout", strings.Repeat("x", 5000)},
		} {
			body := map[string]any{c.field: c.value}
			if c.method == "POST" {
				body["title"] = "t"
			}
			r := e.do(t, req{method: c.method, path: c.path, body: body, header: ifMatch(3)})
			r.want(t, c.method+" a bad "+c.field, http.StatusBadRequest, "invalid_argument")
			allowed := "title-body, title, section, two-column, quote"
			if c.field == "theme" {
				allowed = "paper, ink, ocean, forest, sunset"
			}
			if d, _ := r.body["detail"].(string); r.body["field"] != c.field || !strings.Contains(d, allowed) || len(d) > 600 {
				t.Fatalf("%s %s=%q: %s; want the field and %q", c.method, c.field, problemExcerpt(c.value), r.raw, allowed)
			}
		}

		// A theme only: the layout stays; then back to the default theme.
		r = e.do(t, req{method: "PATCH", path: path + "/" + intro, body: map[string]any{"theme": "sunset"}, header: ifMatch(3)})
		r.want(t, "set a theme", http.StatusOK, "")
		if r.num("version") != 4 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{tab}) || r.header.Get("ETag") != `"4"` {
			t.Fatalf("theme write = %s", r.raw)
		}
		if ss = slidesOf(); ss[0]["layout"] != "two-column" || ss[0]["theme"] != "sunset" || ss[0]["title"] != "Intro" {
			t.Fatalf("after the theme: %v", ss)
		}
		r = e.do(t, req{method: "PATCH", path: path + "/" + intro, body: map[string]any{"theme": "sunset"}, header: ifMatch(4)})
		r.want(t, "the same theme again", http.StatusOK, "")
		if r.num("version") != 4 {
			t.Fatalf("a write that changes nothing made version %d", r.num("version"))
		}
		r = e.do(t, req{method: "PATCH", path: path + "/" + intro, body: map[string]any{"theme": ""}, header: ifMatch(4)})
		r.want(t, "back to the default theme", http.StatusOK, "")
		if ss = slidesOf(); ss[0]["layout"] != "two-column" || ss[0]["theme"] != nil {
			t.Fatalf("after the default theme: %v", ss)
		}
		v := r.num("version")

		// 428 without a precondition; 412 on a stale one.
		e.do(t, req{method: "PATCH", path: path + "/" + intro, body: map[string]any{"layout": "quote"}}).
			want(t, "a look without a precondition", http.StatusPreconditionRequired, "precondition_required")
		cs := e.Client(t, e.WriteToken(t), "")
		res := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": tab, "expected_version": v,
			"idempotency_key": "agent-slide-0001", "operation": "slide_add", "title": "From the agent"})
		if res.IsError {
			t.Fatalf("slide_add: %v", res.Data)
		}
		agentV := res.Int("version")
		r = e.do(t, req{method: "PATCH", path: path + "/" + intro, body: map[string]any{"layout": "quote"}, header: ifMatch(v)})
		// A person's look on the version before the agent's slide applies
		// on the current one: people's writes are ordered by the server.
		r.want(t, "a stale look", http.StatusOK, "")
		if r.num("version") != agentV+1 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{tab}) {
			t.Fatalf("the stale look = %s", r.raw)
		}
		agentV = r.num("version")
		if ss = slidesOf(); len(ss) != 2 || ss[0]["layout"] != "quote" || ss[1]["layout"] != nil || ss[1]["theme"] != nil {
			t.Fatalf("after the stale write and the agent's slide: %v", ss)
		}

		// Agents cannot set a look: not on slide_add, an outline or replace_tab_data.
		for _, args := range []map[string]any{
			{"operation": "slide_add", "title": "x", "theme": "ink"},
			{"operation": "slides_add_outline", "slides": []any{map[string]any{"title": "x", "layout": "quote"}}},
			{"operation": "replace_tab_data", "data": map[string]any{"slides": []any{map[string]any{"title": "x", "theme": "ink"}}}},
		} {
			args["note_id"], args["tab_id"], args["expected_version"], args["idempotency_key"] = id, tab, agentV, "agent-look-"+args["operation"].(string)
			res, err := mcpclient.Call(context.Background(), cs, "edit_note_tab", args)
			if err == nil && !res.IsError {
				t.Fatalf("%s with a look was accepted: %v", args["operation"], res.Data)
			}
		}
		if ss = slidesOf(); len(ss) != 2 {
			t.Fatalf("refused agent writes changed the deck: %v", ss)
		}

		// A person sets a layout on the agent's slide; then the agent
		// rewrites the deck with replace_tab_data: the slide it keeps by
		// title keeps its look, the slide in a retitled slot keeps the
		// look of that slot, and a slide beyond the old deck has none.
		r = e.do(t, req{method: "PATCH", path: path + "/" + ss[1]["slide_id"].(string), body: map[string]any{"layout": "section", "theme": "forest"}, header: ifMatch(agentV)})
		r.want(t, "a look on the agent's slide", http.StatusOK, "")
		res = servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": tab, "expected_version": r.num("version"),
			"idempotency_key": "agent-replace-0001", "operation": "replace_tab_data", "data": map[string]any{"slides": []any{
				map[string]any{"title": "From the agent", "body": "moved to the front"},
				map[string]any{"title": "Retitled"},
				map[string]any{"title": "Brand new"},
			}}})
		if res.IsError {
			t.Fatalf("replace_tab_data: %v", res.Data)
		}
		ss = slidesOf()
		if len(ss) != 3 || ss[0]["title"] != "From the agent" || ss[0]["layout"] != "section" || ss[0]["theme"] != "forest" || ss[0]["body"] != "moved to the front" {
			t.Fatalf("after replace_tab_data: %v", ss)
		}
		// "Retitled" is in slot 1, whose old slide ("From the agent") was
		// taken by title; slot 0's old slide ("Intro") is left, so no look.
		if ss[1]["layout"] != nil || ss[1]["theme"] != nil || ss[2]["layout"] != nil || ss[2]["theme"] != nil {
			t.Fatalf("slides without a kept look: %v", ss)
		}
		// read_note_tab shows the agent the looks people set.
		res = servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": id, "tab_id": tab})
		if res.IsError {
			t.Fatalf("read_note_tab: %v", res.Data)
		}
		if l := res.List("slides"); len(l) != 3 || l[0].(map[string]any)["layout"] != "section" {
			t.Fatalf("read_note_tab slides = %v", l)
		}
	})
}

func problemExcerpt(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
