package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// setText makes the markdown tab hold text, as a person's save, and returns
// the new version.
func (f *fixture) setText(t *testing.T, text string) int64 {
	t.Helper()
	res, err := f.svc.EditNoteTab(context.Background(), f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, ExpectedVersion: f.version(t), Operation: "replace_text", Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

func (f *fixture) text(t *testing.T) string {
	t.Helper()
	res, err := f.svc.ReadNoteTab(context.Background(), service.Agent(f.read), service.TabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	return *res.Text
}

func edits(pairs ...string) []note.TextEdit {
	var out []note.TextEdit
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, note.TextEdit{OldText: pairs[i], NewText: pairs[i+1]})
	}
	return out
}

func TestEditNoteTextAppliesAndReplays(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		v := f.setText(t, "# Plan\n\nShip in May.\nBudget: 10.\n")
		a := service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "text-edit-1",
			Edits: edits("May", "June", "10.", "12 (was 10)."), // the second new_text holds its old_text
		}
		res, err := f.svc.EditNoteText(ctx, service.Agent(f.write), a)
		if err != nil {
			t.Fatal(err)
		}
		want := "# Plan\n\nShip in June.\nBudget: 12 (was 10).\n"
		if res.Version != v+1 || res.NoteID != f.noteID || res.TabID != "markdown" || res.EditsApplied != 2 || res.Bytes != len(want) || res.Replayed || res.Cursor == "" {
			t.Errorf("answer = %+v", res)
		}
		if got := f.text(t); got != want {
			t.Fatalf("text = %q, want %q", got, want)
		}

		// The same key and edits, with the old version: the first result,
		// and the edits are not applied twice. Naming the tab, which means
		// the same, replays too.
		a.TabID = "markdown"
		again, err := f.svc.EditNoteText(ctx, service.Agent(f.write), a)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Replayed || again.Version != res.Version || again.Bytes != res.Bytes || again.EditsApplied != 2 {
			t.Errorf("replay = %+v, first %+v", again, res)
		}
		if got := f.text(t); got != want || f.version(t) != v+1 {
			t.Errorf("after the replay: version %d, text %q", f.version(t), got)
		}

		// The same key with other edits is refused, never answered with
		// the first result.
		other := a
		other.Edits = edits("June", "July")
		_, err = f.svc.EditNoteText(ctx, service.Agent(f.write), other)
		wantProblem(t, err, problem.KeyReused, "idempotency_key", "text-edit-1", "fresh key")
		// The same edits in another order are another request.
		other.Edits = []note.TextEdit{a.Edits[1], a.Edits[0]}
		_, err = f.svc.EditNoteText(ctx, service.Agent(f.write), other)
		wantProblem(t, err, problem.KeyReused, "idempotency_key")

		// Replacements that change nothing make no version.
		same, err := f.svc.EditNoteText(ctx, service.Agent(f.write), service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: v + 1, IdempotencyKey: "text-edit-same",
			Edits: edits("June", "June")})
		if err != nil || same.Version != v+1 || f.version(t) != v+1 {
			t.Errorf("an edit that changes nothing: %+v, %v; Note at version %d", same, err, f.version(t))
		}
	})
}

func TestEditNoteTextRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		v := f.setText(t, "one TODO\ntwo TODO\nthree\n")
		try := func(key string, version int64, e []note.TextEdit) error {
			_, err := f.svc.EditNoteText(ctx, service.Agent(f.write), service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: version, IdempotencyKey: key, Edits: e})
			return err
		}
		wantProblem(t, try("text-refused-1", v, edits("TODO", "DONE")), note.CodeTextNotUnique, "edits[0].old_text", "found 2 times")
		wantProblem(t, try("text-refused-1", v, edits("three", "3", "four", "4")), note.CodeTextNotFound, "edits[1].old_text", "not found")
		if f.version(t) != v || f.text(t) != "one TODO\ntwo TODO\nthree\n" {
			t.Fatalf("a refused call wrote: version %d, text %q", f.version(t), f.text(t))
		}
		// Nothing was recorded under the key: fixed, the same key applies.
		if err := try("text-refused-1", v, edits("one TODO", "one DONE")); err != nil {
			t.Fatalf("the fixed call with the same key: %v", err)
		}

		// Rules of the edits themselves hold in every version, so a stale
		// call that could never apply is refused for what is wrong with it.
		wantProblem(t, try("text-refused-2", v, nil), problem.Invalid, "edits")
		wantProblem(t, try("text-refused-2", v, edits("", "x")), problem.Invalid, "edits[0].old_text", "empty")
		wantProblem(t, try("text-refused-2", v, edits("x", strings.Repeat("x", note.MaxEditTextBytes+1))), problem.Limit, "edits[0].new_text")
		_, err := f.svc.EditNoteText(ctx, service.Agent(f.write), service.EditTextArgs{NoteID: f.noteID, TabID: "slides-1-abc", ExpectedVersion: v, IdempotencyKey: "text-refused-3", Edits: edits("a", "b")})
		wantProblem(t, err, problem.Invalid, "tab_id", "only the markdown tab", "by operation")

		// The result obeys the markdown limit.
		v = f.setText(t, strings.Repeat("x", note.MaxMarkdownBytes-10)+"END")
		wantProblem(t, try("text-refused-4", v, edits("END", strings.Repeat("y", 20))), problem.Limit, "edits", "1 MiB markdown limit")

		// A read-only connection writes nothing.
		_, err = f.svc.EditNoteText(ctx, service.Agent(f.read), service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "text-refused-5", Edits: edits("END", "FIN")})
		wantProblem(t, err, problem.Scope, "", "read-only")
		if f.version(t) != v {
			t.Errorf("a refused call wrote a version")
		}
	})
}

