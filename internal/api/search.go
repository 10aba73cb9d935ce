package api

import (
	"net/http"

	"foundry/internal/service"
)

// SearchRequest is GET /api/search: search_notes' arguments.
type SearchRequest struct {
	Query   string `query:"query" json:"-" required:"true" minLength:"1" maxLength:"200" description:"Words that must all match (folded: case and accents); \"a phrase\"; a prefix*"`
	TabType string `query:"tab_type" json:"-" enum:"markdown,slides,sheet,sources,files" description:"Only hits in tabs of this type (no title hits)"`
	Cursor  string `query:"cursor" json:"-" description:"next_cursor of the page before"`
	Limit   *int   `query:"limit" json:"-" minimum:"1" maximum:"50" default:"20"`
}

var searchDoc = doc{summary: "Full-text search of the Notes the caller can open: the same hits search_notes answers", req: SearchRequest{}, resp: service.SearchResults{}}

func (h *handler) search(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[SearchRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := service.SearchArgs{Query: in.Query, TabType: in.TabType, Page: service.Page{Cursor: in.Cursor}}
	if in.Limit != nil {
		if *in.Limit == 0 {
			h.fail(w, r, invalid("limit", "must be between %d and %d (got 0); leave it out for a page of %d", service.MinPage, service.MaxPage, service.DefaultSearchPage))
			return
		}
		a.Limit = *in.Limit
	}
	res, err := h.svc.SearchNotes(r.Context(), c.svc, a)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
