package api

import (
	"bytes"
	"io"
	"net/http"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
)

// The review inbox: the proposals of the Rooms the caller may decide (the
// Room's owner or a workspace owner; anyone else sees none and is refused
// each one), every proposed file in full, the snippet's compile result
// before the decision, and the decision itself — one per proposal, the
// second answered 409 naming the first. A count of the pending ones, and a
// stream of it, feed the navigation's badge.

// CompileView is a snippet's compile result as a reviewer sees it (never
// the code it compiled to).
type CompileView struct {
	// State is the build state the proposer is told: compiled or failed.
	State  string                `json:"state" enum:"compiled,failed"`
	OK     bool                  `json:"ok"`
	Hash   string                `json:"hash"`
	Errors []room.CompileMessage `json:"errors" nullable:"false"`
	// ProposerTold: the answer to the proposal told its proposer this
	// result (false for proposals made before Foundry told it).
	ProposerTold bool `json:"proposer_told" description:"The answer to the proposal told its proposer this result (whether it compiles, and its errors)"`
}

// ProposalRepo is the pinned version a repository proposal names.
type ProposalRepo struct {
	RepositoryID string `json:"repository_id"`
	Name         string `json:"name"`
	VersionID    string `json:"version_id"`
}

// Decided is who decided a proposal, and when.
type Decided struct {
	By Who    `json:"by"`
	At string `json:"at"`
}

// ProposalView is one entry of GET /api/proposals.
type ProposalView struct {
	ProposalID string        `json:"proposal_id"`
	RoomID     string        `json:"room_id"`
	RoomName   string        `json:"room_name"`
	InstanceID string        `json:"instance_id"`
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	Status     string        `json:"status"`
	ProposedBy Who           `json:"proposed_by"`
	ProposedAt string        `json:"proposed_at"`
	FileCount  int           `json:"file_count"`
	Compile    *CompileView  `json:"compile"`
	Repository *ProposalRepo `json:"repository,omitempty"`
	Decided    *Decided      `json:"decided,omitempty"`
}

// ProposalDetail is GET /api/proposals/{proposal_id}'s answer.
type ProposalDetail struct {
	ProposalView
	Files    []service.ProposalFile `json:"files" nullable:"false"`
	Warnings []room.CompileMessage  `json:"warnings" nullable:"false"`
}

func proposalView(p service.ReviewProposal, names service.ActorNames) ProposalView {
	v := ProposalView{ProposalID: p.ID, RoomID: p.RoomID, RoomName: p.RoomName, InstanceID: p.InstanceID, Name: p.Name, Kind: p.Kind, Status: p.Status,
		ProposedBy: who(names.Of(p.ProposedBy)), ProposedAt: p.CreatedAt, FileCount: p.FileCount}
	if p.Compile != nil {
		v.Compile = &CompileView{State: service.BuildOfCompile(p.Compile), OK: p.Compile.OK, Hash: p.Compile.Hash, Errors: nonNilMsgs(p.Compile.Errors), ProposerTold: p.Compile.Told}
	}
	if p.Kind == room.KindRepository {
		v.Repository = &ProposalRepo{RepositoryID: p.RepositoryID, Name: p.Repository, VersionID: p.VersionID}
	}
	if p.DecidedBy != "" {
		v.Decided = &Decided{By: who(names.Of(p.DecidedBy)), At: p.DecidedAt}
	}
	return v
}

// namesOf names the proposers and deciders of ps in one lookup.
func (h *handler) namesOf(r *http.Request, c *caller, ps ...service.ReviewProposal) (service.ActorNames, error) {
	var actors []string
	for _, p := range ps {
		actors = append(actors, p.ProposedBy)
		if p.DecidedBy != "" {
			actors = append(actors, p.DecidedBy)
		}
	}
	return h.svc.Actors(r.Context(), c.svc.Workspace, actors)
}

// ListProposalsRequest is GET /api/proposals.
type ListProposalsRequest struct {
	Status string `query:"status" json:"-" enum:"pending,approved,declined" default:"pending"`
}

// ProposalList is GET /api/proposals's answer, as the proposals were made.
type ProposalList struct {
	Proposals []ProposalView `json:"proposals" nullable:"false"`
}

var listProposalsDoc = doc{summary: "The proposals of the Rooms the caller may decide", req: ListProposalsRequest{}, resp: ProposalList{}}

