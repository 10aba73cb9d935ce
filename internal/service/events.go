package service

import (
	"context"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// MaxWait is the longest a poll may wait for an event.
const MaxWait = 25 * time.Second

// PollArgs are poll_resource_events' arguments.
type PollArgs struct {
	ResourceType string `json:"resource_type"` // note or room
	ResourceID   string `json:"resource_id"`
	Page
	WaitSeconds int `json:"wait_seconds"` // 0: answer at once
}

// PollEvents returns the events of one Note or Room after cursor (or, with
// none, after now); with wait > 0 and nothing new it waits, returning as soon as an event commits on any
// node, or with an empty page and the same cursor when the wait ends (or the
// server shuts down: StopWaiting).
func (s *Service) PollEvents(ctx context.Context, c Caller, a PollArgs) (EventPage, error) {
	typ, id, cursor := a.ResourceType, a.ResourceID, a.Cursor
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return EventPage{}, err
	}
	wait := time.Duration(a.WaitSeconds) * time.Second
	if a.WaitSeconds < 0 || wait > MaxWait {
		return EventPage{}, problem.New(problem.Invalid, "wait_seconds", "must be 0–25")
	}
	if wait > 0 {
		// A waiter holds a goroutine, a channel and a connection for up to
		// MaxWait: their number is capped per token and per node.
		release, retry, ok := s.waitGate().Acquire(c.waiterKey(), wait)
		if !ok {
			return EventPage{}, problem.New(TooManyWaiters, "wait_seconds",
				"too many long polls are waiting already (at most %d per token, %d on this server); retry after %d s, or poll with wait_seconds 0",
				s.waitGate().PerKey, s.waitGate().Total, retry).With("retry_after", retry)
		}
		defer release()
		s.stats.polls.Add(1)
		defer s.stats.polls.Add(-1)
	}
	switch typ {
	case store.TypeNote:
		if _, err := s.noteHead(ctx, c, id); err != nil {
			return EventPage{}, err
		}
	case store.TypeRoom:
		if _, _, err := s.roomFor(ctx, c, id); err != nil {
			return EventPage{}, err
		}
	default:
		return EventPage{}, problem.New(problem.Invalid, "resource_type", "must be \"note\" or \"room\" (got %q)", typ)
	}
	// Without a cursor, a poll waits for what happens next; a write's result
	// carries the cursor to see what followed that write.
	after := int64(0)
	if cursor == "" {
		if after, err = s.Store.LastCursor(ctx, c.Workspace, typ, id); err != nil {
			return EventPage{}, err
		}
	} else {
		c, err := decodeCursor(cursor, "e")
		if err != nil {
			return EventPage{}, err
		}
		if after, err = strconv.ParseInt(c, 10, 64); err != nil || after < 0 {
			return EventPage{}, badCursor()
		}
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		// Register before reading, so an event committed between the read
		// and the wait still wakes us.
		wake, stop := s.Store.Wait(typ, id)
		evs, err := s.Store.Events(ctx, c.Workspace, typ, id, after, limit)
		if err == nil && cursor != "" {
			// Read after the events: a prune that took events after the
			// cursor committed its horizon with them, so it is seen here.
			err = s.cursorLive(ctx, typ, id, after)
		}
		if err != nil || len(evs) > 0 || wait == 0 {
			stop()
			if err != nil {
				return EventPage{}, err
			}
			return eventsPage(evs, after), nil
		}
		select {
		case <-wake:
		case <-deadline.C:
			stop()
			return eventsPage(nil, after), nil
		case <-s.Stopping():
			// The server is shutting down: answer now with the page so far
			// (nothing came), so the client polls again, on another node.
			stop()
			return eventsPage(nil, after), nil
		case <-ctx.Done():
			stop()
			return EventPage{}, ctx.Err()
		}
	}
}

// CursorExpired refuses a poll whose cursor is older than the retained
// feed of its resource: events after it may have been pruned.
const CursorExpired = "cursor_expired"

// cursorLive refuses a cursor below the resource's event horizon (the newest
// pruned event), so a client never takes a feed with a hole for a whole one.
func (s *Service) cursorLive(ctx context.Context, typ, id string, after int64) error {
	h, err := s.Store.EventHorizon(ctx, typ, id)
	if err != nil || after >= h {
		return err
	}
	what := "Note"
	if typ == store.TypeRoom {
		what = "Room"
	}
	return problem.New(CursorExpired, "cursor",
		"the cursor is older than the event feed of this %s: events after it were pruned (events are kept for a limited time, by default 30 days; the newest one of each resource is always kept). Read the %s again, then poll without a cursor to wait for what happens next",
		what, what)
}

// Event is one event as a poll answers it. Its cursor is the same opaque
// kind of value as next_cursor and every write's cursor: any of them can be
// passed back as poll_resource_events' cursor, to see what followed it.
type Event struct {
	Cursor       string    `json:"cursor"`
	ResourceType string    `json:"resource_type"`
	ResourceID   string    `json:"resource_id"`
	Kind         string    `json:"kind"`
	Version      int64     `json:"version,omitempty"`
	At           time.Time `json:"at"`
}

