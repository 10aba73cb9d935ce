package service

// The live fan-out: how the people watching Notes (and their pending
// count) hear of each committed write.
//
// Each node keeps one feed per Note that somebody on it watches. The
// store's change notifications (on PostgreSQL every node hears every
// node's writes, the follower's late commits included) only mark a feed
// dirty, so the writer is never held up and a burst of writes is one read.
// A few workers read each dirty feed once — the events after the newest
// one it published, the versions they name for their tabs and actor, the
// actors' names — build each event once, and hand the same events to every
// subscriber from memory. A subscriber's queue is bounded: one that falls
// behind loses the topic's events until it takes its queue again, and then
// gets a resync for that topic (re-read the Note) and goes on from now.
//
// A subscriber catches up on its own: it joins the feed first (under the
// feed's lock, noting the cursor the feed has published up to), then reads
// what it missed — from the feed's in-memory ring when the ring reaches
// back far enough, else from the store — and takes the live events after
// it, dropping by cursor any it already had, so nothing is missed and
// nothing comes twice.
//
// Cursors of one Note are committed in cursor order: a write locks the
// Note's row before it takes its cursor. So a feed that reads the events
// after the newest it published misses none, even on PostgreSQL, where
// cursors of different resources commit out of order (each feed keeps its
// own cursor; none is ever taken from another resource's event).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// Live topics: a Note's writes, and a person's pending count.
const (
	TopicNotePrefix = "note:"
	TopicProposals  = "proposals"
	// MaxTopics bounds the topics of one live stream.
	MaxTopics = 50
)

// UnsupportedTopic refuses a live topic that no stream follows.
const UnsupportedTopic = "unsupported_topic"

// The fan-out's bounds.
const (
	liveQueue   = 256 // items a subscriber holds undelivered before it loses a topic
	liveRing    = 512 // a feed's newest events kept in memory for resumes
	liveWorkers = 4   // feeds read at once on this node
	livePage    = 100 // events one read of a feed takes
	liveNames   = 1024
	liveNameAge = 10 * time.Minute // a name is looked up again after this
	liveRead    = 10 * time.Second // bounds one read of a feed
	liveBackoff = 5 * time.Second  // the longest wait before a failed read is retried
	liveYield   = 32               // streams woken before the fan-out lets other work run
)

// LiveCountWait is the least time between two recounts of one person's
// pending count: a burst of Room writes is one recount.
const LiveCountWait = 200 * time.Millisecond

// LiveKind is what a LiveItem says.
type LiveKind int

const (
	// LiveWrite is a committed write of the topic's Note (Event).
	LiveWrite LiveKind = iota + 1
	// LiveCount is the caller's pending count (Pending), sent when it changes.
	LiveCount
	// LiveGone ends a topic: its Note was deleted (Deleted), left the
	// caller's reach, or was never found (Reason).
	LiveGone
	// LiveResync says the topic's events could not all be delivered: read
	// the Note again; the topic goes on from now.
	LiveResync
)

// LiveItem is one thing a subscriber is told.
type LiveItem struct {
	Kind    LiveKind
	Topic   string
	Event   *LiveEvent // LiveWrite; shared by every subscriber: never change it
	Pending int        // LiveCount
	Reason  string     // LiveGone, LiveResync
	Deleted bool       // LiveGone
	Peers   []Peer     // LivePresence
}

// LiveEvent is one committed write of a Note, as every watcher sees it.
type LiveEvent struct {
	NoteID  string
	Seq     int64  // the store's cursor
	Cursor  string // Seq as the cursor callers pass back
	Kind    string
	Version int64
	Changed []string
	Actor   Actor
	// Text is what the write did to the markdown text, as its updates
	// (collab.go); nil when it did not change the text, or when the
	// updates were too many to carry (then editors pull them).
	Text []TextUpdate

	wire [LiveWires]atomic.Pointer[[]byte]
}

// LiveWires is how many encodings of an event Wire keeps.
const LiveWires = 2

// Wire is the event as encode writes it for one wire (0 … LiveWires-1):
// made once, by the first subscriber that sends it, and shared by the
// rest.
func (e *LiveEvent) Wire(wire int, encode func(*LiveEvent) []byte) []byte {
	if p := e.wire[wire].Load(); p != nil {
		return *p
	}
	b := encode(e)
	e.wire[wire].CompareAndSwap(nil, &b)
	return *e.wire[wire].Load()
}

