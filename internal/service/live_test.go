package service_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// openSQLite is a fresh SQLite store, closed after the test.
func openSQLite(t *testing.T) store.Store {
	t.Helper()
	return openSQLiteIn(t, t.TempDir())
}

// openSQLiteIn opens the SQLite store in dir (a second handle on the same
// file is a second node), closed after the test.
func openSQLiteIn(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// liveWait bounds every wait for a subscriber in these tests.
const liveWait = 20 * time.Second

// takeUntil takes from sub until done says it has enough, failing after
// liveWait; it answers everything taken.
func takeUntil(t *testing.T, sub *service.Subscriber, done func([]service.LiveItem) bool) []service.LiveItem {
	t.Helper()
	var got []service.LiveItem
	deadline := time.After(liveWait)
	for !done(got) {
		select {
		case <-sub.Wake():
			got = append(got, sub.Take()...)
		case <-deadline:
			t.Fatalf("waited %s; got %s", liveWait, describe(got))
		}
	}
	return got
}

// versions are the versions of the writes among items.
func versions(items []service.LiveItem) []int64 {
	var out []int64
	for _, it := range items {
		if it.Kind == service.LiveWrite {
			out = append(out, it.Event.Version)
		}
	}
	return out
}

func describe(items []service.LiveItem) string {
	s := ""
	for _, it := range items {
		switch it.Kind {
		case service.LiveWrite:
			s += fmt.Sprintf(" write(%s v%d)", it.Topic, it.Event.Version)
		case service.LiveCount:
			s += fmt.Sprintf(" count(%d)", it.Pending)
		case service.LiveGone:
			s += fmt.Sprintf(" gone(%s %q deleted=%v)", it.Topic, it.Reason, it.Deleted)
		case service.LiveResync:
			s += fmt.Sprintf(" resync(%s %q)", it.Topic, it.Reason)
		}
	}
	return "[" + s + " ]"
}

// upTo is a done func: the writes reached version v.
func upTo(v int64) func([]service.LiveItem) bool {
	return func(items []service.LiveItem) bool {
		vs := versions(items)
		return len(vs) > 0 && vs[len(vs)-1] >= v
	}
}

// span is from+1 … to.
func span(from, to int64) []int64 {
	var out []int64
	for v := from + 1; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// retitle is one write to Note id at version v by the person; it answers
// the version and the cursor after it.
func (f *fixture) retitle(t *testing.T, id string, v int64) (int64, string) {
	t.Helper()
	title := fmt.Sprintf("Title %d", v+1)
	r, err := f.svc.UpdateNote(context.Background(), f.person, service.UpdateNoteArgs{NoteID: id, Title: &title, Guard: service.Guard{ExpectedVersion: v}})
	if err != nil {
		t.Error(err)
		return v, ""
	}
	return r.Version, r.Cursor
}

func (f *fixture) watch(t *testing.T, c service.Caller, id string, opts service.WatchOptions) (*service.Subscriber, []service.LiveItem) {
	t.Helper()
	sub := f.svc.Subscribe()
	t.Cleanup(sub.Close)
	items, err := sub.WatchNote(context.Background(), c, id, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sub, items
}

// Every subscriber of a Note gets every write once, in order, with the
// tabs it changed and its actor by name.
func TestLiveEveryWriteOnceInOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		const subs, writes = 40, 25
		v0 := f.version(t)
		var all []*service.Subscriber
		for range subs {
			sub, first := f.watch(t, f.person, f.noteID, service.WatchOptions{})
			if len(first) != 0 {
				t.Fatalf("a subscription from now caught up %s", describe(first))
			}
			all = append(all, sub)
		}
		v := v0
		for range writes {
			v, _ = f.retitle(t, f.noteID, v)
		}
		var wg sync.WaitGroup
		for _, sub := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := takeUntil(t, sub, upTo(v))
				if vs := versions(got); !slices.Equal(vs, span(v0, v)) {
					t.Errorf("a subscriber got versions %v; want %v", vs, span(v0, v))
				}
				for _, it := range got {
					e := it.Event
					if it.Topic != service.NoteTopic(f.noteID) || e.NoteID != f.noteID || e.Kind != "note_renamed" || e.Actor.Kind != "person" || e.Actor.ID != f.owner || e.Actor.Name == "" || e.Cursor == "" {
						t.Errorf("event = %s %s v%d by %+v in %s", e.NoteID, e.Kind, e.Version, e.Actor, it.Topic)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// Subscribers that join while the Note is being written, each resuming
// after a write it was told of, miss nothing and get nothing twice: with
// the feed's ring (another subscriber keeps the feed) and from the store
// (the feed is made anew for each).
func TestLiveJoinWhileWriting(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		for _, keep := range []bool{true, false} {
			t.Run(fmt.Sprintf("ring=%v", keep), func(t *testing.T) {
				v := f.version(t)
				if keep {
					f.watch(t, f.person, f.noteID, service.WatchOptions{})
				}
				const writes = 60
				end := v + writes
				type written struct {
					version int64
					cursor  string
				}
				done := make(chan written, writes)
				defer func() {
					for range done { // the writer ends before the test does
					}
				}()
				go func() {
					defer close(done)
					for range writes {
						var c string
						v, c = f.retitle(t, f.noteID, v)
						done <- written{v, c}
					}
				}()
				var last int64
				var joins int
				for w := range done {
					last = w.version
					if w.version%7 != 0 || w.version+3 > end {
						continue
					}
					joins++
					from, err := service.ResumeAfter(w.cursor)
					if err != nil {
						t.Fatal(err)
					}
					sub, first := f.watch(t, f.person, f.noteID, service.WatchOptions{After: from, MaxCatchUp: 1000, OneNote: true})
					target := w.version + 3
					got := append(first, takeUntil(t, sub, func(more []service.LiveItem) bool { return upTo(target)(append(slices.Clone(first), more...)) })...)
					if vs := versions(got); !slices.Equal(vs[:min(len(vs), 3)], span(w.version, target)) || !isRun(vs) {
						var seqs []int64
						for _, it := range got {
							if it.Event != nil {
								seqs = append(seqs, it.Event.Seq)
							}
						}
						t.Fatalf("joined after version %d (%s %+v): got %v (%v, %d first); want a run from %d", w.version, w.cursor, from, vs, seqs, len(first), w.version+1)
					}
					sub.Close()
				}
				if joins == 0 || last == 0 {
					t.Fatal("nobody joined")
				}
			})
		}
	})
}

// isRun says whether vs counts up by one.
func isRun(vs []int64) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[i-1]+1 {
			return false
		}
	}
	return true
}

// A resume replays what was missed, from the ring or from the store; a
// cursor before the feed's horizon resyncs (or is refused, strictly); a
// resume of more than MaxCatchUp writes resyncs after those.
func TestLiveResume(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		v := f.version(t)
		var cursors []string
		for range 5 {
			var c string
			v, c = f.retitle(t, f.noteID, v)
			cursors = append(cursors, c)
		}
		from, err := service.ResumeAfter(cursors[1])
		if err != nil {
			t.Fatal(err)
		}
		// From the store: no feed yet.
		sub, first := f.watch(t, f.person, f.noteID, service.WatchOptions{After: from})
		if vs := versions(first); !slices.Equal(vs, span(v-3, v)) {
			t.Fatalf("a resume from the store caught up %v; want %v", vs, span(v-3, v))
		}
		// From the ring: the feed is there now, with what it read since.
		v, _ = f.retitle(t, f.noteID, v)
		takeUntil(t, sub, upTo(v))
		from, _ = service.ResumeAfter(cursors[4])
		_, ring := f.watch(t, f.person, f.noteID, service.WatchOptions{After: from})
		if vs := versions(ring); !slices.Equal(vs, []int64{v}) {
			t.Fatalf("a resume from the ring caught up %v; want [%d]", vs, v)
		}
		// Too many to replay: the first ones, then a resync.
		from, _ = service.ResumeAfter(cursors[0])
		s2 := f.svc.Subscribe()
		defer s2.Close()
		far, err := s2.WatchNote(context.Background(), f.person, f.noteID, service.WatchOptions{After: from, MaxCatchUp: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(far); n == 0 || far[n-1].Kind != service.LiveResync || far[n-1].Reason != service.ResyncFar {
			t.Fatalf("a resume past MaxCatchUp = %s; want a resync at the end", describe(far))
		}

		// A month later every event but the newest is pruned: a resume from
		// before resyncs, or is refused cursor_expired when strict.
		if _, err := f.svc.Store.Prune(context.Background(), time.Now().Add(31*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		from, _ = service.ResumeAfter(cursors[0])
		fresh := service.New(f.svc.Store) // a node whose feed does not reach back
		s3 := fresh.Subscribe()
		defer s3.Close()
		got, err := s3.WatchNote(context.Background(), f.person, f.noteID, service.WatchOptions{After: from})
		if err != nil || len(got) != 1 || got[0].Kind != service.LiveResync || got[0].Reason != service.ResyncExpired {
			t.Fatalf("a resume from a pruned cursor = %s, %v; want one resync", describe(got), err)
		}
		s4 := fresh.Subscribe()
		defer s4.Close()
		_, err = s4.WatchNote(context.Background(), f.person, f.noteID, service.WatchOptions{After: from, OneNote: true})
		wantProblem(t, err, service.CursorExpired, "cursor")
		if topics := s4.Topics(); len(topics) != 0 {
			t.Fatalf("a refused subscription still follows %v", topics)
		}
	})
}

// A subscriber that does not take its queue loses what does not fit, and
// then is told to resync; it goes on from there.
func TestLiveOverflowResyncs(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	f := newFixture(t, s)
	slow, _ := f.watch(t, f.person, f.noteID, service.WatchOptions{})
	quick, _ := f.watch(t, f.person, f.noteID, service.WatchOptions{})
	v0 := f.version(t)
	n := service.LiveQueue + 20
	last := v0 + int64(n)
	kept := make(chan []int64, 1)
	go func() { kept <- versions(takeUntil(t, quick, upTo(last))) }()
	v := v0
	for range n {
		v, _ = f.retitle(t, f.noteID, v)
	}
	// The subscriber that keeps up gets all of them.
	if vs := <-kept; !slices.Equal(vs, span(v0, v)) {
		t.Fatalf("the quick subscriber got %d writes, want %d", len(vs), n)
	}
	got := slow.Take()
	vs := versions(got)
	if len(vs) != service.LiveQueue || !slices.Equal(vs, span(v0, v0+int64(service.LiveQueue))) {
		t.Fatalf("the slow subscriber got %d writes (%v…); want the first %d", len(vs), vs[:min(3, len(vs))], service.LiveQueue)
	}
	if last := got[len(got)-1]; last.Kind != service.LiveResync || last.Topic != service.NoteTopic(f.noteID) || last.Reason != service.ResyncBehind {
		t.Fatalf("the slow subscriber's last item = %s; want a resync", describe(got[len(got)-1:]))
	}
	goesOn(t, f, slow, v)
}

// goesOn writes the Note once more (at version v) and checks that sub gets
// that write, and only it.
func goesOn(t *testing.T, f *fixture, sub *service.Subscriber, v int64) {
	t.Helper()
	v, _ = f.retitle(t, f.noteID, v)
	if vs := versions(takeUntil(t, sub, upTo(v))); !slices.Equal(vs, []int64{v}) {
		t.Fatalf("after the resync the subscriber got %v; want [%d]", vs, v)
	}
}

// Deleting a Note sends its deletion, then ends the topic; a token whose
// Note is switched off connected access no longer reaches it.
func TestLiveGone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.read)
		tok, _ := f.watch(t, agent, f.noteID, service.WatchOptions{})
		if err := tok.NoteReachable(ctx, agent, f.noteID); err != nil {
			t.Fatalf("the token reaches its Note: %v", err)
		}
		v := f.version(t)
		off := false
		r, err := f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: f.noteID, Approved: &off, Guard: service.Guard{ExpectedVersion: v}})
		if err != nil {
			t.Fatal(err)
		}
		takeUntil(t, tok, upTo(r.Version))
		wantProblem(t, tok.NoteReachable(ctx, agent, f.noteID), problem.NotFound, "note_id")
		if err := tok.NoteReachable(ctx, f.person, f.noteID); err != nil {
			t.Fatalf("the person still reaches the Note: %v", err)
		}

		person, _ := f.watch(t, f.person, f.noteID, service.WatchOptions{})
		d, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: r.Version}})
		if err != nil {
			t.Fatal(err)
		}
		got := takeUntil(t, person, func(items []service.LiveItem) bool {
			return len(items) > 0 && items[len(items)-1].Kind == service.LiveGone
		})
		if vs := versions(got); !slices.Equal(vs, []int64{d.Version}) || got[0].Event.Kind != service.KindNoteDeleted || !got[len(got)-1].Deleted {
			t.Fatalf("after the delete: %s; want the deletion, then gone", describe(got))
		}
		if topics := person.Topics(); len(topics) != 0 {
			t.Fatalf("after gone the subscriber follows %v", topics)
		}
		wantProblem(t, tok.NoteReachable(ctx, f.person, f.noteID), problem.NotFound, "note_id")
		// A new subscription to the deleted Note is not found.
		sub := f.svc.Subscribe()
		defer sub.Close()
		_, err = sub.WatchNote(ctx, f.person, f.noteID, service.WatchOptions{})
		wantProblem(t, err, problem.NotFound, "note_id")
	})
}

