package api

import (
	"net/http"
	"net/url"

	"foundry/internal/room"
	"foundry/internal/service"
	"foundry/internal/snippet"
)

// The Rooms endpoints: the cloud Rooms of the workspace, a Room's launcher
// (rename, reorder, remove an app: people's acts, guarded by the Room's
// version), and the compiled bundle of an approved snippet app. Every
// person of the workspace sees the Rooms and runs their apps; the Room's
// owner or a workspace owner changes the launcher.

// PersonRef names a person.
type PersonRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// RoomSummary is one entry of GET /api/rooms.
type RoomSummary struct {
	RoomID    string    `json:"room_id"`
	Name      string    `json:"name"`
	Owner     PersonRef `json:"owner"`
	Apps      int       `json:"apps"`
	Pending   int       `json:"pending"`
	Version   int64     `json:"version"`
	CanManage bool      `json:"can_manage"`
}

// LauncherApp is one app of a Room's launcher, in launcher order.
type LauncherApp struct {
	InstanceID string        `json:"instance_id"`
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	Position   int           `json:"position"`
	ProposalID string        `json:"proposal_id"`
	BuildState string        `json:"build_state"`
	Repository *LauncherRepo `json:"repository,omitempty"`
	AddedAt    string        `json:"added_at"`
}

// LauncherRepo is the pinned version a repository app runs.
type LauncherRepo struct {
	RepositoryID string `json:"repository_id"`
	Name         string `json:"name"`
	VersionID    string `json:"version_id"`
	BuildState   string `json:"build_state"`
}

// RoomView is GET /api/rooms/{room_id}'s answer.
type RoomView struct {
	RoomID    string        `json:"room_id"`
	Name      string        `json:"name"`
	Owner     PersonRef     `json:"owner"`
	Version   int64         `json:"version"`
	CanManage bool          `json:"can_manage"`
	Apps      []LauncherApp `json:"apps" nullable:"false"`
}

// Bundle is GET /api/rooms/{room_id}/apps/{instance_id}/bundle's answer:
// the compiled snippet (JS and CSS empty when it has compile errors, which
// the launcher shows instead of running it).
type Bundle struct {
	Hash     string                `json:"hash"`
	JS       string                `json:"js"`
	CSS      string                `json:"css"`
	OK       bool                  `json:"ok"`
	Errors   []room.CompileMessage `json:"errors" nullable:"false"`
	Warnings []room.CompileMessage `json:"warnings" nullable:"false"`
}

func personRef(a service.Actor) PersonRef {
	name := a.Name
	if a.Kind == "unknown" || name == "" || name == "user:"+a.ID {
		name = "a person no longer in this workspace"
	}
	return PersonRef{ID: a.ID, Name: name}
}

var listRoomsDoc = doc{summary: "The workspace's cloud Rooms", resp: RoomsList{}}

// RoomsList is GET /api/rooms's answer.
type RoomsList struct {
	Rooms []RoomSummary `json:"rooms" nullable:"false"`
}

