package service

import (
	"context"

	"foundry/internal/note"
	"foundry/internal/store"
)

// A sheet tab's sheets: one added, renamed or deleted (its cells are
// written with EditNoteTab's sheet_set_range).

// SheetArgs name one sheet of one sheet tab, with the guard of a write.
type SheetArgs struct {
	NoteID  string `json:"note_id"`
	TabID   string `json:"tab_id"`
	SheetID string `json:"sheet_id"`
	Guard
}

// AddSheetArgs add an empty sheet named Name (trimmed) to a sheet tab.
type AddSheetArgs struct {
	NoteID string `json:"note_id"`
	TabID  string `json:"tab_id"`
	Name   string `json:"name"`
	Guard
}

// SheetWritten is what a write of one sheet answers.
type SheetWritten struct {
	NoteWritten
	TabID   string `json:"tab_id"`
	SheetID string `json:"sheet_id"`
	Name    string `json:"name"`
}

// AddSheet appends an empty sheet to a sheet tab; a tab holds at most
// note.MaxSheetsPerTab sheets.
func (s *Service) AddSheet(ctx context.Context, c Caller, a AddSheetArgs) (SheetWritten, error) {
	clean, err := checkSheetCall(a.TabID, "", a.Name, true)
	if err != nil {
		return SheetWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "name", meaning: struct{ Op, Tab, Name string }{"add_sheet", a.TabID, clean}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SheetWritten, []string, error) {
			sh, err := note.AddSheet(d, a.TabID, clean)
			if err != nil {
				return SheetWritten{}, nil, err
			}
			return SheetWritten{TabID: a.TabID, SheetID: sh.ID, Name: clean}, []string{a.TabID}, nil
		})
}

// RenameSheetArgs rename one sheet (the name trimmed; names may repeat).
type RenameSheetArgs struct {
	SheetArgs
	Name string `json:"name"`
}

// RenameSheet renames one sheet.
func (s *Service) RenameSheet(ctx context.Context, c Caller, a RenameSheetArgs) (SheetWritten, error) {
	clean, err := checkSheetCall(a.TabID, a.SheetID, a.Name, true)
	if err != nil {
		return SheetWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "name", meaning: struct{ Op, Tab, Sheet, Name string }{"rename_sheet", a.TabID, a.SheetID, clean}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SheetWritten, []string, error) {
			if err := note.RenameSheet(d, a.TabID, a.SheetID, clean); err != nil {
				return SheetWritten{}, nil, err
			}
			return SheetWritten{TabID: a.TabID, SheetID: a.SheetID, Name: clean}, []string{a.TabID}, nil
		})
}

// DeleteSheet deletes one sheet and its cells; a tab's last sheet is
// refused.
func (s *Service) DeleteSheet(ctx context.Context, c Caller, a SheetArgs) (SheetWritten, error) {
	if _, err := checkSheetCall(a.TabID, a.SheetID, "", false); err != nil {
		return SheetWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "sheet_id", meaning: struct{ Op, Tab, Sheet string }{"delete_sheet", a.TabID, a.SheetID}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SheetWritten, []string, error) {
			if err := note.DeleteSheet(d, a.TabID, a.SheetID); err != nil {
				return SheetWritten{}, nil, err
			}
			return SheetWritten{TabID: a.TabID, SheetID: a.SheetID}, []string{a.TabID}, nil
		})
}

// SheetLayoutArgs change how one sheet is laid out: column widths and
// number formats (display only; values are unchanged).
type SheetLayoutArgs struct {
	SheetArgs
	Widths map[string]int   `json:"widths"`
	Format *note.CellFormat `json:"format"`
}

// SetSheetLayout changes one sheet's column widths or number formats.
func (s *Service) SetSheetLayout(ctx context.Context, c Caller, a SheetLayoutArgs) (SheetWritten, error) {
	if _, err := checkSheetCall(a.TabID, a.SheetID, "", false); err != nil {
		return SheetWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "format", meaning: struct {
		Op, Tab, Sheet string
		Widths         map[string]int
		Format         *note.CellFormat
	}{"sheet_layout", a.TabID, a.SheetID, a.Widths, a.Format}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SheetWritten, []string, error) {
			if err := note.SetSheetLayout(d, a.TabID, a.SheetID, note.SheetLayout{Widths: a.Widths, Format: a.Format}); err != nil {
				return SheetWritten{}, nil, err
			}
			return SheetWritten{TabID: a.TabID, SheetID: a.SheetID}, []string{a.TabID}, nil
		})
}

// checkSheetCall checks the IDs of a sheet call, that the tab ID can be a
// sheet tab's, and (withName) the sheet's name, which it returns trimmed.
func checkSheetCall(tabID, sheetID, name string, withName bool) (string, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return "", err
	}
	if err := CheckID("sheet_id", sheetID); err != nil {
		return "", err
	}
	if typ := typeOf(tabID); typ != "" && typ != note.TypeSheet {
		return "", note.NotSheetTab(tabID, typ)
	}
	if !withName {
		return "", nil
	}
	return note.CheckSheetName(name)
}