func (h *handler) listProposals(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ListProposalsRequest](r, true)
	if err == nil && in.Status == "" {
		in.Status = room.StatusPending
	}
	var ps []service.ReviewProposal
	if err == nil {
		ps, err = h.svc.ListProposals(r.Context(), c.svc, service.ListProposalsArgs{Status: in.Status})
	}
	var names service.ActorNames
	if err == nil {
		names, err = h.namesOf(r, c, ps...)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := ProposalList{Proposals: make([]ProposalView, 0, len(ps))}
	for _, p := range ps {
		out.Proposals = append(out.Proposals, proposalView(p, names))
	}
	writeJSON(w, http.StatusOK, out)
}

// ProposalRequest names one proposal.
type ProposalRequest struct {
	ProposalID string `path:"proposal_id" json:"-"`
}

var getProposalDoc = doc{summary: "One proposal with every file in full", req: ProposalRequest{}, resp: ProposalDetail{}}

func (h *handler) getProposal(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ProposalRequest](r, true)
	var p service.ReviewProposal
	var files []service.ProposalFile
	if err == nil {
		p, files, err = h.svc.ProposalDetail(r.Context(), c.svc, in.ProposalID)
	}
	var names service.ActorNames
	if err == nil {
		names, err = h.namesOf(r, c, p)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if files == nil {
		files = []service.ProposalFile{}
	}
	d := ProposalDetail{ProposalView: proposalView(p, names), Files: files, Warnings: []room.CompileMessage{}}
	if p.Compile != nil {
		d.Warnings = nonNilMsgs(p.Compile.Warnings)
	}
	writeJSON(w, http.StatusOK, d)
}

func decideDoc(summary string) doc {
	return doc{summary: summary + " (one decision per proposal; a second answers 409 naming the first)", req: ProposalRequest{}, resp: service.Decision{}, write: true}
}

func (h *handler) decide(w http.ResponseWriter, r *http.Request, c *caller, approve bool) {
	in, err := bind[ProposalRequest](r, true)
	if err == nil {
		// A body is not part of the call; one larger than MaxBody is refused.
		if _, cerr := io.Copy(io.Discard, r.Body); cerr != nil {
			err = problem.New(problem.Limit, "body", "this call takes no body (at most %d bytes are read)", MaxBody)
		}
	}
	var d service.Decision
	if err == nil {
		d, err = h.svc.DecideProposal(r.Context(), c.svc, in.ProposalID, approve)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(d.Version))
	writeJSON(w, http.StatusOK, d)
}

func (h *handler) approveProposal(w http.ResponseWriter, r *http.Request, c *caller) {
	h.decide(w, r, c, true)
}

func (h *handler) declineProposal(w http.ResponseWriter, r *http.Request, c *caller) {
	h.decide(w, r, c, false)
}

// PendingCount is GET /api/proposals/count's answer and the data of each
// count event of GET /api/proposals/events.
type PendingCount struct {
	Pending int `json:"pending"`
}

var proposalCountDoc = doc{summary: "How many proposals wait for the caller's decision", resp: PendingCount{}}

func (h *handler) proposalCount(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	n, err := h.svc.PendingCount(r.Context(), c.svc)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PendingCount{Pending: n})
}

// proposalEvents streams the caller's pending count: one `event: count` at
// once, and another whenever it changes, on this node or any other (the
// store's change notifications; one recount per person and burst of
// writes, whatever number of their streams listen). A comment every
// heartbeat; the stream ends at its lifetime or when the session is signed
// out.
var proposalEventsDoc = doc{summary: "The pending count as server-sent events (event: count, data: PendingCount)", resp: PendingCount{}, media: "text/event-stream",
	description: streamDescription + " A count event comes at once, then whenever the count changes on any node."}

func (h *handler) proposalEvents(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	release, err := h.svc.StreamGate(c.svc, sessionOf(c), "", streamLifetime)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()
	sub := h.svc.Subscribe()
	defer sub.Close()
	first, err := sub.WatchProposals(r.Context(), c.svc)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.follow(w, r, sub, first, "", streamer{
		render: func(b *bytes.Buffer, items []service.LiveItem) bool {
			for _, it := range items {
				if it.Kind == service.LiveCount {
					sseEvent(b, "", "count", PendingCount{Pending: it.Pending})
				}
			}
			return false
		},
		recheck: func(b *bytes.Buffer) bool {
			if reason := h.callerStill(r, c, "sign in again to follow the proposals"); reason != "" {
				sseEnd(b, reason)
				return true
			}
			return false
		},
		lifetime: "the stream's lifetime is over: reconnect",
	})
}
