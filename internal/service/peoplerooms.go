package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/snippet"
	"foundry/internal/store"
)

// People's Room operations: the Rooms list and launcher, the review inbox
// and its decisions, and the bundle of an approved snippet, for the REST
// door. A Room is managed — its proposals seen and decided, its launcher
// renamed, reordered and pruned — by its owner or a workspace owner; every
// person of the workspace sees its Rooms and runs their approved apps.

// NotReviewer is the code of a person who may not manage a Room.
const NotReviewer = "not_room_owner"

// RoleOwner is the role of a workspace owner.
const RoleOwner = "owner"

// reviewer is what a person may manage: every Room (a workspace owner), or
// the Rooms they own.
type reviewer struct {
	user    string
	allRoom bool
}

func (rv reviewer) manages(r *store.Resource) bool {
	return rv.user != "" && (rv.allRoom || r.Owner == rv.user)
}

func (s *Service) reviewerOf(ctx context.Context, c Caller) (reviewer, error) {
	if err := c.personOnly("managing a Room"); err != nil {
		return reviewer{}, err
	}
	u, err := s.Store.UserByID(ctx, c.User)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Workspace != c.Workspace) {
		return reviewer{}, nil
	}
	if err != nil {
		return reviewer{}, err
	}
	return reviewer{user: u.ID, allRoom: u.Role == RoleOwner}, nil
}

func notReviewer(what string) *problem.Problem {
	return problem.New(NotReviewer, "room_id", "only the Room's owner or a workspace owner may %s; ask one of them", what)
}

// PeopleRoom is one cloud Room as a person sees it.
type PeopleRoom struct {
	Resource  store.Resource
	Doc       room.Doc
	CanManage bool
	Pending   int // pending proposals (0 for a person who may not manage it)
}

func roomNotFound(id string) *problem.Problem {
	return problem.New(problem.NotFound, "room_id", "Room %q was not found in this workspace: GET /api/rooms lists them", problem.Excerpt(id))
}

// PeopleRooms lists every cloud Room of c's workspace, by ID.
func (s *Service) PeopleRooms(ctx context.Context, c Caller) ([]PeopleRoom, error) {
	return s.peopleRooms(ctx, c, true)
}

