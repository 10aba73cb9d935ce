package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"foundry/internal/auth"
	"foundry/internal/service"
)

const (
	roomID      = `"room_id":{"type":"string","minLength":1,"maxLength":64}`
	outProposal = `{"type":"object","properties":{"proposal_id":{"type":"string"},"instance_id":{"type":"string"}}}`
)

// paged is the handler of a list that takes only a page (cursor, limit).
func paged(list func(ctx context.Context, p auth.Principal, cursor string, limit int) (map[string]any, error)) func(context.Context, auth.Principal, json.RawMessage) (any, error) {
	return func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
		a, err := decode[struct {
			Cursor string `json:"cursor"`
			Limit  int    `json:"limit"`
		}](args)
		if err != nil {
			return nil, err
		}
		return list(ctx, p, a.Cursor, a.Limit)
	}
}

func roomTools(svc *service.Service) []*Tool {
	return []*Tool{
		newTool(ToolsetRooms, "list_rooms", auth.ScopeRead,
			"List the cloud Rooms this connection can reach. Local Rooms are unavailable.",
			`{"type":"object","additionalProperties":false,"properties":{`+cursor+`,`+limit+`}}`,
			`{"type":"object","properties":{"rooms":{"type":"array"}}}`,
			paged(svc.ListRooms)),

		newTool(ToolsetRooms, "read_room", auth.ScopeRead,
			"Read a cloud Room and its launcher apps. Local Rooms are unavailable: tell the user.",
			`{"type":"object","additionalProperties":false,"required":["room_id"],"properties":{`+roomID+`}}`,
			`{"type":"object","properties":{"apps":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					RoomID string `json:"room_id"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ReadRoom(ctx, p, a.RoomID)
			}),

		newTool(ToolsetRooms, "list_room_apps", auth.ScopeRead,
			"List a cloud Room's launcher apps in order.",
			`{"type":"object","additionalProperties":false,"required":["room_id"],"properties":{`+roomID+`,`+cursor+`,`+limit+`}}`,
			`{"type":"object","properties":{"apps":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					RoomID string `json:"room_id"`
					Cursor string `json:"cursor"`
					Limit  int    `json:"limit"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ListRoomApps(ctx, p, a.RoomID, a.Cursor, a.Limit)
			}),

		newTool(ToolsetRooms, "read_room_app_status", auth.ScopeRead,
			"The safe launcher state of one app (pending_review, declined, in_launcher, removed) and latest build state. No config, files, logs or secrets.",
			`{"type":"object","additionalProperties":false,"required":["room_id","instance_id"],"properties":{`+roomID+`,"instance_id":{"type":"string","minLength":1,"maxLength":64}}}`,
			`{"type":"object","properties":{"state":{"type":"string"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					RoomID     string `json:"room_id"`
					InstanceID string `json:"instance_id"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ReadRoomAppStatus(ctx, p, a.RoomID, a.InstanceID)
			}),

		newTool(ToolsetRooms, "propose_room_snippet_app", auth.ScopeWrite,
			"Prepare a Room snippet with source files. It appears in the cloud Room launcher only after its owner reviews and approves the full code in osFoundry. "+
				"files must include src/App.tsx (default export: a React component). "+
				"Key, same on retries: \"snip-\" + first 32 hex of sha256 of room_id, name, then each path and content in path order, each prefixed by its byte length (uint64 big-endian).",
			`{"type":"object","properties":{"room_id":{"type":"string"},"name":{"type":"string","maxLength":200},"files":{"type":"object","additionalProperties":{"type":"string"}},"idempotency_key":{"type":"string","minLength":8,"maxLength":128}},"required":["room_id","name","files","idempotency_key"],"additionalProperties":false}`,
			outProposal,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[service.ProposeSnippetArgs](args)
				if err != nil {
					return nil, err
				}
				return svc.ProposeSnippet(ctx, p, a)
			}),

		newTool(ToolsetRooms, "propose_room_repo_app", auth.ScopeWrite,
			"Propose a pinned repository version as a Room app, for apps too large for a snippet. It reaches the launcher only after the owner approves. Key: hash of room, name and version.",
			`{"type":"object","additionalProperties":false,"required":["room_id","name","repository_id","version_id","idempotency_key"],"properties":{`+roomID+
				`,"name":{"type":"string","maxLength":200},"repository_id":{"type":"string","minLength":1,"maxLength":64},"version_id":{"type":"string","minLength":1,"maxLength":64},`+key+`}}`,
			outProposal,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[service.ProposeRepoArgs](args)
				if err != nil {
					return nil, err
				}
				return svc.ProposeRepoApp(ctx, p, a)
			}),

		newTool(ToolsetRooms, "list_repositories", auth.ScopeRead,
			"List repositories and their pinned versions, for propose_room_repo_app.",
			`{"type":"object","additionalProperties":false,"properties":{`+cursor+`,`+limit+`}}`,
			`{"type":"object","properties":{"repositories":{"type":"array"}}}`,
			paged(svc.ListRepositories)),

		newTool(ToolsetEvents, "poll_resource_events", auth.ScopeRead,
			"Events of a Note or Room after cursor (from a write or a poll; none: from now). wait_seconds (≤ 25) returns as soon as one arrives.",
			`{"type":"object","additionalProperties":false,"required":["resource_type","resource_id"],"properties":{"resource_type":{"enum":["note","room"]},"resource_id":{"type":"string","minLength":1,"maxLength":64},`+cursor+`,`+limit+`,"wait_seconds":{"type":"integer","minimum":0,"maximum":25}}}`,
			`{"type":"object","properties":{"events":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					Type   string `json:"resource_type"`
					ID     string `json:"resource_id"`
					Cursor string `json:"cursor"`
					Limit  int    `json:"limit"`
					Wait   int    `json:"wait_seconds"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.PollEvents(ctx, p, a.Type, a.ID, a.Cursor, a.Limit, time.Duration(a.Wait)*time.Second)
			}),
	}
}
