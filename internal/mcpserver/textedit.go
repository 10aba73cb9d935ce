package mcpserver

import (
	"fmt"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// editNoteText edits the markdown tab by exact replacements, so a small
// change to a big text is a small request.
func editNoteText(svc *service.Service) *Tool {
	edit := object([]string{"old_text", "new_text"}, props{
		"old_text": str(1, note.MaxEditTextBytes), "new_text": str(0, note.MaxEditTextBytes)})
	return toolFor(spec{Toolset: ToolsetNotes, Name: "edit_note_text", Scope: auth.ScopeWrite, Output: []string{"version"},
		Description: "Exact replacements in the Markdown tab, in order; each old_text must occur once. Version from read_note_tab. depends_on: [] or tabs you read; typing elsewhere won't refuse it.",
		Input: object([]string{"note_id", "expected_version", "idempotency_key", "edits"}, props{
			"note_id": noteIDField(), "tab_id": enum(note.TypeMarkdown), "expected_version": expectedField(), "idempotency_key": keyField(),
			"edits": array(edit, 1, note.MaxTextEdits), "depends_on": dependsField()}),
		Hint: textHint,
	}, svc.EditNoteText)
}

// textHint is edit_note_text's next step. After a version_conflict the
// answer says whether the same edits still apply (edits_apply): an exact
// replacement only ever replaces the text its old_text names, so when each
// is still found exactly once, resending them overwrites nothing the other
// edit wrote. An old_text that does not match is fixed from the current
// text.
func textHint(p *problem.Problem) string {
	switch p.Code {
	case problem.Invalid:
		if p.Field == "tab_id" {
			return ": edit_note_tab does that"
		}
	case note.CodeTextNotFound, note.CodeTextNotUnique:
		return ". Nothing was written: read_note_tab shows the current text"
	case problem.Conflict:
		if p.Field != "expected_version" {
			return ""
		}
		v := p.Details["current_version"]
		switch p.Details["edits_apply"] {
		case true:
			return fmt.Sprintf(". Nothing was written. The edits apply to version %v as they are and replace only the text each old_text names, so resending them overwrites nothing the other edit wrote: if they still make sense there, send them with expected_version %v and a NEW idempotency_key; else read the tab again (read_note_tab) and redo them.", v, v)
		case false:
			return fmt.Sprintf(". Nothing was written. Read the tab again (read_note_tab), redo the edits whose old_text is not found exactly once on what is there now, and write with expected_version %v and a NEW idempotency_key.", v)
		}
		// Not known (the Note moved on again while the answer was made).
		return ". Nothing was written. Read the tab again (read_note_tab), check each old_text against what is there now, and write with the version it returns and a NEW idempotency_key."
	}
	return ""
}
