package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/service"
)

// raw is the next event of the stream, whatever its kind.
func (s *stream) raw(t *testing.T) sse {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		select {
		case ev := <-s.events:
			return ev
		default:
		}
		t.Fatal("the stream ended before the next event")
	case <-time.After(streamWait):
		t.Fatal("no event came")
	}
	return sse{}
}

// liveData decodes an event's data into v.
func liveData[T any](t *testing.T, ev sse, event string) T {
	t.Helper()
	var v T
	if ev.event != event {
		t.Fatalf("got event %q (%s); want %q", ev.event, ev.data, event)
	}
	if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
		t.Fatalf("event data %q: %v", ev.data, err)
	}
	return v
}

// liveQuery is GET /api/live's path for topics.
func liveQuery(topics ...string) string {
	q := url.Values{"topic": topics}
	return "/api/live?" + q.Encode()
}

// liveWrite waits for the next write of the stream and checks its topic
// and version.
func liveWrite(t *testing.T, s *stream, noteID string, version int64) (sse, api.LiveWrite) {
	t.Helper()
	ev := s.raw(t)
	w := liveData[api.LiveWrite](t, ev, "write")
	if w.Topic != "note:"+noteID || w.NoteID != noteID || w.Version != version || ev.id != w.Cursor {
		t.Fatalf("write = id %q %+v; want note %s at version %d with its cursor as id", ev.id, w, noteID, version)
	}
	return ev, w
}

func TestLiveStream(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		a, _ := e.create(t, "Live A", true)
		b, _ := e.create(t, "Live B", true)
		mdA, mdB := e.markdownTab(t, a), e.markdownTab(t, b)
		cs := e.Client(t, e.WriteToken(t), "")

		s := e.openStream(t, liveQuery("note:"+a, "note:"+b, "proposals", "note:"+a), "", "")
		if s.res.StatusCode != http.StatusOK {
			t.Fatalf("open the live stream: %d", s.res.StatusCode)
		}
		ready := liveData[api.LiveReady](t, s.raw(t), "ready")
		if !slices.Equal(ready.Topics, []string{"note:" + a, "note:" + b, "proposals"}) || ready.Cursor == "" {
			t.Fatalf("ready = %+v; want the three topics, each once, and a cursor", ready)
		}
		if p := liveData[api.PendingCount](t, s.raw(t), "proposals"); p.Pending != 0 {
			t.Fatalf("the first count is %d, want 0", p.Pending)
		}

		// An agent's write to A and the person's to B come on the one stream.
		va := agentText(t, cs, a, mdA, 1, "live-a-0001", "alpha")
		firstA, w := liveWrite(t, s, a, va)
		if w.Kind != "tab_edited" || !slices.Equal(w.Changed, []string{mdA}) || w.Actor.Kind != "token" {
			t.Fatalf("A's write = %+v; want the agent's edit of the markdown tab", w)
		}
		e.do(t, req{method: "PUT", path: "/api/notes/" + b + "/tabs/" + mdB + "/text", body: map[string]any{"text": "beta"}, header: ifMatch(1)}).want(t, "save B", http.StatusOK, "")
		if _, w := liveWrite(t, s, b, 2); w.Actor.Kind != "person" || w.Actor.ID != e.Owner.User.ID {
			t.Fatalf("B's write = %+v; want the person", w)
		}
		// A proposal changes the count.
		x.propose(t, x.RoomID, "Live count", rmFiles("1"))
		if p := liveData[api.PendingCount](t, s.raw(t), "proposals"); p.Pending != 1 {
			t.Fatalf("the count after a proposal is %d, want 1", p.Pending)
		}
		// Deleting B ends its topic; A goes on.
		e.do(t, req{method: "DELETE", path: "/api/notes/" + b, header: ifMatch(2)}).want(t, "delete B", http.StatusNoContent, "")
		if _, w := liveWrite(t, s, b, 3); w.Kind != "note_deleted" {
			t.Fatalf("B's last write = %+v; want note_deleted", w)
		}
		if g := liveData[api.LiveGone](t, s.raw(t), "gone"); g.Topic != "note:"+b || !g.Deleted || !strings.Contains(g.Reason, "deleted") {
			t.Fatalf("gone = %+v; want B's topic, deleted", g)
		}
		va = agentText(t, cs, a, mdA, va, "live-a-0002", "alpha 2")
		last, _ := liveWrite(t, s, a, va)
		s.close()

		// Writes made while away come first on a resume, by Last-Event-ID or by after.
		v3 := agentText(t, cs, a, mdA, va, "live-a-0003", "away 1")
		v4 := agentText(t, cs, a, mdA, v3, "live-a-0004", "away 2")
		for _, resume := range []struct{ path, header string }{
			{liveQuery("note:"+a) + "&after=" + last.id, ""},
			{liveQuery("note:" + a), last.id},
		} {
			r := e.openStream(t, resume.path, "", resume.header)
			if ready := liveData[api.LiveReady](t, r.raw(t), "ready"); ready.Cursor == "" {
				t.Fatalf("ready of a resume = %+v", ready)
			}
			liveWrite(t, r, a, v3)
			liveWrite(t, r, a, v4)
			r.close()
		}
		// Last-Event-ID wins over after.
		r := e.openStream(t, liveQuery("note:"+a)+"&after="+firstA.id, "", last.id)
		liveData[api.LiveReady](t, r.raw(t), "ready")
		liveWrite(t, r, a, v3)
		r.close()
	})
}