// A version_conflict says, for each edit, whether its old_text is still
// found exactly once in the current text, so the agent knows whether the
// same edits can simply be sent with the new version.
func TestEditNoteTextConflictSaysWhetherOldTextIsStillThere(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		v := f.setText(t, "# Plan\n\nShip in May.\n\nOwner: Ana\n")
		a := service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "text-conflict-1", Edits: edits("May", "June", "Ana", "Bo")}

		// A person changed another part of the text: both old_texts are
		// still there, once each.
		now := f.setText(t, "# Plan (draft)\n\nShip in May.\n\nOwner: Ana\n")
		_, err := f.svc.EditNoteText(ctx, service.Agent(f.write), a)
		p := wantProblem(t, err, problem.Conflict, "expected_version", "every old_text is still found exactly once at version")
		if p.Details["current_version"] != now || p.Details["edits_apply"] != true || !slices.Equal(p.Details["old_text_found"].([]int), []int{1, 1}) {
			t.Errorf("conflict details = %v", p.Details)
		}
		if ids, _ := p.Details["changed_tab_ids"].([]string); !slices.Equal(ids, []string{"markdown"}) {
			t.Errorf("changed_tab_ids = %v", p.Details["changed_tab_ids"])
		}

		// Now the person rewrote one old_text and duplicated the other.
		now = f.setText(t, "# Plan\n\nShip in spring.\n\nOwner: Ana\nReviewer: Ana\n")
		_, err = f.svc.EditNoteText(ctx, service.Agent(f.write), a)
		p = wantProblem(t, err, problem.Conflict, "expected_version", "edits[0].old_text is not found", "edits[1].old_text is found 2 times")
		if p.Details["current_version"] != now || p.Details["edits_apply"] != false || !slices.Equal(p.Details["old_text_found"].([]int), []int{0, 2}) {
			t.Errorf("conflict details = %v", p.Details)
		}
		if f.version(t) != now {
			t.Errorf("a conflict wrote a version")
		}

		// An expected_version the Note never had says the same.
		a.ExpectedVersion = now + 5
		_, err = f.svc.EditNoteText(ctx, service.Agent(f.write), a)
		p = wantProblem(t, err, problem.Conflict, "expected_version", "ahead")
		if p.Details["edits_apply"] != false {
			t.Errorf("conflict details = %v", p.Details)
		}
	})
}

// BenchmarkEditNoteText: a one-character edit_note_text on a Note whose
// markdown tab holds 1 KiB and 1 MiB, through the service on SQLite. The
// request is the same few bytes for both; what the store writes per
// version is what the report compares (today a whole Note per version).
func BenchmarkEditNoteText(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			svc := service.New(st)
			o, _, err := svc.Bootstrap(ctx, "bench", "owner@example.org")
			if err != nil {
				b.Fatal(err)
			}
			text := strings.Repeat("Lorem ipsum dolor sit amet.\n", (size-64)/28) + "The end is X.\n"
			n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Bench", Approved: true}, func(d *note.Doc) error { d.Markdown = text; return nil })
			if err != nil {
				b.Fatal(err)
			}
			id := n.NoteID
			p := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
			v, i := int64(1), 0
			for b.Loop() {
				from, to := "end is X", "end is Y"
				if i%2 == 1 {
					from, to = to, from
				}
				res, err := svc.EditNoteText(ctx, service.Agent(p), service.EditTextArgs{NoteID: id, ExpectedVersion: v, IdempotencyKey: fmt.Sprintf("bench-key-%d", i), Edits: edits(from, to)})
				if err != nil {
					b.Fatal(err)
				}
				v, i = res.Version, i+1
			}
		})
	}
}
