package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// The Notes endpoints: people's (and scripts') reads and guarded writes.

// noteID is the {id} of r's path, checked as hostile input.
func noteID(r *http.Request) (string, error) {
	return pathID(r, "id")
}

func pathID(r *http.Request, name string) (string, error) {
	id := r.PathValue(name)
	field := name
	if id == "" {
		return "", problem.New(problem.Invalid, field, "is empty: give the ID GET /api/notes returned")
	}
	if len(id) > MaxIDBytes {
		return "", problem.New(problem.Invalid, field, "is %d bytes long, which no Foundry ID is (at most %d)", len(id), MaxIDBytes)
	}
	if err := service.CheckID(field, id); err != nil {
		return "", err
	}
	return id, nil
}

// NoteList is GET /api/notes's answer.
type NoteList struct {
	Notes      []service.PeopleNoteSummary `json:"notes"`
	NextCursor *string                     `json:"next_cursor"`
}

func (h *handler) listNotes(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	for k := range q {
		if k != "query" && k != "cursor" && k != "limit" {
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is not a parameter of GET /api/notes, which takes query, cursor and limit"))
			return
		}
	}
	for _, k := range []string{"query", "cursor", "limit"} {
		if len(q[k]) > 1 {
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is given %d times: give it once", len(q[k])))
			return
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < service.MinPage || n > service.MaxPage {
			writeProblem(w, 0, problem.New(problem.Invalid, "limit", "must be a whole number between %d and %d (default %d); got %q", service.MinPage, service.MaxPage, service.PeopleDefaultPage, problem.Excerpt(v)))
			return
		}
		limit = n
	}
	notes, next, err := h.svc.PeopleListNotes(r.Context(), c.svc, q.Get("query"), q.Get("cursor"), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := NoteList{Notes: notes}
	if next != "" {
		out.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, out)
}

type createBody struct {
	Title    *string `json:"title"`
	Approved *bool   `json:"approved"`
}

func (h *handler) createNote(w http.ResponseWriter, r *http.Request, c *caller) {
	var b createBody
	if err := decodeBody(r, &b, false); err != nil {
		h.fail(w, r, err)
		return
	}
	if b.Title == nil {
		writeProblem(w, 0, problem.New(problem.Invalid, "title", "is required: give the new Note's title"))
		return
	}
	res, err := h.svc.PeopleCreateNote(r.Context(), c.svc, *b.Title, b.Approved != nil && *b.Approved, r.Header.Get(HeaderKey))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(res.ID))
	h.written(w, http.StatusCreated, res)
}

// written answers a write's result, its ETag and whether it was replayed.
func (h *handler) written(w http.ResponseWriter, status int, res service.PeopleResult) {
	h.answer(w, status, res, res)
}

// answer is written with a body of its own (a write that also names what
// it made: a tab, a slide, a source).
func (h *handler) answer(w http.ResponseWriter, status int, res service.PeopleResult, body any) {
	w.Header().Set("ETag", etag(res.Version))
	if res.Replayed {
		w.Header().Set(HeaderReplayed, "true")
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, body)
}

// NoteView is GET /api/notes/{id}'s answer.
type NoteView struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Approved bool          `json:"approved"`
	Version  int64         `json:"version"`
	Tabs     []note.TabRef `json:"tabs"`
}

