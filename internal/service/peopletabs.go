package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/urlnorm"
)

// People's edits of a Note's tabs: the tab strip, sources, slides and
// sheet cells. Each is one guarded people's write (peopleWrite) that calls
// the same document operation an agent's tool calls.

// CodeSourceExists is the answer to adding a page already attached.
const CodeSourceExists = "source_exists"

// CodeFixedTab is the answer to deleting a tab every Note has.
const CodeFixedTab = "fixed_tab"

// SourceExistsDetail is what a person sees when the page is already there.
const SourceExistsDetail = "This source is already attached"

// PeopleTabResult is a people's write that made or names one tab.
type PeopleTabResult struct {
	PeopleResult
	TabID string `json:"tab_id"`
}

// PeopleCreateTab appends a slides or sheet tab.
func (s *Service) PeopleCreateTab(ctx context.Context, c Caller, id, typ, label string, pw PeopleWrite) (PeopleTabResult, error) {
	if _, err := note.CheckNewTab(typ, label, nil); err != nil {
		return PeopleTabResult{}, typeField(err)
	}
	res, err := s.peopleWrite(ctx, c, id, pw, struct{ Op, Type, Label string }{"create_tab", typ, label}, "tab_created", "label",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			t, err := note.CreateTab(d, typ, label, nil, s.Now())
			if err != nil {
				return typeField(err)
			}
			ch.Changed = []string{t.ID}
			return nil
		})
	if err != nil {
		return PeopleTabResult{}, err
	}
	// The new tab is the one the write changed (the stored result holds
	// it, so a replay names it too).
	out := PeopleTabResult{PeopleResult: res}
	if len(res.ChangedTabIDs) == 1 {
		out.TabID = res.ChangedTabIDs[0]
	}
	return out, nil
}

// typeField renames note's tab_type field to this door's type.
func typeField(err error) error {
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Field == "tab_type" {
		pr.Field = "type"
	}
	return err
}

// PeopleUpdateTab renames a tab (trimmed; duplicate labels are allowed)
// and/or moves it to a 0-based position in the strip.
func (s *Service) PeopleUpdateTab(ctx context.Context, c Caller, id, tabID string, label *string, position *int, pw PeopleWrite) (PeopleResult, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleResult{}, err
	}
	if label == nil && position == nil {
		return PeopleResult{}, problem.New(problem.Invalid, "label", "give label, position or both: there is nothing to change")
	}
	if position != nil && (*position < 0 || *position >= note.MaxTabsPerNote) {
		return PeopleResult{}, problem.New(problem.Invalid, "position", "must be a 0-based position in the tab strip, between 0 and %d; got %d", note.MaxTabsPerNote-1, *position)
	}
	kind := "tab_renamed"
	if label == nil {
		kind = "tab_moved"
	}
	return s.peopleWrite(ctx, c, id, pw, struct {
		Op, Tab  string
		Label    *string
		Position *int
	}{"update_tab", tabID, label, position}, kind, "label", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		before := note.Refs(d)
		if label != nil {
			if err := note.RenameTab(d, tabID, *label); err != nil {
				return err
			}
		}
		if position != nil {
			if *position >= len(d.Tabs) {
				return problem.New(problem.Invalid, "position", "the Note has %d tabs, so a position is between 0 and %d; got %d", len(d.Tabs), len(d.Tabs)-1, *position)
			}
			if err := note.MoveTab(d, tabID, *position); err != nil {
				return err
			}
		}
		after := note.Refs(d)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			ch.Changed = []string{tabID}
		}
		return nil
	})
}

// PeopleDeleteTab deletes a slides or sheet tab; the fixed tabs are refused.
// Like deleting a Note it is a person's act: no token (and so no agent,
// which has no such tool either) deletes a tab.
func (s *Service) PeopleDeleteTab(ctx context.Context, c Caller, id, tabID string, pw PeopleWrite) (PeopleResult, error) {
	if err := c.personOnly("deleting a tab"); err != nil {
		return PeopleResult{}, err
	}
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleResult{}, err
	}
	if fixedTab(tabID) {
		return PeopleResult{}, fixedTabProblem(tabID)
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab string }{"delete_tab", tabID}, "tab_deleted", "tab_id", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		t, err := note.FindTab(d, tabID)
		if err != nil {
			return err
		}
		if fixedTab(t.Type) {
			return fixedTabProblem(tabID)
		}
		if err := note.DeleteTab(d, tabID); err != nil {
			return err
		}
		ch.Changed = []string{tabID}
		return nil
	})
}