// peopleRooms lists the Rooms, counting their pending proposals if count.
func (s *Service) peopleRooms(ctx context.Context, c Caller, count bool) ([]PeopleRoom, error) {
	rv, err := s.reviewerOf(ctx, c)
	if err != nil {
		return nil, err
	}
	pending := map[string]int{}
	if count {
		if pending, err = s.pendingByRoom(ctx, c.Workspace); err != nil {
			return nil, err
		}
	}
	out := []PeopleRoom{}
	after := ""
	for {
		rows, err := s.Store.List(ctx, store.ListQuery{Workspace: c.Workspace, Type: store.TypeRoom, AfterID: after, Limit: 500, WithDoc: true})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			var d room.Doc
			if err := json.Unmarshal(r.Doc, &d); err != nil {
				return nil, fmt.Errorf("room %s: %w", r.ID, err)
			}
			pr := PeopleRoom{Resource: r, Doc: d, CanManage: rv.manages(&r)}
			if pr.CanManage {
				pr.Pending = pending[r.ID]
			}
			out = append(out, pr)
		}
		if len(rows) < 500 {
			return out, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// PeopleRoomOf is one Room of c's workspace.
func (s *Service) PeopleRoomOf(ctx context.Context, c Caller, id string) (PeopleRoom, error) {
	if err := CheckID("room_id", id); err != nil {
		return PeopleRoom{}, err
	}
	rv, err := s.reviewerOf(ctx, c)
	if err != nil {
		return PeopleRoom{}, err
	}
	r, err := s.Store.Get(ctx, store.TypeRoom, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Workspace != c.Workspace) {
		return PeopleRoom{}, roomNotFound(id)
	}
	if err != nil {
		return PeopleRoom{}, err
	}
	var d room.Doc
	if err := json.Unmarshal(r.Doc, &d); err != nil {
		return PeopleRoom{}, fmt.Errorf("room %s: %w", id, err)
	}
	return PeopleRoom{Resource: r, Doc: d, CanManage: rv.manages(&r)}, nil
}

// pendingByRoom counts the workspace's pending proposals by Room.
func (s *Service) pendingByRoom(ctx context.Context, ws string) (map[string]int, error) {
	ps, err := s.ListProposals(ctx, ws, "", room.StatusPending)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range ps {
		out[p.RoomID]++
	}
	return out, nil
}

// RoomWritten is what a launcher edit answers.
type RoomWritten struct {
	RoomID  string `json:"room_id"`
	Version int64  `json:"version"`
}

// PeopleEditApp renames a launcher app and/or moves it to position (0-based
// among the launcher's apps), as a guarded write on the Room based on
// version expected.
func (s *Service) PeopleEditApp(ctx context.Context, c Caller, roomID, instanceID string, name *string, position *int, expected int64) (RoomWritten, error) {
	if name == nil && position == nil {
		return RoomWritten{}, problem.New(problem.Invalid, "name", "give name, position or both: there is nothing to change")
	}
	if name != nil {
		if _, err := room.CheckName(*name); err != nil {
			return RoomWritten{}, err
		}
	}
	kind := "app_renamed"
	if name == nil {
		kind = "app_moved"
	}
	return s.launcherWrite(ctx, c, roomID, instanceID, expected, kind, "rename or reorder its apps", func(d *room.Doc) error {
		if name != nil {
			if err := room.RenameApp(d, instanceID, *name); err != nil {
				return err
			}
		}
		if position != nil {
			return room.MoveApp(d, instanceID, *position)
		}
		return nil
	})
}

// PeopleRemoveApp takes an app out of the launcher (room.RemoveApp).
func (s *Service) PeopleRemoveApp(ctx context.Context, c Caller, roomID, instanceID string, expected int64) (RoomWritten, error) {
	return s.launcherWrite(ctx, c, roomID, instanceID, expected, "app_removed", "remove its apps", func(d *room.Doc) error {
		if _, err := room.AppIn(d, instanceID); err != nil {
			return err
		}
		return room.RemoveApp(d, instanceID)
	})
}

func (s *Service) launcherWrite(ctx context.Context, c Caller, roomID, instanceID string, expected int64, kind, what string, edit func(d *room.Doc) error) (RoomWritten, error) {
	if err := CheckID("room_id", roomID); err != nil {
		return RoomWritten{}, err
	}
	if err := CheckID("instance_id", instanceID); err != nil {
		return RoomWritten{}, err
	}
	rv, err := s.reviewerOf(ctx, c)
	if err != nil {
		return RoomWritten{}, err
	}
	if expected < 1 {
		return RoomWritten{}, problem.New("precondition_required", "If-Match", "a change of the launcher must say which version of the Room it was based on: send If-Match: \"<version>\" (the ETag of GET /api/rooms/%s) or expected_version", problem.Excerpt(roomID))
	}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeRoom, ID: roomID, ExpectedVersion: expected, Actor: c.actor(),
		Access: func(cur *store.Resource) error {
			if cur.Workspace != c.Workspace {
				return roomNotFound(roomID)
			}
			if !rv.manages(cur) {
				return notReviewer(what)
			}
			return nil
		},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d room.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, fmt.Errorf("room %s: %w", roomID, err)
			}
			if err := edit(&d); err != nil {
				return nil, err
			}
			return &store.Change{Doc: mustJSON(d), Kind: kind, Changed: []string{instanceID},
				Result: mustJSON(RoomWritten{RoomID: roomID, Version: cur.Version + 1})}, nil
		},
	}
	out, err := s.Store.Guarded(ctx, m)
	if errors.Is(err, store.ErrNotFound) {
		return RoomWritten{}, roomNotFound(roomID)
	}
	if err != nil {
		return RoomWritten{}, storeProblem(err, m)
	}
	return RoomWritten{RoomID: roomID, Version: out.Version}, nil
}

