package api

import (
	"bytes"
	"errors"
	"net/http"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// GET /api/live?topic=…: every live subscription of a page (or of every
// tab of a browser) on one stream of server-sent events. A topic is a
// Note's writes (note:<note_id>) or the caller's pending count
// (proposals). Writes carry the store's event cursors as their ids, so one
// Last-Event-ID resumes every Note topic; a topic that ends (the Note
// deleted or out of reach) or loses events (the client fell behind, or
// the cursor is older than the feed keeps) says so and the others go on.

// LiveRequest is GET /api/live.
type LiveRequest struct {
	Topic []string `query:"topic" json:"-" required:"true" minItems:"1" maxItems:"50" description:"What to follow, repeatable (1–50): note:<note_id> for a Note's writes, proposals for your pending-approvals count (people only)"`
	After string   `query:"after" json:"-" description:"An event cursor (the id of a write event this stream sent) to resume after; Last-Event-ID wins when both are given. Without either the stream starts now"`
	// LastEventID is what a browser sends on its own reconnect.
	LastEventID string `header:"Last-Event-ID" json:"-" description:"The id of the last event received, to resume after it"`
}

// LiveWrite is the data of a write event of GET /api/live: StreamEvent
// and the topic it belongs to.
type LiveWrite struct {
	Topic  string `json:"topic" description:"note:<note_id>"`
	NoteID string `json:"note_id"`
	StreamEvent
	Text []service.TextUpdate `json:"text,omitempty" description:"What the write did to the markdown text, as its updates (as GET …/text answers them); absent when it did not change the text, or when the updates were too many to carry: then pull GET …/text?after=<your revision>"`
}

// LiveReady is the data of the ready event a live stream starts with.
type LiveReady struct {
	Cursor string   `json:"cursor" description:"Where the stream stands: pass it as after (or Last-Event-ID) to resume from here; empty when no Note is followed"`
	Topics []string `json:"topics" nullable:"false"`
}

// LiveGone is the data of a gone event: one topic ended.
type LiveGone struct {
	Topic   string `json:"topic"`
	Reason  string `json:"reason"`
	Deleted bool   `json:"deleted"`
}

// LiveResync is the data of a resync event: the topic's events could not
// all be delivered; read the Note again.
type LiveResync struct {
	Topic  string `json:"topic"`
	Reason string `json:"reason"`
}

var liveDoc = doc{summary: "Every live topic of a page on one stream of server-sent events (event: write, data: LiveWrite)", req: LiveRequest{}, resp: LiveWrite{}, media: "text/event-stream",
	description: "The stream starts with `retry: 3000` and `event: ready` (data `{\"cursor\": string, \"topics\": [string]}`). Then: `event: write` with `id:` its cursor and data LiveWrite, for each committed write of a followed Note; `event: proposals` data `{\"pending\": number}` at once and whenever the count changes; `event: gone` data `{\"topic\", \"reason\", \"deleted\": boolean}` when a topic ends (its Note deleted, out of reach or not found) while the others go on; `event: presence` data `{\"topic\", \"note_id\", \"peers\": [Peer]}` (who has the Note open, in which tab, their cursor, selection or cell, the whole list each time it changes); `event: resync` data `{\"topic\", \"reason\"}` when a topic's events could not all be delivered (the client fell behind, or the resume cursor is older than the feed keeps): read the Note again, the topic goes on from now. A comment line every 15 s is the heartbeat; `event: end` data `{\"reason\": string}` ends the stream (its lifetime is over, the session signed out, the token revoked), and the browser reconnects with Last-Event-ID. A token follows note topics only."}

// liveCatchUp bounds the writes a resume replays per Note: past it the
// topic resyncs.
const liveCatchUp = 1000

func (h *handler) live(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[LiveRequest](r, true)
	var topics []string
	if err == nil {
		topics, err = service.LiveTopics(c.svc, in.Topic)
	}
	var resume service.Resume
	if err == nil {
		resume, err = service.ResumeAfter(liveCursor(in))
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	release, err := h.svc.StreamGate(c.svc, sessionOf(c), "topic", streamLifetime)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()
	ctx := r.Context()
	sub := h.svc.Subscribe()
	defer sub.Close()
	var first []service.LiveItem
	for _, t := range topics {
		var items []service.LiveItem
		if t == service.TopicProposals {
			items, err = sub.WatchProposals(ctx, c.svc)
		} else {
			items, err = sub.WatchNote(ctx, c.svc, strings.TrimPrefix(t, service.TopicNotePrefix), service.WatchOptions{After: resume, MaxCatchUp: liveCatchUp})
		}
		var pr *problem.Problem
		if errors.As(err, &pr) && pr.Code == problem.NotFound {
			items, err = []service.LiveItem{{Kind: service.LiveGone, Topic: t, Reason: pr.Message}}, nil
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		first = append(first, items...)
	}
	var preface bytes.Buffer
	sseEvent(&preface, "", "ready", LiveReady{Cursor: sub.Cursor(resume), Topics: topics})
	h.follow(w, r, sub, first, preface.String(), streamer{
		render: renderLive,
		recheck: func(b *bytes.Buffer) bool {
			if reason := h.callerStill(r, c, "sign in again to follow live changes"); reason != "" {
				sseEnd(b, reason)
				return true
			}
			for _, t := range sub.Topics() {
				id, ok := strings.CutPrefix(t, service.TopicNotePrefix)
				if !ok {
					continue
				}
				var pr *problem.Problem
				if err := sub.NoteReachable(ctx, c.svc, id); errors.As(err, &pr) {
					sub.Unwatch(t)
					sseEvent(b, "", "gone", LiveGone{Topic: t, Reason: pr.Message})
				}
			}
			return false
		},
		lifetime: "the stream's lifetime is over: reconnect (Last-Event-ID resumes it)",
	})
}

// encodeLive is e as GET /api/live sends it.
func encodeLive(e *service.LiveEvent) []byte {
	var b bytes.Buffer
	sseEvent(&b, e.Cursor, "write", LiveWrite{Topic: service.NoteTopic(e.NoteID), NoteID: e.NoteID, StreamEvent: streamEvent(e), Text: e.Text})
	return b.Bytes()
}

// liveCursor is where a live stream resumes: Last-Event-ID, else after.
func liveCursor(in *LiveRequest) string {
	if in.LastEventID != "" {
		return in.LastEventID
	}
	return in.After
}

// renderLive writes a live stream's items; the stream goes on whatever
// they say.
func renderLive(b *bytes.Buffer, items []service.LiveItem) bool {
	for _, it := range items {
		switch it.Kind {
		case service.LiveWrite:
			b.Write(it.Event.Wire(wireLive, encodeLive))
		case service.LiveCount:
			sseEvent(b, "", "proposals", PendingCount{Pending: it.Pending})
		case service.LiveGone:
			sseEvent(b, "", "gone", LiveGone{Topic: it.Topic, Reason: it.Reason, Deleted: it.Deleted})
		case service.LiveResync:
			sseEvent(b, "", "resync", LiveResync{Topic: it.Topic, Reason: it.Reason})
		case service.LivePresence:
			sseEvent(b, "", "presence", LivePresence{Topic: it.Topic, NoteID: strings.TrimPrefix(it.Topic, service.TopicNotePrefix), Peers: it.Peers})
		}
	}
	return false
}
