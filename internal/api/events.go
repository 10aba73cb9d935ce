package api

import (
	"encoding/json"
	"errors"
	"fmt"
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

// streamPage bounds the events one read of the feed sends.
const streamPage = 100

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

func (h *handler) events(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[EventsRequest](r, true)
	if err == nil && (in.NoteID == nil || *in.NoteID == "") {
		err = invalid("note_id", "is required: give the ID of the Note to follow (GET /api/notes lists them)")
	}
	if err == nil {
		err = checkPathID("note_id", *in.NoteID)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := *in.NoteID
	ctx := r.Context()
	after, err := h.svc.StreamStart(ctx, c.svc, id, in.LastEventID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release, err := h.svc.StreamGate(c.svc, streamLifetime)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The first line tells the browser how soon to reconnect.
	if !h.send(rc, w, "retry: 3000\n\n") {
		return
	}
	lifetime := time.NewTimer(streamLifetime)
	defer lifetime.Stop()
	heartbeat := time.NewTicker(streamHeartbeat)
	defer heartbeat.Stop()
	recheck := time.NewTicker(streamRecheck)
	defer recheck.Stop()
	names := service.ActorNames{} // the writers named so far: a stream looks each up once
	for {
		// Register before reading, so a write committed between the read
		// and the wait still wakes the stream.
		wake, stop := h.svc.WaitNote(id)
		evs, next, err := h.svc.StreamEvents(ctx, c.svc, id, after, streamPage)
		var unnamed []string
		for _, e := range evs {
			if _, ok := names[e.Actor]; !ok {
				unnamed = append(unnamed, e.Actor)
			}
		}
		if err == nil && len(unnamed) > 0 {
			var found service.ActorNames
			if found, err = h.svc.Actors(ctx, c.svc.Workspace, unnamed); err == nil {
				for _, a := range unnamed {
					names[a] = found.Of(a)
				}
			}
		}
		if err != nil {
			stop()
			if ctx.Err() == nil {
				h.endStream(rc, w, err)
			}
			return
		}
		if len(evs) > 0 {
			stop()
			var b strings.Builder
			for _, e := range evs {
				data, err := json.Marshal(StreamEvent{Cursor: e.Cursor, Kind: e.Kind, Version: e.Version, Changed: e.Changed, Actor: who(names.Of(e.Actor))})
				if err != nil {
					h.log.Error("api: encoding a stream event", "cause", err)
					return
				}
				fmt.Fprintf(&b, "id: %s\nevent: %s\ndata: %s\n\n", e.Cursor, "write", data)
			}
			// A deleted Note has nothing more to follow: the stream ends
			// with its last event, rather than at the next recheck.
			deleted := evs[len(evs)-1].Kind == service.KindNoteDeleted
			if deleted {
				b.WriteString("event: end\ndata: " + mustQuote("Note "+id+" was deleted") + "\n\n")
			}
			if !h.send(rc, w, b.String()) || deleted {
				return
			}
			after = next
			continue // read on: more may be waiting in the feed
		}
		select {
		case <-wake:
		case <-heartbeat.C:
			stop()
			if !h.send(rc, w, ": heartbeat\n\n") {
				return
			}
		case <-recheck.C:
			stop()
			if reason := h.stillAllowed(r, c, id); reason != "" {
				h.send(rc, w, "event: end\ndata: "+mustQuote(reason)+"\n\n")
				return
			}
		case <-lifetime.C:
			stop()
			h.send(rc, w, "event: end\ndata: "+mustQuote("the stream's lifetime is over: reconnect (Last-Event-ID resumes it)")+"\n\n")
			return
		case <-ctx.Done():
			stop()
			return
		}
	}
}

// send writes s to the stream and flushes it, answering whether the
// client is still there.
func (h *handler) send(rc *http.ResponseController, w http.ResponseWriter, s string) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := w.Write([]byte(s)); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// endStream sends why the stream ends, as an end event.
func (h *handler) endStream(rc *http.ResponseController, w http.ResponseWriter, err error) {
	var pr *problem.Problem
	msg := "Foundry failed to read the Note's events; reconnect"
	if errors.As(err, &pr) {
		msg = pr.Message
	} else {
		h.log.Error("api: reading a stream's events", "cause", err)
	}
	h.send(rc, w, "event: end\ndata: "+mustQuote(msg)+"\n\n")
}

// stillAllowed re-checks the caller of a stream: the session still signed
// in, the token not revoked, the Note still in reach. It answers why not
// ("" : all is well).
func (h *handler) stillAllowed(r *http.Request, c *caller, id string) string {
	ctx := r.Context()
	if c.person != nil {
		p, ok := h.people.Current(r)
		if !ok || p.Session.Hash != c.person.Session.Hash {
			return "signed out: sign in again to follow the Note"
		}
	} else {
		_, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		p, err := h.verify(ctx, strings.TrimSpace(secret))
		if err != nil {
			if errors.Is(err, auth.ErrInvalidToken) {
				return "the token is no longer valid: " + auth.ErrInvalidToken.Error()
			}
			return "" // a passing store failure ends nothing
		}
		// The grant may have changed: the Note's reach is the token's now.
		c.svc = service.Agent(p)
	}
	if err := h.svc.NoteReachable(ctx, c.svc, id); err != nil {
		var pr *problem.Problem
		if errors.As(err, &pr) {
			return pr.Message
		}
	}
	return ""
}

func mustQuote(s string) string {
	b, err := json.Marshal(map[string]string{"reason": s})
	if err != nil {
		return `{"reason":"the stream ended"}`
	}
	return string(b)
}
