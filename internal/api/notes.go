package api

import (
	"fmt"
	"net/http"
	"net/url"

	"foundry/internal/note"
	"foundry/internal/service"
)

// The Notes endpoints: people's (and scripts') reads and guarded writes.
// Each handler binds its request, calls the one use case of its act, and
// answers its result with the version's ETag.

// NoteSummary is one entry of GET /api/notes.
type NoteSummary struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Approved  bool   `json:"approved" description:"Connected access: agents with a grant can reach the Note"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updated_at" format:"date-time"`
}

// NoteList is GET /api/notes's answer.
type NoteList struct {
	Notes      []NoteSummary `json:"notes" nullable:"false"`
	NextCursor *string       `json:"next_cursor" description:"The cursor of the next page; null on the last"`
}

// DefaultPage is a REST list's page when the call gives no limit: as long
// as a page may be, since a person's list shows many at once.
const DefaultPage = service.MaxPage

// pageLimit is the page a REST list asks for: DefaultPage when the call
// gives none. The service reads 0 as its own default page; here 0 was sent,
// and is refused.
func pageLimit(limit *int) (int, error) {
	if limit == nil {
		return DefaultPage, nil
	}
	if *limit == 0 {
		return 0, invalid("limit", "must be between %d and %d (got 0); leave it out for a page of %d", service.MinPage, service.MaxPage, DefaultPage)
	}
	return *limit, nil
}

// nextCursor is a list's next_cursor: null on the last page.
func nextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}

// ListNotesRequest is GET /api/notes.
type ListNotesRequest struct {
	Query  string `query:"query" json:"-" maxLength:"200" description:"Part of the title, case-insensitive"`
	Cursor string `query:"cursor" json:"-" description:"next_cursor of the page before"`
	Limit  *int   `query:"limit" json:"-" minimum:"1" maximum:"50" default:"50"`
}

var listNotesDoc = doc{summary: "The Notes the caller can open, a page at a time", req: ListNotesRequest{}, resp: NoteList{}}

func (h *handler) listNotes(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ListNotesRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.ListNotes(r.Context(), c.svc, service.ListNotesArgs{Query: in.Query, Page: service.Page{Cursor: in.Cursor, Limit: limit}})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := NoteList{Notes: make([]NoteSummary, 0, len(res.Notes)), NextCursor: nextCursor(res.NextCursor)}
	for _, n := range res.Notes {
		out.Notes = append(out.Notes, NoteSummary{ID: n.NoteID, Title: n.Title, Approved: n.Approved, Version: n.Version, UpdatedAt: n.UpdatedAt})
	}
	writeJSON(w, http.StatusOK, out)
}

// NoteWrite is what every write of a Note answers: the Note, its version
// after the write, and the tabs the write changed.
type NoteWrite struct {
	ID            string   `json:"id"`
	Version       int64    `json:"version"`
	ChangedTabIDs []string `json:"changed_tab_ids" nullable:"false"`
}

func noteWrite(w service.NoteWritten) NoteWrite {
	return NoteWrite{ID: w.NoteID, Version: w.Version, ChangedTabIDs: w.ChangedTabIDs}
}

// NoteAnswer is what creating or changing a Note answers.
type NoteAnswer struct {
	NoteWrite
	Title    string `json:"title"`
	Approved bool   `json:"approved"`
}

func noteAnswer(n service.NoteCreated) NoteAnswer {
	return NoteAnswer{NoteWrite: noteWrite(n.NoteWritten), Title: n.Title, Approved: n.Approved}
}

// CreateNoteRequest is POST /api/notes.
type CreateNoteRequest struct {
	IdempotencyKey string  `header:"Idempotency-Key" json:"-" minLength:"8" maxLength:"128" description:"A resend with the same key answers the Note the first call made"`
	Title          *string `json:"title" required:"true" missing:"give the new Note's title"`
	Approved       *bool   `json:"approved,omitempty" description:"Switch connected access on at once"`
}

var createNoteDoc = doc{summary: "Create a Note", req: CreateNoteRequest{}, resp: NoteAnswer{}, status: http.StatusCreated, write: true}

func (h *handler) createNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[CreateNoteRequest](r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.CreateNote(r.Context(), c.svc, service.CreateNoteArgs{Title: *in.Title, Approved: deref(in.Approved), IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(res.NoteID))
	answer(w, http.StatusCreated, res.NoteWritten, noteAnswer(res))
}

// answer is a write's result with its ETag and whether it was replayed.
func answer(w http.ResponseWriter, status int, res service.NoteWritten, body any) {
	w.Header().Set("ETag", etag(res.Version))
	if res.Replayed {
		w.Header().Set(HeaderReplayed, "true")
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, body)
}

// NoteView is GET /api/notes/{note_id}'s answer.
type NoteView struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Approved bool          `json:"approved"`
	Version  int64         `json:"version"`
	Tabs     []note.TabRef `json:"tabs" nullable:"false"`
}

