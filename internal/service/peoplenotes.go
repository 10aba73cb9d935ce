package service

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// People's Note operations: what the REST door (the web app and scripts)
// calls. Every write is the one guarded write, with the version the caller
// was based on and an optional idempotency key that lives in the people's
// key scope (store.ScopePeople), so no key an agent picks can meet it.

// KindNoteDeleted marks a deleted Note: an object beside the Note, written
// in the same guarded write that switches its connected access off. A Note
// so marked is gone from every list and read of the people's door, and, no
// longer approved, from every agent's.
const KindNoteDeleted = "note_deleted"

// Caller is who a people's door acts for: a person signed in (Token nil),
// who reaches every Note of the workspace, or a bearer token, whose scopes
// and grant apply as they do to an agent (approved Notes in its grant only).
type Caller struct {
	Workspace, User string
	Token           *auth.Principal
}

// PersonCaller is a person signed in to the workspace.
func PersonCaller(ws, user string) Caller { return Caller{Workspace: ws, User: user} }

// TokenCaller is a bearer token's principal.
func TokenCaller(p auth.Principal) Caller {
	return Caller{Workspace: p.Workspace, User: p.User, Token: &p}
}

func (c Caller) actor() string {
	if c.Token != nil {
		return "token:" + c.Token.TokenID
	}
	return "user:" + c.User
}

// reaches says whether c may see r at all; anything else is not found.
func (c Caller) reaches(r *store.Resource) bool {
	if r.Workspace != c.Workspace {
		return false
	}
	return c.Token == nil || (r.Approved && c.Token.CanNote(r.ID))
}

// CanWrite is the write scope's rule for a token (a person may always write).
func (c Caller) CanWrite() error {
	if c.Token != nil && !c.Token.Has(auth.ScopeWrite) {
		return problem.New(problem.Scope, "Authorization", "this token is read-only: it lacks the %s scope; create a token with it (`foundry token create --scopes %s,%s`)", auth.ScopeWrite, auth.ScopeRead, auth.ScopeWrite).With("required_scope", auth.ScopeWrite)
	}
	return nil
}

// PersonOnly is the answer to a token trying a person's act.
const PersonOnly = "person_only"

func (c Caller) personOnly(what string) error {
	if c.Token != nil {
		return problem.New(PersonOnly, "Authorization", "%s is a person's act: sign in to Foundry's web app to do it; a token cannot", what)
	}
	return nil
}

// PeopleWrite is what every people's write carries besides its arguments.
type PeopleWrite struct {
	Expected int64  // the version the change is based on (≥ 1)
	Key      string // optional idempotency key ("" none)
}

// PeopleResult is what every people's write answers.
type PeopleResult struct {
	ID            string   `json:"id"`
	Title         string   `json:"title"`
	Approved      bool     `json:"approved"`
	Version       int64    `json:"version"`
	ChangedTabIDs []string `json:"changed_tab_ids"`
	Replayed      bool     `json:"-"` // the first result, replayed for the same key and request
}

