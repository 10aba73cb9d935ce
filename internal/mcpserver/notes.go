package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// The Notes tools: one constructor each, its schema beside its handler.

func noteTools(svc *service.Service) []*Tool {
	return []*Tool{
		listNotes(svc), searchNotes(svc), listNoteTabs(svc), readNoteTab(svc), readSheetRange(svc), listNoteAttachments(svc),
		createNoteTab(svc), editNoteTab(svc), editNoteText(svc), addNoteSource(svc),
	}
}

// slideItem is one slide of an outline.
func slideItem() *jsonschema.Schema {
	return object([]string{"title"}, props{"title": str(1, 500), "body": str(0, 20000), "notes": str(0, 20000)})
}

// cell is one sheet cell: one of four single types. A type array
// (["string", …]) would say the same, but some clients (Gemini) refuse it
// in a tool schema.
func cell() *jsonschema.Schema {
	one := func(t string) *jsonschema.Schema { return &jsonschema.Schema{Type: t} }
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{one("string"), one("number"), one("boolean"), one("null")}}
}

func listNotes(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "list_notes", Scope: auth.ScopeRead, Output: []string{"notes"},
		Description: "List the approved Notes this connection can reach, by title; page with cursor.",
		Input:       object(nil, props{"query": str(0, 200), "cursor": cursorField(), "limit": limitField()}),
	}, svc.ListNotes)
}

func searchNotes(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "search_notes", Scope: auth.ScopeRead, Output: []string{"hits"},
		Description: "Full-text search of the approved Notes this connection can reach: every word must match (\"quoted phrase\", prefix*). Each hit names the tab, where (line, slide, cell), a snippet with «matches», and the Note version.",
		Input: object([]string{"query"}, props{"query": str(1, 200), "tab_type": enum("markdown", "slides", "sheet", "sources", "files"),
			"cursor": cursorField(), "limit": limitField()}),
	}, svc.SearchNotes)
}

func listNoteTabs(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "list_note_tabs", Scope: auth.ScopeRead, Output: []string{"version", "tabs"},
		Description: "List every tab instance and its type. A Note may have multiple Slides or Sheet tabs; use the exact tab ID returned here.",
		Input:       object([]string{"note_id"}, props{"note_id": noteIDField()}),
	}, byID("note_id", svc.ListNoteTabs))
}

func readNoteTab(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "read_note_tab", Scope: auth.ScopeRead, Output: []string{"version"},
		Description: "Read one tab by exact ID, with the Note version to edit against.",
		Input:       object([]string{"note_id", "tab_id"}, props{"note_id": noteIDField(), "tab_id": tabIDField()}),
	}, svc.ReadNoteTab)
}

func readSheetRange(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "read_sheet_range", Scope: auth.ScopeRead, Output: []string{"version"},
		Description: "Read at most 100 x 100 cells of a Sheet tab (0-based; default: first sheet): computed values, and formulas.",
		Input: object([]string{"note_id", "tab_id", "start_row", "start_col", "rows", "cols"}, props{
			"note_id": noteIDField(), "tab_id": tabIDField(), "sheet_id": str(0, 100),
			"start_row": integer(0), "start_col": integer(0), "rows": integer(1, 100), "cols": integer(1, 100)}),
	}, svc.ReadSheetRange)
}

func listNoteAttachments(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "list_note_attachments", Scope: auth.ScopeRead, Output: []string{"items"},
		Description: "List a Note's sources or files: metadata, never content or links.",
		Input: object([]string{"note_id", "kind"}, props{
			"note_id": noteIDField(), "kind": enum("sources", "files"), "cursor": cursorField(), "limit": limitField()}),
	}, svc.ListNoteAttachments)
}

func createNoteTab(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "create_note_tab", Scope: auth.ScopeWrite, Output: []string{"tab_id", "version"},
		Description: "Create a new Slides or Sheet tab in an approved Note. Use the version from list_note_tabs; returns the exact new tab ID for later edits. An optional outline fills a Slides tab. A repeated idempotency key returns the first tab.",
		Input: object([]string{"note_id", "expected_version", "idempotency_key", "tab_type"}, props{
			"note_id": noteIDField(), "expected_version": expectedField(), "idempotency_key": keyField(),
			"tab_type": enum("slides", "sheet"), "label": str(0, 100), "slides": array(slideItem(), 1, 20)}),
		// Creating adds a tab and replaces nothing: after a conflict the
		// same call, with the current version, is the retry.
		Hint: conflictHint("list_note_tabs", "list_note_tabs shows whether the tab you meant is there already"),
	}, svc.CreateNoteTab)
}

func editNoteTab(svc *service.Service) *Tool {
	in := object([]string{"note_id", "tab_id", "expected_version", "idempotency_key", "operation"}, props{
		"note_id": noteIDField(), "tab_id": tabIDField(), "expected_version": expectedField(), "idempotency_key": keyField(),
		"depends_on": dependsField(),
		"operation":  enum("replace_text", "replace_tab_data", "slide_add", "slides_add_outline", "sheet_set_range"),
		// replace_text
		"text": str(0, 1048576),
		// slide_add
		"title": str(1, 500), "body": str(0, 20000), "notes": str(0, 20000),
		// slides_add_outline
		"slides": array(ref("slide"), 1, 20),
		// sheet_set_range
		"sheet_id": str(0, 100), "start_row": integer(0), "start_col": integer(0),
		"values": array(array(ref("cell"), 0, 100), 0, 100),
		// replace_tab_data
		"data": object(nil, props{
			"slides": array(ref("slide"), 0, 200),
			"sheets": array(object([]string{"name", "cells"}, props{
				"sheet_id": str(0, 0), "name": str(0, 100), "cells": array(array(ref("cell"), 0, 0), 0, 0),
			}), 1, 20),
		}),
	})
	in.Defs = map[string]*jsonschema.Schema{"slide": slideItem(), "cell": cell()}
	return toolFor(spec{Toolset: ToolsetNotes, Name: "edit_note_tab", Scope: auth.ScopeWrite, Output: []string{"version"},
		Description: "Use an exact tab ID and version from read_note_tab. Use replace_text for Note/Markdown, slide_add or slides_add_outline for Slides, sheet_set_range for Sheet, or replace_tab_data for supported content tabs. File and Source attachments cannot be edited through this tool. A repeated idempotency key returns the first result. depends_on: tab IDs you read; others' changes won't refuse it. Cells starting with = are formulas.",
		Input:       in,
		Hint:        editConflictHint,
	}, svc.EditNoteTab)
}

func addNoteSource(svc *service.Service) *Tool {
	return toolFor(spec{Toolset: ToolsetNotes, Name: "add_note_source", Scope: auth.ScopeWrite, Output: []string{"source_id", "version"},
		Description: "Add an HTTP or HTTPS citation to the Sources tab of an approved Note. Uses the Note version and an idempotency key; returns the new source ID. Key: a hash of note_id and the normalized URL (https, lowercase host; no www., fragment, utm_*, trailing /).",
		Input: object([]string{"note_id", "expected_version", "idempotency_key", "title", "url"}, props{
			"note_id": noteIDField(), "expected_version": expectedField(), "idempotency_key": keyField(),
			"title": str(1, 500), "url": str(1, 2048)}),
		// A source is added, never replaced (a page already attached
		// answers its source): after a conflict the same call is the retry.
		Hint: conflictHint("list_note_tabs", "a page already attached answers its existing source"),
	}, svc.AddNoteSource)
}
