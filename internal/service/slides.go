package service

import (
	"context"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Slides beyond adding them (EditNoteTab's slide_add): one slide's fields,
// look or place changed, one slide removed.

func checkSlidePosition(position *int) error {
	if position != nil && (*position < 0 || *position >= note.MaxSlidesPerTab) {
		return problem.New(problem.Invalid, "position", "must be a 0-based position in the deck, between 0 and %d; got %d", note.MaxSlidesPerTab-1, *position)
	}
	return nil
}

// placeSlide gives a new slide its look and moves it to position (nil:
// where it is).
func placeSlide(t *note.Tab, slideID, layout, theme string, position *int) {
	for i := range t.Slides {
		if t.Slides[i].ID == slideID {
			t.Slides[i].Layout, t.Slides[i].Theme = layout, theme
		}
	}
	if position != nil {
		moveSlide(t, slideID, *position)
	}
}

// moveSlide moves a slide to position, clamped to the deck.
func moveSlide(t *note.Tab, slideID string, position int) {
	from := -1
	for i := range t.Slides {
		if t.Slides[i].ID == slideID {
			from = i
		}
	}
	if from < 0 {
		return
	}
	to := min(max(position, 0), len(t.Slides)-1)
	sl := t.Slides[from]
	t.Slides = append(t.Slides[:from], t.Slides[from+1:]...)
	t.Slides = append(t.Slides[:to], append([]note.Slide{sl}, t.Slides[to:]...)...)
}

// slideIn finds the slides tab and the index of a slide in it.
func slideIn(d *note.Doc, tabID, slideID string) (*note.Tab, int, error) {
	t, err := note.FindTab(d, tabID)
	if err != nil {
		return nil, 0, err
	}
	if err := note.CheckOperation(t.ID, t.Type, "slide_add"); err != nil {
		return nil, 0, err
	}
	for i := range t.Slides {
		if t.Slides[i].ID == slideID {
			return t, i, nil
		}
	}
	return nil, 0, problem.New(problem.NotFound, "slide_id", "tab %s has no slide with the ID %s; read the tab for its slides", note.Quote(tabID), note.Quote(slideID))
}

// SlideArgs name one slide of one slides tab, with the guard of a write.
type SlideArgs struct {
	NoteID  string `json:"note_id"`
	TabID   string `json:"tab_id"`
	SlideID string `json:"slide_id"`
	Guard
}

// UpdateSlideArgs change a slide's fields, look and/or place (nil:
// unchanged). Layout and theme are one of note.SlideLayouts /
// note.SlideThemes, or "" for the default.
type UpdateSlideArgs struct {
	SlideArgs
	Title, Body, Notes *string
	Layout, Theme      *string
	Position           *int
}

// SlideWritten is what a write of one slide answers.
type SlideWritten struct {
	NoteWritten
	TabID   string `json:"tab_id"`
	SlideID string `json:"slide_id"`
}

func (a *SlideArgs) check() error {
	for _, f := range [][2]string{{"tab_id", a.TabID}, {"slide_id", a.SlideID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return err
		}
	}
	if typ := typeOf(a.TabID); typ != "" {
		return note.CheckOperation(a.TabID, typ, "slide_add")
	}
	return nil
}

// UpdateSlide changes a slide's title, body, notes, look and/or position.
func (s *Service) UpdateSlide(ctx context.Context, c Caller, a UpdateSlideArgs) (SlideWritten, error) {
	if err := a.check(); err != nil {
		return SlideWritten{}, err
	}
	if a.Title == nil && a.Body == nil && a.Notes == nil && a.Layout == nil && a.Theme == nil && a.Position == nil {
		return SlideWritten{}, problem.New(problem.Invalid, "title", "give title, body, notes, layout, theme or position: there is nothing to change")
	}
	if err := checkSlidePosition(a.Position); err != nil {
		return SlideWritten{}, err
	}
	if err := note.CheckSlideLook(a.Layout, a.Theme); err != nil {
		return SlideWritten{}, err
	}
	meaning := struct {
		Op, Tab, Slide                    string
		Title, Body, Notes, Layout, Theme *string
		Position                          *int
	}{"update_slide", a.TabID, a.SlideID, a.Title, a.Body, a.Notes, a.Layout, a.Theme, a.Position}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "body", meaning: meaning},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SlideWritten, []string, error) {
			res := SlideWritten{TabID: a.TabID, SlideID: a.SlideID}
			t, i, err := slideIn(d, a.TabID, a.SlideID)
			if err != nil {
				return res, nil, err
			}
			sl := t.Slides[i]
			in := note.SlideInput{Title: sl.Title, Body: sl.Body, Notes: sl.Notes}
			if a.Title != nil {
				in.Title = *a.Title
			}
			if a.Body != nil {
				in.Body = *a.Body
			}
			if a.Notes != nil {
				in.Notes = *a.Notes
			}
			if err := note.CheckSlide(in); err != nil {
				return res, nil, err
			}
			next := sl
			next.Title, next.Body, next.Notes = strings.TrimSpace(in.Title), in.Body, in.Notes
			if a.Layout != nil {
				next.Layout = *a.Layout
			}
			if a.Theme != nil {
				next.Theme = *a.Theme
			}
			// A copy of the deck: d's slices may share their arrays with the
			// cached version.
			t.Slides = append([]note.Slide(nil), t.Slides...)
			t.Slides[i] = next
			if a.Position != nil {
				moveSlide(t, a.SlideID, *a.Position)
			}
			return res, []string{a.TabID}, nil
		})
}

// DeleteSlide removes a slide from a slides tab.
func (s *Service) DeleteSlide(ctx context.Context, c Caller, a SlideArgs) (SlideWritten, error) {
	if err := a.check(); err != nil {
		return SlideWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "tab_edited", sizeField: "slide_id", meaning: struct{ Op, Tab, Slide string }{"delete_slide", a.TabID, a.SlideID}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (SlideWritten, []string, error) {
			res := SlideWritten{TabID: a.TabID, SlideID: a.SlideID}
			t, i, err := slideIn(d, a.TabID, a.SlideID)
			if err != nil {
				return res, nil, err
			}
			next := make([]note.Slide, 0, len(t.Slides)-1)
			t.Slides = append(append(next, t.Slides[:i]...), t.Slides[i+1:]...)
			return res, []string{a.TabID}, nil
		})
}
