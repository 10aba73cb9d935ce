package mcpserver

import (
	"context"
	"fmt"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// The Rooms tools, and the events tool both families share: one
// constructor each, its schema beside its handler.

func roomTools(svc *service.Service, step func(service.Proposed) string) []*Tool {
	return []*Tool{
		listRooms(svc), readRoom(svc), listRoomApps(svc), readRoomAppStatus(svc),
		proposeRoomSnippetApp(svc, step), proposeRoomRepoApp(svc, step), listRepositories(svc), pollResourceEvents(svc),
	}
}

// withNextStep adds to a proposal the door's next step: what the person
// does to review it, and what the agent does meanwhile. It is worded when
// answering, replays included, so a replay names what this build offers.
func withNextStep[In any](propose func(context.Context, service.Caller, In) (service.Proposed, error), step func(service.Proposed) string) func(context.Context, service.Caller, In) (service.Proposed, error) {
	return func(ctx context.Context, c service.Caller, in In) (service.Proposed, error) {
		w, err := propose(ctx, c, in)
		if err == nil {
			w.NextStep = step(w)
		}
		return w, err
	}
}

// NextStep is a proposal's next_step: ReviewStep, or FixStep when its
// code does not compile.
func NextStep(reviewPage string, p service.Proposed) string {
	if p.Build.Failed() {
		return FixStep(reviewPage, p)
	}
	return ReviewStep(reviewPage, p.ProposalID)
}

// FixStep is the next_step of a snippet that does not compile: fix the
// errors and propose again (a new proposal, with the key of the fixed
// files); the person sees this one's errors and that the agent was told,
// and may decline it.
func FixStep(reviewPage string, p service.Proposed) string {
	n := p.Build.ErrorCount
	errs := fmt.Sprintf("%d errors", n)
	switch {
	case n == 1:
		errs = "1 error"
	case n > len(p.Build.Errors):
		errs = fmt.Sprintf("%d errors (the first %d)", n, len(p.Build.Errors))
	}
	return fmt.Sprintf("This code does not compile: %[2]s in build.errors (file, 1-based line, 0-based column, the line). An app that does not compile cannot run: "+
		"fix those errors and call propose_room_snippet_app again with room_id %[3]s, the same name, the fixed files and the idempotency key of the fixed files; that makes a new proposal to review. "+
		"Tell the user that proposal %[1]s (instance %[5]s) does not compile and that a fixed one follows: its card %[4]s shows the errors and that you were told, "+
		"and they can decline it (`foundry proposals decline %[1]s`).",
		p.ProposalID, errs, p.RoomID, reviewPlace(reviewPage), p.InstanceID)
}

// ReviewStep is a proposal's next_step: the person reviews it in the web
// app under Connected → Needs your approval, at reviewPage when the server
// knows its public address (else it is named alone), with the CLI as the
// fallback.
func ReviewStep(reviewPage, proposalID string) string {
	return fmt.Sprintf("Tell the user to review the full code of proposal %[1]s %[2]s and choose Approve and create or Decline. "+
		"Without the web app: `foundry proposals show %[1]s`, then `foundry proposals approve %[1]s` (or `foundry proposals decline %[1]s`). "+
		"Then end your turn and read the status once when the user is back (read_room_app_status), or, with nothing else to do, long-poll poll_resource_events on this Room from the returned cursor.", proposalID, reviewPlace(reviewPage))
}

// reviewPlace is where a person reviews proposals: the web app's inbox, at
// reviewPage when the server knows its public address.
func reviewPlace(reviewPage string) string {
	where := "in Foundry's web app under Connected → Needs your approval"
	if reviewPage != "" {
		where += " (" + reviewPage + ")"
	}
	return where
}

func listRooms(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "list_rooms", Scope: auth.ScopeRead, Output: []string{"rooms"},
		Description: "List the cloud Rooms this connection can reach. Local Rooms are unavailable.",
		Input:       object(nil, props{"cursor": cursorField(), "limit": limitField()}),
	}, svc.ListRooms)
}

func readRoom(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "read_room", Scope: auth.ScopeRead, Output: []string{"apps"},
		Description: "Read a cloud Room and its launcher apps. Local Rooms are unavailable: tell the user.",
		Input:       object([]string{"room_id"}, props{"room_id": roomIDField()}),
	}, byID("room_id", svc.ReadRoom))
}

func listRoomApps(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "list_room_apps", Scope: auth.ScopeRead, Output: []string{"apps"},
		Description: "List a cloud Room's launcher apps in order.",
		Input:       object([]string{"room_id"}, props{"room_id": roomIDField(), "cursor": cursorField(), "limit": limitField()}),
	}, svc.ListRoomApps)
}

func readRoomAppStatus(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "read_room_app_status", Scope: auth.ScopeRead, Output: []string{"state"},
		Description: "One app's safe launcher state (pending_review, declined, in_launcher, removed) and latest build state; no config, files, logs or secrets.",
		Input:       object([]string{"room_id", "instance_id"}, props{"room_id": roomIDField(), "instance_id": str(1, 64)}),
	}, svc.ReadRoomAppStatus)
}

func proposeRoomSnippetApp(svc *service.Service, step func(service.Proposed) string) *Tool {
	// As published: room_id without bounds, name without a minimum (the
	// server's rules say the rest).
	in := object([]string{"room_id", "name", "files", "idempotency_key"}, props{
		"room_id": str(0, 0), "name": str(0, 200), "files": stringMap(), "idempotency_key": keyField()})
	return toolFor(spec{Toolset: ToolsetRooms, Name: "propose_room_snippet_app", Scope: auth.ScopeWrite, Output: []string{"proposal_id", "instance_id"},
		Description: "Prepare a Room snippet with source files. It appears in the cloud Room launcher only after its owner reviews and approves the full code in osFoundry. " +
			"files must include src/App.tsx (default export: a React component). " +
			"Key, same on retries: \"snip-\" + first 32 hex of sha256 of room_id, name, then each path and content in path order, each prefixed by its byte length (uint64 big-endian).",
		Input: in,
	}, withNextStep(svc.ProposeSnippet, step))
}

func proposeRoomRepoApp(svc *service.Service, step func(service.Proposed) string) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "propose_room_repo_app", Scope: auth.ScopeWrite, Output: []string{"proposal_id", "instance_id"},
		Description: "Propose a pinned repository version as a Room app, for apps too large for a snippet. It reaches the launcher once the owner approves. Key: hash of room, name and version.",
		Input: object([]string{"room_id", "name", "repository_id", "version_id", "idempotency_key"}, props{
			"room_id": roomIDField(), "name": str(0, 200), "repository_id": str(1, 64), "version_id": str(1, 64), "idempotency_key": keyField()}),
	}, withNextStep(svc.ProposeRepoApp, step))
}

func listRepositories(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetRooms, Name: "list_repositories", Scope: auth.ScopeRead, Output: []string{"repositories"},
		Description: "List repositories and their pinned versions, for propose_room_repo_app.",
		Input:       object(nil, props{"cursor": cursorField(), "limit": limitField()}),
	}, svc.ListRepositories)
}

func pollResourceEvents(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetEvents, Name: "poll_resource_events", Scope: auth.ScopeRead, Output: []string{"events", "next_cursor"},
		Description: "Events of a Note or Room after cursor (a write's or poll's; none: now); wait_seconds (≤25) returns at the first.",
		Input: object([]string{"resource_type", "resource_id"}, props{
			"resource_type": enum("note", "room"), "resource_id": str(1, 64), "cursor": cursorField(), "limit": limitField(), "wait_seconds": integer(0, 25)}),
	}, svc.PollEvents)
}
