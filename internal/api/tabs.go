package api

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// The tab strip, sources, slides and sheet cells of a Note: every write is
// a guarded people's write with the version it was based on.

// MaxCellsBody bounds a cells write: 100 × 100 cells of up to a few
// hundred bytes each, JSON-escaped.
const MaxCellsBody = 4 << 20

// MaxSlideBody bounds a slide write: three slide fields, JSON-escaped.
const MaxSlideBody = 6*3*note.MaxSlideTextBytes + 4<<10

type createTabBody struct {
	Type            *string `json:"type"`
	Label           *string `json:"label"`
	ExpectedVersion *int64  `json:"expected_version"`
}

type updateTabBody struct {
	Label           *string `json:"label"`
	Position        *int    `json:"position"`
	ExpectedVersion *int64  `json:"expected_version"`
}

type sourceBody struct {
	Title           *string `json:"title"`
	URL             *string `json:"url"`
	ExpectedVersion *int64  `json:"expected_version"`
}

type slideBody struct {
	Title           *string `json:"title"`
	Body            *string `json:"body"`
	Notes           *string `json:"notes"`
	Layout          *string `json:"layout"`
	Theme           *string `json:"theme"`
	Position        *int    `json:"position"`
	ExpectedVersion *int64  `json:"expected_version"`
}

type cellsBody struct {
	SheetID         *string `json:"sheet_id"`
	StartRow        *int    `json:"start_row"`
	StartCol        *int    `json:"start_col"`
	Values          [][]any `json:"values"`
	ExpectedVersion *int64  `json:"expected_version"`
}

func (b *createTabBody) expected() *int64 { return b.ExpectedVersion }
func (b *updateTabBody) expected() *int64 { return b.ExpectedVersion }
func (b *sourceBody) expected() *int64    { return b.ExpectedVersion }
func (b *slideBody) expected() *int64     { return b.ExpectedVersion }
func (b *cellsBody) expected() *int64     { return b.ExpectedVersion }

// noteAndTab reads a call on one tab: the Note's ID and the tab's from
// the path, each checked.
func noteAndTab(r *http.Request) (id, tab string, err error) {
	if id, err = noteID(r); err != nil {
		return "", "", err
	}
	tab, err = pathID(r, "tab_id")
	return id, tab, err
}

// tabWrite is noteWrite for a call on one tab: the tab's ID from the path
// too. do's answer is written as JSON with the version's ETag.
func (h *handler) tabWrite(w http.ResponseWriter, r *http.Request, status int, do func(id, tab string) (any, service.PeopleResult, error)) {
	id, tab, err := noteAndTab(r)
	var out any
	var res service.PeopleResult
	if err == nil {
		out, res, err = do(id, tab)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answer(w, status, res, out)
}

func (h *handler) createTab(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := noteID(r)
	var res service.PeopleTabResult
	if err == nil {
		var b *createTabBody
		var pw service.PeopleWrite
		b, pw, err = writeBody[createTabBody](r, false)
		switch {
		case err != nil:
		case b.Type == nil:
			err = problem.New(problem.Invalid, "type", "is required: give \"slides\" or \"sheet\"")
		default:
			label := ""
			if b.Label != nil {
				label = *b.Label
			}
			res, err = h.svc.PeopleCreateTab(r.Context(), c.svc, id, *b.Type, label, pw)
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(id)+"/tabs/"+url.PathEscape(res.TabID))
	h.answer(w, http.StatusCreated, res.PeopleResult, res)
}

func (h *handler) updateTab(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusOK, func(id, tab string) (any, service.PeopleResult, error) {
		b, pw, err := writeBody[updateTabBody](r, false)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleUpdateTab(r.Context(), c.svc, id, tab, b.Label, b.Position, pw)
		return res, res, err
	})
}

func (h *handler) deleteTab(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusNoContent, func(id, tab string) (any, service.PeopleResult, error) {
		_, pw, err := writeBody[versionBody](r, true)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleDeleteTab(r.Context(), c.svc, id, tab, pw)
		return nil, res, err
	})
}

