package server_test

import (
	"fmt"
	"reflect"
	"testing"

	"foundry/internal/server/servertest"
)

// An agent writes a formula with sheet_set_range and reads the computed
// value and the formula with read_sheet_range, over real MCP, on every
// protocol revision; an input changed later changes the total it reads.
func TestAgentReadsComputedValues(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			e := servertest.Start(t, servertest.Options{})
			cs := e.Client(t, e.WriteToken(t), proto)
			v, _ := tabs(t, cs, e.NoteID)
			created := servertest.MustCall(t, cs, "create_note_tab", map[string]any{"note_id": e.NoteID, "expected_version": v, "idempotency_key": "sheet-" + proto, "tab_type": "sheet"})
			if created.IsError {
				t.Fatal(created.Text)
			}
			tab := created.Str("tab_id")
			set := func(v int64, key string, row int, values [][]any) int64 {
				t.Helper()
				res := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": tab, "expected_version": v, "idempotency_key": key,
					"operation": "sheet_set_range", "start_row": row, "start_col": 0, "values": values})
				if res.IsError {
					t.Fatal(res.Text)
				}
				return res.Int("version")
			}
			v = set(created.Int("version"), "cells-"+proto, 0, [][]any{{"Rent", 1200}, {"Food", 300.5}, {"Total", "=SUM(B1:B2)"}, {"Share", "=B3/0"}})
			read := func() map[string]any {
				t.Helper()
				res := servertest.MustCall(t, cs, "read_sheet_range", map[string]any{"note_id": e.NoteID, "tab_id": tab, "start_row": 0, "start_col": 0, "rows": 4, "cols": 2})
				if res.IsError {
					t.Fatal(res.Text)
				}
				return res.Data
			}
			got := read()
			values := got["values"].([]any)
			if fmt.Sprint(values[2]) != "[Total 1500.5]" || fmt.Sprint(values[3]) != "[Share #DIV/0!]" {
				t.Fatalf("values %v", values)
			}
			want := []any{
				map[string]any{"row": 2.0, "col": 1.0, "cell": "B3", "formula": "=SUM(B1:B2)"},
				map[string]any{"row": 3.0, "col": 1.0, "cell": "B4", "formula": "=B3/0"},
			}
			if !reflect.DeepEqual(got["formulas"], want) {
				t.Fatalf("formulas %#v", got["formulas"])
			}
			set(v, "rent-"+proto, 0, [][]any{{"Rent", 1000}})
			if total := read()["values"].([]any)[2].([]any)[1]; total != 1300.5 {
				t.Fatalf("total after the rent changed: %v", total)
			}
		})
	}
}