func (h *handler) getNote(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := noteID(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, d, err := h.svc.PeopleNote(r.Context(), c.svc, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, NoteView{ID: res.ID, Title: res.Title, Approved: res.Approved, Version: res.Version, Tabs: note.Refs(d)})
}

type updateBody struct {
	Title           *string `json:"title"`
	Approved        *bool   `json:"approved"`
	ExpectedVersion *int64  `json:"expected_version"`
}

func (h *handler) updateNote(w http.ResponseWriter, r *http.Request, c *caller) {
	h.noteWrite(w, r, http.StatusOK, func(id string) (service.PeopleResult, error) {
		b, pw, err := writeBody[updateBody](r, false)
		if err != nil {
			return service.PeopleResult{}, err
		}
		return h.svc.PeopleUpdateNote(r.Context(), c.svc, id, b.Title, b.Approved, pw)
	})
}

type versionBody struct {
	ExpectedVersion *int64 `json:"expected_version"`
}

// The bodies of writes say the version they were based on (or If-Match
// does).
func (b *updateBody) expected() *int64  { return b.ExpectedVersion }
func (b *versionBody) expected() *int64 { return b.ExpectedVersion }
func (b *textBody) expected() *int64    { return b.ExpectedVersion }
func (b *restoreBody) expected() *int64 { return b.ExpectedVersion }

// writeBody reads a write's JSON body (optional: it may be absent) and its
// precondition: If-Match, or the body's expected_version.
func writeBody[B any, P interface {
	*B
	expected() *int64
}](r *http.Request, optional bool) (*B, service.PeopleWrite, error) {
	b := new(B)
	if err := decodeBody(r, b, optional); err != nil {
		return nil, service.PeopleWrite{}, err
	}
	pw, err := write(r, P(b).expected())
	return b, pw, err
}

// noteWrite is every mutating call on a Note: the Note's ID from the path,
// then do, then the answer with the new version (ETag, replay header) or
// the problem.
func (h *handler) noteWrite(w http.ResponseWriter, r *http.Request, status int, do func(id string) (service.PeopleResult, error)) {
	id, err := noteID(r)
	var res service.PeopleResult
	if err == nil {
		res, err = do(id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.written(w, status, res)
}

func (h *handler) deleteNote(w http.ResponseWriter, r *http.Request, c *caller) {
	h.noteWrite(w, r, http.StatusNoContent, func(id string) (service.PeopleResult, error) {
		_, pw, err := writeBody[versionBody](r, true)
		if err != nil {
			return service.PeopleResult{}, err
		}
		return h.svc.PeopleDeleteNote(r.Context(), c.svc, id, pw)
	})
}

func (h *handler) getTab(w http.ResponseWriter, r *http.Request, c *caller) {
	id, tab, err := noteAndTab(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	outline := false
	for k, v := range r.URL.Query() {
		if k != "cells" {
			h.fail(w, r, problem.New(problem.Invalid, k, "is not a parameter of this call, which takes cells (all or none)"))
			return
		}
		if len(v) != 1 || (v[0] != "all" && v[0] != "none") {
			h.fail(w, r, problem.New(problem.Invalid, "cells", "must be given once, as all or none; got %q", problem.Excerpt(strings.Join(v, ","))))
			return
		}
		outline = v[0] == "none"
	}
	res, err := h.svc.PeopleReadTab(r.Context(), c.svc, id, tab)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Version))
	if outline && res.Sheets != nil {
		writeJSON(w, http.StatusOK, sheetsOutline(res))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// SheetOutline is one sheet of a tab read with ?cells=none: its size
// instead of its cells, which GET …/cells reads in blocks.
type SheetOutline struct {
	SheetID string  `json:"sheet_id"`
	Name    string  `json:"name"`
	Cells   [][]any `json:"cells"` // always empty
	Rows    int     `json:"rows"`
	Cols    int     `json:"cols"` // of its widest row
}

// tabOutline is a sheet tab without its cells (its Sheets hide the
// embedded ones).
type tabOutline struct {
	service.TabContent
	Sheets []SheetOutline `json:"sheets"`
}

func sheetsOutline(res service.TabContent) tabOutline {
	out := tabOutline{TabContent: res, Sheets: make([]SheetOutline, 0, len(res.Sheets))}
	for _, s := range res.Sheets {
		cols := 0
		for _, row := range s.Cells {
			cols = max(cols, len(row))
		}
		out.Sheets = append(out.Sheets, SheetOutline{SheetID: s.ID, Name: s.Name, Cells: [][]any{}, Rows: len(s.Cells), Cols: cols})
	}
	return out
}

type textBody struct {
	Text            *string `json:"text"`
	ExpectedVersion *int64  `json:"expected_version"`
}

func (h *handler) putText(w http.ResponseWriter, r *http.Request, c *caller) {
	h.noteWrite(w, r, http.StatusOK, func(id string) (service.PeopleResult, error) {
		tab, err := pathID(r, "tab_id")
		if err != nil {
			return service.PeopleResult{}, err
		}
		b, pw, err := writeBody[textBody](r, false)
		if err != nil {
			return service.PeopleResult{}, err
		}
		if b.Text == nil {
			return service.PeopleResult{}, problem.New(problem.Invalid, "text", "is required: give the whole text of the markdown tab")
		}
		return h.svc.PeopleSetText(r.Context(), c.svc, id, tab, *b.Text, pw)
	})
}

// Who is who made a version: a person, or a token (a personal access
// token or a connected OAuth client).
type Who struct {
	Kind string `json:"kind"` // "person", "token", "client" or "unknown"
	ID   string `json:"id"`
	Name string `json:"name"`
}

// VersionEntry is one version of GET /api/notes/{id}/history.
type VersionEntry struct {
	Version int64    `json:"version"`
	Kind    string   `json:"kind"`
	Who     Who      `json:"who"`
	At      string   `json:"at"`
	Changed []string `json:"changed"`
	Bytes   int64    `json:"bytes"`
}

// History is GET /api/notes/{id}/history's answer, oldest first.
type History struct {
	ID       string         `json:"id"`
	Version  int64          `json:"version"`
	Versions []VersionEntry `json:"versions"`
}

func (h *handler) history(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := noteID(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, vs, err := h.svc.PeopleHistory(r.Context(), c.svc, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	names, err := h.actors(r, c.ws)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := History{ID: id, Version: res.Version, Versions: make([]VersionEntry, 0, len(vs))}
	for _, v := range vs {
		out.Versions = append(out.Versions, versionEntry(v, names))
	}
	w.Header().Set("ETag", etag(res.Version))
	writeJSON(w, http.StatusOK, out)
}

func versionEntry(v store.VersionInfo, names map[string]Who) VersionEntry {
	who, ok := names[v.Actor]
	if !ok {
		kind, aid, _ := strings.Cut(v.Actor, ":")
		who = Who{Kind: "unknown", ID: aid, Name: v.Actor}
		if kind == "user" {
			who.Kind = "person"
		}
	}
	return VersionEntry{Version: v.Version, Kind: v.Kind, Who: who,
		At: v.At.UTC().Format("2006-01-02T15:04:05.000Z"), Changed: nonNil(v.Changed), Bytes: v.Bytes}
}

// actors names every actor of the workspace: its people, tokens and
// connected clients, by the actor string history records.
func (h *handler) actors(r *http.Request, ws string) (map[string]Who, error) {
	ctx := r.Context()
	out := map[string]Who{}
	users, err := h.st.Users(ctx, ws)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out["user:"+u.ID] = Who{Kind: "person", ID: u.ID, Name: firstNonEmpty(u.Name, u.Email)}
	}
	toks, err := h.st.Tokens(ctx, ws)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		out["token:"+t.ID] = Who{Kind: "token", ID: t.ID, Name: t.Name}
	}
	conns, err := h.st.Connections(ctx, ws)
	if err != nil {
		return nil, err
	}
	clientNames := map[string]string{}
	for _, cn := range conns {
		name, ok := clientNames[cn.Client]
		if !ok {
			name = cn.Client
			if cl, err := h.st.Client(ctx, cn.Client); err == nil && cl.Name != "" {
				name = cl.Name
			}
			clientNames[cn.Client] = name
		}
		out["token:"+cn.ID] = Who{Kind: "client", ID: cn.ID, Name: name}
	}
	return out, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

type restoreBody struct {
	Version         *int64 `json:"version"`
	ExpectedVersion *int64 `json:"expected_version"`
}

func (h *handler) restore(w http.ResponseWriter, r *http.Request, c *caller) {
	h.noteWrite(w, r, http.StatusOK, func(id string) (service.PeopleResult, error) {
		b, pw, err := writeBody[restoreBody](r, false)
		if err != nil {
			return service.PeopleResult{}, err
		}
		if b.Version == nil {
			return service.PeopleResult{}, problem.New(problem.Invalid, "version", "is required: give the version to restore (see GET /api/notes/%s/history)", problem.Excerpt(id))
		}
		return h.svc.PeopleRestore(r.Context(), c.svc, id, *b.Version, pw)
	})
}