// countingStore counts the feed reads of a store, and can make one panic.
type countingStore struct {
	store.Store
	events atomic.Int64
	panics atomic.Int64 // reads still to panic
}

func (c *countingStore) Events(ctx context.Context, ws, typ, id string, after int64, limit int) ([]store.Event, error) {
	c.events.Add(1)
	if c.panics.Add(-1) >= 0 {
		panic("a feed read failed badly")
	}
	return c.Store.Events(ctx, ws, typ, id, after, limit)
}

// One write is one read of the feed on this node, however many subscribers
// follow the Note.
func TestLiveOneReadPerWrite(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	cs := &countingStore{Store: s}
	f := newFixture(t, cs)
	const subs, writes = 200, 10
	var all []*service.Subscriber
	for range subs {
		sub, _ := f.watch(t, f.person, f.noteID, service.WatchOptions{})
		all = append(all, sub)
	}
	before := cs.events.Load()
	v := f.version(t)
	for range writes {
		v, _ = f.retitle(t, f.noteID, v)
		for _, sub := range all {
			takeUntil(t, sub, upTo(v))
		}
	}
	// A notification that comes while the feed is read makes one read more.
	if reads := cs.events.Load() - before; reads > 2*writes {
		t.Fatalf("%d writes followed by %d subscribers took %d feed reads; want at most %d", writes, subs, reads, 2*writes)
	}
	if notes, _ := f.svc.LiveFeeds(); notes != 1 {
		t.Fatalf("%d Note feeds for one Note", notes)
	}
	for _, sub := range all {
		sub.Close()
	}
	if notes, _ := f.svc.LiveFeeds(); notes != 0 {
		t.Fatalf("%d Note feeds left after every subscriber left", notes)
	}
}

