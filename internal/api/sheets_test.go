package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"foundry/internal/api"
)

// sheetsOf is the sheet tab's sheets as (sheet_id, name), in order.
func (e *notesEnv) sheetsOf(t *testing.T, id, tab string) [][2]string {
	t.Helper()
	r := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + tab})
	r.want(t, "GET the sheet tab", http.StatusOK, "")
	var out [][2]string
	for _, x := range r.body["sheets"].([]any) {
		s := x.(map[string]any)
		out = append(out, [2]string{s["sheet_id"].(string), s["name"].(string)})
	}
	return out
}

func TestSheets(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Sheets", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "sheet"}, header: ifMatch(1)})
		r.want(t, "create a sheet tab", http.StatusCreated, "")
		tab := r.body["tab_id"].(string)
		base := "/api/notes/" + id + "/tabs/" + tab + "/sheets"
		first := e.sheetsOf(t, id, tab)[0][0]

		e.do(t, req{method: "POST", path: base, body: map[string]any{"name": "Two"}}).
			want(t, "add a sheet without a precondition", http.StatusPreconditionRequired, "precondition_required")
		for _, bad := range []map[string]any{{}, {"name": "   "}, {"name": "a\u202eb"}, {"name": strings.Repeat("x", 101)}, {"name": 3}, {"name": "x", "cells": []any{}}} {
			r := e.do(t, req{method: "POST", path: base, body: bad, header: ifMatch(2)})
			if r.status < 400 || r.status >= 500 || r.body["field"] == nil || r.body["field"] == "" {
				t.Fatalf("add sheet %v: %d %s; want a 4xx naming the field", bad, r.status, r.raw)
			}
		}
		if r := e.do(t, req{method: "POST", path: base, body: map[string]any{"name": " "}, header: ifMatch(2)}); r.body["field"] != "name" {
			t.Fatalf("a blank name: %s; want the field name", r.raw)
		}

		add := req{method: "POST", path: base, body: map[string]any{"name": "  Costs  "}, header: map[string]string{"If-Match": `"2"`, api.HeaderKey: "sheet-add-0001"}}
		r = e.do(t, add)
		r.want(t, "add a sheet", http.StatusCreated, "")
		sid, _ := r.body["sheet_id"].(string)
		if r.num("version") != 3 || r.body["name"] != "Costs" || sid == "" || sid == first ||
			!slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{tab}) || r.header.Get("Location") != base+"/"+sid || r.header.Get("ETag") != `"3"` {
			t.Fatalf("add sheet = %s (%v)", r.raw, r.header)
		}
		again := e.do(t, add)
		again.want(t, "add resent", http.StatusCreated, "")
		if again.body["sheet_id"] != sid || again.header.Get(api.HeaderReplayed) != "true" || again.num("version") != 3 {
			t.Fatalf("resent add = %s (%v); want the first sheet, replayed", again.raw, again.header)
		}
		if got := e.sheetsOf(t, id, tab); len(got) != 2 || got[1] != [2]string{sid, "Costs"} {
			t.Fatalf("sheets after an add sent twice = %v", got)
		}
		reuse := add
		reuse.body = map[string]any{"name": "Other"}
		e.do(t, reuse).want(t, "the key for another sheet", http.StatusUnprocessableEntity, "idempotency_key_reused")

		// A stale version: 412 with the current version and the tab it changed.
		r = e.do(t, req{method: "PATCH", path: base + "/" + sid, body: map[string]any{"name": "Late"}, header: ifMatch(2)})
		r.want(t, "rename on a stale version", http.StatusPreconditionFailed, "version_conflict")
		if r.num("current_version") != 3 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{tab}) {
			t.Fatalf("412 = %s; want current_version 3 and the sheet tab changed", r.raw)
		}
		e.do(t, req{method: "PATCH", path: base + "/" + sid, body: map[string]any{"name": "x"}}).
			want(t, "rename without a precondition", http.StatusPreconditionRequired, "precondition_required")
		// Rename to the first sheet's name: trimmed, names may repeat.
		r = e.do(t, req{method: "PATCH", path: base + "/" + sid, body: map[string]any{"name": " Sheet1 ", "expected_version": 3}})
		r.want(t, "rename", http.StatusOK, "")
		if r.num("version") != 4 || r.body["sheet_id"] != sid || r.body["name"] != "Sheet1" {
			t.Fatalf("rename = %s", r.raw)
		}
		if got := e.sheetsOf(t, id, tab); got[0][1] != "Sheet1" || got[1] != [2]string{sid, "Sheet1"} {
			t.Fatalf("sheets after the rename = %v", got)
		}
		// The same name again is no new version.
		r = e.do(t, req{method: "PATCH", path: base + "/" + sid, body: map[string]any{"name": "Sheet1"}, header: ifMatch(4)})
		if r.status != http.StatusOK || r.num("version") != 4 {
			t.Fatalf("a rename that changes nothing = %d %s; want 200 at version 4", r.status, r.raw)
		}
		r = e.do(t, req{method: "PATCH", path: base + "/sheet-999", body: map[string]any{"name": "x"}, header: ifMatch(4)})
		if r.status != http.StatusBadRequest || r.body["field"] != "sheet_id" {
			t.Fatalf("rename an unknown sheet = %d %s; want 400 naming sheet_id", r.status, r.raw)
		}
		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs/markdown/sheets", body: map[string]any{"name": "x"}, header: ifMatch(4)})
		if r.status < 400 || r.status >= 500 || r.body["field"] != "tab_id" {
			t.Fatalf("a sheet in the markdown tab = %d %s; want a 4xx naming tab_id", r.status, r.raw)
		}

		// Cells go to the sheet named; deleting it takes them with it.
		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + tab + "/cells", body: map[string]any{"sheet_id": sid, "start_row": 0, "start_col": 0, "values": [][]any{{"x", 2}}}, header: ifMatch(4)})
		r.want(t, "cells in the second sheet", http.StatusOK, "")
		r = e.do(t, req{method: "DELETE", path: base + "/" + sid, header: ifMatch(5)})
		r.want(t, "delete the second sheet", http.StatusNoContent, "")
		if got := e.sheetsOf(t, id, tab); len(got) != 1 || got[0][0] != first {
			t.Fatalf("sheets after the delete = %v", got)
		}
		r = e.do(t, req{method: "DELETE", path: base + "/" + first, header: ifMatch(6)})
		if r.status != http.StatusBadRequest || r.body["field"] != "sheet_id" || !strings.Contains(string(r.raw), "last sheet") {
			t.Fatalf("delete the last sheet = %d %s; want 400 naming sheet_id", r.status, r.raw)
		}

		// At most 20 sheets per tab.
		v := int64(6)
		for i := 1; i < 20; i++ {
			e.do(t, req{method: "POST", path: base, body: map[string]any{"name": "S"}, header: ifMatch(v)}).want(t, "add", http.StatusCreated, "")
			v++
		}
		r = e.do(t, req{method: "POST", path: base, body: map[string]any{"name": "One too many"}, header: ifMatch(v)})
		if r.status < 400 || r.status >= 500 || r.body["field"] != "name" || !strings.Contains(string(r.raw), "20") {
			t.Fatalf("a 21st sheet = %d %s; want a 4xx naming the limit", r.status, r.raw)
		}
	})
}
