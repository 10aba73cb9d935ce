package service

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// A Note's life: created, renamed, its connected access switched, deleted,
// an old version restored. Creating, deleting and switching access are a
// person's acts (and the operator's); an agent may rename and restore.

// CreateNoteArgs are what a new Note is made of.
type CreateNoteArgs struct {
	Title    string `json:"title"`
	Approved bool   `json:"approved"` // connected access on from the start
	// IdempotencyKey, if set, derives the Note's ID from the workspace,
	// the person and the key, so a resend finds the Note the first call
	// made and answers its first result.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// NoteCreated is what creating, renaming or switching a Note answers.
type NoteCreated struct {
	NoteWritten
	Title    string `json:"title"`
	Approved bool   `json:"approved"`
}

// CreateNote creates a Note owned by the person.
func (s *Service) CreateNote(ctx context.Context, c Caller, a CreateNoteArgs) (NoteCreated, error) {
	return s.CreateNoteFrom(ctx, c, a, nil)
}

// CreateNoteFrom is CreateNote with build filling the new document (a
// demo's or a fixture's content).
func (s *Service) CreateNoteFrom(ctx context.Context, c Caller, a CreateNoteArgs, build func(d *note.Doc) error) (NoteCreated, error) {
	if err := c.personOnly("creating a Note"); err != nil {
		return NoteCreated{}, err
	}
	title, err := note.CheckTitle(a.Title)
	if err != nil {
		return NoteCreated{}, err
	}
	id := store.NewID("note")
	if a.IdempotencyKey != "" {
		if err := checkKey(a.IdempotencyKey); err != nil {
			return NoteCreated{}, err
		}
		sum := sha256.Sum256([]byte("create_note\x00" + c.Workspace + "\x00" + c.User + "\x00" + a.IdempotencyKey))
		id = "note_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
	}
	d := note.New(title)
	if build != nil {
		if err := build(&d); err != nil {
			return NoteCreated{}, err
		}
	}
	if err := note.Recalc(&note.Doc{}, &d, s.Now()); err != nil {
		return NoteCreated{}, err
	}
	w, err := note.Diff(&note.Doc{}, &d)
	if err != nil {
		return NoteCreated{}, err
	}
	changed := []string{}
	for _, t := range note.Refs(&d) {
		changed = append(changed, t.TabID)
	}
	res := NoteCreated{NoteWritten: NoteWritten{NoteID: id, Version: 1, ChangedTabIDs: changed}, Title: title, Approved: a.Approved}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeNote, ID: id, Actor: c.actor(),
		Key: a.IdempotencyKey, KeyScope: c.keyScope(), Fingerprint: fingerprint(struct {
			Op, Actor, Title string
			Approved         bool
		}{"create_note", c.actor(), title, a.Approved}),
		Create:          &store.Resource{Owner: c.User, Title: title, Approved: a.Approved, Doc: w.Head},
		CreateIfMissing: a.IdempotencyKey != "",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			if !cur.UpdatedAt.IsZero() {
				// The Note the key made is there but the key has expired.
				return nil, problem.New(problem.KeyReused, "idempotency_key", "this key already created Note %s; use a fresh key for a new Note", id)
			}
			return &store.Change{Kind: "note_created", Parts: w.Parts, Result: mustJSON(res), NamedBlobs: addedHashes(map[string]bool{}, &d),
				Search: searchDocs(s.searchUnits(&d)), SearchReset: !s.searchOff}, nil
		},
	}
	out, err := s.guardedWrite(ctx, m)
	if err != nil {
		return NoteCreated{}, storeProblem(err, m)
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		return NoteCreated{}, fmt.Errorf("stored result: %w", err)
	}
	res.Replayed = out.Replayed
	if !out.Replayed {
		s.docs.put(id, 1, &d)
	}
	return res, nil
}

// UpdateNoteArgs rename a Note and/or switch its connected access.
type UpdateNoteArgs struct {
	NoteID   string  `json:"note_id"`
	Title    *string `json:"title,omitempty"`
	Approved *bool   `json:"approved,omitempty"`
	Guard
}

// UpdateNote renames a Note and/or switches its connected access (a
// person's act only).
func (s *Service) UpdateNote(ctx context.Context, c Caller, a UpdateNoteArgs) (NoteCreated, error) {
	if a.Title == nil && a.Approved == nil {
		return NoteCreated{}, problem.New(problem.Invalid, "title", "give title, approved or both: there is nothing to change")
	}
	if a.Approved != nil {
		if err := c.personOnly("switching a Note's connected access"); err != nil {
			return NoteCreated{}, err
		}
	}
	var clean *string
	if a.Title != nil {
		t, err := note.CheckTitle(*a.Title)
		if err != nil {
			return NoteCreated{}, err
		}
		clean = &t
	}
	kind := "note_renamed"
	if a.Title == nil {
		kind = "access_changed"
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: kind, sizeField: "title", meaning: struct {
		Op       string
		Title    *string
		Approved *bool
	}{"update_note", clean, a.Approved}}, func(cur *store.Resource, d *note.Doc, ch *store.Change) (NoteCreated, []string, error) {
		res := NoteCreated{Title: cur.Title, Approved: cur.Approved}
		if clean != nil && *clean != cur.Title {
			ch.Title = clean
			d.Title = *clean
			res.Title = *clean
		}
		if a.Approved != nil && *a.Approved != cur.Approved {
			ch.Approved = a.Approved
			res.Approved = *a.Approved
		}
		return res, nil, nil
	})
}