// Why a topic resyncs.
const (
	ResyncBehind  = "the stream fell behind: some of this Note's writes were not sent; read the Note again"
	ResyncExpired = "the cursor is older than this Note's event feed keeps: read the Note again"
	ResyncFar     = "too many writes were made since the cursor: read the Note again"
	ResyncFailed  = "Foundry failed to follow this Note for a moment: read the Note again"
)

// NoteTopic is the live topic of Note id.
func NoteTopic(id string) string { return TopicNotePrefix + id }

// LiveTopics checks the topics of a live stream for c and answers them in
// order, each once.
func LiveTopics(c Caller, raw []string) ([]string, error) {
	accepted := "note:<note_id> (a Note's writes) or proposals (your pending-approvals count)"
	if len(raw) == 0 {
		return nil, problem.New(UnsupportedTopic, "topic", "is required: give 1–%d topics, each %s", MaxTopics, accepted)
	}
	var out []string
	for _, t := range raw {
		if slices.Contains(out, t) {
			continue
		}
		switch {
		case t == TopicProposals:
			if c.IsAgent() {
				return nil, problem.New(PersonOnly, "topic", "proposals is a person's topic: a token follows note:<note_id> topics only")
			}
		case strings.HasPrefix(t, TopicNotePrefix):
			id := strings.TrimPrefix(t, TopicNotePrefix)
			if id == "" || len(id) > MaxIDBytes {
				return nil, problem.New(UnsupportedTopic, "topic", "%q names no Note: give note:<note_id> with the ID Foundry returned", problem.Excerpt(t))
			}
			var pr *problem.Problem
			if err := CheckID("topic", id); errors.As(err, &pr) {
				return nil, problem.New(UnsupportedTopic, "topic", "%s", pr.Message)
			}
		default:
			return nil, problem.New(UnsupportedTopic, "topic", "%q is not a topic: give %s", problem.Excerpt(t), accepted)
		}
		out = append(out, t)
		if len(out) > MaxTopics {
			return nil, problem.New(UnsupportedTopic, "topic", "is given more than %d times: one stream follows at most %d topics", MaxTopics, MaxTopics)
		}
	}
	return out, nil
}

// Resume is where a subscription starts: after an event cursor, or now.
type Resume struct {
	after int64
	set   bool
}

// ResumeAfter decodes an event cursor a stream sent ("": now).
func ResumeAfter(cursor string) (Resume, error) {
	if cursor == "" {
		return Resume{}, nil
	}
	raw, err := decodeCursor(cursor, "e")
	if err != nil {
		return Resume{}, err
	}
	after, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || after < 0 {
		return Resume{}, badCursor()
	}
	return Resume{after: after, set: true}, nil
}

// WatchOptions say how a subscriber joins a Note's feed.
type WatchOptions struct {
	After Resume // where its events start (zero: now)
	// MaxCatchUp bounds the events a resume replays (0: livePage); past it
	// the topic resyncs.
	MaxCatchUp int
	// OneNote says the stream follows this Note alone, so its cursor is
	// one of the Note's own events: no write up to it is sent again, and a
	// cursor older than the feed keeps is refused (CursorExpired) rather
	// than resyncing the topic. Without it the cursor may be another
	// Note's (one cursor resumes every topic of a stream): then the writes
	// after the cursor are sent, and also any write the feed had not
	// published yet when the subscriber joined, even one before the
	// cursor — a repeat the client drops by cursor, never a write lost to
	// a feed that was a moment behind another.
	OneNote bool
}

// live is the Service's fan-out, made on first use.
type live struct {
	once sync.Once
	mu   sync.Mutex
	// under mu
	notes   map[string]*noteFeed   // by workspace and Note
	byID    map[string][]*noteFeed // by Note: what a notification names
	counts  map[string]*countFeed  // by person (and role)
	queue   []liveJob
	running int
	streams streamCounts
}

func (s *Service) fanout() *live {
	l := &s.live
	l.once.Do(func() {
		l.notes = map[string]*noteFeed{}
		l.byID = map[string][]*noteFeed{}
		l.counts = map[string]*countFeed{}
		s.Store.OnChange(func(typ, id string) { s.changed(typ, id) })
	})
	return l
}

// changed is the store's change notification: it marks what must be read
// again and returns at once (it runs in the writer's goroutine).
func (s *Service) changed(typ, id string) {
	l := &s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	switch typ {
	case store.TypeNote:
		for _, f := range l.byID[id] {
			f.headStale.Store(true)
			l.mark(f)
		}
	case store.TypeRoom:
		for _, f := range l.counts {
			l.mark(f)
		}
	}
}

