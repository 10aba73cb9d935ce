package service

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/snippet"
	"foundry/internal/store"
)

// Proposals: what an agent makes instead of an app (a snippet, or a pinned
// repository version), pending until a person who manages the Room reviews
// the full code and approves it into the launcher, or declines it. One
// decision per proposal.

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

// Proposed is the answer of both proposal tools: the proposal, the app
// instance it reserves, and what the person and the agent do next.
type Proposed struct {
	ProposalID string `json:"proposal_id"`
	InstanceID string `json:"instance_id"`
	RoomID     string `json:"room_id"`
	Status     string `json:"status"`
	Version    int64  `json:"version"`
	NextStep   string `json:"next_step"`
	// Build is what the snippet's code compiled to (nil for a repository
	// app): the proposer hears it in the answer, replays included.
	Build *BuildReport `json:"build,omitempty"`
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
func (s *Service) ProposeSnippet(ctx context.Context, c Caller, a ProposeSnippetArgs) (Proposed, error) {
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
	// Compiled now, so the reviewer sees its errors first and the proposer
	// hears them in the answer (Told); the proposal keeps the result
	// without the code (a pending proposal holds nothing a browser runs).
	// Deterministic and cached, so a replay (same files: the fingerprint)
	// compiles to the same answer at no cost.
	compiled := snippet.Compile(a.Files).Summary()
	compiled.Told = true
	w, err := s.propose(ctx, c, a.RoomID, a.IdempotencyKey, fp, func(d *room.Doc, id string) (room.Proposal, error) {
		pr, err := room.NewSnippetProposal(d, id, a.RoomID, a.Name, a.Files, c.actor(), now)
		pr.Compile = compiled
		return pr, err
	})
	if err != nil {
		return Proposed{}, err
	}
	b := buildOf(compiled, true)
	w.Build = &b
	return w, nil
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
func (s *Service) ProposeRepoApp(ctx context.Context, c Caller, a ProposeRepoArgs) (Proposed, error) {
	if _, err := room.CheckName(a.Name); err != nil {
		return Proposed{}, err
	}
	repo, err := s.repository(ctx, c.Workspace, a.RepositoryID)
	if err != nil {
		return Proposed{}, err
	}
	if _, err := room.FindVersion(&repo, a.VersionID); err != nil {
		return Proposed{}, err
	}
	fp := fingerprint([]string{"propose_room_repo_app", a.Name, a.RepositoryID, a.VersionID})
	now := s.Now()
	return s.propose(ctx, c, a.RoomID, a.IdempotencyKey, fp, func(d *room.Doc, id string) (room.Proposal, error) {
		return room.NewRepoProposal(d, id, a.RoomID, a.Name, a.RepositoryID, a.VersionID, c.actor(), now)
	})
}

// propose is the one way agents write a Room: the guarded write with the
// Room as key scope; the proposal row is stored in the same transaction.
// build must be pure (no clock, no randomness): the store may apply it more
// than once.
func (s *Service) propose(ctx context.Context, c Caller, roomID, key, fp string, build func(d *room.Doc, id string) (room.Proposal, error)) (Proposed, error) {
	if err := c.mayWrite(); err != nil {
		return Proposed{}, err
	}
	if err := checkKey(key); err != nil {
		return Proposed{}, err
	}
	if _, _, err := s.roomFor(ctx, c, roomID); err != nil {
		return Proposed{}, err
	}
	// Random, so that no one can know a proposal's ID before it exists (a
	// replay answers the first write's ID); drawn once, outside Apply, so
	// that every run of Apply gives the same answer.
	id := store.NewID("prop")
	w, err := guarded[Proposed](ctx, s, store.Mutation{
		Workspace: c.Workspace, Type: store.TypeRoom, ID: roomID, Key: key, KeyScope: c.keyScope(), Fingerprint: fp, Actor: c.actor(),
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			if err := roomGoneTx(tx, roomID); err != nil {
				return nil, err
			}
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
				Objects: []store.Object{{Workspace: c.Workspace, Kind: store.KindProposal, ID: pr.ID, Parent: roomID, Doc: mustJSON(pr)}}}, nil
		},
	})
	if err != nil {
		return Proposed{}, err
	}
	// next_step is the door's to word (it is not stored: a result stored by
	// an older build may name a review place this build does not have).
	w.NextStep = ""
	return w, nil
}

