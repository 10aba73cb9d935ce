package service

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/snippet"
	"foundry/internal/store"
)

// CLIReviewStep is a proposal's next_step in a build whose people review
// proposals with the CLI: what the person can actually do to see the full
// code and approve (or decline) it, with the proposal's ID filled in, and
// what the agent does meanwhile. A build with a review page sets
// Service.ReviewStep to name that page instead.
func CLIReviewStep(proposalID string) string {
	return fmt.Sprintf("Tell the user to review the full code and decide: `foundry proposals show %[1]s`, then `foundry proposals approve %[1]s` (or `foundry proposals decline %[1]s`), with --data DIR if Foundry keeps its data elsewhere than ./foundry-data. "+
		"Then end your turn and read the status once when the user is back (read_room_app_status), or, with nothing else to do, long-poll poll_resource_events on this Room from the returned cursor.", proposalID)
}

// WebReviewStep is a proposal's next_step in a build that serves the web
// app: the person reviews it under Connected → Needs your approval, at
// pageURL when the server knows its public address (else it is named
// alone), with the CLI as the fallback.
func WebReviewStep(pageURL, proposalID string) string {
	where := "in Foundry's web app under Connected → Needs your approval"
	if pageURL != "" {
		where += " (" + pageURL + ")"
	}
	return fmt.Sprintf("Tell the user to review the full code of proposal %[1]s %[2]s and choose Approve and create or Decline. "+
		"Without the web app: `foundry proposals show %[1]s`, then `foundry proposals approve %[1]s` (or `foundry proposals decline %[1]s`). "+
		"Then end your turn and read the status once when the user is back (read_room_app_status), or, with nothing else to do, long-poll poll_resource_events on this Room from the returned cursor.", proposalID, where)
}

// reviewStep is the next_step of proposal id in this build.
func (s *Service) reviewStep(id string) string {
	if s.ReviewStep != nil {
		return s.ReviewStep(id)
	}
	return CLIReviewStep(id)
}

// CreateRoom is a person creating a cloud Room.
func (s *Service) CreateRoom(ctx context.Context, ws, owner, name string) (string, error) {
	name, err := room.CheckName(name)
	if err != nil {
		return "", err
	}
	id := store.NewID("room")
	_, err = s.Store.Guarded(ctx, store.Mutation{
		Workspace: ws, Type: store.TypeRoom, ID: id, Actor: "user:" + owner,
		Create: &store.Resource{Owner: owner, Title: name, Approved: true, Doc: mustJSON(room.New(name))},
		Apply: func(*store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "room_created", Result: mustJSON(map[string]any{"room_id": id})}, nil
		},
	})
	return id, err
}

func (s *Service) agentRoom(ctx context.Context, p auth.Principal, id string) (store.Resource, room.Doc, error) {
	r, err := s.Store.Get(ctx, store.TypeRoom, id)
	if err != nil || r.Workspace != p.Workspace || !p.CanRoom(id) {
		if err != nil && err != store.ErrNotFound {
			return store.Resource{}, room.Doc{}, err
		}
		return store.Resource{}, room.Doc{}, notFound(store.TypeRoom, id)
	}
	var d room.Doc
	if err := json.Unmarshal(r.Doc, &d); err != nil {
		return store.Resource{}, room.Doc{}, fmt.Errorf("room %s: %w", id, err)
	}
	return r, d, nil
}

// RoomSummary is one entry of list_rooms.
type RoomSummary struct {
	RoomID  string `json:"room_id"`
	Name    string `json:"name"`
	Version int64  `json:"version"`
}