// PeopleBundle is the compiled code of an approved snippet app in the
// launcher of Room roomID, for any person of the workspace. Nothing else
// has a bundle: a pending or declined proposal, a removed app and a
// repository app are not found.
func (s *Service) PeopleBundle(ctx context.Context, c Caller, roomID, instanceID string) (snippet.Result, error) {
	if err := CheckID("instance_id", instanceID); err != nil {
		return snippet.Result{}, err
	}
	pr, err := s.PeopleRoomOf(ctx, c, roomID)
	if err != nil {
		return snippet.Result{}, err
	}
	app, err := room.AppIn(&pr.Doc, instanceID)
	if err != nil {
		return snippet.Result{}, err
	}
	if app.Kind != room.KindSnippet {
		return snippet.Result{}, problem.New(problem.NotFound, "instance_id", "app '%s' runs a pinned repository version: this path does not build or deploy a bundle", instanceID)
	}
	p, err := s.proposal(ctx, c.Workspace, app.ProposalID)
	if err != nil || p.Status != room.StatusApproved || p.RoomID != roomID || p.InstanceID != instanceID || p.Kind != room.KindSnippet {
		if err != nil && !isNotFound(err) {
			return snippet.Result{}, err
		}
		return snippet.Result{}, problem.New(problem.NotFound, "instance_id", "app '%s' has no approved snippet to run", instanceID)
	}
	// Compiled again from the approved files: deterministic, and cached by
	// their hash, so this is the result the reviewer saw.
	return snippet.Compile(p.Files), nil
}

func isNotFound(err error) bool {
	var pr *problem.Problem
	return errors.As(err, &pr) && pr.Code == problem.NotFound
}

// PeopleProposal is a proposal as a reviewer sees it, with the name of its
// Room and its compile result (snippets).
type PeopleProposal struct {
	room.Proposal
	RoomName string
	// Repository is the repository's name (repository apps).
	Repository string
	// FileCount is how many files the reviewer reads: a snippet's, or
	// the pinned version's.
	FileCount int
}

// CompileOf is p's compile result: as stored, or (a snippet proposed before
// Foundry compiled snippets) compiled now; nil for a repository app.
func CompileOf(p *room.Proposal) *room.Compile {
	if p.Kind != room.KindSnippet {
		return nil
	}
	if p.Compile != nil {
		return p.Compile
	}
	return snippet.Compile(p.Files).Summary()
}

// ProposalStatuses are the statuses GET /api/proposals takes.
var ProposalStatuses = []string{room.StatusPending, room.StatusApproved, room.StatusDeclined}

// PeopleProposals lists the proposals with status of the Rooms c may
// manage, oldest first; a person who manages none sees none.
func (s *Service) PeopleProposals(ctx context.Context, c Caller, status string) ([]PeopleProposal, error) {
	if !slices.Contains(ProposalStatuses, status) {
		return nil, problem.New(problem.Invalid, "status", "must be pending, approved or declined (default pending); got %q", problem.Excerpt(status))
	}
	rooms, err := s.peopleRooms(ctx, c, false)
	if err != nil {
		return nil, err
	}
	byID := map[string]PeopleRoom{}
	for _, r := range rooms {
		if r.CanManage {
			byID[r.Resource.ID] = r
		}
	}
	out := []PeopleProposal{}
	if len(byID) == 0 {
		return out, nil
	}
	ps, err := s.ListProposals(ctx, c.Workspace, "", status)
	if err != nil {
		return nil, err
	}
	inMadeOrder(ps)
	repos := map[string]*room.Repository{}
	for _, p := range ps {
		r, ok := byID[p.RoomID]
		if !ok {
			continue
		}
		x := PeopleProposal{Proposal: p, RoomName: r.Resource.Title, FileCount: len(p.Files)}
		x.Compile = CompileOf(&p)
		if p.Kind == room.KindRepository {
			repo, ok := repos[p.RepositoryID]
			if !ok {
				if found, err := s.repository(ctx, c.Workspace, p.RepositoryID); err == nil {
					repo = &found
				}
				repos[p.RepositoryID] = repo
			}
			s.describeRepo(&x, repo)
		}
		out = append(out, x)
	}
	return out, nil
}

// PeoplePendingCount is how many pending proposals c may decide.
func (s *Service) PeoplePendingCount(ctx context.Context, c Caller) (int, error) {
	ps, err := s.PeopleProposals(ctx, c, room.StatusPending)
	return len(ps), err
}

// ProposalFile is one file a reviewer reads in full.
type ProposalFile struct {
	Path  string `json:"path"`
	Text  string `json:"text"`
	Bytes int    `json:"bytes"`
	// Binary: the file is not UTF-8 text, so Text is empty.
	Binary bool `json:"binary,omitempty"`
}

