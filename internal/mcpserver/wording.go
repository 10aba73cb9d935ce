package mcpserver

import (
	"fmt"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
)

// The domain says what is wrong, in words no door owns ("note "x" was not
// found"); each door says what to do next in its own. Here the MCP door adds
// the tool to call next, by the problem's code and field, so the same
// refusal reads "list_notes shows …" to an agent and names a command in the
// CLI. Code, Field and Details are never changed, only Message extended.

// hint is a tool's own next step for a problem ("" for none).
type hint func(p *problem.Problem) string

// inMCPWords returns p with the next step an agent can take added to its
// message: the tool's own hint first, else the one every tool shares.
func (t *Tool) inMCPWords(p *problem.Problem) *problem.Problem {
	h := ""
	if t.hint != nil {
		h = t.hint(p)
	}
	if h == "" {
		h = commonHint(p)
	}
	if h == "" {
		return p
	}
	c := *p
	c.Message += h
	return &c
}

// commonHint is the next step shared by every tool, by code and field.
func commonHint(p *problem.Problem) string {
	switch p.Code {
	case problem.NotFound:
		switch p.Field {
		case "note_id":
			return "; list_notes shows the approved Notes this connection can reach"
		case "room_id":
			return "; list_rooms shows the cloud Rooms this connection can reach; Local Rooms are unavailable"
		case "repository_id", "version_id":
			return "; list_repositories shows the repositories and their pinned versions"
		case "instance_id":
			return "; list_room_apps shows the launcher"
		}
	case note.CodeUnknownTab:
		return " list_note_tabs shows them with the Note's version."
	case note.CodeWrongTabType:
		switch p.Details["tab_type"] {
		case note.TypeSources, note.TypeFiles:
			return "; add_note_source adds a citation"
		case note.TypeMarkdown, note.TypeSlides:
			if strings.Contains(p.Message, "range of cells") {
				return "; read_note_tab reads it"
			}
		}
		return "; list_note_tabs shows each tab's type"
	case problem.Invalid:
		if p.Field == "repository_id" || p.Field == "version_id" {
			return "; list_repositories shows them"
		}
	case problem.Limit:
		if strings.HasPrefix(p.Field, "files") {
			return " (`foundry repo push`, then propose_room_repo_app with a pinned version from list_repositories)"
		}
	case problem.Conflict:
		if p.Field == "expected_version" {
			return fmt.Sprintf(". Read it again and write with expected_version %v.", p.Details["current_version"])
		}
	}
	return ""
}

// ahead reports whether a version_conflict is one of an expected_version
// the resource never had (rather than one it has moved on from).
func ahead(p *problem.Problem) bool {
	e, ok1 := p.Details["expected_version"].(int64)
	c, ok2 := p.Details["current_version"].(int64)
	return ok1 && ok2 && e > c
}

// conflictHint is the next step after a version_conflict on a tool whose
// resend can overwrite nothing (it adds, never replaces): nothing was
// written, so the same call with the current version and the same key is
// the retry. reread names the tool that shows the current version; aside
// is said after the retry.
func conflictHint(reread, aside string) hint {
	return func(p *problem.Problem) string {
		if p.Code != problem.Conflict || p.Field != "expected_version" {
			return ""
		}
		if ahead(p) {
			return fmt.Sprintf(": read it again (%s) and use the version it returns. Nothing was written, so keep the same idempotency_key.", reread)
		}
		return fmt.Sprintf(". Nothing was written: send the call again with expected_version %v and the same idempotency_key (%s).", p.Details["current_version"], aside)
	}
}

// editConflictHint is edit_note_tab's: an edit replaces what it was based
// on, so a stale one must be redone on the current content, never resent.
func editConflictHint(p *problem.Problem) string {
	if p.Code != problem.Conflict || p.Field != "expected_version" {
		return ""
	}
	if ahead(p) {
		return ": read the tab again (read_note_tab), redo your change on what it returns, and write with the version it returns and a NEW idempotency_key."
	}
	return fmt.Sprintf(". Read the tab again (read_note_tab), redo your change on what is there now, and write with expected_version %v and a NEW idempotency_key. Do not just resend the same payload with the new version: that overwrites the other edit.", p.Details["current_version"])
}
