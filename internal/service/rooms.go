package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/store"
)

// Rooms and their launchers: a Room created, the Rooms listed, one Room
// and its launcher read, one app's safe status. Agents see the Rooms of
// their grant; every person of the workspace sees every Room and runs its
// approved apps; a Room is managed by its owner or a workspace owner.

// CreateRoom is a person (or the operator) creating a cloud Room.
func (s *Service) CreateRoom(ctx context.Context, c Caller, name string) (RoomSummary, error) {
	if err := c.personOnly("creating a Room"); err != nil {
		return RoomSummary{}, err
	}
	name, err := room.CheckRoomName(name)
	if err != nil {
		return RoomSummary{}, err
	}
	id := store.NewID("room")
	_, err = s.guardedWrite(ctx, store.Mutation{
		Workspace: c.Workspace, Type: store.TypeRoom, ID: id, Actor: c.actor(),
		Create: &store.Resource{Owner: c.User, Title: name, Approved: true, Doc: mustJSON(room.New(name))},
		Apply: func(*store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "room_created", Result: mustJSON(map[string]any{"room_id": id})}, nil
		},
	})
	if err != nil {
		return RoomSummary{}, err
	}
	names, err := s.Actors(ctx, c.Workspace, []string{"user:" + c.User})
	if err != nil {
		return RoomSummary{}, err
	}
	return RoomSummary{RoomID: id, Name: name, Version: 1, Owner: names.Of("user:" + c.User), CanManage: true}, nil
}

