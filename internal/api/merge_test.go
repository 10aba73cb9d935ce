package api_test

import (
	"net/http"
	"testing"

	"foundry/internal/auth"
)

// TestPeopleWritingCellsAndFieldsTogether: two people's writes of cells
// and of slide fields, each based on the version their page had, all
// apply: different cells and fields side by side, the same cell by the
// server's order (the later write stays). A token's stale write is still
// refused, as the write contract says.
func TestPeopleWritingCellsAndFieldsTogether(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Together", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "sheet"}, header: ifMatch(1)})
		r.want(t, "create a sheet tab", http.StatusCreated, "")
		sheet := r.body["tab_id"].(string)
		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "slides"}, header: ifMatch(2)})
		r.want(t, "create a slides tab", http.StatusCreated, "")
		deck := r.body["tab_id"].(string)
		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs/" + deck + "/slides", body: map[string]any{"title": "Plan"}, header: ifMatch(3)})
		r.want(t, "add a slide", http.StatusCreated, "")
		slide := r.body["slide_id"].(string)
		const base = 4 // what both pages read
		cells := "/api/notes/" + id + "/tabs/" + sheet + "/cells"
		put := func(row, col int, v any, version int64) resp {
			return e.do(t, req{method: "PUT", path: cells, body: map[string]any{"start_row": row, "start_col": col, "values": [][]any{{v}}}, header: ifMatch(version)})
		}
		put(0, 0, "Ada's A1", base).want(t, "Ada writes A1", http.StatusOK, "")
		put(1, 1, "Bo's B2", base).want(t, "Bo writes B2 on the version he had", http.StatusOK, "")
		put(0, 0, "Bo's A1", base).want(t, "Bo writes A1 on the version he had", http.StatusOK, "")
		slidePath := "/api/notes/" + id + "/tabs/" + deck + "/slides/" + slide
		e.do(t, req{method: "PATCH", path: slidePath, body: map[string]any{"title": "Ada's title"}, header: ifMatch(base)}).want(t, "Ada writes the title", http.StatusOK, "")
		e.do(t, req{method: "PATCH", path: slidePath, body: map[string]any{"body": "Bo's body"}, header: ifMatch(base)}).want(t, "Bo writes the body", http.StatusOK, "")

		got := e.do(t, req{method: "GET", path: cells + "?rows=2&cols=2"})
		vals := got.body["values"].([]any)
		if vals[0].([]any)[0] != "Bo's A1" || vals[1].([]any)[1] != "Bo's B2" {
			t.Fatalf("cells: %s", got.raw)
		}
		d := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + deck})
		s := d.body["slides"].([]any)[0].(map[string]any)
		if s["title"] != "Ada's title" || s["body"] != "Bo's body" {
			t.Fatalf("the slide: %s", d.raw)
		}
		if ahead := put(0, 0, "x", 99); ahead.status != http.StatusPreconditionFailed {
			t.Fatalf("a version ahead of the Note: %d %s", ahead.status, ahead.raw)
		}
		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		stale := e.do(t, req{method: "PUT", path: cells, bearer: tok, body: map[string]any{"start_row": 5, "start_col": 5, "values": [][]any{{1}}}, header: ifMatch(base)})
		if stale.status != http.StatusPreconditionFailed {
			t.Fatalf("a token's stale write: %d %s", stale.status, stale.raw)
		}
	})
}