// A liveJob is a feed the workers read: a Note's or a person's count.
type liveJob interface {
	sched() *sched
	run(ctx context.Context) (more bool, err error)
	failed(v any) // a run panicked
}

type jobState int

const (
	jobIdle    jobState = iota
	jobDelayed          // waiting out its delay before it is queued
	jobQueued
	jobRunning
)

// sched is a feed's place in the workers' queue (under live.mu): a feed is
// queued once however many notifications come, and one that is marked
// while it is read is read again after.
type sched struct {
	state jobState
	dirty bool
	delay time.Duration // coalescing wait before a read
	retry time.Duration // the wait after a failed read
}

// mark asks for j to be read (l.mu held).
func (l *live) mark(j liveJob) {
	st := j.sched()
	switch st.state {
	case jobRunning:
		st.dirty = true
	case jobIdle:
		if st.delay > 0 {
			st.state = jobDelayed
			time.AfterFunc(st.delay, func() { l.enqueue(j) })
			return
		}
		l.queueLocked(j)
	}
}

func (l *live) enqueue(j liveJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if j.sched().state == jobDelayed {
		l.queueLocked(j)
	}
}

func (l *live) queueLocked(j liveJob) {
	j.sched().state = jobQueued
	l.queue = append(l.queue, j)
	if l.running < liveWorkers {
		l.running++
		go l.work()
	}
}

// work reads queued feeds until none is left.
func (l *live) work() {
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.running--
			l.mu.Unlock()
			return
		}
		j := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		j.sched().state = jobRunning
		l.mu.Unlock()

		more, err := runJob(j)

		l.mu.Lock()
		st := j.sched()
		st.state = jobIdle
		switch {
		case err != nil:
			st.retry = min(max(2*st.retry, 50*time.Millisecond), liveBackoff)
			st.dirty = false
			st.state = jobDelayed
			time.AfterFunc(st.retry, func() { l.enqueue(j) })
		case more:
			st.retry = 0
			st.dirty = false
			l.queueLocked(j) // read on: the page was full
		case st.dirty:
			st.retry = 0
			st.dirty = false
			l.mark(j)
		default:
			st.retry = 0
		}
		l.mu.Unlock()
	}
}

// runJob reads one feed; a panic is logged with its stack and treated as
// a failed read, never taking the process down.
func runJob(j liveJob) (more bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("service: panic in the live fan-out", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			j.failed(v)
			more, err = false, fmt.Errorf("panic: %v", v)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), liveRead)
	defer cancel()
	return j.run(ctx)
}

// noteFeed is one Note's feed on this node.
type noteFeed struct {
	s       *Service
	ws, id  string
	key     string
	refs    int // subscribers and joiners (under live.mu)
	st      sched
	ready   chan struct{} // closed once cursor is known
	initErr error

	mu       sync.Mutex
	cursor   int64        // the newest event published
	base     int64        // ring holds every event in (base, cursor]
	ring     []*LiveEvent // oldest first
	subs     map[*Subscriber]struct{}
	poisoned bool // a read panicked: start again from now, resyncing everyone

	names nameCache

	textRev int64 // the newest text revision an event carried (0: not known yet; read by the one worker of the feed)

	peers   map[string]*Peer // presence by client ID (under mu; presence.go)
	pruning bool

	headStale atomic.Bool
	headMu    sync.Mutex
	head      *store.Resource // nil: not read yet, or the Note is gone
	headErr   error
	deleted   bool
}

func (f *noteFeed) sched() *sched { return &f.st }

func (f *noteFeed) failed(any) {
	f.mu.Lock()
	f.poisoned = true
	f.mu.Unlock()
}

func feedKey(ws, id string) string { return ws + "\x00" + id }