// A panic while a feed is read is recovered: the process goes on, the
// subscribers are told to resync, and later writes come through.
func TestLivePanicRecovered(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	cs := &countingStore{Store: s}
	f := newFixture(t, cs)
	sub, _ := f.watch(t, f.person, f.noteID, service.WatchOptions{})
	cs.panics.Store(1)
	v, _ := f.retitle(t, f.noteID, f.version(t))
	got := takeUntil(t, sub, func(items []service.LiveItem) bool { return len(items) > 0 })
	if got[0].Kind != service.LiveResync || got[0].Reason != service.ResyncFailed {
		t.Fatalf("after a panic: %s; want a resync", describe(got))
	}
	goesOn(t, f, sub, v)
}

// A person's count: once at once, then when it changes, shared by their
// subscribers.
func TestLiveProposals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var subs []*service.Subscriber
		for range 3 {
			sub := f.svc.Subscribe()
			t.Cleanup(sub.Close)
			first, err := sub.WatchProposals(ctx, f.person)
			if err != nil || len(first) != 1 || first[0].Kind != service.LiveCount || first[0].Pending != 0 {
				t.Fatalf("the first count = %s, %v", describe(first), err)
			}
			subs = append(subs, sub)
		}
		if _, counts := f.svc.LiveFeeds(); counts != 1 {
			t.Fatalf("%d count feeds for one person", counts)
		}
		files := map[string]string{"src/App.tsx": "export default function App() {\n  return <main>Live</main>;\n}\n"}
		if _, err := f.svc.ProposeSnippet(ctx, service.Agent(f.write), service.ProposeSnippetArgs{RoomID: f.roomID, Name: "Live", Files: files, IdempotencyKey: "live-proposal-1"}); err != nil {
			t.Fatal(err)
		}
		for _, sub := range subs {
			got := takeUntil(t, sub, func(items []service.LiveItem) bool { return len(items) > 0 })
			if got[len(got)-1].Kind != service.LiveCount || got[len(got)-1].Pending != 1 {
				t.Fatalf("after a proposal: %s; want count 1", describe(got))
			}
		}
		agent := f.svc.Subscribe()
		defer agent.Close()
		_, err := agent.WatchProposals(ctx, service.Agent(f.read))
		wantProblem(t, err, service.PersonOnly, "topic")
	})
}