func TestLiveRefusals(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	e := startNotes(t, nil)
	id, _ := e.create(t, "Live", true)
	hidden, _ := e.create(t, "Hidden", true)
	tok := e.Token(t, []string{id}, auth.ScopeRead)
	for _, c := range []struct {
		what       string
		q          req
		status     int
		code, fiel string
	}{
		{"no topic", req{method: "GET", path: "/api/live"}, 422, service.UnsupportedTopic, "topic"},
		{"an unknown kind of topic", req{method: "GET", path: liveQuery("room:x")}, 422, service.UnsupportedTopic, "topic"},
		{"a note topic without an ID", req{method: "GET", path: liveQuery("note:")}, 422, service.UnsupportedTopic, "topic"},
		{"a topic with a control character", req{method: "GET", path: liveQuery("note:a\x01b")}, 400, "invalid_argument", "topic"},
		{"too many topics", req{method: "GET", path: liveQuery(manyTopics(51)...)}, 422, service.UnsupportedTopic, "topic"},
		{"a token's proposals", req{method: "GET", path: liveQuery("proposals"), bearer: tok}, 403, service.PersonOnly, "topic"},
		{"a bad after", req{method: "GET", path: liveQuery("note:"+id) + "&after=nope"}, 400, "invalid_argument", "after"},
		{"a bad Last-Event-ID", req{method: "GET", path: liveQuery("note:" + id), header: map[string]string{"Last-Event-ID": "nope"}}, 400, "invalid_argument", "Last-Event-ID"},
		{"after twice", req{method: "GET", path: liveQuery("note:"+id) + "&after=a&after=b"}, 400, "invalid_argument", "after"},
		{"a stray parameter", req{method: "GET", path: liveQuery("note:"+id) + "&note_id=" + id}, 400, "invalid_argument", "note_id"},
		{"nobody signed in", req{method: "GET", path: liveQuery("note:" + id), anon: true}, 401, "unauthenticated", ""},
	} {
		r := e.do(t, c.q)
		if r.status != c.status || r.body["code"] != c.code || (c.fiel != "" && r.body["field"] != c.fiel) {
			t.Errorf("%s: %d %s; want %d %s naming %q", c.what, r.status, r.raw, c.status, c.code, c.fiel)
		}
	}
	// 50 distinct topics are taken (most gone at once: no such Note).
	many := e.openStream(t, liveQuery(manyTopics(50)...), "", "")
	if many.res.StatusCode != http.StatusOK {
		t.Fatalf("50 topics: %d", many.res.StatusCode)
	}
	many.close()

	// A token's stream: a Note outside its grant, or none at all, is gone
	// at once; its granted Note streams.
	s := e.openStream(t, liveQuery("note:"+hidden, "note:"+id, "note:note_nope"), tok, "")
	if s.res.StatusCode != http.StatusOK {
		t.Fatalf("a token's live stream: %d", s.res.StatusCode)
	}
	liveData[api.LiveReady](t, s.raw(t), "ready")
	gone := map[string]bool{}
	for range 2 {
		g := liveData[api.LiveGone](t, s.raw(t), "gone")
		if g.Deleted || !strings.Contains(g.Reason, "not found") {
			t.Fatalf("gone = %+v; want not found", g)
		}
		gone[g.Topic] = true
	}
	if !gone["note:"+hidden] || !gone["note:note_nope"] {
		t.Fatalf("gone topics %v; want the hidden Note's and the unknown one's", gone)
	}
	cs := e.Client(t, e.WriteToken(t), "")
	md := e.markdownTab(t, id)
	v := agentText(t, cs, id, md, 1, "live-tok-0001", "seen")
	liveWrite(t, s, id, v)
}

func manyTopics(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("note:note_%03d", i)
	}
	return out
}
