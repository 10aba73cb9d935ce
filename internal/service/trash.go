package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// The trash: deleting a Note marks it (KindNoteDeleted) instead of
// removing it, and the mark is what the trash lists. A Note in the trash
// is out of every list and read and of every agent's reach; restoring it
// drops the mark and gives back its connected access, so it is exactly as
// it was (content, tabs, history, files). TrashDays after its deletion
// PurgeTrash removes it for good, and the bytes of files only it named are
// left to the blob collector.

// TrashDays is how long the trash keeps a deleted Note.
const TrashDays = 30

// TrashKeep is TrashDays as a duration.
const TrashKeep = TrashDays * 24 * time.Hour

// trashMark is the document of a Note's KindNoteDeleted object.
type trashMark struct {
	By       string `json:"by"`
	Version  int64  `json:"version"`            // the Note's version the deletion made
	Title    string `json:"title,omitempty"`    // the Note's title when deleted
	Approved bool   `json:"approved,omitempty"` // its connected access before
}

// TrashedNote is one Note in the trash.
type TrashedNote struct {
	NoteID    string    `json:"note_id"`
	Title     string    `json:"title"`
	Version   int64     `json:"version"`
	DeletedAt time.Time `json:"deleted_at"`
	DeletedBy Actor     `json:"deleted_by"`
	// PurgeAt is when the Note is removed for good: restore it before.
	PurgeAt time.Time `json:"purge_at"`
}

