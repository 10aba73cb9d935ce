package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// sheet adds a Sheet tab as the agent and returns its ID.
func (f *fixture) sheet(t *testing.T) string {
	t.Helper()
	res, err := f.svc.CreateNoteTab(context.Background(), service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "sheet-tab-1", TabType: note.TypeSheet, Label: "Numbers"})
	if err != nil {
		t.Fatal(err)
	}
	return res.TabID
}

// setCells writes one row of cells at the top left as a person.
func (f *fixture) setCells(t *testing.T, tabID string, row ...any) int64 {
	t.Helper()
	res, err := f.svc.EditNoteTab(context.Background(), f.person, service.EditTabArgs{NoteID: f.noteID, TabID: tabID, ExpectedVersion: f.version(t), Operation: "sheet_set_range",
		StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{row}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

func (f *fixture) cell(t *testing.T, tabID string, row, col int) any {
	t.Helper()
	res, err := f.svc.ReadSheetRange(context.Background(), service.Agent(f.read), service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: f.noteID, TabID: tabID}, StartRow: row, StartCol: col, Rows: 1, Cols: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Values) == 0 || len(res.Values[0]) == 0 {
		return nil
	}
	return res.Values[0][0]
}

// wantConflict fails unless err is version_conflict against expected that
// names exactly the tabs changed.
func wantConflict(t *testing.T, err error, expected int64, changed ...string) {
	t.Helper()
	p := wantProblem(t, err, problem.Conflict, "expected_version")
	if p.Details["expected_version"] != expected {
		t.Errorf("expected_version = %v, want %d", p.Details["expected_version"], expected)
	}
	got, _ := p.Details["changed_tab_ids"].([]string)
	if !slices.Equal(got, changed) {
		t.Errorf("changed_tab_ids = %v, want %v", got, changed)
	}
}

func TestDependsOnDecidesByTab(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		sheet := f.sheet(t)
		f.setText(t, "# Plan\n")
		v := f.version(t)
		set := func(key string, expected int64, deps []string, val any) (service.TabEdited, error) {
			return f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: sheet, ExpectedVersion: expected, IdempotencyKey: key,
				Operation: "sheet_set_range", StartRow: ptr(1), StartCol: ptr(0), Values: [][]any{{val}}, DependsOn: deps})
		}

		// A person types in the markdown tab after the agent read the Sheet.
		f.setText(t, "# Plan\n\nTyped while the agent thought.\n")

		// Without depends_on the check is the Note's, as published.
		_, err := set("sheet-write-1", v, nil, "a")
		wantConflict(t, err, v, note.TypeMarkdown)

		// With it, a change of another tab is no conflict: the write
		// applies on the current version, which it answers.
		res, err := set("sheet-write-1", v, []string{sheet}, "a")
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != v+2 || !slices.Equal(res.ChangedTabIDs, []string{sheet}) || res.Replayed {
			t.Errorf("answer = %+v, want version %d changing %s", res, v+2, sheet)
		}
		if got := f.cell(t, sheet, 1, 0); got != "a" {
			t.Errorf("cell = %v, want a", got)
		}
		if got := f.text(t); got != "# Plan\n\nTyped while the agent thought.\n" {
			t.Errorf("the person's text is lost: %q", got)
		}
		// The same key again, with or without depends_on, replays: it is
		// part of the guard, not of what the write means.
		again, err := set("sheet-write-1", v, nil, "a")
		if err != nil || !again.Replayed || again.Version != res.Version {
			t.Errorf("resend = %+v, %v; want the first result replayed", again, err)
		}

		// The tab the write replaces changed: refused, naming it.
		v = f.version(t)
		f.setCells(t, sheet, "typed")
		_, err = set("sheet-write-2", v, []string{}, "b")
		wantConflict(t, err, v, sheet)

		// A tab it depends on changed: refused, naming it (and every tab
		// changed since, as today).
		v = f.version(t)
		f.setText(t, "# Plan\n\nThe numbers changed.\n")
		f.setCells(t, sheet, "typed again")
		_, err = set("sheet-write-3", v, []string{note.TypeMarkdown}, "c")
		wantConflict(t, err, v, note.TypeMarkdown, sheet)
		v = f.version(t)
		f.setText(t, "# Plan\n\nAnd again.\n")
		_, err = set("sheet-write-3", v, []string{note.TypeMarkdown, sheet}, "c")
		wantConflict(t, err, v, note.TypeMarkdown)
		if got := f.cell(t, sheet, 1, 0); got != "a" {
			t.Errorf("a refused write wrote: cell = %v", got)
		}

		// A version the Note never had is refused whatever depends_on says.
		_, err = set("sheet-write-4", f.version(t)+5, []string{sheet}, "d")
		wantProblem(t, err, problem.Conflict, "expected_version", "ahead")

		// depends_on names tabs of this Note.
		for _, bad := range []string{"sheet-9-nope", "Numbers", "slides"} {
			_, err = set("sheet-write-5", f.version(t), []string{sheet, bad}, "e")
			wantProblem(t, err, problem.Invalid, "depends_on[1]", bad)
		}
	})
}