// joinNote finds (or makes) the feed of Note id of workspace ws, counting
// the caller in until it leaves.
func (s *Service) joinNote(ctx context.Context, ws, id string) (*noteFeed, error) {
	l := s.fanout()
	key := feedKey(ws, id)
	l.mu.Lock()
	f := l.notes[key]
	creator := f == nil
	if creator {
		f = &noteFeed{s: s, ws: ws, id: id, key: key, ready: make(chan struct{}), subs: map[*Subscriber]struct{}{}}
		l.notes[key] = f
		l.byID[id] = append(l.byID[id], f)
	}
	f.refs++
	l.mu.Unlock()
	if creator {
		// In the maps before the read: a write after it marks the feed,
		// whose workers wait for this.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), liveRead)
		c, err := s.Store.LastCursor(rctx, ws, store.TypeNote, id)
		cancel()
		f.mu.Lock()
		f.cursor, f.base = c, c
		f.mu.Unlock()
		f.initErr = err
		if err != nil {
			l.mu.Lock()
			l.dropLocked(f) // a later join reads again
			l.mu.Unlock()
		}
		close(f.ready)
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		s.leaveNote(f)
		return nil, ctx.Err()
	}
	if f.initErr != nil {
		s.leaveNote(f)
		return nil, f.initErr
	}
	return f, nil
}

// leaveNote counts one subscriber out; the last one out drops the feed.
func (s *Service) leaveNote(f *noteFeed) {
	l := &s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	f.refs--
	if f.refs <= 0 {
		l.dropLocked(f)
	}
}

func (l *live) dropLocked(f *noteFeed) {
	if l.notes[f.key] != f {
		return
	}
	delete(l.notes, f.key)
	fs := slices.DeleteFunc(l.byID[f.id], func(x *noteFeed) bool { return x == f })
	if len(fs) == 0 {
		delete(l.byID, f.id)
	} else {
		l.byID[f.id] = fs
	}
}

// run reads what is new in the Note's feed and hands it to every
// subscriber.
func (f *noteFeed) run(ctx context.Context) (bool, error) {
	<-f.ready
	if f.initErr != nil {
		return false, nil
	}
	s := f.s
	f.mu.Lock()
	poisoned, after := f.poisoned, f.cursor
	f.mu.Unlock()
	if poisoned {
		// What made the read panic is skipped: everyone re-reads the Note.
		c, err := s.Store.LastCursor(ctx, f.ws, store.TypeNote, f.id)
		if err != nil {
			return false, err
		}
		f.mu.Lock()
		f.poisoned, f.cursor, f.base, f.ring = false, c, c, nil
		subs := f.subscribers()
		f.mu.Unlock()
		for _, sub := range subs {
			sub.lose(NoteTopic(f.id), ResyncFailed)
		}
		return false, nil
	}
	evs, err := s.Store.Events(ctx, f.ws, store.TypeNote, f.id, after, livePage)
	if err != nil || len(evs) == 0 {
		return false, err
	}
	built, err := s.liveEvents(ctx, f.id, evs, &f.names, f.ws)
	if err != nil {
		return false, err
	}
	if err := s.liveText(ctx, f, built); err != nil {
		return false, err
	}
	f.publish(built)
	return len(evs) == livePage, nil
}

func (f *noteFeed) subscribers() []*Subscriber {
	out := make([]*Subscriber, 0, len(f.subs))
	for sub := range f.subs {
		out = append(out, sub)
	}
	return out
}

// publish keeps evs in the ring and hands them to every subscriber; a
// deletion ends the topic after its event.
func (f *noteFeed) publish(evs []*LiveEvent) {
	topic := NoteTopic(f.id)
	items := make([]LiveItem, 0, len(evs)+1)
	deleted := false
	for _, e := range evs {
		items = append(items, LiveItem{Kind: LiveWrite, Topic: topic, Event: e})
		deleted = deleted || e.Kind == KindNoteDeleted
	}
	if deleted {
		items = append(items, LiveItem{Kind: LiveGone, Topic: topic, Reason: fmt.Sprintf("Note %s was deleted: it is in the trash for %d days", f.id, TrashDays), Deleted: true})
		f.headMu.Lock()
		f.deleted = true
		f.headMu.Unlock()
	}
	f.mu.Lock()
	f.ring = append(f.ring, evs...)
	if n := len(f.ring) - liveRing; n > 0 {
		f.base = f.ring[n-1].Seq
		f.ring = slices.Clone(f.ring[n:])
	}
	f.cursor = evs[len(evs)-1].Seq
	subs := f.subscribers()
	f.mu.Unlock()
	for i, sub := range subs {
		sub.push(items)
		if i%liveYield == liveYield-1 {
			// Each push wakes a stream: let other work (writers) run
			// between groups of them, rather than behind all of them.
			runtime.Gosched()
		}
	}
}