// PeopleNoteSummary is one entry of a people's list of Notes.
type PeopleNoteSummary struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Approved  bool   `json:"approved"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// PeopleDefaultPage is the page size of the people's list when none is given.
const PeopleDefaultPage = MaxPage

// PeopleListNotes lists the Notes c reaches whose title contains query, by
// ID, a page at a time; deleted Notes are left out.
func (s *Service) PeopleListNotes(ctx context.Context, c Caller, query, cursor string, limit int) ([]PeopleNoteSummary, string, error) {
	if limit == 0 {
		limit = PeopleDefaultPage
	}
	if limit < MinPage || limit > MaxPage {
		return nil, "", problem.New(problem.Invalid, "limit", "must be between %d and %d (got %d); page with cursor", MinPage, MaxPage, limit)
	}
	if n := len([]rune(query)); n > note.MaxTitleRunes {
		return nil, "", problem.New(problem.Limit, "query", "is %d characters; a title has at most %d, so search with a part of one", n, note.MaxTitleRunes)
	}
	if err := CheckID("query", query); err != nil {
		return nil, "", err
	}
	after, err := decodeCursor(cursor, "n")
	if err != nil {
		return nil, "", err
	}
	q := store.ListQuery{Workspace: c.Workspace, Type: store.TypeNote, Query: strings.TrimSpace(query), Limit: limit + 1}
	if c.Token != nil {
		q.ApprovedOnly, q.IDs = true, c.Token.Notes
	}
	out := []PeopleNoteSummary{}
	// Deleted Notes are skipped, so a page may need more than one read; each
	// read moves past what it saw, and the rounds are bounded.
	for round := 0; round < 20; round++ {
		q.AfterID = after
		rows, err := s.Store.List(ctx, q)
		if err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			after = r.ID
			gone, err := s.noteDeleted(ctx, r.ID)
			if err != nil {
				return nil, "", err
			}
			if gone {
				continue
			}
			if len(out) == limit {
				return out, encodeCursor("n", out[len(out)-1].ID), nil
			}
			out = append(out, PeopleNoteSummary{ID: r.ID, Title: r.Title, Approved: r.Approved, Version: r.Version, UpdatedAt: r.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")})
		}
		if len(rows) <= limit {
			return out, "", nil
		}
	}
	next := ""
	if len(out) > 0 {
		next = encodeCursor("n", out[len(out)-1].ID)
	} else if after != "" {
		next = encodeCursor("n", after)
	}
	return out, next, nil
}

func (s *Service) noteDeleted(ctx context.Context, id string) (bool, error) {
	_, err := s.Store.GetObject(ctx, KindNoteDeleted, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// PeopleNote is Note id as c may see it, with its document; a Note c does
// not reach, or a deleted one, is not found.
func (s *Service) PeopleNote(ctx context.Context, c Caller, id string) (store.Resource, *note.Doc, error) {
	if err := CheckID("id", id); err != nil {
		return store.Resource{}, nil, err
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
		return store.Resource{}, nil, peopleNotFound(id)
	}
	if err != nil {
		return store.Resource{}, nil, err
	}
	full, d, err := s.LoadNote(ctx, id)
	if err != nil {
		return store.Resource{}, nil, err
	}
	if !c.reaches(&full) {
		return store.Resource{}, nil, peopleNotFound(id) // changed between the two reads
	}
	return full, d, nil
}

func peopleNotFound(id string) *problem.Problem {
	return problem.New(problem.NotFound, "id", "Note %q was not found: list the Notes you can open with GET /api/notes", problem.Excerpt(id))
}

// PeopleReadTab is one tab of a Note c may see, as read_note_tab gives it.
func (s *Service) PeopleReadTab(ctx context.Context, c Caller, id, tabID string) (TabContent, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return TabContent{}, err
	}
	r, d, err := s.PeopleNote(ctx, c, id)
	if err != nil {
		return TabContent{}, err
	}
	t, err := note.FindTab(d, tabID)
	if err != nil {
		return TabContent{}, err
	}
	x := note.Read(d, t)
	return TabContent{NoteID: r.ID, Version: r.Version, TabID: t.ID, Type: t.Type, Label: t.Label,
		Text: x.Text, Slides: x.Slides, Sheets: x.Sheets, Sources: x.Sources, Files: x.Files}, nil
}

// PeopleHistory is the list of versions of a Note c may see, oldest first.
func (s *Service) PeopleHistory(ctx context.Context, c Caller, id string) (store.Resource, []store.VersionInfo, error) {
	r, _, err := s.PeopleNote(ctx, c, id)
	if err != nil {
		return store.Resource{}, nil, err
	}
	h, err := s.Store.History(ctx, store.TypeNote, id)
	return r, h, err
}

// PeopleCreateNote creates a Note owned by the person. With a key, the
// Note's ID is derived from the workspace, the person and the key, so a
// resend finds the Note the first call made and answers its first result.
func (s *Service) PeopleCreateNote(ctx context.Context, c Caller, title string, approved bool, key string) (PeopleResult, error) {
	if err := c.personOnly("creating a Note"); err != nil {
		return PeopleResult{}, err
	}
	title, err := note.CheckTitle(title)
	if err != nil {
		return PeopleResult{}, err
	}
	id := store.NewID("note")
	if key != "" {
		if err := checkKey(key); err != nil {
			var pr *problem.Problem
			if errors.As(err, &pr) {
				pr.Field = "Idempotency-Key"
			}
			return PeopleResult{}, err
		}
		sum := sha256.Sum256([]byte("create_note\x00" + c.Workspace + "\x00" + c.User + "\x00" + key))
		id = "note_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
	}
	d := note.New(title)
	w, err := note.Diff(&note.Doc{}, &d)
	if err != nil {
		return PeopleResult{}, err
	}
	res := PeopleResult{ID: id, Title: title, Approved: approved, Version: 1, ChangedTabIDs: []string{}}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeNote, ID: id, Actor: c.actor(),
		Key: key, KeyScope: store.ScopePeople, Fingerprint: fingerprint(struct {
			Op, Actor, Title string
			Approved         bool
		}{"create_note", c.actor(), title, approved}),
		Create:          &store.Resource{Owner: c.User, Title: title, Approved: approved, Doc: w.Head},
		CreateIfMissing: key != "",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			if !cur.UpdatedAt.IsZero() {
				// The Note the key made is there but the key has expired.
				return nil, problem.New(problem.KeyReused, "Idempotency-Key", "this key already created Note %s; use a fresh key for a new Note", id)
			}
			return &store.Change{Kind: "note_created", Parts: w.Parts, Result: mustJSON(res)}, nil
		},
	}
	out, err := s.Store.Guarded(ctx, m)
	if err != nil {
		return PeopleResult{}, peopleStoreProblem(err, m)
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		return PeopleResult{}, fmt.Errorf("stored result: %w", err)
	}
	res.Replayed = out.Replayed
	if !out.Replayed {
		s.docs.put(id, 1, &d)
	}
	return res, nil
}

// peopleStoreProblem is storeProblem with the people's door's field names.
func peopleStoreProblem(err error, m store.Mutation) error {
	err = storeProblem(err, m)
	var pr *problem.Problem
	if errors.As(err, &pr) {
		switch {
		case pr.Code == problem.KeyReused:
			pr.Field = "Idempotency-Key"
			pr.Message = fmt.Sprintf("this Idempotency-Key was already used for a different request on this Note (%s). Use a fresh key for a different change; resend the same key only with the same request.", problem.Excerpt(m.Key))
		case pr.Code == problem.NotFound:
			return peopleNotFound(m.ID)
		}
	}
	return err
}

// peopleEdit is one people's change of a Note: it edits d (a copy of the
// Note at cur's version) and may set ch's Title, Approved, Objects and
// Changed; the door decides nothing else.
type peopleEdit func(cur *store.Resource, d *note.Doc, ch *store.Change) error

// peopleWrite is the one way a people's door writes a Note: the caller's
// reach, the key in the people's scope, the version compare, then the edit.
// An edit that changes nothing is no new version.
func (s *Service) peopleWrite(ctx context.Context, c Caller, id string, pw PeopleWrite, fp any, kind, sizeField string, edit peopleEdit) (PeopleResult, error) {
	if err := CheckID("id", id); err != nil {
		return PeopleResult{}, err
	}
	if err := c.CanWrite(); err != nil {
		return PeopleResult{}, err
	}
	if pw.Key != "" {
		if err := checkKey(pw.Key); err != nil {
			var pr *problem.Problem
			if errors.As(err, &pr) {
				pr.Field = "Idempotency-Key"
			}
			return PeopleResult{}, err
		}
	}
	if pw.Expected < 1 {
		return PeopleResult{}, problem.New("precondition_required", "If-Match", "a change must say which version of the Note it was based on: send If-Match: \"<version>\" (the ETag of GET /api/notes/%s) or expected_version", problem.Excerpt(id))
	}
	var written *note.Doc
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeNote, ID: id, ExpectedVersion: pw.Expected, Actor: c.actor(),
		Key: pw.Key, KeyScope: store.ScopePeople, Fingerprint: fingerprint(struct {
			Actor string
			Req   any
		}{c.actor(), fp}),
		Access: func(cur *store.Resource) error {
			if !c.reaches(cur) {
				return peopleNotFound(id)
			}
			return nil
		},
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			written = nil
			if _, err := tx.GetObject(KindNoteDeleted, id); err == nil {
				return nil, peopleNotFound(id)
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			ch := &store.Change{Kind: kind}
			d, w, err := s.editInTx(cur, tx, sizeField, func(d *note.Doc) error { return edit(cur, d, ch) })
			if err != nil {
				return nil, err
			}
			res := PeopleResult{ID: id, Title: cur.Title, Approved: cur.Approved, Version: cur.Version, ChangedTabIDs: nonNilIDs(ch.Changed)}
			if ch.Title != nil {
				res.Title = *ch.Title
			}
			if ch.Approved != nil {
				res.Approved = *ch.Approved
			}
			if w.Head == nil && len(w.Parts) == 0 && ch.Title == nil && ch.Approved == nil && len(ch.Objects) == 0 {
				res.ChangedTabIDs = []string{}
				return &store.Change{Unchanged: true, Result: mustJSON(res)}, nil
			}
			res.Version++
			ch.Doc, ch.Parts, ch.Result = w.Head, w.Parts, mustJSON(res)
			written = d
			return ch, nil
		},
	}
	out, err := s.Store.Guarded(ctx, m)
	if err != nil {
		return PeopleResult{}, peopleStoreProblem(err, m)
	}
	var res PeopleResult
	if err := json.Unmarshal(out.Result, &res); err != nil {
		return PeopleResult{}, fmt.Errorf("stored result: %w", err)
	}
	res.Replayed = out.Replayed
	if written != nil && !out.Replayed {
		s.docs.put(id, out.Version, written)
	}
	return res, nil
}

// PeopleUpdateNote renames a Note and/or switches its connected access
// (a person's act only).
func (s *Service) PeopleUpdateNote(ctx context.Context, c Caller, id string, title *string, approved *bool, pw PeopleWrite) (PeopleResult, error) {
	if title == nil && approved == nil {
		return PeopleResult{}, problem.New(problem.Invalid, "title", "give title, approved or both: there is nothing to change")
	}
	if approved != nil {
		if err := c.personOnly("switching a Note's connected access"); err != nil {
			return PeopleResult{}, err
		}
	}
	var clean *string
	if title != nil {
		t, err := note.CheckTitle(*title)
		if err != nil {
			return PeopleResult{}, err
		}
		clean = &t
	}
	kind := "note_renamed"
	if title == nil {
		kind = "access_changed"
	}
	return s.peopleWrite(ctx, c, id, pw, struct {
		Op       string
		Title    *string
		Approved *bool
	}{"update_note", clean, approved}, kind, "title", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		if clean != nil && *clean != cur.Title {
			ch.Title = clean
			d.Title = *clean
		}
		if approved != nil && *approved != cur.Approved {
			ch.Approved = approved
		}
		return nil
	})
}

// PeopleDeleteNote deletes a Note: its connected access goes off and it is
// marked deleted (KindNoteDeleted), in one guarded write, so it leaves
// every list and every agent's reach; its history stays in the store.
func (s *Service) PeopleDeleteNote(ctx context.Context, c Caller, id string, pw PeopleWrite) (PeopleResult, error) {
	if err := c.personOnly("deleting a Note"); err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op string }{"delete_note"}, "note_deleted", "id", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		off := false
		ch.Approved = &off
		ch.Objects = []store.Object{{Workspace: cur.Workspace, Kind: KindNoteDeleted, ID: cur.ID, Parent: cur.ID,
			Doc: mustJSON(map[string]any{"by": c.actor(), "version": cur.Version + 1})}}
		return nil
	})
}

// PeopleSetText replaces the text of the markdown tab.
func (s *Service) PeopleSetText(ctx context.Context, c Caller, id, tabID, text string, pw PeopleWrite) (PeopleResult, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return PeopleResult{}, err
	}
	if err := note.CheckText(text); err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct{ Op, Tab, Text string }{"replace_text", tabID, text}, "tab_edited", "text", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		before := d.Markdown
		if err := note.ReplaceText(d, tabID, text); err != nil {
			return err
		}
		if d.Markdown != before {
			ch.Changed = []string{tabID}
		}
		return nil
	})
}

// PeopleRestore makes an old version of a Note current again, as a new
// version.
func (s *Service) PeopleRestore(ctx context.Context, c Caller, id string, version int64, pw PeopleWrite) (PeopleResult, error) {
	if err := c.CanWrite(); err != nil {
		return PeopleResult{}, err
	}
	r, _, err := s.PeopleNote(ctx, c, id)
	if err != nil {
		return PeopleResult{}, err
	}
	if version < 1 || version > r.Version {
		return PeopleResult{}, problem.New(problem.Invalid, "version", "give a version between 1 and %d (the Note is at version %d); got %d", r.Version, r.Version, version).With("current_version", r.Version)
	}
	prev, err := s.NoteAt(ctx, id, version)
	if err != nil {
		return PeopleResult{}, err
	}
	return s.peopleWrite(ctx, c, id, pw, struct {
		Op      string
		Version int64
	}{"restore", version}, "restored", "version", func(cur *store.Resource, d *note.Doc, ch *store.Change) error {
		p := note.Clone(&prev)
		// Tab IDs are never reused: keep the counters of the newer document.
		p.NextTabN, p.NextItem = max(p.NextTabN, d.NextTabN), max(p.NextItem, d.NextItem)
		seen := map[string]bool{}
		for _, t := range append(note.Refs(d), note.Refs(&p)...) {
			if !seen[t.TabID] {
				seen[t.TabID] = true
				ch.Changed = append(ch.Changed, t.TabID)
			}
		}
		if p.Title != cur.Title {
			t := p.Title
			ch.Title = &t
		}
		*d = p
		return nil
	})
}
