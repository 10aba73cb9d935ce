// Package reqlog carries what the server knows of one HTTP request to the
// code that serves it: its request ID (in every log line written with the
// request's context, and in the X-Request-Id answer header), and the
// refusal a door answered with, for the metrics.
package reqlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// Header is the request ID's header, read from a request and set on every
// answer.
const Header = "X-Request-Id"

// MaxIDBytes bounds a request ID taken from a client.
const MaxIDBytes = 64

type idKey struct{}

// WithID returns ctx carrying the request ID id.
func WithID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, idKey{}, id)
}

// ID is the request ID ctx carries ("" outside a request).
func ID(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// FromClient is the request ID a client sent, if it is one Foundry keeps:
// 1 to MaxIDBytes characters of letters, digits and . _ : -, so that a log
// line or a header never carries what a client smuggled in it. Anything
// else is replaced by a new ID.
func FromClient(v string) (string, bool) {
	if v == "" || len(v) > MaxIDBytes {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return "", false
		}
	}
	return v, true
}

// NewID is a fresh request ID: 16 hex digits, random.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Handler adds the request ID of a record's context to the record, as
// request_id, then hands it to the handler it wraps.
type Handler struct{ Inner slog.Handler }

// NewLogger is l with Handler around its handler (l itself if it has it).
func NewLogger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(Handler); ok {
		return l
	}
	return slog.New(Handler{Inner: l.Handler()})
}

// Enabled reports whether the wrapped handler handles level.
func (h Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.Inner.Enabled(ctx, level)
}

// Handle adds request_id when ctx carries one.
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := ID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Inner.Handle(ctx, r)
}

// WithAttrs wraps the wrapped handler's WithAttrs.
func (h Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return Handler{Inner: h.Inner.WithAttrs(as)}
}

// WithGroup wraps the wrapped handler's WithGroup.
func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{Inner: h.Inner.WithGroup(name)}
}

// Refusals is what a response writer implements to hear the refusal a door
// answered with: the door (DoorREST, DoorOAuth) and the rule's code
// (problem.Problem.Code, an OAuth error code).
type Refusals interface {
	NoteRefusal(door, code string)
}

// Doors that report their refusals.
const (
	DoorREST  = "rest"
	DoorOAuth = "oauth"
)

// NoteRefusal tells the response writer w (or one it wraps, through
// Unwrap) that the answer is door's refusal with code; nothing if none
// listens.
func NoteRefusal(w http.ResponseWriter, door, code string) {
	for w != nil {
		if n, ok := w.(Refusals); ok {
			n.NoteRefusal(door, code)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}
