package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"foundry/internal/changeset"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// depends_on: a Note write may name the tabs whose content it was based on
// (the tabs the agent read). The write is then refused with
// version_conflict exactly when one of those tabs, or what the write
// replaces, changed after its expected_version; a change anywhere else in
// the Note is no conflict, and the write applies on the current version.
// Without depends_on the check is the Note's, as every write's.
//
// It is decided in one place, for every door: the guarded write at the
// expected version answers which tabs changed since (store.ConflictError);
// when none of them meets depends_on ∪ what the write replaces, the same
// guarded write (same idempotency key: its fingerprint leaves the version
// and depends_on out) runs again at the current version, a bounded number
// of times. For an edit of one tab (edit_note_tab's operations, add_note_source)
// what it replaces is that tab; a new tab replaces nothing. For
// edit_note_text it is the text each old_text names: the edits are found
// in the text at expected_version, checked against the markdown changes
// since (a change touching a replaced range is a conflict naming
// "markdown") and mapped through them onto the current text.

// dependsTries bounds the guarded writes of one call with depends_on: a
// Note that moves on under every retry is answered version_conflict.
const dependsTries = 8

// dependsOn is one write's depends_on and what the write replaces.
type dependsOn struct {
	on       []string    // the tab IDs the write was based on, as sent
	replaces []string    // the tabs the write replaces
	text     *textRebase // edit_note_text: its edits, mapped through the text's changes
}

// newDepends is the dependsOn of a write sent with depends_on on (nil: not
// sent, the Note-level check) that replaces the tabs replaces.
func newDepends(on []string, replaces ...string) *dependsOn {
	if on == nil {
		return nil
	}
	return &dependsOn{on: on, replaces: replaces}
}

// static is the rule of depends_on that holds in every version: at most
// one entry per tab a Note can have, each an ID some tab can have.
func (d *dependsOn) static() error {
	if len(d.on) > note.MaxTabsPerNote {
		return problem.New(problem.Limit, "depends_on", "names %d tabs; a Note has at most %d", len(d.on), note.MaxTabsPerNote)
	}
	for i, id := range d.on {
		field := fmt.Sprintf("depends_on[%d]", i)
		if err := CheckID(field, id); err != nil {
			return err
		}
		if _, ok := note.TypeOfID(id); !ok || len(id) > 100 {
			return unknownDep(field, id)
		}
	}
	return nil
}

func unknownDep(field, id string) *problem.Problem {
	return problem.New(problem.Invalid, field, "%s is not a tab of this Note: depends_on takes the exact IDs of the tabs the write was based on, as the Note's tab list gives them", note.Quote(id))
}

// meets reports whether a tab of changed is one the write depends on or
// replaces.
func (d *dependsOn) meets(changed []string) bool {
	for _, id := range changed {
		if slices.Contains(d.on, id) || slices.Contains(d.replaces, id) {
			return true
		}
	}
	return false
}

// depsChecked is edit preceded by the rule of depends_on that depends on
// the version: each tab it names is a tab of the Note the write applies to.
// (A named tab deleted since expected_version is a change of it, refused
// before the edit runs; so one missing here never was the Note's.)
func depsChecked[T any](d *dependsOn, edit noteEdit[T]) noteEdit[T] {
	if d == nil {
		return edit
	}
	return func(cur *store.Resource, doc *note.Doc, ch *store.Change) (T, []string, error) {
		for i, id := range d.on {
			if _, err := note.FindTab(doc, id); err != nil {
				var zero T
				return zero, nil, unknownDep(fmt.Sprintf("depends_on[%d]", i), id)
			}
		}
		return edit(cur, doc, ch)
	}
}

// guardedNote is guardedOut for a Note write: with depends_on (d non-nil)
// a conflict whose changed tabs meet neither depends_on nor what the write
// replaces is retried at the current version. A refusal is always said
// against the caller's expected_version, naming every tab changed since.
func guardedNote[T any, PT noteResult[T]](ctx context.Context, s *Service, m store.Mutation, d *dependsOn) (T, int64, error) {
	if d == nil {
		return guardedOut[T, PT](ctx, s, m)
	}
	if err := d.static(); err != nil {
		var zero T
		return zero, 0, err
	}
	expected := m.ExpectedVersion
	var changed []string // every tab changed since expected, in order
	for try := 1; ; try++ {
		out, err := s.guardedWrite(ctx, m)
		var ce *store.ConflictError
		if !errors.As(err, &ce) {
			return outcomeOf[T, PT](out, err, m)
		}
		for _, id := range ce.Changed {
			if !slices.Contains(changed, id) {
				changed = append(changed, id)
			}
		}
		refuse := func() (T, int64, error) {
			orig := m
			orig.ExpectedVersion = expected
			return outcomeOf[T, PT](out, &store.ConflictError{Current: ce.Current, Changed: changed}, orig)
		}
		// Ahead of the Note (a version it never had), or versionless: no
		// change since is known, so nothing is decided by tab.
		if expected == 0 || expected > ce.Current || try == dependsTries || d.meets(changed) {
			return refuse()
		}
		if d.text != nil && slices.Contains(changed, note.TypeMarkdown) {
			ok, err := d.text.rebase(ctx, m.Workspace, m.ID, expected, ce.Current)
			if err != nil {
				var zero T
				return zero, 0, err
			}
			if !ok {
				return refuse()
			}
		}
		m.ExpectedVersion = ce.Current
	}
}