// liveEvents builds the events of Note id: the tabs each changed and its
// actor by name (names remembers them between reads). Only the versions
// the events name are read, never the whole history.
func (s *Service) liveEvents(ctx context.Context, id string, evs []store.Event, names *nameCache, ws string) ([]*LiveEvent, error) {
	lo, hi := evs[0].Version, evs[0].Version
	for _, e := range evs {
		lo, hi = min(lo, e.Version), max(hi, e.Version)
	}
	hist, err := s.Store.VersionRange(ctx, store.TypeNote, id, lo, hi)
	if err != nil {
		return nil, err
	}
	byVersion := make(map[int64]store.VersionInfo, len(hist))
	var actors []string
	for _, v := range hist {
		byVersion[v.Version] = v
		if v.Actor != "" {
			actors = append(actors, v.Actor)
		}
	}
	named, err := names.of(ctx, s, ws, actors)
	if err != nil {
		return nil, err
	}
	out := make([]*LiveEvent, 0, len(evs))
	for _, e := range evs {
		v := byVersion[e.Version]
		out = append(out, &LiveEvent{NoteID: id, Seq: e.Cursor, Cursor: eventCursor(e.Cursor), Kind: e.Kind, Version: e.Version,
			Changed: nonNilIDs(v.Changed), Actor: named.Of(v.Actor)})
	}
	return out, nil
}

// nameCache remembers the actors a feed named, for a while.
type nameCache struct {
	mu    sync.Mutex
	since time.Time
	names ActorNames
}

// of names actors, looking up in one read those it does not know.
func (n *nameCache) of(ctx context.Context, s *Service, ws string, actors []string) (ActorNames, error) {
	n.mu.Lock()
	if n.names == nil || time.Since(n.since) > liveNameAge || len(n.names) > liveNames {
		n.names, n.since = ActorNames{}, time.Now()
	}
	out := make(ActorNames, len(actors))
	var unknown []string
	for _, a := range actors {
		if x, ok := n.names[a]; ok {
			out[a] = x
		} else if !slices.Contains(unknown, a) {
			unknown = append(unknown, a)
		}
	}
	n.mu.Unlock()
	if len(unknown) == 0 {
		return out, nil
	}
	found, err := s.Actors(ctx, ws, unknown)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range unknown {
		out[a] = found.Of(a)
		n.names[a] = out[a]
	}
	return out, nil
}

// reach answers whether c reaches the feed's Note now, from what the feed
// knows of it: its head is read again only after a write to it.
func (f *noteFeed) reach(ctx context.Context, c Caller) error {
	f.headMu.Lock()
	defer f.headMu.Unlock()
	if f.head == nil || f.headStale.Load() {
		f.headStale.Store(false) // a write during the read marks it again
		r, err := f.s.Store.Head(ctx, store.TypeNote, f.id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			f.head, f.headErr = nil, err
		case err != nil:
			f.headStale.Store(true)
			return err
		default:
			f.head, f.headErr = &r, nil
			if !f.deleted {
				if f.deleted, err = f.s.noteDeleted(ctx, f.id); err != nil {
					f.headStale.Store(true)
					return err
				}
			}
		}
	}
	if f.headErr != nil || f.deleted || !c.reachesNote(f.head) {
		return notFound(store.TypeNote, f.id)
	}
	return nil
}

// countFeed is one person's pending count on this node.
type countFeed struct {
	s      *Service
	key    string
	caller Caller
	refs   int // under live.mu
	st     sched

	mu   sync.Mutex
	gen  uint64 // recounts begun
	subs map[*Subscriber]struct{}
}

func (f *countFeed) sched() *sched { return &f.st }
func (f *countFeed) failed(any)    {}

func (f *countFeed) run(ctx context.Context) (bool, error) {
	f.mu.Lock()
	f.gen++
	gen := f.gen
	f.mu.Unlock()
	n, err := f.s.PendingCount(ctx, f.caller)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	subs := make([]*Subscriber, 0, len(f.subs))
	for sub := range f.subs {
		subs = append(subs, sub)
	}
	f.mu.Unlock()
	for _, sub := range subs {
		sub.count(n, gen)
	}
	return false, nil
}

func countKey(c Caller) string { return c.Workspace + "\x00" + c.User + "\x00" + c.Role }

// Subscriber is one live stream's place in the fan-out: the topics it
// follows and what they sent it that it has not taken yet.
type Subscriber struct {
	s    *Service
	wake chan struct{}

	mu       sync.Mutex
	q        []LiveItem
	lost     []string // topics whose events overflowed the queue, in order
	topics   map[string]*subTopic
	pending  int // the newest count a recount sent
	countGen uint64
	counted  bool
	closed   bool
}