func (h *handler) addSource(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := noteID(r)
	var res service.PeopleSourceResult
	if err == nil {
		var b *sourceBody
		var pw service.PeopleWrite
		b, pw, err = writeBody[sourceBody](r, false)
		switch {
		case err != nil:
		case b.Title == nil:
			err = problem.New(problem.Invalid, "title", "is required: give the cited page's title")
		case b.URL == nil:
			err = problem.New(problem.Invalid, "url", "is required: give the cited page's http or https URL")
		default:
			res, err = h.svc.PeopleAddSource(r.Context(), c.svc, id, *b.Title, *b.URL, pw)
		}
	}
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == service.CodeSourceExists {
		writeProblem(w, http.StatusConflict, pr)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answer(w, http.StatusCreated, res.PeopleResult, res)
}

func (h *handler) deleteSource(w http.ResponseWriter, r *http.Request, c *caller) {
	h.noteWrite(w, r, http.StatusNoContent, func(id string) (service.PeopleResult, error) {
		src, err := pathID(r, "source_id")
		if err != nil {
			return service.PeopleResult{}, err
		}
		_, pw, err := writeBody[versionBody](r, true)
		if err != nil {
			return service.PeopleResult{}, err
		}
		return h.svc.PeopleDeleteSource(r.Context(), c.svc, id, src, pw)
	})
}

func (h *handler) addSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusCreated, func(id, tab string) (any, service.PeopleResult, error) {
		b, pw, err := writeBody[slideBody](r, false)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		if b.Title == nil {
			return nil, service.PeopleResult{}, problem.New(problem.Invalid, "title", "is required: every slide needs a title")
		}
		in := note.SlideInput{Title: *b.Title}
		if b.Body != nil {
			in.Body = *b.Body
		}
		if b.Notes != nil {
			in.Notes = *b.Notes
		}
		var look service.SlideLook
		if b.Layout != nil {
			look.Layout = *b.Layout
		}
		if b.Theme != nil {
			look.Theme = *b.Theme
		}
		res, err := h.svc.PeopleAddSlide(r.Context(), c.svc, id, tab, in, look, b.Position, pw)
		return res, res.PeopleResult, err
	})
}

func (h *handler) updateSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusOK, func(id, tab string) (any, service.PeopleResult, error) {
		slide, err := pathID(r, "slide_id")
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		b, pw, err := writeBody[slideBody](r, false)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleUpdateSlide(r.Context(), c.svc, id, tab, slide, service.SlidePatch{Title: b.Title, Body: b.Body, Notes: b.Notes, Layout: b.Layout, Theme: b.Theme, Position: b.Position}, pw)
		return res, res.PeopleResult, err
	})
}

func (h *handler) deleteSlide(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusNoContent, func(id, tab string) (any, service.PeopleResult, error) {
		slide, err := pathID(r, "slide_id")
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		_, pw, err := writeBody[versionBody](r, true)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleDeleteSlide(r.Context(), c.svc, id, tab, slide, pw)
		return nil, res, err
	})
}

func (h *handler) putCells(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusOK, func(id, tab string) (any, service.PeopleResult, error) {
		b, pw, err := writeBody[cellsBody](r, false)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		switch {
		case b.StartRow == nil:
			return nil, service.PeopleResult{}, problem.New(problem.Invalid, "start_row", "is required: give the 0-based row of the range's top-left cell")
		case b.StartCol == nil:
			return nil, service.PeopleResult{}, problem.New(problem.Invalid, "start_col", "is required: give the 0-based column of the range's top-left cell")
		case b.Values == nil:
			return nil, service.PeopleResult{}, problem.New(problem.Invalid, "values", "is required: give the rows of cells to write")
		}
		sheet := ""
		if b.SheetID != nil {
			sheet = *b.SheetID
		}
		res, err := h.svc.PeopleSetCells(r.Context(), c.svc, id, tab, sheet, *b.StartRow, *b.StartCol, b.Values, pw)
		return res, res, err
	})
}

func (h *handler) getCells(w http.ResponseWriter, r *http.Request, c *caller) {
	id, tab, err := noteAndTab(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	names := []string{"sheet_id", "row", "col", "rows", "cols"}
	for k, v := range q {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		if !known {
			h.fail(w, r, problem.New(problem.Invalid, k, "is not a parameter of this call, which takes sheet_id, row, col, rows and cols"))
			return
		}
		if len(v) > 1 {
			h.fail(w, r, problem.New(problem.Invalid, k, "is given %d times: give it once", len(v)))
			return
		}
	}
	nums := map[string]int{"row": 0, "col": 0, "rows": 100, "cols": 100}
	for _, k := range names[1:] {
		v := q.Get(k)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || len(v) > 10 {
			h.fail(w, r, problem.New(problem.Invalid, k, "must be a whole number; got %q", problem.Excerpt(v)))
			return
		}
		nums[k] = n
	}
	res, err := h.svc.PeopleCells(r.Context(), c.svc, id, tab, q.Get("sheet_id"), nums["row"], nums["col"], nums["rows"], nums["cols"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, res)
}
