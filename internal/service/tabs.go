package service

import (
	"context"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// The tab strip: a new slides or sheet tab, a tab renamed or moved, a tab
// deleted (a person's act: the fixed tabs never).

// CreateTabArgs are create_note_tab's arguments.
type CreateTabArgs struct {
	NoteID          string            `json:"note_id"`
	ExpectedVersion int64             `json:"expected_version"`
	IdempotencyKey  string            `json:"idempotency_key"`
	TabType         string            `json:"tab_type"`
	Label           string            `json:"label,omitempty"`
	Slides          []note.SlideInput `json:"slides,omitempty"`
	// DependsOn, when sent (not nil), names the tabs the new tab was based
	// on: only a change of one of them since ExpectedVersion refuses it (a
	// new tab replaces nothing; depends.go).
	DependsOn []string `json:"depends_on,omitempty"`
}

// TabCreated is create_note_tab's answer: the exact ID for later edits.
type TabCreated struct {
	NoteWritten
	TabID  string `json:"tab_id"`
	Type   string `json:"type"`
	Label  string `json:"label"`
	Slides int    `json:"slides"` // how many slides the outline made
}

// CreateNoteTab adds a slides or sheet tab and answers its exact ID.
func (s *Service) CreateNoteTab(ctx context.Context, c Caller, a CreateTabArgs) (TabCreated, error) {
	fp := a
	fp.ExpectedVersion, fp.IdempotencyKey, fp.DependsOn = 0, "", nil
	return noteWrite(ctx, s, c, a.NoteID, Guard{a.ExpectedVersion, a.IdempotencyKey}, noteOp{
		kind: "tab_created", sizeField: "slides", deps: newDepends(a.DependsOn), meaning: struct {
			Op string
			A  CreateTabArgs
		}{"create_note_tab", fp},
		pre: func() error {
			_, err := note.CheckNewTab(a.TabType, a.Label, a.Slides)
			return err
		},
	}, func(_ *store.Resource, d *note.Doc, _ *store.Change) (TabCreated, []string, error) {
		t, err := note.CreateTab(d, a.TabType, a.Label, a.Slides, s.Now())
		if err != nil {
			return TabCreated{}, nil, err
		}
		return TabCreated{TabID: t.ID, Type: t.Type, Label: t.Label, Slides: len(t.Slides)}, []string{t.ID}, nil
	})
}

// UpdateTabArgs rename a tab (trimmed; duplicate labels are allowed) and/or
// move it to a 0-based position in the strip.
type UpdateTabArgs struct {
	NoteID   string  `json:"note_id"`
	TabID    string  `json:"tab_id"`
	Label    *string `json:"label,omitempty"`
	Position *int    `json:"position,omitempty"`
	Guard
}

// TabWritten is what a write of one tab answers.
type TabWritten struct {
	NoteWritten
	TabID string `json:"tab_id"`
}

// UpdateTab renames and/or moves a tab.
func (s *Service) UpdateTab(ctx context.Context, c Caller, a UpdateTabArgs) (TabWritten, error) {
	if err := CheckID("tab_id", a.TabID); err != nil {
		return TabWritten{}, err
	}
	if a.Label == nil && a.Position == nil {
		return TabWritten{}, problem.New(problem.Invalid, "label", "give label, position or both: there is nothing to change")
	}
	if a.Position != nil && (*a.Position < 0 || *a.Position >= note.MaxTabsPerNote) {
		return TabWritten{}, problem.New(problem.Invalid, "position", "must be a 0-based position in the tab strip, between 0 and %d; got %d", note.MaxTabsPerNote-1, *a.Position)
	}
	kind := "tab_renamed"
	if a.Label == nil {
		kind = "tab_moved"
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: kind, sizeField: "label", meaning: struct {
		Op, Tab  string
		Label    *string
		Position *int
	}{"update_tab", a.TabID, a.Label, a.Position}}, func(_ *store.Resource, d *note.Doc, _ *store.Change) (TabWritten, []string, error) {
		res := TabWritten{TabID: a.TabID}
		if a.Label != nil {
			if err := note.RenameTab(d, a.TabID, *a.Label); err != nil {
				return res, nil, err
			}
		}
		if a.Position != nil {
			if _, err := note.FindTab(d, a.TabID); err != nil {
				return res, nil, err
			}
			if *a.Position >= len(d.Tabs) {
				return res, nil, problem.New(problem.Invalid, "position", "the Note has %d tabs, so a position is between 0 and %d; got %d", len(d.Tabs), len(d.Tabs)-1, *a.Position)
			}
			if err := note.MoveTab(d, a.TabID, *a.Position); err != nil {
				return res, nil, err
			}
		}
		return res, []string{a.TabID}, nil
	})
}

// CodeFixedTab is the answer to deleting a tab every Note has.
const CodeFixedTab = "fixed_tab"

// DeleteTab deletes a slides or sheet tab; the fixed tabs are refused.
// Like deleting a Note it is a person's act: no agent deletes a tab.
func (s *Service) DeleteTab(ctx context.Context, c Caller, a TabWriteArgs) (TabWritten, error) {
	if err := c.personOnly("deleting a tab"); err != nil {
		return TabWritten{}, err
	}
	if err := CheckID("tab_id", a.TabID); err != nil {
		return TabWritten{}, err
	}
	if fixedTab(a.TabID) {
		return TabWritten{}, fixedTabProblem(a.TabID)
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_deleted", sizeField: "tab_id", meaning: struct{ Op, Tab string }{"delete_tab", a.TabID}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (TabWritten, []string, error) {
			t, err := note.FindTab(d, a.TabID)
			if err != nil {
				return TabWritten{}, nil, err
			}
			if fixedTab(t.Type) {
				return TabWritten{}, nil, fixedTabProblem(a.TabID)
			}
			if err := note.DeleteTab(d, a.TabID); err != nil {
				return TabWritten{}, nil, err
			}
			return TabWritten{TabID: a.TabID}, []string{a.TabID}, nil
		})
}

// TabWriteArgs name one tab of one Note, with the guard of a write on it.
type TabWriteArgs struct {
	NoteID string `json:"note_id"`
	TabID  string `json:"tab_id"`
	Guard
}

func fixedTab(typ string) bool {
	return typ == note.TypeMarkdown || typ == note.TypeSources || typ == note.TypeFiles
}

func fixedTabProblem(tabID string) *problem.Problem {
	return problem.New(CodeFixedTab, "tab_id", "tab %s is one of the fixed tabs every Note has (markdown, sources, files) and cannot be deleted; only slides and sheet tabs can", note.Quote(tabID))
}

// typeOf is the type a tab ID says ("" for an ID no tab can have).
func typeOf(tabID string) string {
	t, _ := note.TypeOfID(tabID)
	return t
}
