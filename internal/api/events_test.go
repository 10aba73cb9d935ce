package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"foundry/internal/api"
	"foundry/internal/auth"
)

// sse is one event read from a stream: its id, its event name and its data.
type sse struct {
	id, event, data string
}

// stream is an open GET /api/events, read line by line on its own goroutine.
type stream struct {
	res    *http.Response
	events chan sse
	done   chan struct{}
	cancel context.CancelFunc
}

// streamWait bounds every wait for the stream in these tests.
const streamWait = 20 * time.Second

// open connects to the Note's stream as the owner's session (or the bearer
// token), resuming after last ("": none).
func (e *notesEnv) open(t *testing.T, id, bearer, last string) *stream {
	t.Helper()
	return e.openStream(t, "/api/events?note_id="+id, bearer, last)
}

// openStream connects to the event stream at path (with its query) as
// open does.
func (e *notesEnv) openStream(t *testing.T, path, bearer, last string) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*streamWait)
	r, err := http.NewRequestWithContext(ctx, "GET", e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		r.Header.Set("Authorization", "Bearer "+bearer)
	} else {
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: e.owner.secret})
	}
	if last != "" {
		r.Header.Set("Last-Event-ID", last)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{res: res, events: make(chan sse, 64), done: make(chan struct{}), cancel: cancel}
	t.Cleanup(s.close)
	if res.StatusCode != http.StatusOK {
		return s
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the stream's Content-Type is %q", ct)
	}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(res.Body)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.data != "" || cur.event != "" {
					s.events <- cur
				}
				cur = sse{}
			case strings.HasPrefix(line, "id: "):
				cur.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				cur.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

func (s *stream) close() {
	s.cancel()
	s.res.Body.Close()
}

// next is the next event of the stream, failing after streamWait.
func (s *stream) next(t *testing.T) (sse, api.StreamEvent) {
	t.Helper()
	select {
	case ev := <-s.events:
		return streamDecode(t, ev)
	case <-s.done:
		// An event read before the stream closed comes first.
		select {
		case ev := <-s.events:
			return streamDecode(t, ev)
		default:
		}
		t.Fatal("the stream ended before the next event")
	case <-time.After(streamWait):
		t.Fatal("no event came")
	}
	return sse{}, api.StreamEvent{}
}

// streamDecode is ev with its data decoded, if it is a write.
func streamDecode(t *testing.T, ev sse) (sse, api.StreamEvent) {
	t.Helper()
	var data api.StreamEvent
	if ev.event == "write" {
		if err := json.Unmarshal([]byte(ev.data), &data); err != nil {
			t.Fatalf("event data %q: %v", ev.data, err)
		}
	}
	return ev, data
}

// ends waits for the stream to send its end event and close.
func (s *stream) ends(t *testing.T, reason string) {
	t.Helper()
	deadline := time.After(streamWait)
	for {
		select {
		case ev := <-s.events:
			if ev.event == "end" && strings.Contains(ev.data, reason) {
				select {
				case <-s.done:
					return
				case <-deadline:
					t.Fatal("the stream sent its end but stayed open")
				}
			}
		case <-s.done:
			// Events read before the close may still be waiting.
			for {
				select {
				case ev := <-s.events:
					if ev.event == "end" && strings.Contains(ev.data, reason) {
						return
					}
					continue
				default:
				}
				break
			}
			t.Fatalf("the stream closed without an end event saying %q", reason)
		case <-deadline:
			t.Fatalf("the stream did not end (%s)", reason)
		}
	}
}

func TestEventStream(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, 100*time.Millisecond, 100*time.Millisecond)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Live", true)
		md := e.markdownTab(t, id)
		s := e.open(t, id, "", "")
		if s.res.StatusCode != http.StatusOK {
			t.Fatalf("open the stream: %d", s.res.StatusCode)
		}
		// An agent writes over MCP: the person's stream shows it.
		cs := e.Client(t, e.WriteToken(t), "")
		v2 := agentText(t, cs, id, md, 1, "agent-live-0001", "hello")
		ev, data := s.next(t)
		if ev.event != "write" || ev.id != data.Cursor || data.Version != v2 || data.Kind != "tab_edited" ||
			!slices.Equal(data.Changed, []string{md}) || data.Actor.Kind != "token" {
			t.Fatalf("first event = %+v %+v; want the agent's write of version %d", ev, data, v2)
		}
		// The person's own write follows, named as the person.
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "sheet"}, header: ifMatch(v2)}).want(t, "add tab", http.StatusCreated, "")
		_, d3 := s.next(t)
		if d3.Version != v2+1 || d3.Kind != "tab_created" || d3.Actor.Kind != "person" || d3.Actor.ID != e.Owner.User.ID {
			t.Fatalf("second event = %+v", d3)
		}
		s.close()

		// Writes made while disconnected come first on a resume.
		v4 := agentText(t, cs, id, md, v2+1, "agent-live-0002", "while away")
		r := e.open(t, id, "", data.Cursor)
		_, got := r.next(t)
		if got.Version != v2+1 {
			t.Fatalf("resumed after version %d, the first event is version %d", v2, got.Version)
		}
		if _, got = r.next(t); got.Version != v4 {
			t.Fatalf("the second resumed event is version %d, want %d", got.Version, v4)
		}
		r.close()

		// A bearer read token follows too; revoking it ends its stream.
		tok := e.Token(t, []string{id}, auth.ScopeRead)
		ts := e.open(t, id, tok, "")
		if ts.res.StatusCode != http.StatusOK {
			t.Fatalf("a read token's stream: %d", ts.res.StatusCode)
		}
		v5 := agentText(t, cs, id, md, v4, "agent-live-0003", "seen by the token")
		if _, d := ts.next(t); d.Version != v5 {
			t.Fatalf("the token's stream saw version %d, want %d", d.Version, v5)
		}
		revoke(t, e, tok)
		ts.ends(t, "no longer valid")

		// Signing out ends the session's stream.
		ps := e.open(t, id, "", "")
		if err := e.Server.Store.DeleteSession(context.Background(), auth.HashToken(e.owner.secret)); err != nil {
			t.Fatal(err)
		}
		ps.ends(t, "signed out")
	})
}