// MaxReviewBytes bounds the text of a repository version one review
// answers; files past it are listed with their size and no text.
const MaxReviewBytes = 16 << 20

// PeopleProposalDetail is one proposal c may decide, with every file in
// full: a snippet's own, or a repository app's pinned version's.
func (s *Service) PeopleProposalDetail(ctx context.Context, c Caller, id string) (PeopleProposal, []ProposalFile, error) {
	p, err := s.reviewable(ctx, c, id, "review its proposals")
	if err != nil {
		return PeopleProposal{}, nil, err
	}
	x := PeopleProposal{Proposal: p, FileCount: len(p.Files)}
	if r, err := s.Store.Head(ctx, store.TypeRoom, p.RoomID); err == nil {
		x.RoomName = r.Title
	}
	x.Compile = CompileOf(&p)
	files := []ProposalFile{}
	switch p.Kind {
	case room.KindSnippet:
		for _, path := range sortedKeys(p.Files) {
			files = append(files, ProposalFile{Path: path, Text: p.Files[path], Bytes: len(p.Files[path])})
		}
	case room.KindRepository:
		if repo, err := s.repository(ctx, c.Workspace, p.RepositoryID); err == nil {
			s.describeRepo(&x, &repo)
		}
		o, err := s.Store.GetObject(ctx, store.KindRepoVersion, p.VersionID)
		if err != nil || o.Workspace != c.Workspace {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return PeopleProposal{}, nil, err
			}
			return x, files, nil // the version's files are gone: nothing to show
		}
		var doc struct {
			Files map[string]string `json:"files"`
		}
		if err := json.Unmarshal(o.Doc, &doc); err != nil {
			return PeopleProposal{}, nil, fmt.Errorf("repository version %s: %w", p.VersionID, err)
		}
		total := 0
		for _, path := range sortedKeys(doc.Files) {
			b, err := base64.StdEncoding.DecodeString(doc.Files[path])
			if err != nil {
				return PeopleProposal{}, nil, fmt.Errorf("repository version %s, %s: %w", p.VersionID, path, err)
			}
			f := ProposalFile{Path: path, Bytes: len(b), Binary: !utf8.Valid(b)}
			if !f.Binary && total+len(b) <= MaxReviewBytes {
				f.Text = string(b)
				total += len(b)
			}
			files = append(files, f)
		}
	}
	return x, files, nil
}

// describeRepo names x's repository and counts its pinned version's files.
func (s *Service) describeRepo(x *PeopleProposal, repo *room.Repository) {
	if repo == nil {
		return
	}
	x.Repository = repo.Name
	if v, err := room.FindVersion(repo, x.VersionID); err == nil {
		x.FileCount = v.Files
	}
}

// reviewable is proposal id, if c may manage its Room.
func (s *Service) reviewable(ctx context.Context, c Caller, id, what string) (room.Proposal, error) {
	if err := CheckID("proposal_id", id); err != nil {
		return room.Proposal{}, err
	}
	rv, err := s.reviewerOf(ctx, c)
	if err != nil {
		return room.Proposal{}, err
	}
	p, err := s.proposal(ctx, c.Workspace, id)
	if err != nil {
		return room.Proposal{}, err
	}
	r, err := s.Store.Head(ctx, store.TypeRoom, p.RoomID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return room.Proposal{}, err
	}
	if err != nil || r.Workspace != c.Workspace || !rv.manages(&r) {
		return room.Proposal{}, notReviewer(what)
	}
	return p, nil
}

// PeopleDecide is a reviewer's "Approve and create" (approve) or "Decline"
// of proposal id: one decision per proposal; a second one, at once or
// later, answers AlreadyDecided naming the first.
func (s *Service) PeopleDecide(ctx context.Context, c Caller, id string, approve bool) (Decision, error) {
	if _, err := s.reviewable(ctx, c, id, "decide its proposals"); err != nil {
		return Decision{}, err
	}
	if approve {
		return s.approve(ctx, c.Workspace, c.User, id)
	}
	return s.decline(ctx, c.Workspace, c.User, id)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RepositoryName is the name of repository id of workspace ws ("" when
// there is none).
func (s *Service) RepositoryName(ctx context.Context, ws, id string) (string, error) {
	repo, err := s.repository(ctx, ws, id)
	if err != nil {
		return "", err
	}
	return repo.Name, nil
}
