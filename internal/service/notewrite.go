package service

import (
	"context"
	"errors"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Guard is what every write carries besides its arguments: the version the
// change is based on and the idempotency key that names the intent (may be
// empty for a person's write, which the version alone guards).
type Guard struct {
	ExpectedVersion int64  `json:"expected_version"`
	IdempotencyKey  string `json:"idempotency_key"`
}

// NoteWritten is what every write of a Note answers: the Note, its version
// after the write (the same version when the write changed nothing), the
// tabs it changed, and Written.
type NoteWritten struct {
	NoteID        string   `json:"note_id"`
	Version       int64    `json:"version"`
	ChangedTabIDs []string `json:"changed_tab_ids"`
	Written
}

func (n *NoteWritten) noteWritten() *NoteWritten { return n }

// noteResult is a typed answer of a Note write (it embeds NoteWritten).
type noteResult[T any] interface {
	writeResult[T]
	noteWritten() *NoteWritten
}

// noteOp describes one act on a Note for noteWrite.
type noteOp struct {
	// kind is the event kind of the write (tab_edited, source_added, …).
	kind string
	// meaning is what the request means, without its version and key: its
	// fingerprint (see Caller.fingerprintOf).
	meaning any
	// sizeField names the argument a Note-size refusal points at.
	sizeField string
	// pre holds the rules of the request that hold in every version of the
	// Note; they run before the write contract, so a request that can never
	// apply is refused for what is wrong with it, not as a conflict.
	pre func() error
	// inTx, if set, reads what the edit needs inside the write's
	// transaction, before the edit runs (a restore: the parts of the
	// version it restores that differ from the Note now).
	inTx func(cur *store.Resource, tx store.TxReader) error
	// deps, if set, is the write's depends_on: a conflict is then decided
	// by the tabs it was based on, not the whole Note (depends.go).
	deps *dependsOn
	// text, if set, is what the edit does to the markdown text as the
	// editor's own change sets (a push); otherwise a change of the text
	// is logged as its diff (collab.go).
	text *textPush
	// anyVersion says the act carries its own precondition (a push names
	// the text's revision) and applies to the current version.
	anyVersion bool
}

// noteEdit is the pure edit of one act: it changes d (a copy of the Note at
// cur's version) and may set ch's Title, Approved and Objects; it answers
// the act's own result and the tab IDs it changed. An edit that changes
// nothing makes no version (only the key is recorded).
type noteEdit[T any] func(cur *store.Resource, d *note.Doc, ch *store.Change) (res T, changed []string, err error)

// noteWrite is the one way any caller writes a Note: the caller's right to
// write, the key, the precondition, the rules of the request, then the one
// guarded write (key first, version compare, apply, version + 1, event),
// with the caller's reach checked on the row the write locks. Every Note
// act of every door goes through here.
func noteWrite[T any, PT noteResult[T]](ctx context.Context, s *Service, c Caller, noteID string, g Guard, op noteOp, edit noteEdit[T]) (T, error) {
	var zero T
	if err := CheckID("note_id", noteID); err != nil {
		return zero, err
	}
	if err := c.mayWrite(); err != nil {
		return zero, err
	}
	if g.IdempotencyKey != "" {
		if err := checkKey(g.IdempotencyKey); err != nil {
			return zero, err
		}
	}
	if g.ExpectedVersion < 0 || (g.ExpectedVersion == 0 && !c.versionFree() && !op.anyVersion) {
		return zero, problem.New(PreconditionRequired, "expected_version", "a change must say which version of the Note it was based on (the version a read answered, ≥ 1)")
	}
	if op.pre != nil {
		if err := op.pre(); err != nil {
			return zero, err
		}
	}
	edit = depsChecked(op.deps, edit)
	var written *note.Doc
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeNote, ID: noteID,
		Key: g.IdempotencyKey, KeyScope: c.keyScope(), Fingerprint: c.fingerprintOf(op.meaning),
		ExpectedVersion: g.ExpectedVersion, Actor: c.actor(),
		// A Note the caller can't reach answers not found before its key is
		// looked at, so no key can be probed on it.
		Access: func(cur *store.Resource) error {
			if !c.reachesNote(cur) {
				return notFound(store.TypeNote, noteID)
			}
			return nil
		},
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			written = nil
			// An agent reaches approved Notes only, and a deleted Note is
			// never approved again; a person's reach is every Note, so a
			// deleted one is looked for.
			if !c.IsAgent() {
				if o, err := tx.GetObject(KindNoteDeleted, noteID); err == nil {
					return nil, inTrash(noteID, o.CreatedAt)
				} else if !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
			}
			if op.inTx != nil {
				if err := op.inTx(cur, tx); err != nil {
					return nil, err
				}
			}
			var res T
			var changed []string
			ch := &store.Change{Kind: op.kind}
			d, w, err := s.editInTx(cur, tx, op.sizeField, func(d *note.Doc) (err error) {
				before, text, rev := fileHashes(d), d.Markdown, d.TextRev
				res, changed, err = edit(cur, d, ch)
				if err != nil {
					return err
				}
				ch.NamedBlobs = addedHashes(before, d) // storage.go
				return logText(c.Workspace, noteID, cur.Version+1, c.actor(), text, rev, d, op.text, ch)
			})
			if err != nil {
				return nil, err
			}
			nw := PT(&res).noteWritten()
			nw.NoteID, nw.Version, nw.ChangedTabIDs = noteID, cur.Version, []string{}
			if w.Head == nil && len(w.Parts) == 0 && ch.Title == nil && ch.Approved == nil && len(ch.Objects) == 0 {
				// Nothing changed (text saved as it was, a source already
				// attached, the current version restored): no new version,
				// and no agent is told its edit conflicts with this.
				return &store.Change{Unchanged: true, Result: mustJSON(res)}, nil
			}
			nw.Version++
			nw.ChangedTabIDs = nonNilIDs(changed)
			ch.Doc, ch.Parts, ch.Changed, ch.Result = w.Head, w.Parts, changed, mustJSON(res)
			if !ch.SearchReset {
				ch.Search = searchDocs(w.Search)
			}
			written = d
			return ch, nil
		},
	}
	// No read serves a cached head of this Note until the write returned
	// and its doorbell rang (see headCache).
	defer s.heads.writing(noteID)()
	res, version, err := guardedNote[T, PT](ctx, s, m, op.deps)
	if err != nil {
		return zero, err
	}
	nw := PT(&res).noteWritten()
	if nw.ChangedTabIDs == nil {
		nw.ChangedTabIDs = []string{} // a result stored before writes named their tabs
	}
	if written != nil && !nw.Replayed {
		s.docs.put(noteID, version, written)
	}
	return res, nil
}

// PreconditionRequired is the code of a write that names no version.
const PreconditionRequired = "precondition_required"

// KindNoteDeleted marks a deleted Note, in the trash: an object beside the
// Note, written in the same guarded write that switches its connected
// access off (see trash.go). A Note so marked is gone from every list and
// read, and, no longer approved, from every agent's reach.
const KindNoteDeleted = "note_deleted"
