package api

import (
	"net/http"
	"net/url"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// The tab strip, sources, slides and sheet cells of a Note: every write is
// a guarded write with the version it was based on.

// MaxCellsBody bounds a cells write: 100 × 100 cells of up to a few
// hundred bytes each, JSON-escaped.
const MaxCellsBody = 4 << 20

// MaxSlideBody bounds a slide write: three slide fields, JSON-escaped.
const MaxSlideBody = 6*3*note.MaxSlideTextBytes + 4<<10

// CreateTabRequest is POST /api/notes/{note_id}/tabs.
type CreateTabRequest struct {
	NoteRequest
	Precondition
	Type  *string `json:"type" required:"true" enum:"slides,sheet" missing:"give \"slides\" or \"sheet\""`
	Label *string `json:"label,omitempty"`
}

// TabCreated is what creating a tab answers: its exact ID.
type TabCreated struct {
	NoteWrite
	TabID string `json:"tab_id"`
	Type  string `json:"type"`
	Label string `json:"label"`
}

var createTabDoc = doc{summary: "Add a slides or sheet tab", req: CreateTabRequest{}, resp: TabCreated{}, status: http.StatusCreated, write: true}

func (h *handler) createTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[CreateTabRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.CreateNoteTab(r.Context(), c.svc, service.CreateTabArgs{NoteID: in.NoteID, ExpectedVersion: g.ExpectedVersion, IdempotencyKey: g.IdempotencyKey,
		TabType: *in.Type, Label: deref(in.Label)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(in.NoteID)+"/tabs/"+url.PathEscape(res.TabID))
	answer(w, http.StatusCreated, res.NoteWritten, TabCreated{NoteWrite: noteWrite(res.NoteWritten), TabID: res.TabID, Type: res.Type, Label: res.Label})
}

// UpdateTabRequest is PATCH /api/notes/{note_id}/tabs/{tab_id}.
type UpdateTabRequest struct {
	TabRequest
	Precondition
	Label    *string `json:"label,omitempty" description:"Trimmed; labels may repeat"`
	Position *int    `json:"position,omitempty" minimum:"0" description:"0-based place in the tab strip"`
}

// TabWrite is what a write of one tab answers.
type TabWrite struct {
	NoteWrite
	TabID string `json:"tab_id"`
}

var updateTabDoc = doc{summary: "Rename and/or move a tab", req: UpdateTabRequest{}, resp: TabWrite{}, write: true}

func (h *handler) updateTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[UpdateTabRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.UpdateTab(r.Context(), c.svc, service.UpdateTabArgs{NoteID: in.NoteID, TabID: in.TabID, Label: in.Label, Position: in.Position, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, TabWrite{NoteWrite: noteWrite(res.NoteWritten), TabID: res.TabID})
}

// TabWriteRequest is a write on one tab that takes nothing else.
type TabWriteRequest struct {
	TabRequest
	Precondition
}

var deleteTabDoc = doc{summary: "Delete a slides or sheet tab (a person's act)", req: TabWriteRequest{}, write: true}

func (h *handler) deleteTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[TabWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteTab(r.Context(), c.svc, service.TabWriteArgs{NoteID: in.NoteID, TabID: in.TabID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res.NoteWritten, nil)
}

// AddSourceRequest is POST /api/notes/{note_id}/sources.
type AddSourceRequest struct {
	NoteRequest
	Precondition
	Title *string `json:"title" required:"true" missing:"give the cited page's title"`
	URL   *string `json:"url" required:"true" missing:"give the cited page's http or https URL"`
}

// SourceAdded is what adding a source answers.
type SourceAdded struct {
	NoteWrite
	SourceID      string `json:"source_id"`
	URL           string `json:"url"`
	NormalizedURL string `json:"normalized_url"`
	Title         string `json:"source_title"`
}

var addSourceDoc = doc{summary: "Attach a citation (a page already attached answers 409 source_exists)", req: AddSourceRequest{}, resp: SourceAdded{}, status: http.StatusCreated, write: true}

func (h *handler) addSource(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[AddSourceRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.AddNoteSource(r.Context(), c.svc, service.AddSourceArgs{NoteID: in.NoteID, ExpectedVersion: g.ExpectedVersion, IdempotencyKey: g.IdempotencyKey,
		Title: *in.Title, URL: *in.URL})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if res.AlreadyAttached {
		// In this door a page already there is a conflict the person sees,
		// with the source that holds it.
		h.fail(w, r, sourceExists(res))
		return
	}
	answer(w, http.StatusCreated, res.NoteWritten, SourceAdded{NoteWrite: noteWrite(res.NoteWritten), SourceID: res.SourceID, URL: res.URL, NormalizedURL: res.NormalizedURL, Title: res.Title})
}

// SourceRequest names one source of one Note, with the write's precondition.
type SourceRequest struct {
	NoteRequest
	SourceID string `path:"source_id" json:"-"`
	Precondition
}

var deleteSourceDoc = doc{summary: "Remove a citation (a person's act)", req: SourceRequest{}, write: true}

func (h *handler) deleteSource(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[SourceRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteSource(r.Context(), c.svc, service.SourceArgs{NoteID: in.NoteID, SourceID: in.SourceID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res, nil)
}

// SlideFields are what a person writes of a slide.
type SlideFields struct {
	Title    *string `json:"title,omitempty"`
	Body     *string `json:"body,omitempty"`
	Notes    *string `json:"notes,omitempty"`
	Layout   *string `json:"layout,omitempty" description:"One of Foundry's slide layouts, or \"\" for the default"`
	Theme    *string `json:"theme,omitempty" description:"One of Foundry's slide themes, or \"\" for the default"`
	Position *int    `json:"position,omitempty" minimum:"0" description:"0-based place in the deck"`
}

// AddSlideRequest is POST /api/notes/{note_id}/tabs/{tab_id}/slides.
type AddSlideRequest struct {
	TabRequest
	Precondition
	SlideFields
}

// SlideWrite is what a write of one slide answers.
type SlideWrite struct {
	NoteWrite
	SlideID string `json:"slide_id"`
}

var addSlideDoc = doc{summary: "Add a slide (title required)", req: AddSlideRequest{}, resp: SlideWrite{}, status: http.StatusCreated, write: true}

func (h *handler) addSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[AddSlideRequest](h, w, r, false)
	if !ok {
		return
	}
	if in.Title == nil {
		h.fail(w, r, invalid("title", "is required: every slide needs a title"))
		return
	}
	h.editTab(w, r, c, http.StatusCreated, service.EditTabArgs{NoteID: in.NoteID, TabID: in.TabID, Operation: "slide_add",
		Title: in.Title, Body: stringOr(in.Body), Notes: stringOr(in.Notes), Layout: in.Layout, Theme: in.Theme, Position: in.Position}, g,
		func(res service.TabEdited) any {
			return SlideWrite{NoteWrite: noteWrite(res.NoteWritten), SlideID: res.SlideIDs[0]}
		})
}

// stringOr is p, or an empty string's pointer.
func stringOr(p *string) *string {
	if p == nil {
		return new(string)
	}
	return p
}

// SlideRequest names one slide of one slides tab.
type SlideRequest struct {
	TabRequest
	SlideID string `path:"slide_id" json:"-"`
	Precondition
}

// UpdateSlideRequest is PATCH …/slides/{slide_id}.
type UpdateSlideRequest struct {
	SlideRequest
	SlideFields
}

var updateSlideDoc = doc{summary: "Change a slide's fields, look or place", req: UpdateSlideRequest{}, resp: SlideWrite{}, write: true}

func (h *handler) updateSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[UpdateSlideRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := atCurrent(c, &g, func() (service.SlideWritten, error) {
		return h.svc.UpdateSlide(r.Context(), c.svc, service.UpdateSlideArgs{
			SlideArgs: service.SlideArgs{NoteID: in.NoteID, TabID: in.TabID, SlideID: in.SlideID, Guard: g},
			Title:     in.Title, Body: in.Body, Notes: in.Notes, Layout: in.Layout, Theme: in.Theme, Position: in.Position})
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, SlideWrite{NoteWrite: noteWrite(res.NoteWritten), SlideID: res.SlideID})
}

var deleteSlideDoc = doc{summary: "Remove a slide", req: SlideRequest{}, write: true}

func (h *handler) deleteSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[SlideRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteSlide(r.Context(), c.svc, service.SlideArgs{NoteID: in.NoteID, TabID: in.TabID, SlideID: in.SlideID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res.NoteWritten, nil)
}

// PutCellsRequest is PUT /api/notes/{note_id}/tabs/{tab_id}/cells.
type PutCellsRequest struct {
	TabRequest
	Precondition
	SheetID  *string `json:"sheet_id,omitempty" description:"The sheet (default: the tab's first)"`
	StartRow *int    `json:"start_row" required:"true" minimum:"0" missing:"give the 0-based row of the range's top-left cell"`
	StartCol *int    `json:"start_col" required:"true" minimum:"0" missing:"give the 0-based column of the range's top-left cell"`
	Values   [][]any `json:"values" required:"true" maxItems:"100" missing:"give the rows of cells to write" description:"At most 100 × 100 cells: strings, numbers, booleans or null"`
}

var putCellsDoc = doc{summary: "Write a rectangle of cells", req: PutCellsRequest{}, resp: NoteWrite{}, write: true}

func (h *handler) putCells(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[PutCellsRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := atCurrent(c, &g, func() (service.TabEdited, error) {
		return h.svc.EditNoteTab(r.Context(), c.svc, service.EditTabArgs{NoteID: in.NoteID, TabID: in.TabID, Operation: "sheet_set_range",
			SheetID: stringOr(in.SheetID), StartRow: in.StartRow, StartCol: in.StartCol, Values: in.Values, ExpectedVersion: g.ExpectedVersion, IdempotencyKey: g.IdempotencyKey})
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, noteWrite(res.NoteWritten))
}

// GetCellsRequest is GET /api/notes/{note_id}/tabs/{tab_id}/cells.
type GetCellsRequest struct {
	TabRequest
	SheetID string `query:"sheet_id" json:"-" description:"The sheet (default: the tab's first)"`
	Row     int    `query:"row" json:"-" minimum:"0" default:"0"`
	Col     int    `query:"col" json:"-" minimum:"0" default:"0"`
	Rows    *int   `query:"rows" json:"-" minimum:"1" maximum:"100" default:"100"`
	Cols    *int   `query:"cols" json:"-" minimum:"1" maximum:"100" default:"100"`
}

var getCellsDoc = doc{summary: "A rectangle of at most 100 × 100 cells", req: GetCellsRequest{}, resp: service.SheetRange{}}

func (h *handler) getCells(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[GetCellsRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rows, cols := 100, 100
	if in.Rows != nil {
		rows = *in.Rows
	}
	if in.Cols != nil {
		cols = *in.Cols
	}
	res, err := h.svc.ReadSheetRange(r.Context(), c.svc, service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: in.NoteID, TabID: in.TabID},
		SheetID: in.SheetID, StartRow: in.Row, StartCol: in.Col, Rows: rows, Cols: cols})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, res)
}

// sourceExists is the answer to a page already attached: the source that
// holds it.
func sourceExists(res service.SourceAdded) *problem.Problem {
	return problem.New(CodeSourceExists, "url", SourceExistsDetail).
		With("source_id", res.SourceID).With("normalized_url", res.NormalizedURL).With("current_version", res.Version)
}