type subTopic struct {
	note    *noteFeed
	counts  *countFeed
	last    int64  // the newest event cursor delivered
	pending int    // the count delivered
	gen     uint64 // recounts up to this one began before the subscription
}

// Subscribe makes a subscriber with no topics; Close it when done.
func (s *Service) Subscribe() *Subscriber {
	s.fanout()
	return &Subscriber{s: s, wake: make(chan struct{}, 1), topics: map[string]*subTopic{}}
}

// Wake is signalled whenever something may be waiting for Take.
func (sub *Subscriber) Wake() <-chan struct{} { return sub.wake }

func (sub *Subscriber) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// push queues items of one topic: writes past the queue's bound are
// dropped and the topic marked for a resync; a topic's end always fits.
func (sub *Subscriber) push(items []LiveItem) {
	sub.mu.Lock()
	for _, it := range items {
		if it.Kind == LivePresence {
			// Only the newest presence of a topic matters.
			if i := slices.IndexFunc(sub.q, func(x LiveItem) bool { return x.Kind == LivePresence && x.Topic == it.Topic }); i >= 0 {
				sub.q[i] = it
				continue
			}
		}
		if it.Kind == LiveWrite {
			if slices.Contains(sub.lost, it.Topic) {
				continue
			}
			if len(sub.q) >= liveQueue {
				sub.lost = append(sub.lost, it.Topic)
				continue
			}
		}
		sub.q = append(sub.q, it)
	}
	sub.mu.Unlock()
	sub.signal()
}

// lose marks a topic for a resync.
func (sub *Subscriber) lose(topic, reason string) {
	sub.mu.Lock()
	if !slices.Contains(sub.lost, topic) {
		sub.q = append(sub.q, LiveItem{Kind: LiveResync, Topic: topic, Reason: reason})
	}
	sub.mu.Unlock()
	sub.signal()
}

func (sub *Subscriber) count(n int, gen uint64) {
	sub.mu.Lock()
	if gen > sub.countGen {
		sub.pending, sub.countGen, sub.counted = n, gen, true
	}
	sub.mu.Unlock()
	sub.signal()
}

// Take answers what is waiting, oldest first, each write once: writes a
// catch-up already delivered are dropped by cursor, and a topic that lost
// writes ends its part with a resync.
func (sub *Subscriber) Take() []LiveItem {
	sub.mu.Lock()
	q, lost := sub.q, sub.lost
	sub.q, sub.lost = nil, nil
	out := make([]LiveItem, 0, len(q)+len(lost)+1)
	var ended []*subTopic
	for _, it := range q {
		st := sub.topics[it.Topic]
		if st == nil {
			continue // unwatched since
		}
		switch it.Kind {
		case LiveWrite:
			if it.Event.Seq <= st.last {
				continue
			}
			st.last = it.Event.Seq
		case LiveGone:
			delete(sub.topics, it.Topic)
			ended = append(ended, st)
		}
		out = append(out, it)
	}
	for _, t := range lost {
		if sub.topics[t] != nil {
			out = append(out, LiveItem{Kind: LiveResync, Topic: t, Reason: ResyncBehind})
		}
	}
	if st := sub.topics[TopicProposals]; st != nil && sub.counted && sub.countGen > st.gen && sub.pending != st.pending {
		st.pending = sub.pending
		out = append(out, LiveItem{Kind: LiveCount, Topic: TopicProposals, Pending: sub.pending})
	}
	sub.mu.Unlock()
	for _, st := range ended {
		sub.leave(st)
	}
	return out
}

// Cursor is where a stream that took everything so far resumes: the
// newest event cursor of its Note topics (at least the one it resumed
// from; "" when it follows no Note).
func (sub *Subscriber) Cursor(from Resume) string {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	hi, some := from.after, from.set
	for _, st := range sub.topics {
		if st.note != nil {
			hi, some = max(hi, st.last), true
		}
	}
	if !some {
		return ""
	}
	return eventCursor(hi)
}