func fixedTab(typ string) bool {
	return typ == note.TypeMarkdown || typ == note.TypeSources || typ == note.TypeFiles
}

func fixedTabProblem(tabID string) *problem.Problem {
	return problem.New(CodeFixedTab, "tab_id", "tab %s is one of the fixed tabs every Note has (markdown, sources, files) and cannot be deleted; only slides and sheet tabs can", note.Quote(tabID))
}

// PeopleSourceResult is a people's write of one source.
type PeopleSourceResult struct {
	PeopleResult
	SourceID      string `json:"source_id"`
	URL           string `json:"url"`
	NormalizedURL string `json:"normalized_url"`
	Title         string `json:"source_title"`
}

// PeopleAddSource attaches a citation with the same normalization and
// dedupe as add_note_source; a page already attached (in any spelling that
// normalizes the same) is refused with CodeSourceExists and the existing
// source's ID.
func (s *Service) PeopleAddSource(ctx context.Context, c Caller, id, title, rawURL string, pw PeopleWrite) (PeopleSourceResult, error) {
	clean, err := note.CheckSourceTitle(title)
	if err != nil {
		return PeopleSourceResult{}, err
	}
	norm, err := urlnorm.Normalize(rawURL)
	if err != nil {
		return PeopleSourceResult{}, err // a problem naming url
	}
	res, err := s.peopleWrite(ctx, c, id, pw, struct{ Op, Title, URL string }{"add_source", clean, norm}, "source_added", "url",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			src, dup, err := note.AddSource(d, title, rawURL, s.Now())
			if err != nil {
				return err
			}
			if dup {
				return problem.New(CodeSourceExists, "url", SourceExistsDetail).
					With("source_id", src.ID).With("normalized_url", src.NormURL).With("current_version", cur.Version)
			}
			ch.Changed = []string{note.TypeSources}
			return nil
		})
	if err != nil {
		return PeopleSourceResult{}, err
	}
	d, err := s.NoteAt(ctx, id, res.Version)
	if err != nil {
		return PeopleSourceResult{}, err
	}
	for _, src := range d.Sources {
		if src.NormURL == norm {
			return PeopleSourceResult{PeopleResult: res, SourceID: src.ID, URL: src.URL, NormalizedURL: src.NormURL, Title: src.Title}, nil
		}
	}
	return PeopleSourceResult{}, fmt.Errorf("source %s is not in version %d of Note %s", norm, res.Version, id)
}

// PeopleDeleteSource removes a citation (a person's act, as deleting a tab is).
func (s *Service) PeopleDeleteSource(ctx context.Context, c Caller, id, sourceID string, pw PeopleWrite) (PeopleResult, error) {
	if err := c.personOnly("deleting a source"); err != nil {
		return PeopleResult{}, err
	}
	if err := CheckID("source_id", sourceID); err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op, Source string }{"delete_source", sourceID}, "source_deleted", "source_id",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			if err := note.DeleteSource(d, sourceID); err != nil {
				var pr *problem.Problem
				if errors.As(err, &pr) {
					pr.Message = fmt.Sprintf("no source has the ID %s; list the sources with GET /api/notes/%s/tabs/sources", note.Quote(sourceID), problem.Excerpt(id))
				}
				return err
			}
			ch.Changed = []string{note.TypeSources}
			return nil
		})
}

// SlidePatch is what a person may change of a slide (nil: unchanged).
// Layout and theme are people's only: no agent tool writes them.
type SlidePatch struct {
	Title, Body, Notes *string
	Layout, Theme      *string // one of note.SlideLayouts / note.SlideThemes, or "" for the default
	Position           *int
}

// SlideLook is the layout and theme a person gives a new slide ("": the
// default).
type SlideLook struct {
	Layout, Theme string
}

// PeopleSlideResult is a people's write of one slide.
type PeopleSlideResult struct {
	PeopleResult
	SlideID string `json:"slide_id"`
}

