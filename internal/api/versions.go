package api

import (
	"net/http"
	"strconv"

	"foundry/internal/note"
	"foundry/internal/problem"
)

// One version of a Note, read-only: its tab strip, and each tab's data, as
// they were at that version. The strip's ETag is the Note's current
// version, the one a restore is based on.

// VersionView is GET /api/notes/{id}/versions/{version}'s answer.
type VersionView struct {
	ID             string        `json:"id"`
	Title          string        `json:"title"`
	Version        int64         `json:"version"`         // the version shown
	CurrentVersion int64         `json:"current_version"` // the Note's version now
	Tabs           []note.TabRef `json:"tabs"`
}

// versionParam reads the path's version: a whole number of at least 1.
func versionParam(r *http.Request) (int64, error) {
	v := r.PathValue("version")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || len(v) > 19 || n < 1 {
		return 0, problem.New(problem.Invalid, "version", "must be a version number of the Note, a whole number from 1 (see GET /api/notes/{id}/history); got %q", problem.Excerpt(v))
	}
	return n, nil
}

func (h *handler) getVersion(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := noteID(r)
	var v int64
	if err == nil {
		v, err = versionParam(r)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cur, d, err := h.svc.PeopleNoteAt(r.Context(), c.svc, id, v)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(cur.Version))
	writeJSON(w, http.StatusOK, VersionView{ID: cur.ID, Title: d.Title, Version: v, CurrentVersion: cur.Version, Tabs: note.Refs(&d)})
}

func (h *handler) getVersionTab(w http.ResponseWriter, r *http.Request, c *caller) {
	id, tab, err := noteAndTab(r)
	var v int64
	if err == nil {
		v, err = versionParam(r)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.PeopleReadTabAt(r.Context(), c.svc, id, v, tab)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
