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

// tally is what a Service counts of itself.
type tally struct {
	committed, replayed, conflicts, keyReused atomic.Uint64
	polls                                     atomic.Int64 // long polls waiting now
}

// WriteStats reports the guarded writes counted since the Service started.
func (s *Service) WriteStats() WriteStats {
	return WriteStats{
		Committed: s.stats.committed.Load(),
		Replayed:  s.stats.replayed.Load(),
		Conflicts: s.stats.conflicts.Load(),
		KeyReused: s.stats.keyReused.Load(),
	}
}

// guardedWrite is the store's Guarded, counted.
func (s *Service) guardedWrite(ctx context.Context, m store.Mutation) (store.Outcome, error) {
	out, err := s.Store.Guarded(ctx, m)
	var ce *store.ConflictError
	var kr *store.KeyReusedError
	switch {
	case err == nil && out.Replayed:
		s.stats.replayed.Add(1)
	case err == nil:
		s.stats.committed.Add(1)
	case errors.As(err, &ce):
		s.stats.conflicts.Add(1)
	case errors.As(err, &kr):
		s.stats.keyReused.Add(1)
	}
	return out, err
}

// LongPolls is how many event polls (wait_seconds > 0) are waiting now;
// Waiting counts them with the event streams, which share their cap.
func (s *Service) LongPolls() int { return int(s.stats.polls.Load()) }