// PeopleAddSlide appends a slide to a slides tab (slide_add), then moves
// it to position when one is given; look is its layout and theme (zero:
// the defaults).
func (s *Service) PeopleAddSlide(ctx context.Context, c Caller, id, tabID string, in note.SlideInput, look SlideLook, position *int, pw PeopleWrite) (PeopleSlideResult, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleSlideResult{}, err
	}
	if typ := typeOf(tabID); typ != "" {
		if err := note.CheckOperation(tabID, typ, "slide_add"); err != nil {
			return PeopleSlideResult{}, err
		}
	}
	if err := note.CheckSlide(in); err != nil {
		return PeopleSlideResult{}, err
	}
	if err := checkSlidePosition(position); err != nil {
		return PeopleSlideResult{}, err
	}
	if err := note.CheckSlideLook(&look.Layout, &look.Theme); err != nil {
		return PeopleSlideResult{}, err
	}
	// The request a replay is matched on; a look only when one is given, so
	// that a slide without one keys the same as before looks existed.
	var req any = struct {
		Op, Tab  string
		In       note.SlideInput
		Position *int
	}{"add_slide", tabID, in, position}
	if look != (SlideLook{}) {
		req = struct {
			Op, Tab  string
			In       note.SlideInput
			Look     SlideLook
			Position *int
		}{"add_slide", tabID, in, look, position}
	}
	res, err := s.peopleWrite(ctx, c, id, pw, req, "tab_edited", "body", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		sl, err := note.SlideAdd(d, tabID, in)
		if err != nil {
			return err
		}
		t, _ := note.FindTab(d, tabID)
		if look != (SlideLook{}) {
			for i := range t.Slides {
				if t.Slides[i].ID == sl.ID {
					t.Slides[i].Layout, t.Slides[i].Theme = look.Layout, look.Theme
				}
			}
		}
		if position != nil {
			moveSlide(t, sl.ID, *position)
		}
		ch.Changed = []string{tabID}
		return nil
	})
	if err != nil {
		return PeopleSlideResult{}, err
	}
	// Item IDs only go up: the new slide holds the document's last one.
	d, err := s.NoteAt(ctx, id, res.Version)
	if err != nil {
		return PeopleSlideResult{}, err
	}
	return PeopleSlideResult{PeopleResult: res, SlideID: fmt.Sprintf("slide-%d", d.NextItem-1)}, nil
}

func typeOf(tabID string) string {
	t, _ := note.TypeOfID(tabID)
	return t
}

func checkSlidePosition(position *int) error {
	if position != nil && (*position < 0 || *position >= note.MaxSlidesPerTab) {
		return problem.New(problem.Invalid, "position", "must be a 0-based position in the deck, between 0 and %d; got %d", note.MaxSlidesPerTab-1, *position)
	}
	return nil
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
func slideIn(d *note.Doc, tabID, slideID, op string) (*note.Tab, int, error) {
	t, err := note.FindTab(d, tabID)
	if err != nil {
		return nil, 0, err
	}
	if err := note.CheckOperation(t.ID, t.Type, op); err != nil {
		return nil, 0, err
	}
	for i := range t.Slides {
		if t.Slides[i].ID == slideID {
			return t, i, nil
		}
	}
	return nil, 0, problem.New(problem.NotFound, "slide_id", "tab %s has no slide with the ID %s; read the tab (GET /api/notes/{id}/tabs/%s) for its slides", note.Quote(tabID), note.Quote(slideID), tabID)
}

// PeopleUpdateSlide changes a slide's title, body, notes and/or position.
func (s *Service) PeopleUpdateSlide(ctx context.Context, c Caller, id, tabID, slideID string, p SlidePatch, pw PeopleWrite) (PeopleSlideResult, error) {
	for _, f := range [][2]string{{"tab_id", tabID}, {"slide_id", slideID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return PeopleSlideResult{}, err
		}
	}
	if p.Title == nil && p.Body == nil && p.Notes == nil && p.Layout == nil && p.Theme == nil && p.Position == nil {
		return PeopleSlideResult{}, problem.New(problem.Invalid, "title", "give title, body, notes, layout, theme or position: there is nothing to change")
	}
	if err := checkSlidePosition(p.Position); err != nil {
		return PeopleSlideResult{}, err
	}
	if err := note.CheckSlideLook(p.Layout, p.Theme); err != nil {
		return PeopleSlideResult{}, err
	}
	res, err := s.peopleWrite(ctx, c, id, pw, struct {
		Op, Tab, Slide string
		P              SlidePatch
	}{"update_slide", tabID, slideID, p}, "tab_edited", "body", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		t, i, err := slideIn(d, tabID, slideID, "slide_add")
		if err != nil {
			return err
		}
		sl := t.Slides[i]
		in := note.SlideInput{Title: sl.Title, Body: sl.Body, Notes: sl.Notes}
		if p.Title != nil {
			in.Title = *p.Title
		}
		if p.Body != nil {
			in.Body = *p.Body
		}
		if p.Notes != nil {
			in.Notes = *p.Notes
		}
		if err := note.CheckSlide(in); err != nil {
			return err
		}
		next := sl
		next.Title, next.Body, next.Notes = strings.TrimSpace(in.Title), in.Body, in.Notes
		if p.Layout != nil {
			next.Layout = *p.Layout
		}
		if p.Theme != nil {
			next.Theme = *p.Theme
		}
		before := fmt.Sprint(t.Slides)
		// A copy of the deck: d's slices may share their arrays with the
		// cached version.
		t.Slides = append([]note.Slide(nil), t.Slides...)
		t.Slides[i] = next
		if p.Position != nil {
			moveSlide(t, slideID, *p.Position)
		}
		if fmt.Sprint(t.Slides) != before {
			ch.Changed = []string{tabID}
		}
		return nil
	})
	return PeopleSlideResult{PeopleResult: res, SlideID: slideID}, err
}