// TestDependsOnOtherNoteWrites: a new tab replaces nothing, a citation the
// Sources tab; either applies over a change of another tab.
func TestDependsOnOtherNoteWrites(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		v := f.version(t)
		f.setText(t, "typed")
		created, err := f.svc.CreateNoteTab(ctx, agent, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "new-tab-1", TabType: note.TypeSlides, DependsOn: []string{note.TypeSources}})
		if err != nil || created.Version != v+2 {
			t.Fatalf("create_note_tab = %+v, %v", created, err)
		}
		src, err := f.svc.AddNoteSource(ctx, agent, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "source-key-1", Title: "Ref", URL: "https://example.org/a", DependsOn: []string{}})
		if err != nil || src.Version != v+3 {
			t.Fatalf("add_note_source = %+v, %v", src, err)
		}
		_, err = f.svc.AddNoteSource(ctx, agent, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "source-key-2", Title: "Ref", URL: "https://example.org/b", DependsOn: []string{}})
		wantConflict(t, err, v, note.TypeMarkdown, created.TabID, note.TypeSources)
	})
}

func TestDependsOnText(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		const start = "# Plan\n\nIntro.\n\nShip in May. Budget: 10.\n"
		v := f.setText(t, start)
		edit := func(key string, expected int64, deps []string, e ...string) (service.TextEdited, error) {
			return f.svc.EditNoteText(ctx, agent, service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: expected, IdempotencyKey: key, Edits: edits(e...), DependsOn: deps})
		}

		// A person types in another paragraph, before the agent's, and
		// even types its old_text there: the edit still lands where it
		// was made, mapped through the typing.
		typed := "# Plan\n\nIntro: ✍️ in May we said so.\n\nShip in May. Budget: 10.\n"
		f.setText(t, typed)
		_, err := edit("text-edit-1", v, nil, "Ship in May.", "Ship in June.")
		wantConflict(t, err, v, note.TypeMarkdown)
		res, err := edit("text-edit-1", v, []string{}, "Ship in May.", "Ship in June.", "10.", "12.")
		if err != nil {
			t.Fatal(err)
		}
		want := "# Plan\n\nIntro: ✍️ in May we said so.\n\nShip in June. Budget: 12.\n"
		if got := f.text(t); got != want {
			t.Fatalf("text = %q, want %q", got, want)
		}
		if res.Version != v+2 || res.EditsApplied != 2 || res.Bytes != len(want) {
			t.Errorf("answer = %+v", res)
		}

		// A change of another tab leaves the text as it was: the edits
		// apply as they are.
		v = f.version(t)
		sheet := f.sheet(t)
		if _, err := edit("text-edit-2", v, []string{}, "Intro:", "Preface:"); err != nil {
			t.Fatal(err)
		}
		want = strings.Replace(want, "Intro:", "Preface:", 1)

		// The same paragraph: the text an old_text names was changed.
		v = f.version(t)
		f.setText(t, strings.Replace(want, "Budget: 12.", "Budget: 12 (approved).", 1))
		_, err = edit("text-edit-3", v, []string{}, "Budget: 12.", "Budget: 15.")
		wantConflict(t, err, v, note.TypeMarkdown)

		// A tab it depends on changed (the Sheet the numbers come from).
		v = f.version(t)
		f.setCells(t, sheet, 20)
		_, err = edit("text-edit-4", v, []string{sheet}, "Ship in June.", "Ship in July.")
		wantConflict(t, err, v, sheet)
		// depends_on naming the markdown tab makes any typing a conflict.
		v = f.version(t)
		f.setText(t, "Top line.\n"+f.text(t))
		_, err = edit("text-edit-5", v, []string{note.TypeMarkdown}, "Ship in June.", "Ship in July.")
		wantConflict(t, err, v, note.TypeMarkdown)
		// An old_text not found exactly once in the text it was made on is
		// not guessed at.
		v = f.version(t)
		f.setText(t, f.text(t)+"More.\n")
		_, err = edit("text-edit-6", v, []string{}, "Nowhere", "x")
		wantConflict(t, err, v, note.TypeMarkdown)
	})
}

// TestDependsOnManyKeystrokes: a run of typing between the read and the
// write is mapped as one, whatever each keystroke's version.
func TestDependsOnManyKeystrokes(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		v := f.setText(t, "A.\n\nB.\n")
		text := "A.\n\nB.\n"
		for i := range 5 {
			text = strings.Replace(text, ".\n\nB", fmt.Sprintf("%d.\n\nB", i), 1)
			f.setText(t, text)
		}
		res, err := f.svc.EditNoteText(ctx, service.Agent(f.write), service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: "text-many-1", Edits: edits("B.", "Bee."), DependsOn: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.text(t), "A01234.\n\nBee.\n"; got != want || res.Version != v+6 {
			t.Errorf("text = %q (version %d), want %q (version %d)", got, res.Version, want, v+6)
		}
	})
}