func TestEventStreamRefusals(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, 100*time.Millisecond)
	t.Cleanup(restore)
	e := startNotes(t, nil)
	id, _ := e.create(t, "Live", true)
	hidden, _ := e.create(t, "Hidden", true)
	e.do(t, req{method: "GET", path: "/api/events"}).want(t, "no note_id", http.StatusBadRequest, "invalid_argument")
	e.do(t, req{method: "GET", path: "/api/events?note_id=" + id + "&x=1"}).want(t, "an unknown parameter", http.StatusBadRequest, "invalid_argument")
	e.do(t, req{method: "GET", path: "/api/events?note_id=note_nope"}).want(t, "an unknown Note", http.StatusNotFound, "not_found")
	r := e.do(t, req{method: "GET", path: "/api/events?note_id=" + id, header: map[string]string{"Last-Event-ID": "garbage"}})
	if r.status != http.StatusBadRequest || r.body["field"] != "Last-Event-ID" {
		t.Fatalf("a bad Last-Event-ID: %d %s", r.status, r.raw)
	}
	tok := e.Token(t, []string{id}, auth.ScopeRead)
	e.do(t, req{method: "GET", path: "/api/events?note_id=" + hidden, bearer: tok}).want(t, "a Note outside the grant", http.StatusNotFound, "not_found")
	e.do(t, req{method: "GET", path: "/api/events?note_id=" + id, anon: true}).want(t, "nobody signed in", http.StatusUnauthorized, "unauthenticated")

	// Streams are capped per person, with the long polls' gate.
	e.Server.Service.SetWaitLimits(1, 10)
	first := e.open(t, id, "", "")
	if first.res.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %d", first.res.StatusCode)
	}
	second := e.open(t, id, "", "")
	if second.res.StatusCode != http.StatusTooManyRequests || second.res.Header.Get("Retry-After") == "" {
		t.Fatalf("a second stream over the cap: %d (Retry-After %q); want 429", second.res.StatusCode, second.res.Header.Get("Retry-After"))
	}
	// Deleting the Note ends the stream.
	e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(1)}).want(t, "delete", http.StatusNoContent, "")
	first.ends(t, "was deleted")
	// Its place is free again.
	third := e.open(t, hidden, "", "")
	if third.res.StatusCode != http.StatusOK {
		t.Fatalf("a stream after the first ended: %d", third.res.StatusCode)
	}
}

func TestEventStreamLifetime(t *testing.T) {
	restore := api.SetStreamTimings(300*time.Millisecond, 50*time.Millisecond, time.Minute)
	t.Cleanup(restore)
	e := startNotes(t, nil)
	id, _ := e.create(t, "Short", true)
	s := e.open(t, id, "", "")
	s.ends(t, "lifetime")
}