// PeopleDeleteSlide removes a slide from a slides tab.
func (s *Service) PeopleDeleteSlide(ctx context.Context, c Caller, id, tabID, slideID string, pw PeopleWrite) (PeopleResult, error) {
	for _, f := range [][2]string{{"tab_id", tabID}, {"slide_id", slideID}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return PeopleResult{}, err
		}
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab, Slide string }{"delete_slide", tabID, slideID}, "tab_edited", "slide_id",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			t, i, err := slideIn(d, tabID, slideID, "slide_add")
			if err != nil {
				return err
			}
			next := make([]note.Slide, 0, len(t.Slides)-1)
			next = append(append(next, t.Slides[:i]...), t.Slides[i+1:]...)
			t.Slides = next
			ch.Changed = []string{tabID}
			return nil
		})
}

// PeopleSetCells writes a rectangle of at most 100 × 100 cells
// (sheet_set_range's rules); sheetID "" is the first sheet.
func (s *Service) PeopleSetCells(ctx context.Context, c Caller, id, tabID, sheetID string, startRow, startCol int, values [][]any, pw PeopleWrite) (PeopleResult, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleResult{}, err
	}
	if err := CheckID("sheet_id", sheetID); err != nil {
		return PeopleResult{}, err
	}
	if typ := typeOf(tabID); typ != "" {
		if err := note.CheckOperation(tabID, typ, "sheet_set_range"); err != nil {
			return PeopleResult{}, err
		}
	}
	if _, err := note.CheckRange(startRow, startCol, values); err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct {
		Op, Tab, Sheet string
		Row, Col       int
		Values         [][]any
	}{"set_cells", tabID, sheetID, startRow, startCol, canonicalCells(values)}, "tab_edited", "values",
		func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
			if _, err := note.SheetSetRange(d, tabID, sheetID, startRow, startCol, values); err != nil {
				return err
			}
			// A write of the values already there makes no new version
			// (peopleWrite sees no change of the document).
			ch.Changed = []string{tabID}
			return nil
		})
}

// PeopleCells is a rectangle of a sheet of a Note c may see, as
// read_sheet_range gives it.
func (s *Service) PeopleCells(ctx context.Context, c Caller, id, tabID, sheetID string, row, col, rows, cols int) (SheetRange, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return SheetRange{}, err
	}
	if err := CheckID("sheet_id", sheetID); err != nil {
		return SheetRange{}, err
	}
	r, d, err := s.PeopleNote(ctx, c, id)
	if err != nil {
		return SheetRange{}, err
	}
	vals, err := note.ReadRange(d, tabID, sheetID, row, col, rows, cols)
	if err != nil {
		return SheetRange{}, err
	}
	return SheetRange{NoteID: r.ID, Version: r.Version, TabID: tabID, StartRow: row, StartCol: col, Values: vals}, nil
}