func eventCursor(seq int64) string { return encodeCursor("e", strconv.FormatInt(seq, 10)) }

// EventPage is poll_resource_events' answer: the events after the cursor,
// oldest first, and the cursor to poll from next.
type EventPage struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"next_cursor"`
}

func eventsPage(evs []store.Event, after int64) EventPage {
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, Event{Cursor: eventCursor(e.Cursor), ResourceType: e.Type, ResourceID: e.ID, Kind: e.Kind, Version: e.Version, At: e.At})
	}
	if len(evs) > 0 {
		after = evs[len(evs)-1].Cursor
	}
	return EventPage{Events: out, NextCursor: eventCursor(after)}
}

// TooManyWaiters is the refusal of a long poll (or a subscription stream)
// over its cap; the problem carries retry_after, in seconds.
const TooManyWaiters = "too_many_waiters"

// Default caps of concurrent long polls (wait_seconds > 0).
const (
	DefaultWaitersPerToken = 8
	DefaultWaitersPerNode  = 1024
)

// waitState holds the Service's long-poll gate, made on first use.
type waitState struct {
	gate atomic.Pointer[Gate]
	stop stopState // StopWaiting (stopping.go)
}

// SetWaitLimits sets the caps of concurrent long polls per token and on this
// node (zero or less: the default). Call it before serving.
func (s *Service) SetWaitLimits(perToken, perNode int) {
	s.waits.gate.Store(NewGate(perToken, perNode))
}

func (s *Service) waitGate() *Gate {
	if g := s.waits.gate.Load(); g != nil {
		return g
	}
	s.waits.gate.CompareAndSwap(nil, NewGate(0, 0))
	return s.waits.gate.Load()
}

// Waiting is how many long polls are waiting now.
func (s *Service) Waiting() int { return s.waitGate().Held() }

// waiterKey is whose share of the waiters' cap a wait takes: a token's, or
// a person's.
func (c Caller) waiterKey() string {
	if p, ok := c.Principal(); ok && p.TokenID != "" {
		return "t:" + p.TokenID
	}
	return "u:" + c.Workspace + "/" + c.User
}

// Gate caps concurrent holders per key and in all. A holder costs one map
// entry (its deadline), nothing else.
type Gate struct {
	PerKey, Total int
	mu            sync.Mutex
	next          uint64
	byKey         map[string]map[uint64]time.Time
	all           map[uint64]time.Time
}

// NewGate makes a gate (zero or less: the waiter defaults).
func NewGate(perKey, total int) *Gate {
	if perKey <= 0 {
		perKey = DefaultWaitersPerToken
	}
	if total <= 0 {
		total = DefaultWaitersPerNode
	}
	return &Gate{PerKey: perKey, Total: total, byKey: map[string]map[uint64]time.Time{}, all: map[uint64]time.Time{}}
}

// Acquire takes a place for up to hold. Refused, it says in how many whole
// seconds (at least 1) the earliest holder of the full set is due to leave.
func (g *Gate) Acquire(key string, hold time.Duration) (release func(), retryAfter int, ok bool) {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	mine := g.byKey[key]
	switch {
	case len(mine) >= g.PerKey:
		return nil, retryIn(mine, now), false
	case len(g.all) >= g.Total:
		return nil, retryIn(g.all, now), false
	}
	if mine == nil {
		mine = map[uint64]time.Time{}
		g.byKey[key] = mine
	}
	g.next++
	id := g.next
	mine[id] = now.Add(hold)
	g.all[id] = now.Add(hold)
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			delete(g.all, id)
			delete(mine, id)
			if len(g.byKey[key]) == 0 {
				delete(g.byKey, key)
			}
			g.mu.Unlock()
		})
	}, 0, true
}

// Held is how many places are taken in all.
func (g *Gate) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.all)
}

func retryIn(set map[uint64]time.Time, now time.Time) int {
	first := time.Duration(math.MaxInt64)
	for _, d := range set {
		first = min(first, d.Sub(now))
	}
	return max(1, int(math.Ceil(first.Seconds())))
}

// StreamGate takes a place for an event stream of c (of session, "" for a
// token) of up to hold in the gate long polls share, capped per person (or
// token) and on this node, and counts it among OpenStreams until released;
// refused, it answers TooManyWaiters with retry_after, naming field.
func (s *Service) StreamGate(c Caller, session, field string, hold time.Duration) (release func(), err error) {
	free, retry, ok := s.waitGate().Acquire(c.waiterKey(), hold)
	if !ok {
		return nil, problem.New(TooManyWaiters, field,
			"too many live streams and long polls are open already (at most %d per person or token, %d on this server); retry after %d s",
			s.waitGate().PerKey, s.waitGate().Total, retry).With("retry_after", retry)
	}
	uncount := s.openStream(c, session)
	return func() { uncount(); free() }, nil
}