// Two nodes over one database: a write on either reaches the subscribers
// of both.
func TestLiveReachesEveryNode(t *testing.T) {
	t.Parallel()
	both := func(t *testing.T, a, b store.Store) {
		fa := newFixture(t, a)
		nb := service.New(b)
		subA, _ := fa.watch(t, fa.person, fa.noteID, service.WatchOptions{})
		sb := nb.Subscribe()
		t.Cleanup(sb.Close)
		if _, err := sb.WatchNote(context.Background(), fa.person, fa.noteID, service.WatchOptions{}); err != nil {
			t.Fatal(err)
		}
		v0 := fa.version(t)
		v, _ := fa.retitle(t, fa.noteID, v0) // on node a
		title := "From node b"
		r, err := nb.UpdateNote(context.Background(), fa.person, service.UpdateNoteArgs{NoteID: fa.noteID, Title: &title, Guard: service.Guard{ExpectedVersion: v}})
		if err != nil {
			t.Fatal(err)
		}
		for name, sub := range map[string]*service.Subscriber{"a": subA, "b": sb} {
			if vs := versions(takeUntil(t, sub, upTo(r.Version))); !slices.Equal(vs, span(v0, r.Version)) {
				t.Errorf("node %s's subscriber got %v; want %v", name, vs, span(v0, r.Version))
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		both(t, openSQLiteIn(t, dir), openSQLiteIn(t, dir))
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		var nodes []store.Store
		for range 2 {
			s, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			nodes = append(nodes, s)
		}
		both(t, nodes[0], nodes[1])
	})
}

// On PostgreSQL cursors are taken in insert order and committed in commit
// order: a write to one Note that commits after a newer write to another
// was delivered still reaches its subscribers (each feed reads after its
// own cursor, never after another Note's).
func TestLiveLateCommit(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := newFixture(t, s)
	ctx := context.Background()
	late := f.noteID
	early, err := f.svc.CreateNote(ctx, f.person, service.CreateNoteArgs{Title: "Early", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	sub := f.svc.Subscribe()
	t.Cleanup(sub.Close)
	for _, id := range []string{late, early.NoteID} {
		if _, err := sub.WatchNote(ctx, f.person, id, service.WatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slow, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	tx, err := slow.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// A write that has taken its cursor and not committed yet.
	var c int64
	if err := tx.QueryRow(ctx, `INSERT INTO events (workspace_id, resource_type, resource_id, kind, version, at_us) VALUES ($1, 'note', $2, 'edited', 2, 0) RETURNING cursor`, f.ws, late).Scan(&c); err != nil {
		t.Fatal(err)
	}
	v, _ := f.retitle(t, early.NoteID, early.Version)
	got := takeUntil(t, sub, upTo(v))
	if got[len(got)-1].Event.Seq <= c || got[len(got)-1].Topic != service.NoteTopic(early.NoteID) {
		t.Fatalf("the newer write = %s (cursor %d); want it after cursor %d", describe(got), got[len(got)-1].Event.Seq, c)
	}
	time.Sleep(2 * postgres.FollowInterval) // every feed has read past the open cursor
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got = takeUntil(t, sub, func(items []service.LiveItem) bool { return len(items) > 0 })
	if it := got[0]; it.Kind != service.LiveWrite || it.Topic != service.NoteTopic(late) || it.Event.Seq != c || it.Event.Version != 2 {
		t.Fatalf("after the late commit: %s; want the late Note's write of cursor %d", describe(got), c)
	}
}
