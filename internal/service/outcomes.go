package service

import (
	"context"
	"errors"
	"sync/atomic"

	"foundry/internal/store"
)

// WriteStats counts the guarded writes of a Service by outcome, whichever
// door they came through.
type WriteStats struct {
	Committed uint64 // a new version written
	Replayed  uint64 // the same key and arguments again: the first result answered
	Conflicts uint64 // a stale expected_version: nothing written
	KeyReused uint64 // a key already used for other arguments: nothing written
}

type writeCounts struct {
	committed, replayed, conflicts, keyReused atomic.Uint64
}

// WriteStats reports the guarded writes counted since the Service started.
func (s *Service) WriteStats() WriteStats {
	return WriteStats{
		Committed: s.writes.committed.Load(),
		Replayed:  s.writes.replayed.Load(),
		Conflicts: s.writes.conflicts.Load(),
		KeyReused: s.writes.keyReused.Load(),
	}
}

// guardedWrite is the store's Guarded, counted.
func (s *Service) guardedWrite(ctx context.Context, m store.Mutation) (store.Outcome, error) {
	out, err := s.Store.Guarded(ctx, m)
	var ce *store.ConflictError
	var kr *store.KeyReusedError
	switch {
	case err == nil && out.Replayed:
		s.writes.replayed.Add(1)
	case err == nil:
		s.writes.committed.Add(1)
	case errors.As(err, &ce):
		s.writes.conflicts.Add(1)
	case errors.As(err, &kr):
		s.writes.keyReused.Add(1)
	}
	return out, err
}
