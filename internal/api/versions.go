package api

import (
	"net/http"

	"foundry/internal/note"
	"foundry/internal/service"
)

// A Note's history: its versions a page at a time, newest first; one
// version, read-only: its tab strip, and each tab's data, as they were at
// that version (the strip's ETag is the Note's current version, the one a
// restore is based on); and what a version changed.

// HistoryRequest is GET /api/notes/{note_id}/history.
type HistoryRequest struct {
	NoteRequest
	Cursor string `query:"cursor" json:"-" description:"next_cursor of the page before: the versions older than it"`
	Limit  *int   `query:"limit" json:"-" minimum:"1" maximum:"50" default:"50"`
}

// History is GET /api/notes/{note_id}/history's answer: one page of
// versions, newest first.
type History struct {
	ID         string         `json:"id"`
	Version    int64          `json:"version" description:"The Note's version now"`
	Versions   []VersionEntry `json:"versions" nullable:"false" description:"Newest first"`
	NextCursor *string        `json:"next_cursor" description:"The cursor of the page of older versions; null on the page of version 1"`
}

var historyDoc = doc{summary: "A Note's versions, newest first, a page at a time, with who wrote each", req: HistoryRequest{}, resp: History{}}

func (h *handler) history(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[HistoryRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.NoteHistory(r.Context(), c.svc, service.HistoryArgs{NoteID: in.NoteID, Page: service.Page{Cursor: in.Cursor, Limit: limit}})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, History{ID: res.NoteID, Version: res.Version, Versions: versionEntries(res.Versions), NextCursor: nextCursor(res.NextCursor)})
}

// VersionView is GET /api/notes/{note_id}/versions/{version}'s answer.
type VersionView struct {
	ID             string        `json:"id"`
	Title          string        `json:"title"`
	Version        int64         `json:"version" description:"The version shown"`
	CurrentVersion int64         `json:"current_version" description:"The Note's version now"`
	Tabs           []note.TabRef `json:"tabs" nullable:"false"`
}

// VersionRequest names one version of one Note.
type VersionRequest struct {
	NoteRequest
	Version int64 `path:"version" json:"-" minimum:"1"`
}

var getVersionDoc = doc{summary: "A Note's tab strip as it was at one version", req: VersionRequest{}, resp: VersionView{}}

func (h *handler) getVersion(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[VersionRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.svc.ReadNoteAt(r.Context(), c.svc, in.NoteID, in.Version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(v.CurrentVersion))
	writeJSON(w, http.StatusOK, VersionView{ID: v.NoteID, Title: v.Title, Version: v.Version, CurrentVersion: v.CurrentVersion, Tabs: v.Tabs})
}

// VersionTabRequest names one tab of one version of one Note.
type VersionTabRequest struct {
	VersionRequest
	TabID string `path:"tab_id" json:"-"`
}

var getVersionTabDoc = doc{summary: "One tab as it was at one version", req: VersionTabRequest{}, resp: service.TabContent{}}

func (h *handler) getVersionTab(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[VersionTabRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.ReadTabAt(r.Context(), c.svc, in.NoteID, in.Version, in.TabID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// DiffRequest is GET /api/notes/{note_id}/versions/{version}/diff.
type DiffRequest struct {
	VersionRequest
	Since *int64 `query:"since" json:"-" minimum:"1" description:"Compare with this older version instead of the one before (what a run of versions changed together)"`
}

// VersionDiffView is what a version changed: its diff against the version
// before it, or against since.
type VersionDiffView struct {
	ID             string `json:"id"`
	Version        int64  `json:"version"`
	Since          int64  `json:"since" description:"The version compared with; 0 for a Note's first version"`
	CurrentVersion int64  `json:"current_version" description:"The Note's version now"`
	note.VersionDiff
}

var getVersionDiffDoc = doc{summary: "What a version changed: markdown lines, sheet cells, slides and items, bounded", req: DiffRequest{}, resp: VersionDiffView{}}

func (h *handler) getVersionDiff(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[DiffRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := service.DiffArgs{NoteID: in.NoteID, Version: in.Version}
	if in.Since != nil {
		if *in.Since < 1 { // the service reads 0 as the version before; here it was sent
			h.fail(w, r, invalid("since", "give a version ≥ 1 older than %d, or leave since out for the version before it; got %d", in.Version, *in.Since))
			return
		}
		a.Since = *in.Since
	}
	res, err := h.svc.DiffVersion(r.Context(), c.svc, a)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, VersionDiffView{ID: res.NoteID, Version: res.Version, Since: res.Since, CurrentVersion: res.CurrentVersion, VersionDiff: res.VersionDiff})
}
