package service

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/search"
	"foundry/internal/store"
)

// Full-text search of Notes (search_notes, GET /api/search, ⌘K): one use
// case for every door. The store finds the units whose words match, in
// the order it keeps (title hits first, then the units written last), and
// only among the Notes the caller reaches; each hit is then read from the
// Note as it is now, to say where in the unit the words are (the line,
// the slide's field, the cell) and to cut a snippet around them.

// SearchArgs are search_notes' arguments.
type SearchArgs struct {
	Query   string `json:"query"`
	TabType string `json:"tab_type"`
	Page
}

// SearchWhere is where in its tab a hit is.
type SearchWhere struct {
	// Field is what matched: title (the Note's), text (markdown), slide_title,
	// slide_body, slide_notes, cell, source or file.
	Field      string `json:"field" enum:"title,text,slide_title,slide_body,slide_notes,cell,source,file"`
	Line       int    `json:"line,omitempty" description:"text: the line, from 1"`
	SlideIndex *int   `json:"slide_index,omitempty" description:"slides: the slide's position, from 0"`
	SlideID    string `json:"slide_id,omitempty"`
	SheetID    string `json:"sheet_id,omitempty"`
	Row        *int   `json:"row,omitempty" description:"cell: from 0, as read_sheet_range counts"`
	Col        *int   `json:"col,omitempty" description:"cell: from 0"`
	Cell       string `json:"cell,omitempty" description:"cell: A1 style"`
	ItemID     string `json:"item_id,omitempty" description:"source or file: its ID"`
}

// SearchHit is one place a query's words were found.
type SearchHit struct {
	NoteID   string      `json:"note_id"`
	Title    string      `json:"title"`
	Version  int64       `json:"version"`
	TabID    string      `json:"tab_id"`
	TabType  string      `json:"tab_type"`
	TabLabel string      `json:"tab_label"`
	Where    SearchWhere `json:"where"`
	// Snippet is at most 200 characters around the match, each matched
	// word or phrase between « and ».
	Snippet string `json:"snippet" description:"At most 200 characters around the match, each matched word or phrase between « and »"`
}

