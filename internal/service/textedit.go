package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"foundry/internal/changeset"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// EditTextArgs are edit_note_text's arguments. TabID is optional and, when
// given, must be the markdown tab's.
type EditTextArgs struct {
	NoteID          string          `json:"note_id"`
	TabID           string          `json:"tab_id,omitempty"`
	ExpectedVersion int64           `json:"expected_version"`
	IdempotencyKey  string          `json:"idempotency_key"`
	Edits           []note.TextEdit `json:"edits"`
	// DependsOn, when sent (not nil; empty: none), names the other tabs the
	// edits were based on: the write is then refused only when one of them,
	// or the text an old_text names, changed since ExpectedVersion, and
	// otherwise lands on the current text (depends.go).
	DependsOn []string `json:"depends_on,omitempty"`
}

// TextEdited is edit_note_text's answer: the Note's version after the
// edits, how many were applied (all of them) and the text's new size.
type TextEdited struct {
	NoteWritten
	TabID        string `json:"tab_id"`
	EditsApplied int    `json:"edits_applied"`
	Bytes        int    `json:"bytes"`
}

// EditNoteText applies exact replacements to the markdown tab, in order,
// under the same version and key contract as every Note write. A stale
// version is answered version_conflict saying, per edit, how often its
// old_text occurs in the current text (old_text_found) and whether all of
// the edits would apply there as they are (edits_apply).
func (s *Service) EditNoteText(ctx context.Context, c Caller, a EditTextArgs) (TextEdited, error) {
	if a.TabID != "" && a.TabID != note.TypeMarkdown {
		return TextEdited{}, problem.New(problem.Invalid, "tab_id",
			"only the markdown tab's text is edited by replacements: omit tab_id or send \"markdown\" (got %s); slides and sheet tabs are edited by operation", note.Quote(a.TabID))
	}
	// What the call means is its edits, in order: the tab is always the
	// markdown tab, however it was named.
	fp := struct {
		Op    string
		Edits []note.TextEdit
	}{"edit_note_text", a.Edits}
	// What the edits replace is the text each old_text names, not the tab:
	// the text's own check (textRebase) decides a markdown change.
	deps := newDepends(a.DependsOn)
	tr := &textRebase{s: s, edits: a.Edits}
	if deps != nil {
		deps.text = tr
	}
	// The edits are logged for live editors as the replacements they are,
	// not as one diff from the first to the last: a person typing between
	// two of them keeps their place.
	logged := &textPush{}
	res, err := noteWrite(ctx, s, c, a.NoteID, Guard{a.ExpectedVersion, a.IdempotencyKey}, noteOp{kind: "text_edited", sizeField: "edits", meaning: fp,
		pre: func() error { return note.CheckTextEdits(a.Edits) }, deps: deps, text: logged},
		func(cur *store.Resource, d *note.Doc, _ *store.Change) (TextEdited, []string, error) {
			logged.sets, logged.applied = nil, false
			text, err := tr.edit(cur.Version, d.Markdown)
			if err != nil {
				return TextEdited{}, nil, err
			}
			if set, ok := tr.changes(cur.Version, d.Markdown); ok {
				logged.sets, logged.applied = []changeset.ChangeSet{set}, true
			}
			res := TextEdited{TabID: note.TypeMarkdown, EditsApplied: len(a.Edits), Bytes: len(text)}
			if err := note.ReplaceText(d, note.TypeMarkdown, text); err != nil {
				return TextEdited{}, nil, err
			}
			return res, []string{note.TypeMarkdown}, nil
		})
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == problem.Conflict && pr.Field == "expected_version" {
		s.explainTextConflict(ctx, c, a, pr)
	}
	return res, err
}

// explainTextConflict adds to a version_conflict whether each old_text is
// still found exactly once in the current text, in order as EditText would
// apply them: old_text_found (the count per edit) and edits_apply (all
// ones). The current text is read after the conflict, outside its
// transaction; if the Note moved on again meanwhile, the counts would be
// of another version than current_version, so none are given.
func (s *Service) explainTextConflict(ctx context.Context, c Caller, a EditTextArgs, pr *problem.Problem) {
	current, ok := pr.Details["current_version"].(int64)
	if !ok {
		return
	}
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil || r.Version != current {
		return
	}
	counts := note.MatchEdits(d.Markdown, a.Edits)
	var off []string
	for i, n := range counts {
		switch {
		case n == 0:
			off = append(off, fmt.Sprintf("edits[%d].old_text is not found", i))
		case n > 1:
			off = append(off, fmt.Sprintf("edits[%d].old_text is found %d times", i, n))
		}
	}
	pr.With("old_text_found", counts).With("edits_apply", len(off) == 0)
	if len(off) == 0 {
		pr.Message += fmt.Sprintf("; every old_text is still found exactly once at version %d", current)
		return
	}
	pr.Message += fmt.Sprintf("; at version %d %s", current, strings.Join(off, ", "))
}
