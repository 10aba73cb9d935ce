package api

import (
	"errors"
	"fmt"
	"net/http"

	"foundry/internal/problem"
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
	Apps      []LauncherApp `json:"apps"`
}

// Bundle is GET /api/rooms/{room_id}/apps/{instance_id}/bundle's answer:
// the compiled snippet (JS and CSS empty when it has compile errors, which
// the launcher shows instead of running it).
type Bundle struct {
	Hash     string                `json:"hash"`
	JS       string                `json:"js"`
	CSS      string                `json:"css"`
	OK       bool                  `json:"ok"`
	Errors   []room.CompileMessage `json:"errors"`
	Warnings []room.CompileMessage `json:"warnings"`
}

// people names the workspace's people by ID.
func (h *handler) peopleNames(r *http.Request, ws string) (map[string]string, error) {
	users, err := h.st.Users(r.Context(), ws)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, u := range users {
		out[u.ID] = firstNonEmpty(u.Name, u.Email)
	}
	return out, nil
}

func personRef(id string, names map[string]string) PersonRef {
	name, ok := names[id]
	if !ok {
		name = "a person no longer in this workspace"
	}
	return PersonRef{ID: id, Name: name}
}

func (h *handler) listRooms(w http.ResponseWriter, r *http.Request, c *caller) {
	if !noQuery(w, r, "") {
		return
	}
	rooms, err := h.svc.PeopleRooms(r.Context(), c.svc)
	if err != nil {
		h.roomFail(w, r, err)
		return
	}
	names, err := h.peopleNames(r, c.ws)
	if err != nil {
		h.internal(w, r, err)
		return
	}
	out := []RoomSummary{}
	for _, x := range rooms {
		out = append(out, RoomSummary{RoomID: x.Resource.ID, Name: x.Resource.Title, Owner: personRef(x.Resource.Owner, names),
			Apps: len(room.Launcher(&x.Doc)), Pending: x.Pending, Version: x.Resource.Version, CanManage: x.CanManage})
	}
	writeJSON(w, http.StatusOK, map[string]any{"rooms": out})
}

// noQuery refuses any query parameter but allowed ("" : none).
func noQuery(w http.ResponseWriter, r *http.Request, allowed string) bool {
	for k, v := range r.URL.Query() {
		if k != allowed || allowed == "" {
			what := "takes no parameters"
			if allowed != "" {
				what = "takes only " + allowed
			}
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is not a parameter of %s %s, which %s", r.Method, r.URL.Path, what))
			return false
		}
		if len(v) > 1 {
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is given %d times: give it once", len(v)))
			return false
		}
	}
	return true
}

func (h *handler) getRoom(w http.ResponseWriter, r *http.Request, c *caller) {
	if !noQuery(w, r, "") {
		return
	}
	id, err := pathID(r, "room_id")
	if err != nil {
		h.roomFail(w, r, err)
		return
	}
	x, err := h.svc.PeopleRoomOf(r.Context(), c.svc, id)
	if err != nil {
		h.roomFail(w, r, err)
		return
	}
	names, err := h.peopleNames(r, c.ws)
	if err != nil {
		h.internal(w, r, err)
		return
	}
	repoNames := map[string]string{}
	out := RoomView{RoomID: x.Resource.ID, Name: x.Resource.Title, Owner: personRef(x.Resource.Owner, names), Version: x.Resource.Version, CanManage: x.CanManage, Apps: []LauncherApp{}}
	for i, a := range room.Launcher(&x.Doc) {
		app := LauncherApp{InstanceID: a.InstanceID, Name: a.Name, Kind: a.Kind, Position: i, ProposalID: a.ProposalID, BuildState: a.Build.State, AddedAt: a.AddedAt}
		if a.Kind == room.KindRepository {
			name, ok := repoNames[a.RepositoryID]
			if !ok {
				name, _ = h.svc.RepositoryName(r.Context(), c.ws, a.RepositoryID)
				repoNames[a.RepositoryID] = name
			}
			app.Repository = &LauncherRepo{RepositoryID: a.RepositoryID, Name: name, VersionID: a.VersionID, BuildState: a.Build.State}
		}
		out.Apps = append(out.Apps, app)
	}
	w.Header().Set("ETag", etag(out.Version))
	writeJSON(w, http.StatusOK, out)
}

