package api

import (
	"net/http"
	"net/url"

	"foundry/internal/note"
	"foundry/internal/service"
)

// The sheets of a sheet tab: add, rename and delete one. Each is a guarded
// write with the version it was based on; the cells are PUT …/cells.

// AddSheetRequest is POST …/tabs/{tab_id}/sheets.
type AddSheetRequest struct {
	TabRequest
	Precondition
	Name *string `json:"name" required:"true" missing:"give the sheet's name, such as \"Sheet2\""`
}

// SheetWrite is what a write of one sheet answers.
type SheetWrite struct {
	NoteWrite
	SheetID string `json:"sheet_id"`
	Name    string `json:"name"`
}

func sheetWrite(res service.SheetWritten) SheetWrite {
	return SheetWrite{NoteWrite: noteWrite(res.NoteWritten), SheetID: res.SheetID, Name: res.Name}
}

var addSheetDoc = doc{summary: "Add an empty sheet to a sheet tab", req: AddSheetRequest{}, resp: SheetWrite{}, status: http.StatusCreated, write: true}

func (h *handler) addSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[AddSheetRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.AddSheet(r.Context(), c.svc, service.AddSheetArgs{NoteID: in.NoteID, TabID: in.TabID, Name: *in.Name, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(in.NoteID)+"/tabs/"+url.PathEscape(in.TabID)+"/sheets/"+url.PathEscape(res.SheetID))
	answer(w, http.StatusCreated, res.NoteWritten, sheetWrite(res))
}

// SheetRequest names one sheet of one sheet tab.
type SheetRequest struct {
	TabRequest
	SheetID string `path:"sheet_id" json:"-"`
	Precondition
}

// RenameSheetRequest is PATCH …/sheets/{sheet_id}.
type RenameSheetRequest struct {
	SheetRequest
	Name *string `json:"name" required:"true" missing:"give the sheet's new name"`
}

var renameSheetDoc = doc{summary: "Rename a sheet", req: RenameSheetRequest{}, resp: SheetWrite{}, write: true}

func (h *handler) renameSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[RenameSheetRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.RenameSheet(r.Context(), c.svc, service.RenameSheetArgs{SheetArgs: service.SheetArgs{NoteID: in.NoteID, TabID: in.TabID, SheetID: in.SheetID, Guard: g}, Name: *in.Name})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, sheetWrite(res))
}

var deleteSheetDoc = doc{summary: "Delete a sheet and its cells (not a tab's last)", req: SheetRequest{}, write: true}

func (h *handler) deleteSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[SheetRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteSheet(r.Context(), c.svc, service.SheetArgs{NoteID: in.NoteID, TabID: in.TabID, SheetID: in.SheetID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res.NoteWritten, nil)
}

// SheetLayoutRequest is PATCH …/sheets/{sheet_id}/layout: column widths
// and number formats, how people lay a sheet out (values are unchanged).
type SheetLayoutRequest struct {
	SheetRequest
	Widths map[string]int `json:"widths,omitempty" description:"column index (\"0\" is column A) to width in pixels; 0 gives the column its default width back"`
	Format *FormatChange  `json:"format,omitempty" description:"a number format over a range; format general takes formats away"`
}

// FormatChange is a number format given to a range: one a sheet keeps
// (note.CellFormat), or general, which takes the range's formats away.
type FormatChange struct {
	Range  string `json:"range" required:"true" description:"cells in A1 notation, e.g. B2:C9 or B2"`
	Format string `json:"format" required:"true" enum:"general,number,percent,currency,date"`
}

var sheetLayoutDoc = doc{summary: "Change a sheet's column widths or number formats", req: SheetLayoutRequest{}, resp: SheetWrite{}, write: true}

func (h *handler) sheetLayout(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[SheetLayoutRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.SetSheetLayout(r.Context(), c.svc, service.SheetLayoutArgs{SheetArgs: service.SheetArgs{NoteID: in.NoteID, TabID: in.TabID, SheetID: in.SheetID, Guard: g}, Widths: in.Widths, Format: (*note.CellFormat)(in.Format)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, sheetWrite(res))
}
