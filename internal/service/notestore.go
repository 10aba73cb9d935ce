package service

import (
	"context"
	"fmt"

	"foundry/internal/note"
	"foundry/internal/store"
)

// LoadNote reads Note id as it is now, with no access check (the callers
// check): from the cache when it holds the current version, else from the
// cached older version and the parts written since, else from every part.
func (s *Service) LoadNote(ctx context.Context, id string) (store.Resource, *note.Doc, error) {
	base, since := s.docs.latest(id)
	r, ps, err := s.Store.Parts(ctx, store.TypeNote, id, since)
	if err != nil {
		return store.Resource{}, nil, err
	}
	if base != nil && r.Version == since {
		return r, base, nil
	}
	if r.Version < since {
		base = nil // another node's newer write is cached; this read is older
		if r, ps, err = s.Store.Parts(ctx, store.TypeNote, id, 0); err != nil {
			return store.Resource{}, nil, err
		}
	}
	d, err := note.Assemble(r.Doc, ps, base)
	if err != nil {
		return store.Resource{}, nil, fmt.Errorf("note %s: %w", id, err)
	}
	s.docs.put(id, r.Version, &d)
	return r, &d, nil
}

// noteInTx is the Note a guarded write works on, at cur's version: the
// cached copy if it is of that version, else built inside the write's
// transaction from the cached older copy (or nothing) and the parts since.
func (s *Service) noteInTx(cur *store.Resource, tx store.TxReader) (*note.Doc, error) {
	base, since := s.docs.latest(cur.ID)
	if base != nil && since == cur.Version {
		return base, nil
	}
	if since > cur.Version {
		base, since = nil, 0
	}
	ps, err := tx.Parts(since)
	if err != nil {
		return nil, err
	}
	d, err := note.Assemble(cur.Doc, ps, base)
	if err != nil {
		return nil, fmt.Errorf("note %s: %w", cur.ID, err)
	}
	return &d, nil
}

// editInTx is how every guarded write edits a Note: edit changes a Clone of
// the Note at cur's version (so it must change shared rows only through
// package note, see note.Clone), Diff says what to store, and the result is
// held to the Note size limit (a refusal names sizeField). It answers the
// edited Note and its writes (none when edit changed nothing).
func (s *Service) editInTx(cur *store.Resource, tx store.TxReader, sizeField string, edit func(d *note.Doc) error) (*note.Doc, note.Writes, error) {
	base, err := s.noteInTx(cur, tx)
	if err != nil {
		return nil, note.Writes{}, err
	}
	d := note.Clone(base)
	if err := edit(&d); err != nil {
		return nil, note.Writes{}, err
	}
	// Formulas that read what the edit changed are computed in the same
	// write, whichever door it came through.
	if err := note.Recalc(base, &d, s.Now()); err != nil {
		return nil, note.Writes{}, err
	}
	w, err := note.Diff(base, &d)
	if err != nil {
		return nil, note.Writes{}, err
	}
	if err := note.CheckSize(w.Bytes, base.StoredBytes(), sizeField); err != nil {
		return nil, note.Writes{}, err
	}
	if !s.searchOff {
		w.Search = note.SearchChanges(base, &d, w)
	}
	return &d, w, nil
}
