package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
		{"a topic with a control character", req{method: "GET", path: liveQuery("note:a\x01b")}, 422, service.UnsupportedTopic, "topic"},
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

// Each recheck takes the caller and every Note's reach again: a Note
// switched off connected access is gone for a token, whose other Note
// goes on; revoking the token ends the stream; signing out ends a
// person's.
func TestLiveRecheck(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, 50*time.Millisecond)
	t.Cleanup(restore)
	stores(t, func(t *testing.T, e *notesEnv) {
		a, _ := e.create(t, "Stays", true)
		b, _ := e.create(t, "Goes private", true)
		tok := e.Token(t, nil, auth.ScopeRead)
		s := e.openStream(t, liveQuery("note:"+a, "note:"+b), tok, "")
		liveData[api.LiveReady](t, s.raw(t), "ready")
		e.do(t, req{method: "PATCH", path: "/api/notes/" + b, body: map[string]any{"approved": false}, header: ifMatch(1)}).want(t, "switch off", http.StatusOK, "")
		// The switch's own write may come first, or the recheck may see it
		// before the feed does.
		ev := s.raw(t)
		if ev.event == "write" {
			liveData[api.LiveWrite](t, ev, "write")
			ev = s.raw(t)
		}
		if g := liveData[api.LiveGone](t, ev, "gone"); g.Topic != "note:"+b || g.Deleted {
			t.Fatalf("gone = %+v; want the private Note's topic", g)
		}
		cs := e.Client(t, e.WriteToken(t), "")
		v := agentText(t, cs, a, e.markdownTab(t, a), 1, "live-recheck-1", "still here")
		liveWrite(t, s, a, v)
		revoke(t, e, tok)
		s.ends(t, "no longer valid")

		p := e.openStream(t, liveQuery("note:"+a, "proposals"), "", "")
		liveData[api.LiveReady](t, p.raw(t), "ready")
		if err := e.Server.Store.DeleteSession(context.Background(), auth.HashToken(e.owner.secret)); err != nil {
			t.Fatal(err)
		}
		p.ends(t, "signed out")
	})
}

// revoke revokes the personal access token tok.
func revoke(t *testing.T, e *notesEnv, tok string) {
	t.Helper()
	toks, err := e.Server.Store.Tokens(context.Background(), e.Owner.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range toks {
		if x.RevokedAt == nil && auth.HashToken(tok) == x.Hash {
			if err := e.Server.Store.RevokeToken(context.Background(), e.Owner.Workspace.ID, x.ID); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no such token")
}

func TestLiveHeartbeatAndLifetime(t *testing.T) {
	restore := api.SetStreamTimings(600*time.Millisecond, 50*time.Millisecond, time.Minute)
	t.Cleanup(restore)
	e := startNotes(t, nil)
	id, _ := e.create(t, "Short", true)
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, "GET", e.URL+liveQuery("note:"+id), nil)
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: e.owner.secret})
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	all, _ := io.ReadAll(res.Body)
	if !strings.HasPrefix(string(all), "retry: 3000\n\nevent: ready\n") || !strings.Contains(string(all), "\n: heartbeat\n") ||
		!strings.HasSuffix(string(all), "event: end\ndata: {\"reason\":\"the stream's lifetime is over: reconnect (Last-Event-ID resumes it)\"}\n\n") {
		t.Fatalf("the stream said:\n%s", all)
	}
}

// OpenStreams counts every open event stream, by user and by session, and
// forgets each once it closes.
func TestLiveOpenStreams(t *testing.T) {
	restore := api.SetStreamTimings(time.Minute, time.Minute, time.Minute)
	t.Cleanup(restore)
	e := startNotes(t, nil)
	id, _ := e.create(t, "Counted", true)
	session := auth.HashToken(e.owner.secret)
	tok := e.Token(t, []string{id}, auth.ScopeRead)
	streams := []*stream{
		e.openStream(t, liveQuery("note:"+id, "proposals"), "", ""),
		e.openStream(t, liveQuery("note:"+id), "", ""),
		e.open(t, id, "", ""),
		e.openStream(t, "/api/proposals/events", "", ""),
		e.openStream(t, liveQuery("note:"+id), tok, ""),
	}
	for _, s := range streams {
		if s.res.StatusCode != http.StatusOK {
			t.Fatalf("a stream answered %d", s.res.StatusCode)
		}
	}
	// Each answered 200 once it was counted.
	got := e.Server.Service.OpenStreams()
	if got.Total != 5 || got.BySession[session] != 4 || got.ByUser[e.Owner.User.ID] != 5 || len(got.BySession) != 1 {
		t.Fatalf("OpenStreams = %+v; want 5 in all, 4 of the session, 5 of the owner", got)
	}
	for _, s := range streams {
		s.close()
	}
	deadline := time.Now().Add(streamWait)
	for got = e.Server.Service.OpenStreams(); got.Total != 0; got = e.Server.Service.OpenStreams() {
		if time.Now().After(deadline) {
			t.Fatalf("OpenStreams after every stream closed = %+v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got.BySession) != 0 || len(got.ByUser) != 0 {
		t.Fatalf("OpenStreams after every stream closed = %+v", got)
	}
}