// The people's live event stream of a Note (server-sent events).

// PeopleEvent is one event of a Note's stream: a committed write, its
// version, the tabs it changed and who made it (the actor string history
// records: "user:<id>" or "token:<id>").
type PeopleEvent struct {
	Cursor  string
	Kind    string
	Version int64
	Changed []string
	Actor   string
}

// PeopleStreamGate takes a place for a people's event stream of up to
// hold in the gate long polls share, capped per person (or token) and on
// this node; refused, it answers TooManyWaiters with retry_after.
func (s *Service) PeopleStreamGate(c Caller, hold time.Duration) (release func(), err error) {
	key := "u:" + c.Workspace + "/" + c.User
	if c.Token != nil {
		key = waiterKey(*c.Token)
	}
	release, retry, ok := s.waitGate().Acquire(key, hold)
	if !ok {
		return nil, problem.New(TooManyWaiters, "note_id",
			"too many live streams and long polls are open already (at most %d per person or token, %d on this server); retry after %d s",
			s.waitGate().PerKey, s.waitGate().Total, retry).With("retry_after", retry)
	}
	return release, nil
}

// PeopleReaches checks that c still reaches Note id (and it is not
// deleted), without reading its document.
func (s *Service) PeopleReaches(ctx context.Context, c Caller, id string) error {
	if err := CheckID("note_id", id); err != nil {
		return err
	}
	r, err := s.Store.Head(ctx, store.TypeNote, id)
	if err == nil && !c.reaches(&r) {
		err = store.ErrNotFound
	}
	if err == nil {
		var gone bool
		if gone, err = s.noteDeleted(ctx, id); err == nil && gone {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		pr := peopleNotFound(id)
		pr.Field = "note_id"
		return pr
	}
	return err
}

// PeopleEventStart is where a stream of Note id starts: after lastID (an
// event cursor a stream sent, to resume) or, with none, after now.
func (s *Service) PeopleEventStart(ctx context.Context, c Caller, id, lastID string) (int64, error) {
	if err := s.PeopleReaches(ctx, c, id); err != nil {
		return 0, err
	}
	if lastID == "" {
		return s.Store.LastCursor(ctx, c.Workspace, store.TypeNote, id)
	}
	raw, err := decodeCursor(lastID, "e")
	if err != nil {
		return 0, lastEventProblem(err)
	}
	after, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || after < 0 {
		return 0, lastEventProblem(badCursor())
	}
	if err := s.cursorLive(ctx, store.TypeNote, id, after); err != nil {
		return 0, lastEventProblem(err)
	}
	return after, nil
}

func lastEventProblem(err error) error {
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Field == "cursor" {
		pr.Field = "Last-Event-ID"
	}
	return err
}

// PeopleEvents are the events of Note id after cursor after, oldest first
// (at most limit), with the tabs each changed and its actor, and the
// cursor to read from next.
func (s *Service) PeopleEvents(ctx context.Context, c Caller, id string, after int64, limit int) ([]PeopleEvent, int64, error) {
	evs, err := s.Store.Events(ctx, c.Workspace, store.TypeNote, id, after, limit)
	if err == nil {
		err = s.cursorLive(ctx, store.TypeNote, id, after)
	}
	if err != nil || len(evs) == 0 {
		return nil, after, err
	}
	// Only the versions these events name are read, not the whole history
	// (a long-lived Note has thousands; a stream reads a few at a time).
	lo, hi := evs[0].Version, evs[0].Version
	for _, e := range evs {
		lo, hi = min(lo, e.Version), max(hi, e.Version)
	}
	hist, err := s.Store.VersionRange(ctx, store.TypeNote, id, lo, hi)
	if err != nil {
		return nil, after, err
	}
	byVersion := make(map[int64]store.VersionInfo, len(hist))
	for _, v := range hist {
		byVersion[v.Version] = v
	}
	out := make([]PeopleEvent, 0, len(evs))
	for _, e := range evs {
		v := byVersion[e.Version]
		out = append(out, PeopleEvent{Cursor: eventCursor(e.Cursor), Kind: e.Kind, Version: e.Version, Changed: nonNilIDs(v.Changed), Actor: v.Actor})
		after = e.Cursor
	}
	return out, after, nil
}
