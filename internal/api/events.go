package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// GET /api/events?note_id=ID: a Note's event feed as server-sent events,
// one event per committed write. Each event's id is its cursor: a browser
// that reconnects sends it back as Last-Event-ID and the stream resumes
// after it. A comment line every heartbeat keeps proxies from closing an
// idle stream. The stream ends when its lifetime is over (the browser
// reconnects), when the session is signed out or the token revoked, or
// when the Note leaves the caller's reach (checked every recheck).

// Stream timings (variables so that tests can shorten them).
var (
	streamLifetime  = 10 * time.Minute
	streamHeartbeat = 15 * time.Second
	streamRecheck   = 5 * time.Second
)

// streamWriteTimeout bounds one write to the stream.
const streamWriteTimeout = 30 * time.Second

// StreamEvent is the data of one event of GET /api/events.
type StreamEvent struct {
	Cursor  string   `json:"cursor"`
	Kind    string   `json:"kind"`
	Version int64    `json:"version"`
	Changed []string `json:"changed" nullable:"false"`
	Actor   Who      `json:"actor"`
}

// EventsRequest is GET /api/events.
type EventsRequest struct {
	NoteID      *string `query:"note_id" json:"-" required:"true" description:"The Note to follow"`
	LastEventID string  `header:"Last-Event-ID" json:"-" description:"The id of the last event received, to resume after it"`
}

var eventsDoc = doc{summary: "A Note's writes as server-sent events (event: write, data: StreamEvent)", req: EventsRequest{}, resp: StreamEvent{}, media: "text/event-stream",
	description: streamDescription + " Each write event's id is its cursor, which Last-Event-ID takes to resume after it."}

// streamDescription is what every event stream of the API sends besides
// its own events.
const streamDescription = "The stream starts with `retry: 3000`, sends a comment line every 15 s as a heartbeat, and ends with `event: end` whose data is `{\"reason\": string}` (its lifetime is over, the session signed out, the token revoked, the Note deleted or out of reach); the browser then reconnects."

// eventsCatchUp bounds the writes a resume of GET /api/events replays in
// one stream: past it the stream ends, and the browser's reconnect (with
// the last id it got) reads on from there.
const eventsCatchUp = 1000

func (h *handler) events(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[EventsRequest](r, true)
	if err == nil && (in.NoteID == nil || *in.NoteID == "") {
		err = invalid("note_id", "is required: give the ID of the Note to follow (GET /api/notes lists them)")
	}
	if err == nil {
		err = checkPathID("note_id", *in.NoteID)
	}
	var resume service.Resume
	if err == nil {
		resume, err = service.ResumeAfter(in.LastEventID)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := *in.NoteID
	ctx := r.Context()
	sub := h.svc.Subscribe()
	defer sub.Close()
	first, err := sub.WatchNote(ctx, c.svc, id, service.WatchOptions{After: resume, MaxCatchUp: eventsCatchUp, OneNote: true})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release, err := h.svc.StreamGate(c.svc, sessionOf(c), "note_id", streamLifetime)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()
	h.follow(w, r, sub, first, "", streamer{
		render: func(b *bytes.Buffer, items []service.LiveItem) bool {
			for _, it := range items {
				switch it.Kind {
				case service.LiveWrite:
					b.Write(it.Event.Wire(wireEvents, encodeEvent))
				case service.LiveGone:
					sseEnd(b, it.Reason) // a deleted Note ends its stream with its last event
					return true
				case service.LiveResync:
					sseEnd(b, "the stream fell behind: reconnect (Last-Event-ID resumes it)")
					return true
				}
			}
			return false
		},
		recheck: func(b *bytes.Buffer) bool {
			reason := h.callerStill(r, c, "sign in again to follow the Note")
			if reason == "" {
				if err := sub.NoteReachable(ctx, c.svc, id); err != nil {
					var pr *problem.Problem
					if errors.As(err, &pr) {
						reason = pr.Message
					}
				}
			}
			if reason != "" {
				sseEnd(b, reason)
				return true
			}
			return false
		},
		lifetime: "the stream's lifetime is over: reconnect (Last-Event-ID resumes it)",
	})
}

// The wires of a LiveEvent: GET /api/events' write event, GET /api/live's.
const (
	wireEvents = iota
	wireLive
)

// encodeEvent is e as GET /api/events sends it.
func encodeEvent(e *service.LiveEvent) []byte {
	var b bytes.Buffer
	sseEvent(&b, e.Cursor, "write", streamEvent(e))
	return b.Bytes()
}

func streamEvent(e *service.LiveEvent) StreamEvent {
	return StreamEvent{Cursor: e.Cursor, Kind: e.Kind, Version: e.Version, Changed: e.Changed, Actor: who(e.Actor)}
}

// sessionOf is the session a stream is counted under ("" for a token).
func sessionOf(c *caller) string {
	if c.person == nil {
		return ""
	}
	return c.person.Session.Hash
}

// streamer is what one route's stream makes of its subscriber's items and
// of each recheck; each writes what to send into b and answers whether the
// stream ends after it.
type streamer struct {
	render   func(b *bytes.Buffer, items []service.LiveItem) (end bool)
	recheck  func(b *bytes.Buffer) (end bool)
	lifetime string // why the stream ends when its lifetime is over
}

// follow serves an event stream: its headers, `retry`, preface and the
// first items, then whatever the subscriber is handed, a heartbeat, a
// recheck of the caller every streamRecheck, and its end at its lifetime
// or when the client leaves.
func (h *handler) follow(w http.ResponseWriter, r *http.Request, sub *service.Subscriber, first []service.LiveItem, preface string, sr streamer) {
	ctx := r.Context()
	out := &sseWriter{w: w, rc: http.NewResponseController(w)}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	// The first line tells the browser how soon to reconnect.
	b.WriteString("retry: 3000\n\n")
	b.WriteString(preface)
	end := sr.render(&b, first)
	if !out.send(b.Bytes()) || end {
		return
	}
	lifetime := time.NewTimer(streamLifetime)
	defer lifetime.Stop()
	// Heartbeats and rechecks come at jittered intervals: streams opened
	// together (a reconnect after a restart) do not all write, and read
	// their sessions, in the same instant.
	heartbeat := time.NewTimer(jitter(streamHeartbeat))
	defer heartbeat.Stop()
	recheck := time.NewTimer(jitter(streamRecheck))
	defer recheck.Stop()
	for {
		b.Reset()
		select {
		case <-sub.Wake():
			items := sub.Take()
			if len(items) == 0 {
				continue
			}
			end = sr.render(&b, items)
		case <-heartbeat.C:
			heartbeat.Reset(jitter(streamHeartbeat))
			b.WriteString(": heartbeat\n\n")
		case <-recheck.C:
			recheck.Reset(jitter(streamRecheck))
			end = sr.recheck(&b)
		case <-lifetime.C:
			sseEnd(&b, sr.lifetime)
			end = true
		case <-h.svc.Stopping():
			sseRestart(&b)
			end = true
		case <-ctx.Done():
			return
		}
		if b.Len() > 0 && !out.send(b.Bytes()) || end {
			return
		}
	}
}

// jitter is d give or take up to a half, at random.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d/2 + rand.N(d)
}