// NoteArgs name one Note, with the guard of a write on it.
type NoteArgs struct {
	NoteID string `json:"note_id"`
	Guard
}

// DeleteNote moves a Note to the trash: its connected access goes off and
// it is marked deleted (KindNoteDeleted, which keeps what UntrashNote
// needs to bring it back as it was), in one guarded write, so it leaves
// every list and every agent's reach. Its history and files stay until
// PurgeTrash removes it, TrashDays later.
func (s *Service) DeleteNote(ctx context.Context, c Caller, a NoteArgs) (NoteWritten, error) {
	if err := c.personOnly("deleting a Note"); err != nil {
		return NoteWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: KindNoteDeleted, sizeField: "note_id", meaning: struct{ Op string }{"delete_note"}},
		func(cur *store.Resource, d *note.Doc, ch *store.Change) (NoteWritten, []string, error) {
			off := false
			ch.Approved = &off
			ch.SearchReset = true // a deleted Note leaves the index; UntrashNote puts it back
			ch.Objects = []store.Object{{Workspace: cur.Workspace, Kind: KindNoteDeleted, ID: cur.ID, Parent: cur.ID,
				Doc: mustJSON(trashMark{By: c.actor(), Version: cur.Version + 1, Title: cur.Title, Approved: cur.Approved})}}
			return NoteWritten{}, nil, nil
		})
}

// RestoreArgs make an old version of a Note current again.
type RestoreArgs struct {
	NoteID  string `json:"note_id"`
	Version int64  `json:"version"` // the version to restore, 1 … current
	Guard
}

// NoteRestored is what a restore answers.
type NoteRestored struct {
	NoteWritten
	RestoredVersion int64 `json:"restored_version"`
}

// RestoreVersion makes version of a Note current again, as a new version (a
// restore is itself a version, so it can be undone the same way).
// Restoring the current version changes nothing and makes no version.
//
// A restore costs what it changes, not what the Note holds: the parts that
// can differ between the Note now and that version are the ones written
// since it, so only those are read as they were then (inside the write's
// transaction) and laid over the Note as it is; every other part is
// shared, and only what differs is written. A version stored whole (before
// Notes were stored by parts) is rebuilt whole.
func (s *Service) RestoreVersion(ctx context.Context, c Caller, a RestoreArgs) (NoteRestored, error) {
	if err := c.mayWrite(); err != nil {
		return NoteRestored{}, err
	}
	r, err := s.noteHead(ctx, c, a.NoteID)
	if err != nil {
		return NoteRestored{}, err
	}
	if err := checkVersion(r, a.Version); err != nil {
		return NoteRestored{}, err
	}
	head, err := s.Store.VersionDoc(ctx, store.TypeNote, a.NoteID, a.Version)
	if err != nil {
		return NoteRestored{}, storeProblem(err, store.Mutation{Type: store.TypeNote, ID: a.NoteID})
	}
	var whole *note.Doc // the version, when it was stored whole
	if !note.IsHead(head) {
		d, err := s.NoteAt(ctx, a.NoteID, a.Version)
		if err != nil {
			return NoteRestored{}, err
		}
		whole = &d
	}
	var then []note.Part // the parts written since the version, as they were at it
	op := noteOp{kind: "restored", sizeField: "version", meaning: struct {
		Op      string
		Version int64
	}{"restore", a.Version}}
	op.inTx = func(cur *store.Resource, tx store.TxReader) error {
		then = nil
		if whole != nil {
			return nil
		}
		since, err := tx.Parts(a.Version)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(since))
		for _, p := range since {
			keys = append(keys, p.Key)
		}
		at, err := tx.VersionParts(a.Version, keys)
		if err != nil {
			return err
		}
		// A part written since that the version did not have is gone in
		// the restored Note.
		had := make(map[string]bool, len(at))
		for _, p := range at {
			had[p.Key] = true
		}
		then = at
		for _, k := range keys {
			if !had[k] {
				then = append(then, note.Part{Key: k})
			}
		}
		return nil
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, op, func(cur *store.Resource, d *note.Doc, ch *store.Change) (NoteRestored, []string, error) {
		var p note.Doc
		switch {
		case whole != nil:
			p = note.Clone(whole)
		case !d.ByParts():
			return NoteRestored{}, nil, fmt.Errorf("note %s: restoring version %d of parts onto a Note stored whole", a.NoteID, a.Version)
		default:
			var err error
			if p, err = note.Assemble(head, then, d); err != nil {
				return NoteRestored{}, nil, fmt.Errorf("note %s: restoring version %d: %w", a.NoteID, a.Version, err)
			}
		}
		// Tab IDs are never reused: keep the counters of the newer document.
		p.NextTabN, p.NextItem = max(p.NextTabN, d.NextTabN), max(p.NextItem, d.NextItem)
		var changed []string
		seen := map[string]bool{}
		for _, t := range append(note.Refs(d), note.Refs(&p)...) {
			if !seen[t.TabID] {
				seen[t.TabID] = true
				changed = append(changed, t.TabID)
			}
		}
		if p.Title != cur.Title {
			t := p.Title
			ch.Title = &t
		}
		*d = p
		return NoteRestored{RestoredVersion: a.Version}, changed, nil
	})
}