// Topics are the topics the subscriber follows.
func (sub *Subscriber) Topics() []string {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := make([]string, 0, len(sub.topics))
	for t := range sub.topics {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// WatchNote joins Note id's feed for c and answers the catch-up: the
// writes after opts.After (none when it is not set), then every write the
// feed publishes comes through Take. A Note c does not reach is
// not_found; a resume from before the feed's horizon resyncs the topic
// (CursorExpired with OneNote).
func (sub *Subscriber) WatchNote(ctx context.Context, c Caller, id string, opts WatchOptions) ([]LiveItem, error) {
	s := sub.s
	topic := NoteTopic(id)
	if _, err := s.noteHead(ctx, c, id); err != nil {
		return nil, err
	}
	sub.mu.Lock()
	_, dup := sub.topics[topic]
	sub.mu.Unlock()
	if dup {
		return nil, nil
	}
	f, err := s.joinNote(ctx, c.Workspace, id)
	if err != nil {
		return nil, err
	}
	after := opts.After.after
	f.mu.Lock()
	joined := f.cursor
	var items []LiveItem
	fromRing := !opts.After.set || after >= f.base
	if opts.After.set && fromRing {
		for _, e := range f.ring {
			if e.Seq > after {
				items = append(items, LiveItem{Kind: LiveWrite, Topic: topic, Event: e})
			}
		}
	}
	st := &subTopic{note: f, last: joined}
	if opts.OneNote && opts.After.set {
		st.last = max(joined, after)
	}
	sub.mu.Lock()
	closed := sub.closed
	if !closed {
		sub.topics[topic] = st
	}
	sub.mu.Unlock()
	if !closed {
		f.subs[sub] = struct{}{}
	}
	f.mu.Unlock()
	if closed {
		s.leaveNote(f)
		return nil, nil
	}
	if p := f.presenceItem(); p != nil {
		sub.push([]LiveItem{*p})
	}
	if fromRing {
		return items, nil
	}
	// The ring does not reach back to the cursor: the store does.
	items, err = s.catchUp(ctx, c, f, after, joined, opts)
	if err != nil {
		sub.Unwatch(topic)
		return nil, err
	}
	if n := len(items); n > 0 && items[n-1].Kind == LiveWrite {
		sub.mu.Lock()
		st.last = max(st.last, items[n-1].Event.Seq)
		sub.mu.Unlock()
	}
	return items, nil
}

// catchUp reads the writes of f's Note after cursor after, up to the
// cursor joined the subscriber joined the feed at (perhaps a little
// past), at most opts.MaxCatchUp of them.
func (s *Service) catchUp(ctx context.Context, c Caller, f *noteFeed, after, joined int64, opts WatchOptions) ([]LiveItem, error) {
	topic := NoteTopic(f.id)
	limit := opts.MaxCatchUp
	if limit <= 0 {
		limit = livePage
	}
	var items []LiveItem
	for first := true; after < joined; first = false {
		evs, err := s.Store.Events(ctx, c.Workspace, store.TypeNote, f.id, after, livePage)
		if err == nil && first {
			// Read after the events: a prune that took events after the
			// cursor committed its horizon with them, so it is seen here.
			err = s.cursorLive(ctx, store.TypeNote, f.id, after)
			var pr *problem.Problem
			if errors.As(err, &pr) && pr.Code == CursorExpired && !opts.OneNote {
				return []LiveItem{{Kind: LiveResync, Topic: topic, Reason: ResyncExpired}}, nil
			}
		}
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			break
		}
		if len(items)+len(evs) > limit {
			return append(items, LiveItem{Kind: LiveResync, Topic: topic, Reason: ResyncFar}), nil
		}
		built, err := s.liveEvents(ctx, f.id, evs, &f.names, c.Workspace)
		if err != nil {
			return nil, err
		}
		for _, e := range built {
			items = append(items, LiveItem{Kind: LiveWrite, Topic: topic, Event: e})
		}
		after = evs[len(evs)-1].Cursor
		if len(evs) < livePage {
			break
		}
	}
	return items, nil
}

// WatchProposals follows c's pending count and answers it now; every
// change of it comes through Take.
func (sub *Subscriber) WatchProposals(ctx context.Context, c Caller) ([]LiveItem, error) {
	if c.IsAgent() {
		return nil, problem.New(PersonOnly, "topic", "proposals is a person's topic: a token follows note:<note_id> topics only")
	}
	s := sub.s
	l := s.fanout()
	key := countKey(c)
	l.mu.Lock()
	f := l.counts[key]
	if f == nil {
		f = &countFeed{s: s, key: key, caller: c, subs: map[*Subscriber]struct{}{}, st: sched{delay: LiveCountWait}}
		l.counts[key] = f
	}
	f.refs++
	l.mu.Unlock()
	f.mu.Lock()
	st := &subTopic{counts: f, gen: f.gen, pending: -1}
	sub.mu.Lock()
	_, dup := sub.topics[TopicProposals]
	closed := sub.closed
	if !dup && !closed {
		sub.topics[TopicProposals] = st
	}
	sub.mu.Unlock()
	if !dup && !closed {
		f.subs[sub] = struct{}{}
	}
	f.mu.Unlock()
	if dup || closed {
		s.leaveCount(f)
		return nil, nil
	}
	// Counted after joining: a write in between is counted again.
	n, err := s.PendingCount(ctx, c)
	if err != nil {
		sub.Unwatch(TopicProposals)
		return nil, err
	}
	sub.mu.Lock()
	st.pending = n
	sub.mu.Unlock()
	return []LiveItem{{Kind: LiveCount, Topic: TopicProposals, Pending: n}}, nil
}

func (s *Service) leaveCount(f *countFeed) {
	l := &s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	f.refs--
	if f.refs <= 0 && l.counts[f.key] == f {
		delete(l.counts, f.key)
	}
}

// NoteReachable says whether c still reaches the Note of a topic the
// subscriber follows (not_found if not), from what its feed knows: the
// Note is read again only after it was written.
func (sub *Subscriber) NoteReachable(ctx context.Context, c Caller, id string) error {
	sub.mu.Lock()
	st := sub.topics[NoteTopic(id)]
	sub.mu.Unlock()
	if st == nil || st.note == nil {
		return notFound(store.TypeNote, id)
	}
	return st.note.reach(ctx, c)
}

// Unwatch stops following topic.
func (sub *Subscriber) Unwatch(topic string) {
	sub.mu.Lock()
	st := sub.topics[topic]
	delete(sub.topics, topic)
	sub.mu.Unlock()
	if st != nil {
		sub.leave(st)
	}
}

func (sub *Subscriber) leave(st *subTopic) {
	switch {
	case st.note != nil:
		st.note.mu.Lock()
		delete(st.note.subs, sub)
		st.note.mu.Unlock()
		sub.s.leaveNote(st.note)
	case st.counts != nil:
		st.counts.mu.Lock()
		delete(st.counts.subs, sub)
		st.counts.mu.Unlock()
		sub.s.leaveCount(st.counts)
	}
}

// Close stops following every topic.
func (sub *Subscriber) Close() {
	sub.mu.Lock()
	sub.closed = true
	topics := sub.topics
	sub.topics = map[string]*subTopic{}
	sub.q, sub.lost = nil, nil
	sub.mu.Unlock()
	for _, st := range topics {
		sub.leave(st)
	}
}

// LiveFeeds is how many Note feeds and count feeds this node keeps.
func (s *Service) LiveFeeds() (notes, counts int) {
	l := s.fanout()
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.notes), len(l.counts)
}

