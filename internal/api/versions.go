package api

import (
	"net/http"

	"foundry/internal/note"
	"foundry/internal/service"
)

// One version of a Note, read-only: its tab strip, and each tab's data, as
// they were at that version. The strip's ETag is the Note's current
// version, the one a restore is based on.

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
