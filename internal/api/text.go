package api

import (
	"encoding/json"
	"net/http"

	"foundry/internal/service"
)

// Live co-editing of the markdown text (the protocol of @codemirror/collab)
// and presence. An editor loads the markdown tab with its text_rev, pushes
// its change sets based on the revision it has, and pulls the updates
// after it when the live stream says the text changed.

// PullTextRequest is GET /api/notes/{note_id}/text.
type PullTextRequest struct {
	NoteRequest
	After *int64 `query:"after" json:"-" required:"true" minimum:"0" description:"The revision your editor has (the markdown tab's text_rev, or the rev of the last update it took)"`
}

var pullTextDoc = doc{summary: "The updates of the markdown text after a revision (a live editor's pull)", req: PullTextRequest{}, resp: service.TextUpdates{}}

func (h *handler) pullText(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[PullTextRequest](r, true)
	var res service.TextUpdates
	if err == nil {
		res, err = h.svc.TextUpdatesAfter(r.Context(), c.svc, in.NoteID, *in.After)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, res)
}

// PushTextRequest is POST /api/notes/{note_id}/text.
type PushTextRequest struct {
	NoteRequest
	Rev      *int64            `json:"rev" required:"true" minimum:"0" missing:"give the revision your change sets are based on"`
	ClientID string            `json:"client_id" required:"true" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9_-]+$" description:"Your editor's ID, the same for all its pushes"`
	Updates  []json.RawMessage `json:"updates" required:"true" minItems:"1" maxItems:"100" missing:"give the change sets to apply, in order" description:"Change sets in order, each as CodeMirror's ChangeSet.toJSON writes it"`
}

// TextPush is what a push answers.
type TextPush struct {
	NoteWrite
	Accepted bool  `json:"accepted" description:"False: the text moved on since rev; nothing was written: pull the updates after your revision, rebase, and push again"`
	Rev      int64 `json:"rev" description:"The text's revision now"`
}

var pushTextDoc = doc{summary: "Apply a live editor's change sets to the markdown text, when based on its current revision", req: PushTextRequest{}, resp: TextPush{}}

func (h *handler) pushText(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[PushTextRequest](r, false)
	var res service.TextPushed
	if err == nil {
		res, err = h.svc.PushText(r.Context(), c.svc, service.PushTextArgs{NoteID: in.NoteID, Rev: *in.Rev, ClientID: in.ClientID, Updates: in.Updates})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, TextPush{NoteWrite: noteWrite(res.NoteWritten), Accepted: res.Accepted, Rev: res.Rev})
}

// PresenceRequest is POST /api/notes/{note_id}/presence.
type PresenceRequest struct {
	NoteRequest
	ClientID  string             `json:"client_id" required:"true" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9_-]+$" description:"Your editor's ID"`
	TabID     string             `json:"tab_id" description:"The tab you are in; empty: you left the Note"`
	Rev       int64              `json:"rev" minimum:"0" description:"The text revision selection is in (markdown)"`
	Selection *service.Selection `json:"selection,omitempty" description:"Your cursor and selection in the markdown text"`
	Cell      *service.CellRef   `json:"cell,omitempty" description:"Your selected cell (a sheet)"`
	Slide     *service.SlideRef  `json:"slide,omitempty" description:"The slide field you edit"`
}

var presenceDoc = doc{summary: "Say where you are in a Note: the others watching it see it on their live streams for 30 s (not stored); answers who is there now", req: PresenceRequest{}, resp: LivePresence{}}

func (h *handler) presence(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[PresenceRequest](r, false)
	var peers []service.Peer
	if err == nil {
		peers, err = h.svc.SetPresence(r.Context(), c.svc, service.PresenceArgs{NoteID: in.NoteID, ClientID: in.ClientID, TabID: in.TabID, Rev: in.Rev,
			Selection: in.Selection, Cell: in.Cell, Slide: in.Slide})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, LivePresence{Topic: service.NoteTopic(in.NoteID), NoteID: in.NoteID, Peers: peers})
}

// LivePresence is the data of a presence event of GET /api/live.
type LivePresence struct {
	Topic  string         `json:"topic"`
	NoteID string         `json:"note_id"`
	Peers  []service.Peer `json:"peers" nullable:"false"`
}