// sseEvent writes one event (id "" : none) with data as JSON.
func sseEvent(b *bytes.Buffer, id, event string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte("{}") // the stream's own types always encode
	}
	if id != "" {
		fmt.Fprintf(b, "id: %s\n", id)
	}
	fmt.Fprintf(b, "event: %s\ndata: %s\n\n", event, raw)
}

// sseEnd writes the end event, saying why.
func sseEnd(b *bytes.Buffer, reason string) {
	b.WriteString("event: end\ndata: " + mustQuote(reason) + "\n\n")
}

// sseWriter writes an event stream.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	deadline time.Time
}

// send writes p to the stream and flushes it, answering whether the
// client is still there. A write has streamWriteTimeout (less at most a
// second: the deadline is moved on only when it is that old) to go out.
func (o *sseWriter) send(p []byte) bool {
	if now := time.Now(); o.deadline.Sub(now) < streamWriteTimeout-time.Second {
		o.deadline = now.Add(streamWriteTimeout)
		_ = o.rc.SetWriteDeadline(o.deadline)
	}
	if _, err := o.w.Write(p); err != nil {
		return false
	}
	return o.rc.Flush() == nil
}

// callerStill re-checks the caller of a stream: the session still signed
// in, the token not revoked (a token's grant is taken again, so that the
// reach of its Notes is the token's now). It answers why not ("": all is
// well); what says what a signed-out person does next.
func (h *handler) callerStill(r *http.Request, c *caller, what string) string {
	if c.person != nil {
		p, ok := h.people.Current(r)
		if !ok || p.Session.Hash != c.person.Session.Hash {
			return "signed out: " + what
		}
		return ""
	}
	_, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	p, err := h.verify(r.Context(), strings.TrimSpace(secret))
	if err != nil {
		if errors.Is(err, auth.ErrInvalidToken) {
			return "the token is no longer valid: " + auth.ErrInvalidToken.Error()
		}
		return "" // a passing store failure ends nothing
	}
	c.svc = service.Agent(p)
	return ""
}

func mustQuote(s string) string {
	b, err := json.Marshal(map[string]string{"reason": s})
	if err != nil {
		return `{"reason":"the stream ended"}`
	}
	return string(b)
}
