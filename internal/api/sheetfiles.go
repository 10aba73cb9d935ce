package api

import (
	"io"
	"net/http"
	"net/url"
	"strconv"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// Spreadsheet files: an .xlsx or .csv becomes a new sheet tab, and a tab
// goes out as a file (.xlsx, .csv, .md).

// ImportSheetRequest is POST /api/notes/{note_id}/tabs/import: the body
// is the file.
type ImportSheetRequest struct {
	NoteRequest
	HeaderPrecondition
	Name *string `query:"name" json:"-" required:"true" description:"The file's name (percent-encoded UTF-8); .xlsx or .csv says its format, the rest the new tab's label"`
}

// SheetImport is what an import answers.
type SheetImport struct {
	NoteWrite
	TabID         string   `json:"tab_id"`
	Label         string   `json:"label"`
	Sheets        []string `json:"sheets"`
	Cells         int      `json:"cells"`
	Formulas      int      `json:"formulas"`
	AsValues      []string `json:"as_values,omitempty" description:"cells (at most 20) whose formula Foundry can't compute: the file's value was kept"`
	AsValuesCount int      `json:"as_values_count,omitempty"`
}

var importSheetDoc = doc{summary: "Import an .xlsx or .csv file as a new sheet tab (values, formulas, sheets)", req: ImportSheetRequest{}, rawBody: "*/*", resp: SheetImport{}, status: http.StatusCreated, write: true}

func (h *handler) importSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[ImportSheetRequest](h, w, r, false)
	if !ok {
		return
	}
	if in.Name == nil {
		h.fail(w, r, invalid("name", "is required: give the file's name in the name query parameter, e.g. ?name=budget.xlsx"))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, service.MaxImportBytes+1))
	if err != nil {
		h.fail(w, r, problem.New(problem.Invalid, "body", "the file could not be read: %v", err))
		return
	}
	res, err := h.svc.ImportSheet(r.Context(), c.svc, service.ImportSheetArgs{NoteID: in.NoteID, Name: *in.Name, Data: data, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(in.NoteID)+"/tabs/"+url.PathEscape(res.TabID))
	answer(w, http.StatusCreated, res.NoteWritten, SheetImport{NoteWrite: noteWrite(res.NoteWritten), TabID: res.TabID, Label: res.Label,
		Sheets: res.Sheets, Cells: res.Cells, Formulas: res.Formulas, AsValues: res.AsValues, AsValuesCount: res.AsValuesCount})
}

// ExportTabRequest is GET /api/notes/{note_id}/tabs/{tab_id}/export.
type ExportTabRequest struct {
	TabRequest
	Format  string `query:"format" json:"-" required:"true" enum:"xlsx,csv,md,pdf" description:"xlsx (a sheet tab, every sheet, formulas with their values), csv (one sheet's values), md (the markdown tab), pdf (a slides tab, a page a slide)"`
	SheetID string `query:"sheet_id" json:"-" description:"csv: the sheet (default: the tab's first)"`
}

var exportTabDoc = doc{summary: "One tab as a file: .xlsx, .csv, .md or .pdf", req: ExportTabRequest{}, media: "*/*"}

func (h *handler) exportTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ExportTabRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f, err := h.svc.ExportTab(r.Context(), c.svc, in.NoteID, in.TabID, in.Format, in.SheetID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", f.ContentType)
	hd.Set("Content-Disposition", Attachment(f.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "private, no-cache")
	if f.MissingGlyphs > 0 {
		// The PDF's fonts lack some characters; the web app's print has them.
		hd.Set("Foundry-Missing-Glyphs", strconv.Itoa(f.MissingGlyphs))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(f.Data)
}