// NoteRequest names one Note.
type NoteRequest struct {
	NoteID string `path:"note_id" json:"-"`
}

var getNoteDoc = doc{summary: "A Note's tab strip and version (its ETag)", req: NoteRequest{}, resp: NoteView{}}

func (h *handler) getNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[NoteRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.ListNoteTabs(r.Context(), c.svc, in.NoteID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, NoteView{ID: res.NoteID, Title: res.Title, Approved: res.Approved, Version: res.Version, Tabs: res.Tabs})
}

// UpdateNoteRequest is PATCH /api/notes/{note_id}.
type UpdateNoteRequest struct {
	NoteRequest
	Precondition
	Title    *string `json:"title,omitempty"`
	Approved *bool   `json:"approved,omitempty" description:"Connected access (a person's act only)"`
}

var updateNoteDoc = doc{summary: "Rename a Note and/or switch its connected access", req: UpdateNoteRequest{}, resp: NoteAnswer{}, write: true}

func (h *handler) updateNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[UpdateNoteRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.UpdateNote(r.Context(), c.svc, service.UpdateNoteArgs{NoteID: in.NoteID, Title: in.Title, Approved: in.Approved, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, noteAnswer(res))
}

// precondition is what bindWrite reads a Guard from.
type precondition interface{ pre() *Precondition }

func (p *Precondition) pre() *Precondition { return p }

func (p *HeaderPrecondition) pre() *Precondition { return &Precondition{HeaderPrecondition: *p} }

// bindWrite binds a write's request and reads its Guard; a refusal is
// answered, and ok is false.
func bindWrite[T any, P interface {
	*T
	precondition
}](h *handler, w http.ResponseWriter, r *http.Request, optional bool) (*T, service.Guard, bool) {
	in, err := bind[T](r, optional)
	var g service.Guard
	if err == nil {
		g, err = P(in).pre().guard(r)
	}
	if err != nil {
		h.fail(w, r, err)
		return nil, service.Guard{}, false
	}
	return in, g, true
}

// NoteWriteRequest is a write on one Note that takes nothing else.
type NoteWriteRequest struct {
	NoteRequest
	Precondition
}

var deleteNoteDoc = doc{summary: fmt.Sprintf("Move a Note to the trash (a person's act): it leaves every list and agent's reach, and POST …/untrash brings it back within %d days", service.TrashDays), req: NoteWriteRequest{}, write: true}

func (h *handler) deleteNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[NoteWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteNote(r.Context(), c.svc, service.NoteArgs{NoteID: in.NoteID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res, nil)
}

// TabRequest names one tab of one Note.
type TabRequest struct {
	NoteID string `path:"note_id" json:"-"`
	TabID  string `path:"tab_id" json:"-"`
}

// GetTabRequest is GET /api/notes/{note_id}/tabs/{tab_id}.
type GetTabRequest struct {
	TabRequest
	Cells string `query:"cells" json:"-" enum:"all,none" default:"all" description:"none: a sheet tab's sheets without their cells (their rows and cols), read in blocks with …/cells"`
}

// TabSheet is one sheet of a sheet tab: its cells (none when the tab is
// read with ?cells=none, for GET …/cells to read in blocks) and its size.
type TabSheet struct {
	SheetID string  `json:"sheet_id"`
	Name    string  `json:"name"`
	Cells   [][]any `json:"cells" nullable:"false" description:"Its rows of cells; empty with ?cells=none"`
	Rows    int     `json:"rows"`
	Cols    int     `json:"cols" description:"Of its widest row"`
	// Values are the formula cells' computed values beside Cells (none
	// with ?cells=none).
	Values  [][]any           `json:"values,omitempty"`
	Widths  map[string]int    `json:"widths,omitempty" description:"Column widths in pixels, by column index (\"0\" is A)"`
	Formats []note.CellFormat `json:"formats,omitempty" description:"Number formats over ranges, a later one winning where they overlap"`
}

// TabView is one tab's data and the Note version; a sheet tab's sheets
// say their size, and with ?cells=none hold no cells.
type TabView struct {
	service.TabContent
	Sheets  []TabSheet `json:"sheets,omitempty"`
	TextRev *int64     `json:"text_rev,omitempty" description:"The markdown text's revision: what a live editor starts from (POST and GET …/text)"`
}

var getTabDoc = doc{summary: "One tab's data and the Note version", req: GetTabRequest{}, resp: TabView{}}

func (h *handler) getTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[GetTabRequest](r, true)
	if err == nil && in.Cells != "" && in.Cells != "all" && in.Cells != "none" {
		err = invalid("cells", "must be all or none; got %q", in.Cells)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.ReadNoteTab(r.Context(), c.svc, service.TabArgs{NoteID: in.NoteID, TabID: in.TabID})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, tabView(res, in.Cells != "none"))
}

func tabView(res service.TabContent, cells bool) TabView {
	out := TabView{TabContent: res, TextRev: res.TextRev}
	if res.Sheets == nil {
		return out
	}
	out.Sheets = make([]TabSheet, 0, len(res.Sheets))
	for _, s := range res.Sheets {
		cols := 0
		for _, row := range s.Cells {
			cols = max(cols, len(row))
		}
		ts := TabSheet{SheetID: s.ID, Name: s.Name, Cells: [][]any{}, Rows: len(s.Cells), Cols: cols, Widths: s.Widths, Formats: s.Formats}
		if cells && s.Cells != nil {
			ts.Cells, ts.Values = s.Cells, s.Values
		}
		out.Sheets = append(out.Sheets, ts)
	}
	return out
}

// PutTextRequest is PUT /api/notes/{note_id}/tabs/{tab_id}/text.
type PutTextRequest struct {
	TabRequest
	Precondition
	Text *string `json:"text" required:"true" missing:"give the whole text of the markdown tab"`
}

var putTextDoc = doc{summary: "Replace the markdown tab's text", req: PutTextRequest{}, resp: NoteWrite{}, write: true}

func (h *handler) putText(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[PutTextRequest](h, w, r, false)
	if !ok {
		return
	}
	h.editTab(w, r, c, http.StatusOK, service.EditTabArgs{NoteID: in.NoteID, TabID: in.TabID, Operation: "replace_text", Text: in.Text}, g,
		func(res service.TabEdited) any { return noteWrite(res.NoteWritten) })
}

// editTab runs one edit operation on a tab, the act agents call as
// edit_note_tab, and answers body(result).
func (h *handler) editTab(w http.ResponseWriter, r *http.Request, c *caller, status int, a service.EditTabArgs, g service.Guard, body func(service.TabEdited) any) {
	a.ExpectedVersion, a.IdempotencyKey = g.ExpectedVersion, g.IdempotencyKey
	res, err := h.svc.EditNoteTab(r.Context(), c.svc, a)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, status, res.NoteWritten, body(res))
}

