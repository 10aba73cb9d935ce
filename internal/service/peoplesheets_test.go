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
func TestPeopleSheets(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := service.PersonCaller(f.ws, f.owner)
		tab, err := f.svc.PeopleCreateTab(ctx, c, f.noteID, "sheet", "Grid", service.PeopleWrite{Expected: f.version(t)})
		if err != nil {
			t.Fatal(err)
		}
		add := func(key string, expected int64) service.PeopleSheetResult {
			t.Helper()
			res, err := f.svc.PeopleAddSheet(ctx, c, f.noteID, tab.TabID, " Same ", service.PeopleWrite{Expected: expected, Key: key})
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
		if _, err := f.svc.PeopleSetCells(ctx, c, f.noteID, tab.TabID, first.SheetID, 150, 150, [][]any{{"far", 1.5}}, service.PeopleWrite{Expected: second.Version}); err != nil {
			t.Fatal(err)
		}
		ren, err := f.svc.PeopleRenameSheet(ctx, c, f.noteID, tab.TabID, first.SheetID, "\tCosts  ", service.PeopleWrite{Expected: second.Version + 1})
		if err != nil || ren.Name != "Costs" || ren.Version != second.Version+2 {
			t.Fatalf("rename = %+v, %v", ren, err)
		}
		_, err = f.svc.PeopleRenameSheet(ctx, c, f.noteID, tab.TabID, first.SheetID, "a\u200bb", service.PeopleWrite{Expected: ren.Version})
		wantProblem(t, err, problem.Invalid, "name")
		_, err = f.svc.PeopleAddSheet(ctx, c, f.noteID, "markdown", "x", service.PeopleWrite{Expected: ren.Version})
		wantProblem(t, err, "wrong_tab_type", "tab_id")

		read, err := f.svc.PeopleReadTab(ctx, c, f.noteID, tab.TabID)
		if err != nil || len(read.Sheets) != 3 || read.Sheets[1].Name != "Costs" || len(read.Sheets[1].Cells) != 151 {
			t.Fatalf("the tab = %+v, %v", read.Sheets, err)
		}
		del, err := f.svc.PeopleDeleteSheet(ctx, c, f.noteID, tab.TabID, first.SheetID, service.PeopleWrite{Expected: ren.Version})
		if err != nil {
			t.Fatal(err)
		}
		read, err = f.svc.PeopleReadTab(ctx, c, f.noteID, tab.TabID)
		if err != nil || len(read.Sheets) != 2 || read.Sheets[1].ID != second.SheetID {
			t.Fatalf("after the delete the tab = %+v, %v", read.Sheets, err)
		}
		// Its cells went with it: the same ID is not found.
		_, err = f.svc.PeopleCells(ctx, c, f.noteID, tab.TabID, first.SheetID, 150, 150, 1, 1)
		wantProblem(t, err, problem.Invalid, "sheet_id")
		v := del.Version
		for _, s := range read.Sheets[:1] {
			res, err := f.svc.PeopleDeleteSheet(ctx, c, f.noteID, tab.TabID, s.ID, service.PeopleWrite{Expected: v})
			if err != nil {
				t.Fatal(err)
			}
			v = res.Version
		}
		_, err = f.svc.PeopleDeleteSheet(ctx, c, f.noteID, tab.TabID, second.SheetID, service.PeopleWrite{Expected: v})
		wantProblem(t, err, problem.Invalid, "sheet_id", "last sheet")
	})
}