// streamCounts counts the open event streams of this node.
type streamCounts struct {
	total     int
	byUser    map[string]int
	bySession map[string]int
}

// OpenStreams is how many event streams are open on this node: in all, by
// person (or token owner), and by session ("" for tokens).
type OpenStreams struct {
	Total     int
	ByUser    map[string]int
	BySession map[string]int
}

// OpenStreams counts the event streams open on this node now.
func (s *Service) OpenStreams() OpenStreams {
	l := &s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	out := OpenStreams{Total: l.streams.total, ByUser: map[string]int{}, BySession: map[string]int{}}
	for k, v := range l.streams.byUser {
		out.ByUser[k] = v
	}
	for k, v := range l.streams.bySession {
		out.BySession[k] = v
	}
	return out
}

// openStream counts a stream of c's (of session) in until the returned
// func is called.
func (s *Service) openStream(c Caller, session string) func() {
	l := &s.live
	l.mu.Lock()
	if l.streams.byUser == nil {
		l.streams.byUser, l.streams.bySession = map[string]int{}, map[string]int{}
	}
	l.streams.total++
	l.streams.byUser[c.User]++
	if session != "" {
		l.streams.bySession[session]++
	}
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.streams.total--
			if l.streams.byUser[c.User]--; l.streams.byUser[c.User] <= 0 {
				delete(l.streams.byUser, c.User)
			}
			if session != "" {
				if l.streams.bySession[session]--; l.streams.bySession[session] <= 0 {
					delete(l.streams.bySession, session)
				}
			}
		})
	}
}
