package service

import (
	"context"

	"foundry/internal/note"
	"foundry/internal/store"
)

// People's edits of a sheet tab's sheets: add, rename and delete a sheet.
// Each is one guarded people's write; the cells are written with
// PeopleSetCells.

// PeopleSheetResult is a people's write that made or names one sheet.
type PeopleSheetResult struct {
	PeopleResult
	SheetID string `json:"sheet_id"`
	Name    string `json:"name"`
}

// PeopleAddSheet appends an empty sheet named name (trimmed) to a sheet
// tab; a tab holds at most note.MaxSheetsPerTab sheets.
func (s *Service) PeopleAddSheet(ctx context.Context, c Caller, id, tabID, name string, pw PeopleWrite) (PeopleSheetResult, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleSheetResult{}, err
	}
	clean, err := note.CheckSheetName(name)
	if err != nil {
		return PeopleSheetResult{}, err
	}
	if err := sheetTab(tabID); err != nil {
		return PeopleSheetResult{}, err
	}
	var sheetID string
	res, err := s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab, Name string }{"add_sheet", tabID, clean}, "tab_edited", "name",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			sh, err := note.AddSheet(d, tabID, clean)
			if err != nil {
				return err
			}
			sheetID = sh.ID
			ch.Changed = []string{tabID}
			return nil
		})
	if err != nil {
		return PeopleSheetResult{}, err
	}
	if res.Replayed || sheetID == "" {
		// The first answer is replayed: the sheet it made is the newest
		// one of that name at the replayed version.
		sheetID, err = s.sheetNamed(ctx, id, tabID, clean, res.Version)
		if err != nil {
			return PeopleSheetResult{}, err
		}
	}
	return PeopleSheetResult{PeopleResult: res, SheetID: sheetID, Name: clean}, nil
}

// sheetNamed is the ID of the last sheet named name in tab tabID of Note
// id at version v ("" when there is none).
func (s *Service) sheetNamed(ctx context.Context, id, tabID, name string, v int64) (string, error) {
	d, err := s.NoteAt(ctx, id, v)
	if err != nil {
		return "", err
	}
	t, err := note.FindTab(&d, tabID)
	if err != nil {
		return "", nil // the tab is gone since: the sheet with it
	}
	out := ""
	for _, sh := range t.Sheets {
		if sh.Name == name {
			out = sh.ID
		}
	}
	return out, nil
}

// PeopleRenameSheet renames one sheet (the name trimmed; names may repeat).
func (s *Service) PeopleRenameSheet(ctx context.Context, c Caller, id, tabID, sheetID, name string, pw PeopleWrite) (PeopleSheetResult, error) {
	for _, f := range [][2]string{{"tab_id", tabID}, {"sheet_id", sheetID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return PeopleSheetResult{}, err
		}
	}
	clean, err := note.CheckSheetName(name)
	if err != nil {
		return PeopleSheetResult{}, err
	}
	if err := sheetTab(tabID); err != nil {
		return PeopleSheetResult{}, err
	}
	res, err := s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab, Sheet, Name string }{"rename_sheet", tabID, sheetID, clean}, "tab_edited", "name",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			if err := note.RenameSheet(d, tabID, sheetID, clean); err != nil {
				return err
			}
			ch.Changed = []string{tabID}
			return nil
		})
	if err != nil {
		return PeopleSheetResult{}, err
	}
	return PeopleSheetResult{PeopleResult: res, SheetID: sheetID, Name: clean}, nil
}

// PeopleDeleteSheet deletes one sheet and its cells; a tab's last sheet
// is refused.
func (s *Service) PeopleDeleteSheet(ctx context.Context, c Caller, id, tabID, sheetID string, pw PeopleWrite) (PeopleResult, error) {
	for _, f := range [][2]string{{"tab_id", tabID}, {"sheet_id", sheetID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return PeopleResult{}, err
		}
	}
	if err := sheetTab(tabID); err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab, Sheet string }{"delete_sheet", tabID, sheetID}, "tab_edited", "sheet_id",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			if err := note.DeleteSheet(d, tabID, sheetID); err != nil {
				return err
			}
			ch.Changed = []string{tabID}
			return nil
		})
}

// sheetTab refuses, from its ID alone, a tab that cannot be a sheet tab.
func sheetTab(tabID string) error {
	if typ := typeOf(tabID); typ != "" && typ != note.TypeSheet {
		return note.NotSheetTab(tabID, typ)
	}
	return nil
}