// roomFor is Room id as c may see it, with its document.
func (s *Service) roomFor(ctx context.Context, c Caller, id string) (store.Resource, room.Doc, error) {
	if err := CheckID("room_id", id); err != nil {
		return store.Resource{}, room.Doc{}, err
	}
	r, err := s.Store.Get(ctx, store.TypeRoom, id)
	if err == nil && !c.reachesRoom(&r) {
		err = store.ErrNotFound
	}
	if err == nil {
		err = s.roomGone(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Resource{}, room.Doc{}, notFound(store.TypeRoom, id)
	}
	if err != nil {
		return store.Resource{}, room.Doc{}, err
	}
	var d room.Doc
	if err := json.Unmarshal(r.Doc, &d); err != nil {
		return store.Resource{}, room.Doc{}, fmt.Errorf("room %s: %w", id, err)
	}
	return r, d, nil
}

// RoomSummary is one entry of a list of Rooms.
type RoomSummary struct {
	RoomID  string `json:"room_id"`
	Name    string `json:"name"`
	Version int64  `json:"version"`
	// What a person's list also shows (an agent's answer leaves it out).
	Owner     Actor `json:"-"`
	Apps      int   `json:"-"` // apps in the launcher
	Pending   int   `json:"-"` // pending proposals, for one who manages it
	CanManage bool  `json:"-"`
}

// RoomList is a page of Rooms.
type RoomList struct {
	Rooms      []RoomSummary `json:"rooms"`
	Note       string        `json:"note"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// LocalRoomsNote is what every list of Rooms says of the Rooms it cannot
// hold.
const LocalRoomsNote = "Local Rooms are unavailable: they live on a person's device."

// ListRooms is a page of the cloud Rooms c reaches, by ID.
func (s *Service) ListRooms(ctx context.Context, c Caller, pg Page) (RoomList, error) {
	limit, err := pageLimit(pg.Limit)
	if err != nil {
		return RoomList{}, err
	}
	after, err := decodeCursor(pg.Cursor, "r")
	if err != nil {
		return RoomList{}, err
	}
	q := store.ListQuery{Workspace: c.Workspace, Type: store.TypeRoom, AfterID: after, Limit: limit + 1, WithDoc: !c.IsAgent(), Unmarked: store.KindRoomDeleted}
	if p, ok := c.Principal(); ok {
		q.IDs = p.Rooms
	}
	rows, err := s.Store.List(ctx, q)
	if err != nil {
		return RoomList{}, err
	}
	res := RoomList{Rooms: []RoomSummary{}, Note: LocalRoomsNote}
	if len(rows) > limit {
		rows = rows[:limit]
		res.NextCursor = encodeCursor("r", rows[limit-1].ID)
	}
	var pending map[string]int
	var owners ActorNames
	if !c.IsAgent() {
		if pending, err = s.pendingByRoom(ctx, c.Workspace); err != nil {
			return RoomList{}, err
		}
		if owners, err = s.owners(ctx, c.Workspace, rows); err != nil {
			return RoomList{}, err
		}
	}
	for _, r := range rows {
		x := RoomSummary{RoomID: r.ID, Name: r.Title, Version: r.Version}
		if !c.IsAgent() {
			var d room.Doc
			if err := json.Unmarshal(r.Doc, &d); err != nil {
				return RoomList{}, fmt.Errorf("room %s: %w", r.ID, err)
			}
			x.Owner, x.Apps, x.CanManage = owners.Of("user:"+r.Owner), len(room.Launcher(&d)), c.managesRoom(&r)
			if x.CanManage {
				x.Pending = pending[r.ID]
			}
		}
		res.Rooms = append(res.Rooms, x)
	}
	return res, nil
}

// owners names the owners of rows in one lookup.
func (s *Service) owners(ctx context.Context, ws string, rows []store.Resource) (ActorNames, error) {
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, "user:"+r.Owner)
	}
	return s.Actors(ctx, ws, ids)
}

// pendingByRoom counts the workspace's pending proposals by Room.
func (s *Service) pendingByRoom(ctx context.Context, ws string) (map[string]int, error) {
	ps, err := s.proposals(ctx, ws, "", room.StatusPending)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range ps {
		out[p.RoomID]++
	}
	return out, nil
}

// AppView is what may be seen of a launcher app: identity and state, never
// files, config, logs or secrets.
type AppView struct {
	InstanceID   string     `json:"instance_id"`
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	State        string     `json:"state"`
	AddedAt      string     `json:"added_at"`
	Build        room.Build `json:"build"`
	RepositoryID string     `json:"repository_id,omitempty"` // repository apps
	VersionID    string     `json:"version_id,omitempty"`
	// What a person's launcher also shows.
	ProposalID     string `json:"-"`
	RepositoryName string `json:"-"`
}

func appViews(apps []room.App) []AppView {
	out := make([]AppView, 0, len(apps))
	for _, a := range apps {
		v := AppView{InstanceID: a.InstanceID, Name: a.Name, Kind: a.Kind, State: a.State, AddedAt: a.AddedAt, Build: a.Build, ProposalID: a.ProposalID}
		if a.Kind == room.KindRepository {
			v.RepositoryID, v.VersionID = a.RepositoryID, a.VersionID
		}
		out = append(out, v)
	}
	return out
}

// RoomView is a cloud Room and its launcher (approved apps, in order).
type RoomView struct {
	RoomID  string    `json:"room_id"`
	Name    string    `json:"name"`
	Version int64     `json:"version"`
	Apps    []AppView `json:"apps"`
	// What a person also sees.
	Owner     Actor `json:"-"`
	CanManage bool  `json:"-"`
}

// ReadRoom is a cloud Room and its launcher.
func (s *Service) ReadRoom(ctx context.Context, c Caller, id string) (RoomView, error) {
	r, d, err := s.roomFor(ctx, c, id)
	if err != nil {
		return RoomView{}, err
	}
	v := RoomView{RoomID: r.ID, Name: r.Title, Version: r.Version, Apps: appViews(room.Launcher(&d))}
	if c.IsAgent() {
		return v, nil
	}
	owners, err := s.owners(ctx, c.Workspace, []store.Resource{r})
	if err != nil {
		return RoomView{}, err
	}
	v.Owner, v.CanManage = owners.Of("user:"+r.Owner), c.managesRoom(&r)
	repos := map[string]string{}
	for i, a := range v.Apps {
		if a.Kind != room.KindRepository {
			continue
		}
		name, ok := repos[a.RepositoryID]
		if !ok {
			if repo, err := s.repository(ctx, c.Workspace, a.RepositoryID); err == nil {
				name = repo.Name
			}
			repos[a.RepositoryID] = name
		}
		v.Apps[i].RepositoryName = name
	}
	return v, nil
}

// RoomApps is a page of a Room's launcher apps, in launcher order.
type RoomApps struct {
	RoomID     string    `json:"room_id"`
	Version    int64     `json:"version"`
	Apps       []AppView `json:"apps"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// RoomAppsArgs are list_room_apps' arguments.
type RoomAppsArgs struct {
	RoomID string `json:"room_id"`
	Page
}

// ListRoomApps is a page of launcher apps in launcher order.
func (s *Service) ListRoomApps(ctx context.Context, c Caller, a RoomAppsArgs) (RoomApps, error) {
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return RoomApps{}, err
	}
	r, d, err := s.roomFor(ctx, c, a.RoomID)
	if err != nil {
		return RoomApps{}, err
	}
	off, err := offsetCursor(a.Cursor, "a")
	if err != nil {
		return RoomApps{}, err
	}
	launcher := room.Launcher(&d)
	res := RoomApps{RoomID: r.ID, Version: r.Version, Apps: appViews(launcher[min(off, len(launcher)):min(off+limit, len(launcher))])}
	if off+limit < len(launcher) {
		res.NextCursor = encodeCursor("a", fmt.Sprint(off+limit))
	}
	return res, nil
}

// AppStatus is the safe launcher state of one app and its latest build
// state, nothing else. Build is the launcher's own build state, as it
// always was (none for a snippet: the Room compiles it where its tab
// opens); ProposalBuild and AppBuild say what the code compiled to, of the
// proposal that reserved the instance and of the app once approved (see
// instanceBuilds).
type AppStatus struct {
	RoomID        string       `json:"room_id"`
	InstanceID    string       `json:"instance_id"`
	State         string       `json:"state"`
	Build         room.Build   `json:"build"`
	RoomVersion   int64        `json:"room_version"`
	ProposalID    string       `json:"proposal_id,omitempty"`
	ProposalBuild *BuildReport `json:"proposal_build,omitempty"`
	AppBuild      *BuildReport `json:"app_build,omitempty"`
}

// AppArgs name one app instance of one Room.
type AppArgs struct {
	RoomID     string `json:"room_id"`
	InstanceID string `json:"instance_id"`
}

// ReadRoomAppStatus is the safe launcher state of one instance (pending
// review, declined, in the launcher, removed) and its latest build state.
func (s *Service) ReadRoomAppStatus(ctx context.Context, c Caller, a AppArgs) (AppStatus, error) {
	if err := CheckID("instance_id", a.InstanceID); err != nil {
		return AppStatus{}, err
	}
	r, d, err := s.roomFor(ctx, c, a.RoomID)
	if err != nil {
		return AppStatus{}, err
	}
	var pr *room.Proposal
	pid := room.ProposalOf(&d, a.InstanceID)
	if pid == "" {
		pid = legacyProposalID(a.RoomID, a.InstanceID)
	}
	if x, err := s.proposal(ctx, c.Workspace, pid); err == nil && x.RoomID == a.RoomID && x.InstanceID == a.InstanceID {
		pr = &x
	}
	state, build, err := room.Status(&d, pr, a.InstanceID)
	if err != nil {
		return AppStatus{}, err
	}
	st := AppStatus{RoomID: r.ID, InstanceID: a.InstanceID, State: state, Build: build, RoomVersion: r.Version}
	st.ProposalBuild, st.AppBuild = instanceBuilds(&d, pr, a.InstanceID)
	if pr != nil {
		st.ProposalID = pr.ID
	}
	return st, nil
}

// notRoomManager is the answer to a person who may not manage a Room.
func notRoomManager(what string) *problem.Problem {
	return problem.New(NotReviewer, "room_id", "only the Room's owner or a workspace owner may %s; ask one of them", what)
}

// NotReviewer is the code of a person who may not manage a Room.
const NotReviewer = "not_room_owner"
