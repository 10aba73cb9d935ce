package service_test

import (
	"context"
	"testing"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// Sheets of a sheet tab: an add replayed names the sheet its first call
// made, even after later adds of the same name; a rename is trimmed; a
// deleted sheet's cells go with it; the last sheet stays.
func TestSheets(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := f.person
		tab, err := f.svc.CreateNoteTab(ctx, c, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), TabType: "sheet", Label: "Grid"})
		if err != nil {
			t.Fatal(err)
		}
		add := func(key string, expected int64) service.SheetWritten {
			t.Helper()
			res, err := f.svc.AddSheet(ctx, c, service.AddSheetArgs{NoteID: f.noteID, TabID: tab.TabID, Name: " Same ", Guard: service.Guard{ExpectedVersion: expected, IdempotencyKey: key}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		first := add("people-sheet-001", tab.Version)
		second := add("people-sheet-002", first.Version)
		again := add("people-sheet-001", tab.Version)
		if first.Name != "Same" || !again.Replayed || again.SheetID != first.SheetID || second.SheetID == first.SheetID || again.Version != first.Version {
			t.Fatalf("first %+v, second %+v, replay %+v; want the replay to name the first sheet", first, second, again)
		}
		if _, err := f.svc.EditNoteTab(ctx, c, service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: second.Version, Operation: "sheet_set_range",
			SheetID: ptr(first.SheetID), StartRow: ptr(150), StartCol: ptr(150), Values: [][]any{{"far", 1.5}}}); err != nil {
			t.Fatal(err)
		}
		sheet := func(id string, expected int64) service.SheetArgs {
			return service.SheetArgs{NoteID: f.noteID, TabID: tab.TabID, SheetID: id, Guard: service.Guard{ExpectedVersion: expected}}
		}
		ren, err := f.svc.RenameSheet(ctx, c, service.RenameSheetArgs{SheetArgs: sheet(first.SheetID, second.Version+1), Name: "\tCosts  "})
		if err != nil || ren.Name != "Costs" || ren.Version != second.Version+2 {
			t.Fatalf("rename = %+v, %v", ren, err)
		}
		_, err = f.svc.RenameSheet(ctx, c, service.RenameSheetArgs{SheetArgs: sheet(first.SheetID, ren.Version), Name: "a\u200bb"})
		wantProblem(t, err, problem.Invalid, "name")
		_, err = f.svc.AddSheet(ctx, c, service.AddSheetArgs{NoteID: f.noteID, TabID: "markdown", Name: "x", Guard: service.Guard{ExpectedVersion: ren.Version}})
		wantProblem(t, err, "wrong_tab_type", "tab_id")

		read, err := f.svc.ReadNoteTab(ctx, c, service.TabArgs{NoteID: f.noteID, TabID: tab.TabID})
		if err != nil || len(read.Sheets) != 3 || read.Sheets[1].Name != "Costs" || len(read.Sheets[1].Cells) != 151 {
			t.Fatalf("the tab = %+v, %v", read.Sheets, err)
		}
		del, err := f.svc.DeleteSheet(ctx, c, sheet(first.SheetID, ren.Version))
		if err != nil {
			t.Fatal(err)
		}
		read, err = f.svc.ReadNoteTab(ctx, c, service.TabArgs{NoteID: f.noteID, TabID: tab.TabID})
		if err != nil || len(read.Sheets) != 2 || read.Sheets[1].ID != second.SheetID {
			t.Fatalf("after the delete the tab = %+v, %v", read.Sheets, err)
		}
		// Its cells went with it: the same ID is not found.
		_, err = f.svc.ReadSheetRange(ctx, c, service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: f.noteID, TabID: tab.TabID}, SheetID: first.SheetID, StartRow: 150, StartCol: 150, Rows: 1, Cols: 1})
		wantProblem(t, err, problem.Invalid, "sheet_id")
		v := del.Version
		for _, s := range read.Sheets[:1] {
			res, err := f.svc.DeleteSheet(ctx, c, sheet(s.ID, v))
			if err != nil {
				t.Fatal(err)
			}
			v = res.Version
		}
		_, err = f.svc.DeleteSheet(ctx, c, sheet(second.SheetID, v))
		wantProblem(t, err, problem.Invalid, "sheet_id", "last sheet")
	})
}