// proposals are workspace ws's proposals of roomID ("": every Room) with
// status ("": any), as they were made (see inMadeOrder).
func (s *Service) proposals(ctx context.Context, ws, roomID, status string) ([]room.Proposal, error) {
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
	inMadeOrder(out)
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

func (s *Service) approve(ctx context.Context, ws, user, id string) (Decision, error) {
	now := s.Now()
	return s.decide(ctx, ws, user, id, "app_approved", func(d *room.Doc, pr *room.Proposal) error {
		return room.Approve(d, pr, "user:"+user, now)
	})
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
	out, err := s.guardedWrite(ctx, m)
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
			if err := roomGoneTx(tx, roomID); err != nil {
				return nil, err
			}
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

// ReviewProposal is a proposal as a reviewer sees it, with the name of its
// Room and its compile result (snippets).
type ReviewProposal struct {
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

// ProposalStatuses are the statuses a list of proposals takes ("": any).
var ProposalStatuses = []string{room.StatusPending, room.StatusApproved, room.StatusDeclined}

// ListProposalsArgs select proposals: of one Room ("": every Room c
// manages), with one status ("": any).
type ListProposalsArgs struct {
	RoomID string `json:"room_id,omitempty"`
	Status string `json:"status,omitempty"`
}

// ListProposals lists the proposals of the Rooms c manages, as they were
// made; a person who manages none sees none. Reviewing is a person's act.
func (s *Service) ListProposals(ctx context.Context, c Caller, a ListProposalsArgs) ([]ReviewProposal, error) {
	if err := c.personOnly("reviewing proposals"); err != nil {
		return nil, err
	}
	if a.Status != "" && !slices.Contains(ProposalStatuses, a.Status) {
		return nil, problem.New(problem.Invalid, "status", "must be pending, approved or declined; got %q", problem.Excerpt(a.Status))
	}
	if a.RoomID != "" {
		r, _, err := s.roomFor(ctx, c, a.RoomID)
		if err != nil {
			return nil, err
		}
		if !c.managesRoom(&r) {
			return nil, notRoomManager("review its proposals")
		}
	}
	byID := map[string]store.Resource{}
	after := ""
	for {
		rows, err := s.Store.List(ctx, store.ListQuery{Workspace: c.Workspace, Type: store.TypeRoom, AfterID: after, Limit: 500, Unmarked: store.KindRoomDeleted})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if c.managesRoom(&r) {
				byID[r.ID] = r
			}
		}
		if len(rows) < 500 {
			break
		}
		after = rows[len(rows)-1].ID
	}
	out := []ReviewProposal{}
	if len(byID) == 0 {
		return out, nil
	}
	ps, err := s.proposals(ctx, c.Workspace, a.RoomID, a.Status)
	if err != nil {
		return nil, err
	}
	repos := map[string]*room.Repository{}
	for _, p := range ps {
		r, ok := byID[p.RoomID]
		if !ok {
			continue
		}
		x := ReviewProposal{Proposal: p, RoomName: r.Title, FileCount: len(p.Files)}
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

// PendingCount is how many pending proposals c may decide.
func (s *Service) PendingCount(ctx context.Context, c Caller) (int, error) {
	ps, err := s.ListProposals(ctx, c, ListProposalsArgs{Status: room.StatusPending})
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

// ProposalDetail is one proposal c may decide, with every file in full: a
// snippet's own, or a repository app's pinned version's.
func (s *Service) ProposalDetail(ctx context.Context, c Caller, id string) (ReviewProposal, []ProposalFile, error) {
	p, err := s.reviewable(ctx, c, id, "review its proposals")
	if err != nil {
		return ReviewProposal{}, nil, err
	}
	x := ReviewProposal{Proposal: p, FileCount: len(p.Files)}
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
				return ReviewProposal{}, nil, err
			}
			return x, files, nil // the version's files are gone: nothing to show
		}
		var doc struct {
			Files map[string]string `json:"files"`
		}
		if err := json.Unmarshal(o.Doc, &doc); err != nil {
			return ReviewProposal{}, nil, fmt.Errorf("repository version %s: %w", p.VersionID, err)
		}
		total := 0
		for _, path := range sortedKeys(doc.Files) {
			b, err := base64.StdEncoding.DecodeString(doc.Files[path])
			if err != nil {
				return ReviewProposal{}, nil, fmt.Errorf("repository version %s, %s: %w", p.VersionID, path, err)
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
func (s *Service) describeRepo(x *ReviewProposal, repo *room.Repository) {
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
	if err := c.personOnly("reviewing proposals"); err != nil {
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
	if err != nil || r.Workspace != c.Workspace || !c.managesRoom(&r) {
		return room.Proposal{}, notRoomManager(what)
	}
	if err := s.roomGone(ctx, p.RoomID); err != nil {
		return room.Proposal{}, err
	}
	return p, nil
}

// DecideProposal is a reviewer's "Approve and create" (approve) or
// "Decline" of proposal id: one decision per proposal; a second one, at
// once or later, answers AlreadyDecided naming the first (by name, with
// decided_by_actor, so a door can tell the same person's second click).
func (s *Service) DecideProposal(ctx context.Context, c Caller, id string, approve bool) (Decision, error) {
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