// TrashList is a page of the trash, by Note ID.
type TrashList struct {
	Notes      []TrashedNote `json:"notes"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

func purgeAt(deleted time.Time) time.Time { return deleted.Add(TrashKeep).UTC() }

// TrashedNotes lists the workspace's Notes in the trash, a page at a time
// (a person's view: no agent reaches a deleted Note).
func (s *Service) TrashedNotes(ctx context.Context, c Caller, p Page) (TrashList, error) {
	if err := c.personOnly("looking in the trash"); err != nil {
		return TrashList{}, err
	}
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return TrashList{}, err
	}
	after, err := decodeCursor(p.Cursor, "t")
	if err != nil {
		return TrashList{}, err
	}
	objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: c.Workspace, Kind: KindNoteDeleted, AfterID: after, Limit: limit + 1})
	if err != nil {
		return TrashList{}, err
	}
	res := TrashList{Notes: make([]TrashedNote, 0, min(len(objs), limit))}
	marks := make([]trashMark, len(objs))
	actors := make([]string, 0, len(objs))
	for i, o := range objs {
		_ = json.Unmarshal(o.Doc, &marks[i]) // a mark from before the trash has by and version only
		actors = append(actors, marks[i].By)
	}
	names, err := s.Actors(ctx, c.Workspace, actors)
	if err != nil {
		return TrashList{}, err
	}
	for i, o := range objs {
		if len(res.Notes) == limit {
			res.NextCursor = encodeCursor("t", res.Notes[limit-1].NoteID)
			break
		}
		head, err := s.Store.Head(ctx, store.TypeNote, o.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // purged meanwhile
		} else if err != nil {
			return TrashList{}, err
		}
		res.Notes = append(res.Notes, TrashedNote{NoteID: o.ID, Title: head.Title, Version: head.Version,
			DeletedAt: o.CreatedAt.UTC(), DeletedBy: names.Of(marks[i].By), PurgeAt: purgeAt(o.CreatedAt)})
	}
	return res, nil
}

// inTrash is the not-found answer for Note id, deleted at: where it is and
// until when it can be restored.
func inTrash(id string, deleted time.Time) *problem.Problem {
	until := purgeAt(deleted)
	return problem.New(problem.NotFound, "note_id", "Note %q is in the trash (deleted %s); restore it before %s from the trash (web app: Notes → Trash; foundry notes untrash %s), after that it is gone for good",
		problem.Excerpt(id), deleted.UTC().Format("2006-01-02 15:04 UTC"), until.Format("2006-01-02 15:04 UTC"), problem.Excerpt(id)).
		With("in_trash", true).With("purge_at", until.Format(time.RFC3339))
}

// trashedAnswer is the answer for a person asking for Note id, which is in
// the trash: inTrash if its mark is there, plain not found if it is gone.
func (s *Service) trashedAnswer(ctx context.Context, id string) error {
	o, err := s.Store.GetObject(ctx, KindNoteDeleted, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound(store.TypeNote, id)
		}
		return err
	}
	return inTrash(id, o.CreatedAt)
}

// NoteUntrashed is what restoring a Note from the trash answers.
type NoteUntrashed struct {
	NoteWritten
	Title    string `json:"title"`
	Approved bool   `json:"approved"`
}

// UntrashNote brings a Note back from the trash as it was before it was
// deleted: its mark goes and its connected access is what it was, in one
// guarded write (a new version, so the history says who brought it back).
// A version of 0 restores whatever version the trash holds.
func (s *Service) UntrashNote(ctx context.Context, c Caller, a NoteArgs) (NoteUntrashed, error) {
	if err := c.personOnly("restoring a Note from the trash"); err != nil {
		return NoteUntrashed{}, err
	}
	if err := CheckID("note_id", a.NoteID); err != nil {
		return NoteUntrashed{}, err
	}
	if a.ExpectedVersion < 0 {
		return NoteUntrashed{}, problem.New(problem.Invalid, "expected_version", "give the version the trash lists (≥ 1), or 0 for whatever version it holds")
	}
	if a.IdempotencyKey != "" {
		if err := checkKey(a.IdempotencyKey); err != nil {
			return NoteUntrashed{}, err
		}
	}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeNote, ID: a.NoteID, Actor: c.actor(),
		Key: a.IdempotencyKey, KeyScope: c.keyScope(), Fingerprint: c.fingerprintOf(struct{ Op string }{"untrash_note"}),
		ExpectedVersion: a.ExpectedVersion,
		Access: func(cur *store.Resource) error {
			if !c.reachesNote(cur) {
				return notFound(store.TypeNote, a.NoteID)
			}
			return nil
		},
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			o, err := tx.GetObject(KindNoteDeleted, a.NoteID)
			if errors.Is(err, store.ErrNotFound) {
				return nil, problem.New(problem.Invalid, "note_id", "Note %q is not in the trash: there is nothing to restore (to make an old version current, restore that version from its history)", problem.Excerpt(a.NoteID))
			} else if err != nil {
				return nil, err
			}
			var mark trashMark
			_ = json.Unmarshal(o.Doc, &mark)
			res := NoteUntrashed{NoteWritten: NoteWritten{NoteID: a.NoteID, Version: cur.Version + 1, ChangedTabIDs: []string{}}, Title: cur.Title, Approved: mark.Approved}
			d, err := s.noteInTx(cur, tx)
			if err != nil {
				return nil, err
			}
			ch := &store.Change{Kind: KindNoteUntrashed, Result: mustJSON(res), DropObjects: []store.ObjectKey{{Kind: KindNoteDeleted, ID: a.NoteID}},
				Search: searchDocs(note.SearchUnits(d)), SearchReset: true}
			if mark.Approved {
				ch.Approved = &mark.Approved
			}
			return ch, nil
		},
	}
	defer s.heads.writing(a.NoteID)()
	res, _, err := guardedOut[NoteUntrashed](ctx, s, m)
	return res, err
}

// KindNoteUntrashed is the event kind of a Note restored from the trash.
const KindNoteUntrashed = "note_untrashed"

// DuplicateNote creates a Note that holds what Note a.NoteID holds now
// (its tabs, their content and its files) under the title "Copy of
// TITLE", with a history of its own that starts at version 1 and connected
// access off (a person's act, as creating a Note is).
func (s *Service) DuplicateNote(ctx context.Context, c Caller, a NoteArgs) (NoteCreated, error) {
	if err := c.personOnly("duplicating a Note"); err != nil {
		return NoteCreated{}, err
	}
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return NoteCreated{}, err
	}
	// A copy made through JSON shares nothing with the cached document
	// and carries none of its storage layout.
	raw, err := json.Marshal(d)
	if err != nil {
		return NoteCreated{}, fmt.Errorf("note %s: %w", r.ID, err)
	}
	title := copyTitle(r.Title)
	return s.CreateNoteFrom(ctx, c, CreateNoteArgs{Title: title, IdempotencyKey: a.IdempotencyKey}, func(nd *note.Doc) error {
		if err := json.Unmarshal(raw, nd); err != nil {
			return fmt.Errorf("note %s: copy: %w", r.ID, err)
		}
		nd.Title = title
		return nil
	})
}

// copyTitle is "Copy of TITLE", cut to what a title may hold.
func copyTitle(t string) string {
	c := "Copy of " + t
	for utf8.RuneCountInString(c) > note.MaxTitleRunes || len(c) > note.MaxTitleBytes {
		_, n := utf8.DecodeLastRuneInString(c)
		c = c[:len(c)-n]
	}
	return c
}

// PurgeLimit bounds the Notes one PurgeTrash removes; the rest wait for
// the next pass.
const PurgeLimit = 100

// PurgeTrash removes for good, in every workspace, the Notes deleted more
// than TrashDays before now, at most PurgeLimit of them, each in its own
// transaction. It answers how many it removed and whether more may be due.
func (s *Service) PurgeTrash(ctx context.Context, now time.Time) (purged int, more bool, err error) {
	wss, err := s.Store.Workspaces(ctx)
	if err != nil {
		return 0, false, err
	}
	cut := now.Add(-TrashKeep)
	for _, w := range wss {
		after := ""
		for {
			objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: w.ID, Kind: KindNoteDeleted, AfterID: after, Limit: MaxPage})
			if err != nil {
				return purged, false, err
			}
			for _, o := range objs {
				if !o.CreatedAt.Before(cut) {
					continue
				}
				if purged == PurgeLimit {
					return purged, true, nil
				}
				if _, err := s.Store.Purge(ctx, w.ID, store.TypeNote, o.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return purged, false, fmt.Errorf("trash: purge %s: %w", o.ID, err)
				}
				s.heads.drop(o.ID)
				purged++
			}
			if len(objs) < MaxPage {
				break
			}
			after = objs[len(objs)-1].ID
		}
	}
	return purged, false, nil
}