// Who is who made a version: a person, or a token (a personal access
// token or a connected OAuth client).
type Who struct {
	Kind string `json:"kind" enum:"person,token,client,unknown"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// VersionEntry is one version of GET /api/notes/{note_id}/history.
type VersionEntry struct {
	Version int64    `json:"version"`
	Kind    string   `json:"kind" description:"What the write was: tab_edited, restored, …"`
	Who     Who      `json:"who"`
	At      string   `json:"at" format:"date-time"`
	Changed []string `json:"changed" nullable:"false" description:"The tabs it changed"`
	Bytes   int64    `json:"bytes" description:"What history stores for it"`
}

func who(a service.Actor) Who { return Who{Kind: a.Kind, ID: a.ID, Name: a.Name} }

func versionEntries(vs []service.VersionEntry) []VersionEntry {
	out := make([]VersionEntry, 0, len(vs))
	for _, v := range vs {
		out = append(out, VersionEntry{Version: v.Version, Kind: v.Kind, Who: who(v.Who), At: v.At.UTC().Format(timeMillis), Changed: v.Changed, Bytes: v.Bytes})
	}
	return out
}

const timeMillis = "2006-01-02T15:04:05.000Z"

// RestoreRequest is POST /api/notes/{note_id}/restore.
type RestoreRequest struct {
	NoteRequest
	Precondition
	Version *int64 `json:"version" required:"true" minimum:"1" missing:"give the version to restore (see the Note's history)"`
}

// Restored is what a restore answers.
type Restored struct {
	NoteWrite
	RestoredVersion int64 `json:"restored_version"`
}

var restoreDoc = doc{summary: "Make an old version current again, as a new version", req: RestoreRequest{}, resp: Restored{}, write: true}

func (h *handler) restore(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[RestoreRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.RestoreVersion(r.Context(), c.svc, service.RestoreArgs{NoteID: in.NoteID, Version: *in.Version, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, Restored{NoteWrite: noteWrite(res.NoteWritten), RestoredVersion: res.RestoredVersion})
}