// SearchResults are a page of hits.
type SearchResults struct {
	Hits       []SearchHit `json:"hits" nullable:"false"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// DefaultSearchPage is how many hits a search answers when no limit is
// given.
const DefaultSearchPage = 20

// searchTabTypes are the tab types a search may be narrowed to.
var searchTabTypes = []string{note.TypeMarkdown, note.TypeSlides, note.TypeSheet, note.TypeSources, note.TypeFiles}

// SearchNotes finds the places in the Notes c reaches whose words match
// the query, a page at a time.
func (s *Service) SearchNotes(ctx context.Context, c Caller, a SearchArgs) (SearchResults, error) {
	limit := DefaultSearchPage
	if a.Limit != 0 {
		var err error
		if limit, err = pageLimit(a.Limit); err != nil {
			return SearchResults{}, err
		}
	}
	if !utf8.ValidString(a.Query) {
		return SearchResults{}, problem.New(problem.Invalid, "query", "is not valid UTF-8: send the words as text")
	}
	q, err := search.Parse(a.Query)
	var qe *search.QueryError
	if errors.As(err, &qe) {
		kind := problem.Invalid
		if utf8.RuneCountInString(a.Query) > search.MaxQueryRunes {
			kind = problem.Limit
		}
		return SearchResults{}, problem.New(kind, "query", "%s", qe.Reason)
	} else if err != nil {
		return SearchResults{}, err
	}
	if a.TabType != "" && !slices.Contains(searchTabTypes, a.TabType) {
		return SearchResults{}, problem.New(problem.Invalid, "tab_type", "%q is not a tab type: use one of %s, or leave it out to search every tab", problem.Excerpt(a.TabType), strings.Join(searchTabTypes, ", "))
	}
	sq := store.SearchQuery{Workspace: c.Workspace, Query: q, TabType: a.TabType, Limit: limit + 1}
	if a.Cursor != "" {
		v, err := decodeCursor(a.Cursor, "s")
		if err != nil {
			return SearchResults{}, err
		}
		after, _ := store.ParseSearchCursor(v) // checked by decodeCursor
		sq.After = &after
	}
	if p, ok := c.Principal(); ok {
		sq.ApprovedOnly, sq.IDs = true, p.Notes
	}
	res := SearchResults{Hits: []SearchHit{}}
	// A unit the store matched may no longer match in the Note as it is
	// now (a write landed in between): it is left out, and the next rows
	// are read, a few pages at most.
	var read *store.SearchCursor // the last row read
	for range 4 {
		rows, err := s.Store.Search(ctx, sq)
		if err != nil {
			return SearchResults{}, err
		}
		for _, h := range rows {
			if len(res.Hits) == limit {
				res.NextCursor = encodeCursor("s", read.String())
				return res, nil
			}
			read = &h.Cursor
			hit, ok, err := s.searchHit(ctx, c, q, h)
			if err != nil {
				return SearchResults{}, err
			}
			if ok {
				res.Hits = append(res.Hits, hit)
			}
		}
		if len(rows) < sq.Limit {
			return res, nil
		}
		sq.After = read
	}
	return res, nil
}

// searchHit reads hit h from its Note as it is now: ok is false when the
// Note or the unit is gone, or no longer holds the words.
func (s *Service) searchHit(ctx context.Context, c Caller, q search.Query, h store.SearchHit) (SearchHit, bool, error) {
	r, d, err := s.noteFor(ctx, c, h.NoteID)
	if err != nil {
		var p *problem.Problem
		if errors.As(err, &p) {
			return SearchHit{}, false, nil // not found, or in the trash
		}
		return SearchHit{}, false, err
	}
	tab, spots, ok := note.SearchSpots(d, h.Key)
	if !ok {
		return SearchHit{}, false, nil
	}
	best, bestAt := search.Match{}, -1
	for i, sp := range spots {
		if m := q.Find(sp.Text); m.Found > best.Found {
			best, bestAt = m, i
			if m.Found == len(q.Terms) {
				break
			}
		}
	}
	if bestAt < 0 {
		return SearchHit{}, false, nil
	}
	sp := spots[bestAt]
	out := SearchHit{NoteID: r.ID, Title: r.Title, Version: r.Version, TabID: tab.ID, TabType: tab.Type, TabLabel: tab.Label,
		Where:   SearchWhere{Field: sp.Field, Line: sp.Line, SlideID: sp.SlideID, SheetID: sp.SheetID, ItemID: sp.ItemID},
		Snippet: search.Snippet(sp.Text, best.Spans)}
	switch tab.Type {
	case note.TypeSlides:
		out.Where.SlideIndex = &sp.SlideIndex
	case note.TypeSheet:
		out.Where.Row, out.Where.Col, out.Where.Cell = &sp.Row, &sp.Col, note.CellAddress(sp.Row, sp.Col)
	}
	return out, true, nil
}

// searchUnits are d's units to index (none when the index is off).
func (s *Service) searchUnits(d *note.Doc) []note.SearchUnit {
	if s.searchOff {
		return nil
	}
	return note.SearchUnits(d)
}

// searchDocs are the store's rows for units: their words cut and folded.
func searchDocs(units []note.SearchUnit) []store.SearchDoc {
	if len(units) == 0 {
		return nil
	}
	out := make([]store.SearchDoc, len(units))
	for i, u := range units {
		out[i] = store.SearchDoc{Key: u.Key, TabType: u.TabType, Terms: search.Terms(u.Text)}
	}
	return out
}

// IndexNotes indexes, whole, every Note the index does not hold whole at
// this build's format (Notes written before it existed), one Note per
// transaction, so writes go on meanwhile; a Note written while it was read
// is read again. It logs its progress every few seconds and stops when ctx
// is done. It answers how many Notes it indexed.
func IndexNotes(ctx context.Context, st store.Store, log *slog.Logger) (int, error) {
	n, after, last := 0, "", time.Now()
	started := last
	for {
		rows, err := st.Unindexed(ctx, after, 100)
		if err != nil {
			return n, err
		}
		for _, r := range rows {
			for range 3 {
				done, err := indexNote(ctx, st, r.ID)
				if err != nil {
					return n, err
				}
				if done {
					n++
					break
				}
			}
			if log != nil && time.Since(last) > 5*time.Second {
				last = time.Now()
				log.Info("search index: indexing Notes written before it", "indexed", n, "at", r.ID)
			}
		}
		if len(rows) < 100 {
			break
		}
		after = rows[len(rows)-1].ID
	}
	if log != nil && n > 0 {
		log.Info("search index: every Note is indexed", "indexed", n, "took", time.Since(started).Round(time.Millisecond).String())
	}
	return n, nil
}

// indexNote indexes Note id as it is now (nothing, when it is in the
// trash); false: it was written meanwhile, or is still stored whole (the
// next start stores it by parts).
func indexNote(ctx context.Context, st store.Store, id string) (bool, error) {
	r, ps, err := st.Parts(ctx, store.TypeNote, id, 0)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var docs []store.SearchDoc
	if _, err := st.GetObject(ctx, KindNoteDeleted, id); errors.Is(err, store.ErrNotFound) {
		if !note.IsHead(r.Doc) {
			return false, nil
		}
		d, err := note.Assemble(r.Doc, ps, nil)
		if err != nil {
			return false, err
		}
		docs = searchDocs(note.SearchUnits(&d))
	} else if err != nil {
		return false, err
	}
	return st.IndexNote(ctx, id, r.Version, docs)
}