func (h *handler) listRooms(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	out := RoomsList{Rooms: []RoomSummary{}}
	cursor := ""
	// Every page: a workspace has tens of Rooms, not thousands; the pages
	// are bounded so that a bug cannot loop.
	for range 1000 {
		page, err := h.svc.ListRooms(r.Context(), c.svc, service.Page{Cursor: cursor, Limit: service.MaxPage})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		for _, x := range page.Rooms {
			out.Rooms = append(out.Rooms, RoomSummary{RoomID: x.RoomID, Name: x.Name, Owner: personRef(x.Owner), Apps: x.Apps, Pending: x.Pending, Version: x.Version, CanManage: x.CanManage})
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// RoomRequest names one Room.
type RoomRequest struct {
	RoomID string `path:"room_id" json:"-"`
}

var getRoomDoc = doc{summary: "A Room and its launcher (ETag: the Room's version)", req: RoomRequest{}, resp: RoomView{}}

func (h *handler) getRoom(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[RoomRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	x, err := h.svc.ReadRoom(r.Context(), c.svc, in.RoomID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := RoomView{RoomID: x.RoomID, Name: x.Name, Owner: personRef(x.Owner), Version: x.Version, CanManage: x.CanManage, Apps: []LauncherApp{}}
	for i, a := range x.Apps {
		app := LauncherApp{InstanceID: a.InstanceID, Name: a.Name, Kind: a.Kind, Position: i, ProposalID: a.ProposalID, BuildState: a.Build.State, AddedAt: a.AddedAt}
		if a.Kind == room.KindRepository {
			app.Repository = &LauncherRepo{RepositoryID: a.RepositoryID, Name: a.RepositoryName, VersionID: a.VersionID, BuildState: a.Build.State}
		}
		out.Apps = append(out.Apps, app)
	}
	w.Header().Set("ETag", etag(out.Version))
	writeJSON(w, http.StatusOK, out)
}

// CreateRoomRequest is POST /api/rooms.
type CreateRoomRequest struct {
	Name *string `json:"name" required:"true" missing:"give the new Room's name"`
}

var createRoomDoc = doc{summary: "Create a cloud Room (a person's act; the person owns it)", req: CreateRoomRequest{}, resp: RoomSummary{}, status: http.StatusCreated, write: true}

func (h *handler) createRoom(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[CreateRoomRequest](r, false)
	var x service.RoomSummary
	if err == nil {
		x, err = h.svc.CreateRoom(r.Context(), c.svc, *in.Name)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"rooms/"+url.PathEscape(x.RoomID))
	w.Header().Set("ETag", etag(x.Version))
	writeJSON(w, http.StatusCreated, RoomSummary{RoomID: x.RoomID, Name: x.Name, Owner: personRef(x.Owner), Version: x.Version, CanManage: x.CanManage})
}

// RoomWriteRequest is a change of one Room.
type RoomWriteRequest struct {
	RoomRequest
	Precondition
}

// RenameRoomRequest is PATCH /api/rooms/{room_id}.
type RenameRoomRequest struct {
	RoomWriteRequest
	Name *string `json:"name" required:"true" missing:"give the Room's new name"`
}

var renameRoomDoc = doc{summary: "Rename a Room (the Room's owner or a workspace owner)", req: RenameRoomRequest{}, resp: service.RoomWritten{}, write: true}

func (h *handler) renameRoom(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[RenameRoomRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.RenameRoom(r.Context(), c.svc, service.RoomRenameArgs{RoomID: in.RoomID, Name: *in.Name, Guard: g})
	h.roomWritten(w, r, res, err)
}

var deleteRoomDoc = doc{summary: "Delete a Room: its apps stop and leave the launcher, its pending proposals are declined (the Room's owner or a workspace owner)", req: RoomWriteRequest{}, write: true}

func (h *handler) deleteRoom(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[RoomWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	if _, err := h.svc.DeleteRoom(r.Context(), c.svc, service.RoomArgs{RoomID: in.RoomID, Guard: g}); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// AppRequest names one app of one Room.
type AppRequest struct {
	RoomID     string `path:"room_id" json:"-"`
	InstanceID string `path:"instance_id" json:"-"`
}

// AppWriteRequest is a change of one launcher app.
type AppWriteRequest struct {
	AppRequest
	Precondition
}

// UpdateAppRequest is PATCH /api/rooms/{room_id}/apps/{instance_id}.
type UpdateAppRequest struct {
	AppWriteRequest
	Name     *string `json:"name,omitempty"`
	Position *int    `json:"position,omitempty" minimum:"0" description:"0-based place among the launcher's apps"`
}

var updateAppDoc = doc{summary: "Rename and/or move a launcher app (the Room's owner or a workspace owner)", req: UpdateAppRequest{}, resp: service.RoomWritten{}, write: true}

func (h *handler) updateApp(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[UpdateAppRequest](h, w, r, false)
	if !ok {
		return
	}
	res, err := h.svc.EditApp(r.Context(), c.svc, service.EditAppArgs{RoomID: in.RoomID, InstanceID: in.InstanceID, Name: in.Name, Position: in.Position, Guard: g})
	h.roomWritten(w, r, res, err)
}

var removeAppDoc = doc{summary: "Take an app out of the launcher (the Room's owner or a workspace owner)", req: AppWriteRequest{}, resp: service.RoomWritten{}, write: true}

func (h *handler) removeApp(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[AppWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.RemoveApp(r.Context(), c.svc, service.AppWriteArgs{RoomID: in.RoomID, InstanceID: in.InstanceID, Guard: g})
	h.roomWritten(w, r, res, err)
}

func (h *handler) roomWritten(w http.ResponseWriter, r *http.Request, res service.RoomWritten, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, res)
}

var bundleDoc = doc{summary: "The compiled code of an approved snippet app", req: AppRequest{}, resp: Bundle{}}

func (h *handler) appBundle(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[AppRequest](r, true)
	var res snippet.Result
	if err == nil {
		res, err = h.svc.Bundle(r.Context(), c.svc, service.AppArgs{RoomID: in.RoomID, InstanceID: in.InstanceID})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("ETag", `"`+res.Hash+`"`)
	writeJSON(w, http.StatusOK, Bundle{Hash: res.Hash, JS: res.JS, CSS: res.CSS, OK: res.OK(), Errors: nonNilMsgs(res.Errors), Warnings: nonNilMsgs(res.Warnings)})
}

func nonNilMsgs(ms []room.CompileMessage) []room.CompileMessage {
	if ms == nil {
		return []room.CompileMessage{}
	}
	return ms
}
