package mcpserver

import (
	"context"
	"encoding/json"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// Schema pieces shared by the Notes tools. Written by hand, bounds and all,
// so the published contract is visible here and in the snapshots.
const (
	noteID    = `"note_id":{"type":"string","minLength":1,"maxLength":64}`
	tabID     = `"tab_id":{"type":"string","minLength":1,"maxLength":100}`
	expected  = `"expected_version":{"type":"integer","minimum":1}`
	key       = `"idempotency_key":{"type":"string","minLength":8,"maxLength":128}`
	cursor    = `"cursor":{"type":"string","maxLength":200}`
	limit     = `"limit":{"type":"integer","minimum":1,"maximum":50}`
	slideItem = `{"type":"object","required":["title"],"additionalProperties":false,"properties":{"title":{"type":"string","minLength":1,"maxLength":500},"body":{"type":"string","maxLength":20000},"notes":{"type":"string","maxLength":20000}}}`
	outline   = `"slides":{"type":"array","minItems":1,"maxItems":20,"items":` + slideItem + `}`
	// A cell is one of four single types: a type array (["string", …]) is
	// what some clients (Gemini) refuse in a tool schema.
	cell = `{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]}`
	// Output schemas name the key fields of a result, kept short: tools/list
	// is paid for in every client's context. An error result carries error,
	// field and message instead.
	outWrite = `{"type":"object","properties":{"version":{"type":"integer"},"replayed":{"type":"boolean"}}}`
	outRead  = `{"type":"object","properties":{"version":{"type":"integer"}}}`
)

func withHint(h hint, t *Tool) *Tool { t.hint = h; return t }

func noteTools(svc *service.Service) []*Tool {
	return []*Tool{
		newTool(ToolsetNotes, "list_notes", auth.ScopeRead,
			"List the approved Notes this connection can reach. Filter by title; page with cursor.",
			`{"type":"object","additionalProperties":false,"properties":{"query":{"type":"string","maxLength":200},`+cursor+`,`+limit+`}}`,
			`{"type":"object","properties":{"notes":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					Query  string `json:"query"`
					Cursor string `json:"cursor"`
					Limit  int    `json:"limit"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ListNotes(ctx, p, a.Query, a.Cursor, a.Limit)
			}),

		newTool(ToolsetNotes, "list_note_tabs", auth.ScopeRead,
			"List every tab instance and its type. A Note may have multiple Slides or Sheet tabs; use the exact tab ID returned here.",
			`{"type":"object","additionalProperties":false,"required":["note_id"],"properties":{`+noteID+`}}`,
			`{"type":"object","properties":{"version":{"type":"integer"},"tabs":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					NoteID string `json:"note_id"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ListNoteTabs(ctx, p, a.NoteID)
			}),

		newTool(ToolsetNotes, "read_note_tab", auth.ScopeRead,
			"Read one tab by exact tab ID, with the Note version to edit against.",
			`{"type":"object","additionalProperties":false,"required":["note_id","tab_id"],"properties":{`+noteID+`,`+tabID+`}}`,
			outRead,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					NoteID string `json:"note_id"`
					TabID  string `json:"tab_id"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ReadNoteTab(ctx, p, a.NoteID, a.TabID)
			}),

		newTool(ToolsetNotes, "read_sheet_range", auth.ScopeRead,
			"Read at most 100 x 100 cells of a Sheet tab (0-based; default: first sheet).",
			`{"type":"object","additionalProperties":false,"required":["note_id","tab_id","start_row","start_col","rows","cols"],"properties":{`+noteID+`,`+tabID+
				`,"sheet_id":{"type":"string","maxLength":100},"start_row":{"type":"integer","minimum":0},"start_col":{"type":"integer","minimum":0},"rows":{"type":"integer","minimum":1,"maximum":100},"cols":{"type":"integer","minimum":1,"maximum":100}}}`,
			outRead,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					NoteID   string `json:"note_id"`
					TabID    string `json:"tab_id"`
					SheetID  string `json:"sheet_id"`
					StartRow int    `json:"start_row"`
					StartCol int    `json:"start_col"`
					Rows     int    `json:"rows"`
					Cols     int    `json:"cols"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ReadSheetRange(ctx, p, a.NoteID, a.TabID, a.SheetID, a.StartRow, a.StartCol, a.Rows, a.Cols)
			}),

		newTool(ToolsetNotes, "list_note_attachments", auth.ScopeRead,
			"List a Note's sources or files: metadata only, never content or links.",
			`{"type":"object","additionalProperties":false,"required":["note_id","kind"],"properties":{`+noteID+`,"kind":{"enum":["sources","files"]},`+cursor+`,`+limit+`}}`,
			`{"type":"object","properties":{"items":{"type":"array"}}}`,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[struct {
					NoteID string `json:"note_id"`
					Kind   string `json:"kind"`
					Cursor string `json:"cursor"`
					Limit  int    `json:"limit"`
				}](args)
				if err != nil {
					return nil, err
				}
				return svc.ListNoteAttachments(ctx, p, a.NoteID, a.Kind, a.Cursor, a.Limit)
			}),

		withHint(conflictHint("list_note_tabs", "list_note_tabs shows whether the tab you meant is there already"), newTool(ToolsetNotes, "create_note_tab", auth.ScopeWrite,
			"Create a new Slides or Sheet tab in an approved Note. Use the version from list_note_tabs; returns the exact new tab ID for later edits. An optional outline fills a Slides tab. A repeated idempotency key returns the first tab. One key per intended tab; keep it on retries.",
			`{"type":"object","additionalProperties":false,"required":["note_id","expected_version","idempotency_key","tab_type"],"properties":{`+noteID+`,`+expected+`,`+key+
				`,"tab_type":{"enum":["slides","sheet"]},"label":{"type":"string","maxLength":100},`+outline+`}}`,
			outWrite,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[service.CreateTabArgs](args)
				if err != nil {
					return nil, err
				}
				return svc.CreateNoteTab(ctx, p, a)
			})),

		withHint(editConflictHint, newTool(ToolsetNotes, "edit_note_tab", auth.ScopeWrite,
			"Use an exact tab ID and version from read_note_tab. Use replace_text for Note/Markdown, slide_add or slides_add_outline for Slides, sheet_set_range for Sheet, or replace_tab_data for supported content tabs. File and Source attachments cannot be edited through this tool. A repeated idempotency key returns the first result. On version_conflict: re-read, redo, new key.",
			`{"type":"object","additionalProperties":false,"required":["note_id","tab_id","expected_version","idempotency_key","operation"],"properties":{`+noteID+`,`+tabID+`,`+expected+`,`+key+
				`,"operation":{"enum":["replace_text","replace_tab_data","slide_add","slides_add_outline","sheet_set_range"]},"text":{"type":"string","maxLength":1048576},"title":{"type":"string","minLength":1,"maxLength":500},"body":{"type":"string","maxLength":20000},"notes":{"type":"string","maxLength":20000},"slides":{"type":"array","minItems":1,"maxItems":20,"items":{"$ref":"#/$defs/slide"}}`+
				`,"sheet_id":{"type":"string","maxLength":100},"start_row":{"type":"integer","minimum":0},"start_col":{"type":"integer","minimum":0},"values":{"type":"array","maxItems":100,"items":{"type":"array","maxItems":100,"items":{"$ref":"#/$defs/cell"}}}`+
				`,"data":{"type":"object","additionalProperties":false,"properties":{"slides":{"type":"array","maxItems":200,"items":{"$ref":"#/$defs/slide"}},"sheets":{"type":"array","minItems":1,"maxItems":20,"items":{"type":"object","additionalProperties":false,"required":["name","cells"],"properties":{"sheet_id":{"type":"string"},"name":{"type":"string","maxLength":100},"cells":{"type":"array","items":{"type":"array","items":{"$ref":"#/$defs/cell"}}}}}}}}},`+
				`"$defs":{"slide":`+slideItem+`,"cell":`+cell+`}}`,
			outWrite,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[service.EditTabArgs](args)
				if err != nil {
					return nil, err
				}
				return svc.EditNoteTab(ctx, p, a)
			})),

		withHint(conflictHint("list_note_tabs", "a page already attached answers its existing source"), newTool(ToolsetNotes, "add_note_source", auth.ScopeWrite,
			"Add an HTTP or HTTPS citation to the Sources tab of an approved Note. Uses the Note version and an idempotency key; returns the new source ID. Key: a hash of note_id and the normalized URL (https, lower-case host without www., no fragment, no utm_*, no trailing slash).",
			`{"type":"object","additionalProperties":false,"required":["note_id","expected_version","idempotency_key","title","url"],"properties":{`+noteID+`,`+expected+`,`+key+
				`,"title":{"type":"string","minLength":1,"maxLength":500},"url":{"type":"string","minLength":1,"maxLength":2048}}}`,
			outWrite,
			func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
				a, err := decode[service.AddSourceArgs](args)
				if err != nil {
					return nil, err
				}
				return svc.AddNoteSource(ctx, p, a)
			})),
	}
}