// A Note deleted while followed: the stream sends the deletion, then ends
// at once (not at the next recheck, set here to a minute), and a
// reconnect is refused with not_found.
func TestEventStreamNoteDeleted(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Doomed", true)
		md := e.markdownTab(t, id)
		s := e.open(t, id, "", "")
		cs := e.Client(t, e.WriteToken(t), "")
		v := agentText(t, cs, id, md, 1, "agent-doom-0001", "last words")
		ev, _ := s.next(t)
		e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(v)}).want(t, "delete", http.StatusNoContent, "")
		_, d := s.next(t)
		if d.Kind != "note_deleted" || d.Version != v+1 || d.Actor.Kind != "person" {
			t.Fatalf("the event after the delete = %+v; want note_deleted at version %d by the person", d, v+1)
		}
		s.ends(t, "was deleted")
		r := e.do(t, req{method: "GET", path: "/api/events?note_id=" + id, header: map[string]string{"Last-Event-ID": ev.id}})
		r.want(t, "reconnect to a deleted Note", http.StatusNotFound, "not_found")
	})
}

// A resume after more writes than one read of the feed sends (100) gets
// every one of them, once each, in order, then what comes next.
func TestEventStreamResumeAcrossPages(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Busy", true)
		md := e.markdownTab(t, id)
		cs := e.Client(t, e.WriteToken(t), "")
		s := e.open(t, id, "", "")
		v := agentText(t, cs, id, md, 1, "agent-page-0000", "start")
		first, d := s.next(t)
		if d.Version != v {
			t.Fatalf("first event version %d, want %d", d.Version, v)
		}
		s.close()
		const n = 130
		for i := 1; i <= n; i++ { // bounded: n writes while away
			v = agentText(t, cs, id, md, v, fmt.Sprintf("agent-page-%04d", i), fmt.Sprintf("write %d", i))
		}
		r := e.open(t, id, "", first.id)
		want := d.Version
		seen := map[string]bool{first.id: true}
		for i := 0; i < n; i++ {
			ev, got := r.next(t)
			want++
			if got.Version != want || seen[ev.id] || ev.id != got.Cursor {
				t.Fatalf("resumed event %d: id %q version %d; want version %d, a new id", i, ev.id, got.Version, want)
			}
			seen[ev.id] = true
		}
		v = agentText(t, cs, id, md, v, "agent-page-last", "after the resume")
		if _, got := r.next(t); got.Version != v {
			t.Fatalf("the write after the resume came as version %d, want %d", got.Version, v)
		}
	})
}

// A resume from an event the feed no longer keeps (pruned after the
// retention) is refused 410 cursor_expired naming Last-Event-ID, never a
// stream with a hole; a resume from the newest event still streams.
func TestEventStreamCursorExpired(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		id, _ := e.create(t, "Pruned", true)
		md := e.markdownTab(t, id)
		cs := e.Client(t, e.WriteToken(t), "")
		s := e.open(t, id, "", "")
		v := int64(1)
		var seen []sse
		for i := range 3 {
			v = agentText(t, cs, id, md, v, fmt.Sprintf("agent-prune-%04d", i), fmt.Sprintf("write %d", i))
			ev, _ := s.next(t)
			seen = append(seen, ev)
		}
		s.close()
		// A month and a day later every event of the Note but its newest is gone.
		if _, err := e.Server.Store.Prune(context.Background(), time.Now().Add(31*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		e.owner = signIn(t, e.Server.Store, e.Owner.User) // the prune took the session, expired by then
		r := e.do(t, req{method: "GET", path: "/api/events?note_id=" + id, header: map[string]string{"Last-Event-ID": seen[0].id}})
		r.want(t, "a resume from a pruned event", http.StatusGone, "cursor_expired")
		if d, _ := r.body["detail"].(string); r.body["field"] != "Last-Event-ID" || !strings.Contains(d, "reconnect without Last-Event-ID") {
			t.Fatalf("cursor_expired = %s; want it to name Last-Event-ID and say to reconnect without it", r.raw)
		}
		live := e.open(t, id, "", seen[2].id)
		if live.res.StatusCode != http.StatusOK {
			t.Fatalf("a resume from the newest event: %d", live.res.StatusCode)
		}
		v = agentText(t, cs, id, md, v, "agent-prune-last", "after the prune")
		if _, d := live.next(t); d.Version != v {
			t.Fatalf("after the prune the stream sent version %d, want %d", d.Version, v)
		}
	})
}
