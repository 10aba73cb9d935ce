package api

import (
	"net/http"
	"net/url"

	"foundry/internal/service"
)

// The trash: deleted Notes, kept service.TrashDays days, restored by
// POST …/untrash (a version's restore is POST …/restore); and duplicating
// a Note. Each is the use case the CLI's notes trash, untrash and
// duplicate call.

// TrashedNote is one entry of GET /api/trash.
type TrashedNote struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Version   int64  `json:"version" description:"The Note's version in the trash: expected_version of its untrash"`
	DeletedAt string `json:"deleted_at" format:"date-time"`
	DeletedBy Who    `json:"deleted_by"`
	PurgeAt   string `json:"purge_at" format:"date-time" description:"When the Note is removed for good: restore it before"`
}

// TrashList is GET /api/trash's answer.
type TrashList struct {
	Notes      []TrashedNote `json:"notes" nullable:"false"`
	NextCursor *string       `json:"next_cursor" description:"The cursor of the next page; null on the last"`
	KeepDays   int           `json:"keep_days" description:"How many days the trash keeps a deleted Note"`
}

// ListTrashRequest is GET /api/trash.
type ListTrashRequest struct {
	Cursor string `query:"cursor" json:"-" description:"next_cursor of the page before"`
	Limit  *int   `query:"limit" json:"-" minimum:"1" maximum:"50" default:"50"`
}

var listTrashDoc = doc{summary: "The deleted Notes the trash keeps, restorable until their purge date (a person's view)", req: ListTrashRequest{}, resp: TrashList{}}

func (h *handler) listTrash(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ListTrashRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.TrashedNotes(r.Context(), c.svc, service.Page{Cursor: in.Cursor, Limit: limit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := TrashList{Notes: make([]TrashedNote, 0, len(res.Notes)), NextCursor: nextCursor(res.NextCursor), KeepDays: service.TrashDays}
	for _, n := range res.Notes {
		out.Notes = append(out.Notes, TrashedNote{ID: n.NoteID, Title: n.Title, Version: n.Version, DeletedBy: who(n.DeletedBy),
			DeletedAt: n.DeletedAt.Format("2006-01-02T15:04:05Z"), PurgeAt: n.PurgeAt.Format("2006-01-02T15:04:05Z")})
	}
	writeJSON(w, http.StatusOK, out)
}

var untrashNoteDoc = doc{summary: "Restore a Note from the trash as it was when deleted (a person's act); without a version, whatever version the trash holds",
	req: NoteWriteRequest{}, resp: NoteAnswer{}, write: true}

func (h *handler) untrashNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[NoteWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.UntrashNote(r.Context(), c.svc, service.NoteArgs{NoteID: in.NoteID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusOK, res.NoteWritten, NoteAnswer{NoteWrite: noteWrite(res.NoteWritten), Title: res.Title, Approved: res.Approved})
}

// DuplicateNoteRequest is POST /api/notes/{note_id}/duplicate.
type DuplicateNoteRequest struct {
	NoteRequest
	IdempotencyKey string `header:"Idempotency-Key" json:"-" minLength:"8" maxLength:"128" description:"A resend with the same key answers the copy the first call made"`
}

var duplicateNoteDoc = doc{summary: "Copy a Note (tabs, content and files) into a new Note \"Copy of TITLE\" with a history of its own (a person's act)",
	req: DuplicateNoteRequest{}, resp: NoteAnswer{}, status: http.StatusCreated}

func (h *handler) duplicateNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[DuplicateNoteRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.DuplicateNote(r.Context(), c.svc, service.NoteArgs{NoteID: in.NoteID, Guard: service.Guard{IdempotencyKey: in.IdempotencyKey}})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(res.NoteID))
	answer(w, http.StatusCreated, res.NoteWritten, noteAnswer(res))
}