// RoomList is a page of list_rooms.
type RoomList struct {
	Rooms      []RoomSummary `json:"rooms"`
	Note       string        `json:"note"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// ListRooms: cloud Rooms the grant can see.
func (s *Service) ListRooms(ctx context.Context, p auth.Principal, pg Page) (RoomList, error) {
	cursor := pg.Cursor
	limit, err := pageLimit(pg.Limit)
	if err != nil {
		return RoomList{}, err
	}
	after, err := decodeCursor(cursor, "r")
	if err != nil {
		return RoomList{}, err
	}
	rows, err := s.Store.List(ctx, store.ListQuery{Workspace: p.Workspace, Type: store.TypeRoom, IDs: p.Rooms, AfterID: after, Limit: limit + 1})
	if err != nil {
		return RoomList{}, err
	}
	res := RoomList{Rooms: []RoomSummary{}, Note: "Local Rooms are unavailable: they live on a person's device."}
	for i, r := range rows {
		if i == limit {
			break
		}
		res.Rooms = append(res.Rooms, RoomSummary{RoomID: r.ID, Name: r.Title, Version: r.Version})
	}
	if len(rows) > limit {
		res.NextCursor = encodeCursor("r", rows[limit-1].ID)
	}
	return res, nil
}

// AppView is what an agent may see of a launcher app: identity and state,
// never files, config, logs or secrets.
type AppView struct {
	InstanceID   string     `json:"instance_id"`
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	State        string     `json:"state"`
	AddedAt      string     `json:"added_at"`
	Build        room.Build `json:"build"`
	RepositoryID string     `json:"repository_id,omitempty"` // repository apps
	VersionID    string     `json:"version_id,omitempty"`
}

func appViews(apps []room.App) []AppView {
	out := make([]AppView, 0, len(apps))
	for _, a := range apps {
		v := AppView{InstanceID: a.InstanceID, Name: a.Name, Kind: a.Kind, State: a.State, AddedAt: a.AddedAt, Build: a.Build}
		if a.Kind == room.KindRepository {
			v.RepositoryID, v.VersionID = a.RepositoryID, a.VersionID
		}
		out = append(out, v)
	}
	return out
}

// RoomView is read_room's answer: a cloud Room and its launcher.
type RoomView struct {
	RoomID  string    `json:"room_id"`
	Name    string    `json:"name"`
	Version int64     `json:"version"`
	Apps    []AppView `json:"apps"`
}

// ReadRoom: a cloud Room and its launcher (approved apps only).
func (s *Service) ReadRoom(ctx context.Context, p auth.Principal, id string) (RoomView, error) {
	r, d, err := s.agentRoom(ctx, p, id)
	if err != nil {
		return RoomView{}, err
	}
	return RoomView{RoomID: r.ID, Name: r.Title, Version: r.Version, Apps: appViews(room.Launcher(&d))}, nil
}

// RoomApps is a page of list_room_apps, in launcher order.
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

// ListRoomApps: launcher apps in launcher order, paged.
func (s *Service) ListRoomApps(ctx context.Context, p auth.Principal, a RoomAppsArgs) (RoomApps, error) {
	id, cursor := a.RoomID, a.Cursor
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return RoomApps{}, err
	}
	r, d, err := s.agentRoom(ctx, p, id)
	if err != nil {
		return RoomApps{}, err
	}
	off, err := offsetCursor(cursor, "a")
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

// legacyProposalID is how proposal IDs were once derived from the room and
// the reserved instance. New proposals get a random ID (store.NewID), which
// nobody can compute before the proposal exists, and the Room records it
// (room.RecordProposal); this finds the proposals made before.
func legacyProposalID(roomID, instanceID string) string {
	sum := sha256.Sum256([]byte(roomID + "\x00" + instanceID))
	return "prop_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

func (s *Service) proposal(ctx context.Context, ws, id string) (room.Proposal, error) {
	o, err := s.Store.GetObject(ctx, store.KindProposal, id)
	if err != nil || o.Workspace != ws {
		if err != nil && err != store.ErrNotFound {
			return room.Proposal{}, err
		}
		return room.Proposal{}, problem.New(problem.NotFound, "proposal_id", "proposal %q was not found in this workspace", problem.Excerpt(id))
	}
	var pr room.Proposal
	return pr, json.Unmarshal(o.Doc, &pr)
}

// AppStatus is read_room_app_status' answer: the safe launcher state of
// one app and its latest build state, nothing else.
type AppStatus struct {
	RoomID      string     `json:"room_id"`
	InstanceID  string     `json:"instance_id"`
	State       string     `json:"state"`
	Build       room.Build `json:"build"`
	RoomVersion int64      `json:"room_version"`
}

// AppArgs name one app instance of one Room.
type AppArgs struct {
	RoomID     string `json:"room_id"`
	InstanceID string `json:"instance_id"`
}

// ReadRoomAppStatus: the safe launcher state of one instance and its latest
// build state — nothing else.
func (s *Service) ReadRoomAppStatus(ctx context.Context, p auth.Principal, a AppArgs) (AppStatus, error) {
	roomID, instanceID := a.RoomID, a.InstanceID
	r, d, err := s.agentRoom(ctx, p, roomID)
	if err != nil {
		return AppStatus{}, err
	}
	var pr *room.Proposal
	pid := room.ProposalOf(&d, instanceID)
	if pid == "" {
		pid = legacyProposalID(roomID, instanceID)
	}
	if x, err := s.proposal(ctx, p.Workspace, pid); err == nil && x.RoomID == roomID && x.InstanceID == instanceID {
		pr = &x
	}
	state, build, err := room.Status(&d, pr, instanceID)
	if err != nil {
		return AppStatus{}, err
	}
	return AppStatus{RoomID: r.ID, InstanceID: instanceID, State: state, Build: build, RoomVersion: r.Version}, nil
}

// Proposed is the answer of both proposal tools: the proposal, the app
// instance it reserves, and what the person and the agent do next.
type Proposed struct {
	ProposalID string `json:"proposal_id"`
	InstanceID string `json:"instance_id"`
	RoomID     string `json:"room_id"`
	Status     string `json:"status"`
	Version    int64  `json:"version"`
	NextStep   string `json:"next_step"`
	Written
}

// ProposeSnippetArgs are propose_room_snippet_app's arguments.
type ProposeSnippetArgs struct {
	RoomID         string            `json:"room_id"`
	Name           string            `json:"name"`
	Files          map[string]string `json:"files"`
	IdempotencyKey string            `json:"idempotency_key"`
}

// ProposeSnippet records a pending proposal; nothing reaches the launcher.
func (s *Service) ProposeSnippet(ctx context.Context, p auth.Principal, a ProposeSnippetArgs) (Proposed, error) {
	// Server rules come before the write contract: a malformed request is
	// refused for what is wrong with it, whatever its key.
	if err := room.CheckSnippet(a.Name, a.Files); err != nil {
		return Proposed{}, err
	}
	fp := fingerprint(struct {
		Op    string
		Name  string
		Files map[string]string
	}{"propose_room_snippet_app", a.Name, a.Files})
	now := s.Now()
	// Compiled now, so the reviewer sees its errors first; the proposal
	// keeps the result without the code (a pending proposal holds nothing
	// a browser runs). Deterministic and cached, so a replay compiles to
	// the same answer at no cost.
	compiled := snippet.Compile(a.Files).Summary()
	return s.propose(ctx, p, a.RoomID, a.IdempotencyKey, fp, func(d *room.Doc, id string) (room.Proposal, error) {
		pr, err := room.NewSnippetProposal(d, id, a.RoomID, a.Name, a.Files, "token:"+p.TokenID, now)
		pr.Compile = compiled
		return pr, err
	})
}

// ProposeRepoArgs are propose_room_repo_app's arguments.
type ProposeRepoArgs struct {
	RoomID         string `json:"room_id"`
	Name           string `json:"name"`
	RepositoryID   string `json:"repository_id"`
	VersionID      string `json:"version_id"`
	IdempotencyKey string `json:"idempotency_key"`
}

// ProposeRepoApp proposes a pinned repository version by reference.
func (s *Service) ProposeRepoApp(ctx context.Context, p auth.Principal, a ProposeRepoArgs) (Proposed, error) {
	if _, err := room.CheckName(a.Name); err != nil {
		return Proposed{}, err
	}
	repo, err := s.repository(ctx, p.Workspace, a.RepositoryID)
	if err != nil {
		return Proposed{}, err
	}
	if _, err := room.FindVersion(&repo, a.VersionID); err != nil {
		return Proposed{}, err
	}
	fp := fingerprint([]string{"propose_room_repo_app", a.Name, a.RepositoryID, a.VersionID})
	now := s.Now()
	return s.propose(ctx, p, a.RoomID, a.IdempotencyKey, fp, func(d *room.Doc, id string) (room.Proposal, error) {
		return room.NewRepoProposal(d, id, a.RoomID, a.Name, a.RepositoryID, a.VersionID, "token:"+p.TokenID, now)
	})
}

// propose is the one way agents write a Room: the guarded write with the
// Room as key scope; the proposal row is stored in the same transaction.
// build must be pure (no clock, no randomness): the store may apply it more
// than once.
func (s *Service) propose(ctx context.Context, p auth.Principal, roomID, key, fp string, build func(d *room.Doc, id string) (room.Proposal, error)) (Proposed, error) {
	if !p.Has(auth.ScopeWrite) {
		return Proposed{}, problem.New("insufficient_scope", "", "this connection is read-only: it lacks the %s scope", auth.ScopeWrite)
	}
	if err := checkKey(key); err != nil {
		return Proposed{}, err
	}
	if _, _, err := s.agentRoom(ctx, p, roomID); err != nil {
		return Proposed{}, err
	}
	// Random, so that no one can know a proposal's ID before it exists (a
	// replay answers the first write's ID); drawn once, outside Apply, so
	// that every run of Apply gives the same answer.
	id := store.NewID("prop")
	w, err := guarded[Proposed](ctx, s, store.Mutation{
		Workspace: p.Workspace, Type: store.TypeRoom, ID: roomID, Key: key, Fingerprint: fp, Actor: "token:" + p.TokenID,
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d room.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, err
			}
			pr, err := build(&d, id)
			if err != nil {
				return nil, err
			}
			room.RecordProposal(&d, pr.InstanceID, pr.ID)
			res := Proposed{ProposalID: pr.ID, InstanceID: pr.InstanceID, RoomID: roomID, Status: room.StatePendingReview, Version: cur.Version + 1}
			return &store.Change{Doc: mustJSON(d), Result: mustJSON(res), Kind: "app_proposed", Changed: []string{pr.InstanceID},
				Objects: []store.Object{{Workspace: p.Workspace, Kind: store.KindProposal, ID: pr.ID, Parent: roomID, Doc: mustJSON(pr)}}}, nil
		},
	})
	if err != nil {
		return Proposed{}, err
	}
	// Built when answering, replays included: a result stored by an older
	// build may name a review place this build does not have.
	w.NextStep = s.reviewStep(w.ProposalID)
	return w, nil
}

// ListProposals is the reviewer's inbox (status "" = all).
func (s *Service) ListProposals(ctx context.Context, ws, roomID, status string) ([]room.Proposal, error) {
	var out []room.Proposal
	after := ""
	for {
		objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: ws, Kind: store.KindProposal, Parent: roomID, AfterID: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			var pr room.Proposal
			if err := json.Unmarshal(o.Doc, &pr); err != nil {
				return nil, err
			}
			if status == "" || pr.Status == status {
				out = append(out, pr)
			}
		}
		if len(objs) < 500 {
			break
		}
		after = objs[len(objs)-1].ID
	}
	// Oldest first, and within a second by ID: the order the tools and
	// the CLI have always answered (the release fixtures hold it).
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt < out[j].CreatedAt })
	return out, nil
}

// inMadeOrder sorts proposals as they were made: times are to the second,
// and within one a Room's proposals keep the order their instances were
// reserved in (the people's inbox shows them so).
func inMadeOrder(ps []room.Proposal) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.CreatedAt != b.CreatedAt || a.RoomID != b.RoomID {
			return a.CreatedAt < b.CreatedAt
		}
		return instanceNumber(a.InstanceID) < instanceNumber(b.InstanceID)
	})
}

// instanceNumber is n of an instance ID "app-<n>" (0 for any other).
func instanceNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "app-"))
	if err != nil || !strings.HasPrefix(id, "app-") {
		return 0
	}
	return n
}

// GetProposal is the reviewer's full view, files included.
func (s *Service) GetProposal(ctx context.Context, ws, id string) (room.Proposal, error) {
	return s.proposal(ctx, ws, id)
}

// Decision is what a person's decision on a proposal answers.
type Decision struct {
	ProposalID string `json:"proposal_id"`
	Status     string `json:"status"`
	RoomID     string `json:"room_id"`
	InstanceID string `json:"instance_id"`
	Version    int64  `json:"version"`
}

// AlreadyDecided is the code of a second decision on a proposal.
const AlreadyDecided = "already_decided"

// ApproveProposal is "Approve and create": a person's act that adds the app
// to the launcher, in one guarded write on the Room. A proposal decided
// before (by anyone) answers AlreadyDecided, naming how and by whom.
//
// From the CLI, the same person approving again is told nothing new (their
// decision stands); the REST door answers every second decision 409.
func (s *Service) ApproveProposal(ctx context.Context, ws, user, id string) error {
	_, err := s.approve(ctx, ws, user, id)
	return sameDecision(err, room.StatusApproved, user)
}

func (s *Service) approve(ctx context.Context, ws, user, id string) (Decision, error) {
	now := s.Now()
	return s.decide(ctx, ws, user, id, "app_approved", func(d *room.Doc, pr *room.Proposal) error {
		return room.Approve(d, pr, "user:"+user, now)
	})
}

// DeclineProposal: the app never reaches the launcher.
func (s *Service) DeclineProposal(ctx context.Context, ws, user, id string) error {
	_, err := s.decline(ctx, ws, user, id)
	return sameDecision(err, room.StatusDeclined, user)
}

// sameDecision forgives err when it only says that user already decided
// the proposal as status.
func sameDecision(err error, status, user string) error {
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == AlreadyDecided && pr.Details["decision"] == status && pr.Details["decided_by_actor"] == "user:"+user {
		return nil
	}
	return err
}

func (s *Service) decline(ctx context.Context, ws, user, id string) (Decision, error) {
	now := s.Now()
	return s.decide(ctx, ws, user, id, "app_declined", func(d *room.Doc, pr *room.Proposal) error {
		return room.Decline(pr, "user:"+user, now)
	})
}

// decideKey is the key of a person's decision on a proposal. It lives in
// the people's key scope of the Room (store.ScopePeople), which no agent's
// key can reach, whatever the agent names its key.
func decideKey(proposalID string) string { return "decide:" + proposalID }

// decidedError is a decision on a proposal that was decided already (found
// inside the write's transaction; named outside it).
type decidedError struct{ pr room.Proposal }

func (e *decidedError) Error() string { return "proposal " + e.pr.ID + " is " + e.pr.Status }

func (s *Service) decide(ctx context.Context, ws, user, id, kind string, act func(d *room.Doc, pr *room.Proposal) error) (Decision, error) {
	// Read outside the transaction only to find the Room (a proposal never
	// moves); the proposal itself is read again inside it.
	found, err := s.proposal(ctx, ws, id)
	if err != nil {
		return Decision{}, err
	}
	if found.Status != room.StatusPending {
		return Decision{}, s.alreadyDecided(ctx, found)
	}
	m := decideMutation(ws, user, found.RoomID, id, kind, act)
	out, err := s.Store.Guarded(ctx, m)
	var kr *store.KeyReusedError
	var de *decidedError
	switch {
	case errors.As(err, &de):
		return Decision{}, s.alreadyDecided(ctx, de.pr)
	case errors.As(err, &kr) || (err == nil && out.Replayed):
		// Another decision (or this one, sent before) came first: one
		// decision, and the second hears what it was.
		now, err := s.proposal(ctx, ws, id)
		if err != nil {
			return Decision{}, err
		}
		return Decision{}, s.alreadyDecided(ctx, now)
	case err != nil:
		return Decision{}, storeProblem(err, m)
	}
	var d Decision
	if err := json.Unmarshal(out.Result, &d); err != nil {
		return Decision{}, fmt.Errorf("stored result: %w", err)
	}
	d.Version = out.Version
	return d, nil
}

// alreadyDecided is the answer to a second decision on pr: how it was
// decided, and by whom (by name).
func (s *Service) alreadyDecided(ctx context.Context, pr room.Proposal) error {
	name := s.personName(ctx, pr.DecidedBy)
	return problem.New(AlreadyDecided, "proposal_id", "This proposal was already %s by %s.", pr.Status, name).
		With("decision", pr.Status).With("decided_by", name).With("decided_at", pr.DecidedAt).With("proposal_id", pr.ID).
		With("decided_by_actor", pr.DecidedBy)
}

// personName names the actor "user:<id>" by the person's name (or email).
func (s *Service) personName(ctx context.Context, actor string) string {
	id, ok := strings.CutPrefix(actor, "user:")
	if !ok || id == "" {
		return cmpOr(actor, "someone")
	}
	u, err := s.Store.UserByID(ctx, id)
	if err != nil {
		return "a person no longer in this workspace"
	}
	return cmpOr(u.Name, u.Email, "a person of this workspace")
}

func cmpOr(v ...string) string {
	for _, x := range v {
		if x != "" {
			return x
		}
	}
	return ""
}

// decideMutation is a person's decision on proposal id of roomID. Apply
// reads the proposal inside the transaction and edits only its own copies,
// so it gives the same answer however often the store runs it. One decision
// per proposal: the key makes two reviewers clicking at once serialize (the
// second replays or is refused), through the same key-first mechanism as
// every other write; a proposal found decided inside the transaction (its
// key pruned since) is refused as decided.
func decideMutation(ws, user, roomID, id, kind string, act func(d *room.Doc, pr *room.Proposal) error) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeRoom, ID: roomID, Key: decideKey(id), KeyScope: store.ScopePeople, Fingerprint: kind, Actor: "user:" + user,
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			o, err := tx.GetObject(store.KindProposal, id)
			if err != nil || o.Workspace != ws || o.Parent != roomID {
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
				return nil, problem.New(problem.NotFound, "proposal_id", "proposal %q was not found in this workspace", problem.Excerpt(id))
			}
			var pr room.Proposal
			if err := json.Unmarshal(o.Doc, &pr); err != nil {
				return nil, fmt.Errorf("proposal %s: %w", id, err)
			}
			if pr.Status != room.StatusPending {
				return nil, &decidedError{pr: pr}
			}
			var d room.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, err
			}
			if err := act(&d, &pr); err != nil {
				return nil, err
			}
			res := Decision{ProposalID: pr.ID, Status: pr.Status, RoomID: roomID, InstanceID: pr.InstanceID, Version: cur.Version + 1}
			return &store.Change{Doc: mustJSON(d), Kind: kind, Changed: []string{pr.InstanceID}, Result: mustJSON(res),
				Objects: []store.Object{{Workspace: ws, Kind: store.KindProposal, ID: pr.ID, Parent: pr.RoomID, Doc: mustJSON(pr)}}}, nil
		},
	}
}
