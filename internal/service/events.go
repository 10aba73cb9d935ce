package service

import (
	"context"
	"strconv"
	"time"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// MaxWait is the longest a poll may wait for an event.
const MaxWait = 25 * time.Second

// PollEvents returns the events of one Note or Room after cursor (or, with
// none, after now); with wait > 0 and nothing new it waits, returning as soon as an event commits on any
// node, or with an empty page and the same cursor when the wait ends.
func (s *Service) PollEvents(ctx context.Context, p auth.Principal, typ, id, cursor string, limit int, wait time.Duration) (map[string]any, error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return nil, err
	}
	if wait < 0 || wait > MaxWait {
		return nil, problem.New(problem.Invalid, "wait_seconds", "must be 0–25")
	}
	switch typ {
	case store.TypeNote:
		if _, err := s.noteAccess(ctx, p, id); err != nil {
			return nil, err
		}
	case store.TypeRoom:
		if _, _, err := s.agentRoom(ctx, p, id); err != nil {
			return nil, err
		}
	default:
		return nil, problem.New(problem.Invalid, "resource_type", "must be \"note\" or \"room\" (got %q)", typ)
	}
	// Without a cursor, a poll waits for what happens next; a write's result
	// carries the cursor to see what followed that write.
	after := int64(0)
	if cursor == "" {
		if after, err = s.Store.LastCursor(ctx, p.Workspace, typ, id); err != nil {
			return nil, err
		}
	} else {
		c, err := decodeCursor(cursor, "e")
		if err != nil {
			return nil, err
		}
		if after, err = strconv.ParseInt(c, 10, 64); err != nil || after < 0 {
			return nil, badCursor()
		}
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		// Register before reading, so an event committed between the read
		// and the wait still wakes us.
		wake, stop := s.Store.Wait(typ, id)
		evs, err := s.Store.Events(ctx, p.Workspace, typ, id, after, limit)
		if err != nil || len(evs) > 0 || wait == 0 {
			stop()
			if err != nil {
				return nil, err
			}
			return eventsPage(evs, after), nil
		}
		select {
		case <-wake:
		case <-deadline.C:
			stop()
			return eventsPage(nil, after), nil
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
	}
}

func eventsPage(evs []store.Event, after int64) map[string]any {
	if evs == nil {
		evs = []store.Event{}
	}
	if len(evs) > 0 {
		after = evs[len(evs)-1].Cursor
	}
	return map[string]any{"events": evs, "next_cursor": encodeCursor("e", strconv.FormatInt(after, 10))}
}
