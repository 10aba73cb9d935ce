package api

import (
	"net/http"
	"net/url"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// The sheets of a sheet tab: add, rename and delete one. Each is a guarded
// people's write with the version it was based on; the cells are PUT
// .../cells.

type sheetBody struct {
	Name            *string `json:"name"`
	ExpectedVersion *int64  `json:"expected_version"`
}

func (b *sheetBody) expected() *int64 { return b.ExpectedVersion }

func sheetName(b *sheetBody) (string, error) {
	if b.Name == nil {
		return "", problem.New(problem.Invalid, "name", "is required: give the sheet's name, such as \"Sheet2\"")
	}
	return *b.Name, nil
}

func (h *handler) addSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	id, tab, err := noteAndTab(r)
	var res service.PeopleSheetResult
	if err == nil {
		var b *sheetBody
		var pw service.PeopleWrite
		b, pw, err = writeBody[sheetBody](r, false)
		var name string
		if err == nil {
			name, err = sheetName(b)
		}
		if err == nil {
			res, err = h.svc.PeopleAddSheet(r.Context(), c.svc, id, tab, name, pw)
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(id)+"/tabs/"+url.PathEscape(tab)+"/sheets/"+url.PathEscape(res.SheetID))
	h.answer(w, http.StatusCreated, res.PeopleResult, res)
}

func (h *handler) renameSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusOK, func(id, tab string) (any, service.PeopleResult, error) {
		sheet, err := pathID(r, "sheet_id")
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		b, pw, err := writeBody[sheetBody](r, false)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		name, err := sheetName(b)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleRenameSheet(r.Context(), c.svc, id, tab, sheet, name, pw)
		return res, res.PeopleResult, err
	})
}

func (h *handler) deleteSheet(w http.ResponseWriter, r *http.Request, c *caller) {
	h.tabWrite(w, r, http.StatusNoContent, func(id, tab string) (any, service.PeopleResult, error) {
		sheet, err := pathID(r, "sheet_id")
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		_, pw, err := writeBody[versionBody](r, true)
		if err != nil {
			return nil, service.PeopleResult{}, err
		}
		res, err := h.svc.PeopleDeleteSheet(r.Context(), c.svc, id, tab, sheet, pw)
		return nil, res, err
	})
}
