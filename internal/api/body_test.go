package api_test

import (
	"testing"

	"foundry/internal/strictjson/strictjsontest"
)

// TestBodiesAreReadStrictly: every body of the table both doors share is
// refused before anything decodes it, with the code and the field the MCP
// tools answer for the same bytes (mcpserver's TestArgumentsAreReadStrictly),
// and nothing is written.
func TestBodiesAreReadStrictly(t *testing.T) {
	e := startNotes(t, nil)
	before := e.do(t, req{method: "GET", path: "/api/notes"}).raw
	for _, c := range strictjsontest.Cases {
		r := e.do(t, req{method: "POST", path: "/api/notes", body: c.Body})
		if r.status != 400 || r.body["code"] != "invalid_argument" || r.body["field"] != c.Field {
			t.Errorf("%s: %s → %d %s; want 400 invalid_argument naming %q", c.What, c.Body, r.status, r.raw, c.Field)
		}
	}
	// A stray bracket after the object is not JSON either.
	if r := e.do(t, req{method: "POST", path: "/api/notes", body: `{"title":"x"}]`}); r.status != 400 || r.body["field"] != "body" {
		t.Errorf("a stray ]: %d %s", r.status, r.raw)
	}
	if after := e.do(t, req{method: "GET", path: "/api/notes"}).raw; string(after) != string(before) {
		t.Errorf("a refused body wrote something: %s, then %s", before, after)
	}
}