// textRebase is edit_note_text's part of depends_on: where its edits land
// when the markdown text changed since the version they were made on.
type textRebase struct {
	s     *Service
	edits []note.TextEdit
	base  *string // the text at expected_version, read once
	// mapped, when set, is the edits as one change set of the text at
	// version at: the edits made on the old text, moved through the
	// changes since.
	mapped *changeset.ChangeSet
	at     int64
}

// edit is the text after the edits, on markdown, the text at version v
// the write applies to.
func (t *textRebase) edit(v int64, markdown string) (string, error) {
	if t.mapped == nil || t.at != v {
		return note.EditText(markdown, t.edits)
	}
	text, err := t.mapped.Apply(markdown)
	if err != nil {
		// The log said another text than the Note holds: never guess.
		return "", fmt.Errorf("edit_note_text on version %d: the text's change log does not match it: %w", v, err)
	}
	if len(text) > note.MaxMarkdownBytes {
		return "", problem.New(problem.Limit, "edits",
			"the markdown tab would be %d bytes in UTF-8; it holds at most %d bytes (1 MiB markdown limit)", len(text), note.MaxMarkdownBytes)
	}
	return text, nil
}

// changes is what edit does to markdown, the text at version v, as one
// change set: the mapped edits, or the edits as EditText applies them;
// false when that cannot be said (then the write is logged as its diff).
func (t *textRebase) changes(v int64, markdown string) (changeset.ChangeSet, bool) {
	if t.mapped != nil && t.at == v {
		return *t.mapped, true
	}
	return editChanges(markdown, t.edits)
}

// rebase decides edits made on the text at version expected against the
// text at version current: false (a conflict) when a change since touches
// a range an old_text names, or when that can't be known (the change log
// no longer reaches back, or an old_text was not found exactly once at
// expected); else true, with the edits mapped onto the current text.
func (t *textRebase) rebase(ctx context.Context, ws, noteID string, expected, current int64) (bool, error) {
	t.mapped = nil
	if t.base == nil {
		d, err := t.s.NoteAt(ctx, noteID, expected)
		if err != nil {
			var p *problem.Problem
			if errors.As(err, &p) {
				return false, nil // the version is gone from history
			}
			return false, err
		}
		t.base = &d.Markdown
	}
	mine, ok := editChanges(*t.base, t.edits)
	if !ok {
		return false, nil
	}
	ups, complete, err := t.s.textChangesSince(ctx, ws, noteID, expected)
	if err != nil {
		return false, err
	}
	if !complete {
		return false, nil
	}
	theirs := changeset.Empty(mine.Len())
	for _, u := range ups {
		if u.Version > current {
			break // made after the conflict answered: the next try sees it
		}
		if theirs, err = theirs.Compose(u.Changes); err != nil {
			return false, nil // a log that does not chain is never trusted
		}
	}
	for _, r := range mine.Changes() {
		if theirs.TouchesRange(r.FromA, r.ToA) {
			return false, nil
		}
	}
	mapped, err := mine.Map(theirs, false)
	if err != nil {
		return false, nil
	}
	t.mapped, t.at = &mapped, current
	return true, nil
}

// editChanges is edits, applied in order to text as EditText applies them,
// as one change set of text; false when an old_text is not found exactly
// once, or a new_text holds a carriage return (a change set keeps "\n"
// only, so it would not say the text EditText makes).
func editChanges(text string, edits []note.TextEdit) (changeset.ChangeSet, bool) {
	for _, n := range note.MatchEdits(text, edits) {
		if n != 1 {
			return changeset.ChangeSet{}, false
		}
	}
	cs := changeset.Empty(changeset.Len16(text))
	for _, e := range edits {
		if strings.ContainsRune(e.NewText, '\r') {
			return changeset.ChangeSet{}, false
		}
		at := strings.Index(text, e.OldText)
		from := changeset.Len16(text[:at])
		one, err := changeset.Of([]changeset.Change{{From: from, To: from + changeset.Len16(e.OldText), Insert: e.NewText}}, changeset.Len16(text))
		if err != nil {
			return changeset.ChangeSet{}, false
		}
		if cs, err = cs.Compose(one); err != nil {
			return changeset.ChangeSet{}, false
		}
		text = text[:at] + e.NewText + text[at+len(e.OldText):]
	}
	return cs, true
}