type appBody struct {
	Name            *string `json:"name"`
	Position        *int    `json:"position"`
	ExpectedVersion *int64  `json:"expected_version"`
}

// roomPrecondition is the Room version a launcher change is based on:
// If-Match or the body's expected_version (0: neither, which the service
// answers 428).
func roomPrecondition(r *http.Request, body *int64) (int64, error) {
	hv, err := ifMatch(r)
	if err != nil {
		var pr *problem.Problem
		if errors.As(err, &pr) {
			pr.Message = fmt.Sprintf("%s: send If-Match: \"<version>\" with the ETag of GET /api/rooms/%s", problem.Excerpt(r.Header.Get("If-Match")), problem.Excerpt(r.PathValue("room_id")))
		}
		return 0, err
	}
	if body != nil && *body < 1 {
		return 0, problem.New(problem.Invalid, "expected_version", "must be the Room version the change is based on (≥ 1); got %d", *body)
	}
	switch {
	case body != nil && hv != 0 && *body != hv:
		return 0, problem.New(problem.Invalid, "If-Match", "If-Match says version %d and expected_version says %d: send one of them, or both the same", hv, *body)
	case hv != 0:
		return hv, nil
	case body != nil:
		return *body, nil
	}
	return 0, nil
}

func (h *handler) appWrite(w http.ResponseWriter, r *http.Request, c *caller, remove bool) {
	roomID, err := pathID(r, "room_id")
	var instanceID string
	if err == nil {
		instanceID, err = pathID(r, "instance_id")
	}
	var b appBody
	if err == nil {
		err = decodeBody(r, &b, remove)
	}
	var expected int64
	if err == nil {
		expected, err = roomPrecondition(r, b.ExpectedVersion)
	}
	var res service.RoomWritten
	if err == nil {
		if remove {
			if b.Name != nil || b.Position != nil {
				err = problem.New(problem.Invalid, "body", "DELETE takes only expected_version: to rename or move an app, PATCH it")
			} else {
				res, err = h.svc.PeopleRemoveApp(r.Context(), c.svc, roomID, instanceID, expected)
			}
		} else {
			res, err = h.svc.PeopleEditApp(r.Context(), c.svc, roomID, instanceID, b.Name, b.Position, expected)
		}
	}
	if err != nil {
		h.roomFail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) updateApp(w http.ResponseWriter, r *http.Request, c *caller) {
	h.appWrite(w, r, c, false)
}
func (h *handler) removeApp(w http.ResponseWriter, r *http.Request, c *caller) {
	h.appWrite(w, r, c, true)
}

func (h *handler) appBundle(w http.ResponseWriter, r *http.Request, c *caller) {
	if !noQuery(w, r, "") {
		return
	}
	roomID, err := pathID(r, "room_id")
	var instanceID string
	if err == nil {
		instanceID, err = pathID(r, "instance_id")
	}
	var res snippet.Result
	if err == nil {
		res, err = h.svc.PeopleBundle(r.Context(), c.svc, roomID, instanceID)
	}
	if err != nil {
		h.roomFail(w, r, err)
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

// roomFail answers err for the Rooms and proposals endpoints: a person who
// may not manage the Room is 403, a second decision 409, a stale Room
// version 412 with what to do next; the rest as every endpoint does.
func (h *handler) roomFail(w http.ResponseWriter, r *http.Request, err error) {
	var pr *problem.Problem
	if errors.As(err, &pr) {
		switch pr.Code {
		case service.NotReviewer:
			writeProblem(w, http.StatusForbidden, pr)
			return
		case service.AlreadyDecided:
			delete(pr.Details, "decided_by_actor")
			writeProblem(w, http.StatusConflict, pr)
			return
		case problem.Conflict:
			if r.Header.Get("If-Match") != "" {
				pr.Field = "If-Match"
			}
			if cur, ok := pr.Details["current_version"].(int64); ok {
				pr.Message += fmt.Sprintf(": read the Room again (GET /api/rooms/%s) and redo the change on version %d", problem.Excerpt(r.PathValue("room_id")), cur)
			}
			writeProblem(w, http.StatusPreconditionFailed, pr)
			return
		}
	}
	h.fail(w, r, err)
}
