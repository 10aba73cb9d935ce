package reqlog_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"foundry/internal/logtest"
	"foundry/internal/reqlog"
)

func TestFromClient(t *testing.T) {
	for _, ok := range []string{"a", "trace-1", "0af7651916cd43dd8448eb211c80319c", "svc:api.v2_x", strings.Repeat("z", reqlog.MaxIDBytes)} {
		if got, good := reqlog.FromClient(ok); !good || got != ok {
			t.Errorf("FromClient(%q) = %q, %v; want it kept", ok, got, good)
		}
	}
	for _, bad := range []string{"", " ", "a b", "a\nb", "a\rb", "x\x00", "<b>", "é", `"q"`, "a/b", strings.Repeat("z", reqlog.MaxIDBytes+1)} {
		if got, good := reqlog.FromClient(bad); good || got != "" {
			t.Errorf("FromClient(%q) = %q, %v; want it refused", bad, got, good)
		}
	}
	a, b := reqlog.NewID(), reqlog.NewID()
	if a == b || len(a) != 16 {
		t.Errorf("NewID: %q then %q", a, b)
	}
	if _, ok := reqlog.FromClient(a); !ok {
		t.Errorf("a new ID %q is not one FromClient keeps", a)
	}
}

// TestHandler: a line logged with a request's context carries its ID,
// with attributes and groups added before or after; one without a request
// has none; wrapping twice adds it once.
func TestHandler(t *testing.T) {
	var buf logtest.Buffer
	l := reqlog.NewLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	if reqlog.NewLogger(l) != l {
		t.Errorf("NewLogger wraps a wrapped logger again")
	}
	ctx := reqlog.WithID(context.Background(), "req-1")
	l.InfoContext(ctx, "one", "k", 1)
	l.With("part", "api").InfoContext(ctx, "two")
	l.Info("three")
	l.InfoContext(context.Background(), "four")
	var lines []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		lines = append(lines, m)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	if lines[0]["request_id"] != "req-1" || lines[0]["k"] != 1.0 {
		t.Errorf("one: %v", lines[0])
	}
	if lines[1]["request_id"] != "req-1" || lines[1]["part"] != "api" {
		t.Errorf("two: %v", lines[1])
	}
	for _, m := range lines[2:] {
		if _, has := m["request_id"]; has {
			t.Errorf("a line without a request has a request_id: %v", m)
		}
	}
	if n := strings.Count(buf.String(), "request_id"); n != 2 {
		t.Errorf("request_id %d times, want 2", n)
	}
}

type listener struct {
	http.ResponseWriter
	door, code string
}

func (l *listener) NoteRefusal(door, code string) { l.door, l.code = door, code }

type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestNoteRefusal reaches the listening writer through wrappers, and does
// nothing when none listens.
func TestNoteRefusal(t *testing.T) {
	l := &listener{ResponseWriter: httptest.NewRecorder()}
	reqlog.NoteRefusal(wrapper{wrapper{l}}, reqlog.DoorREST, "version_conflict")
	if l.door != reqlog.DoorREST || l.code != "version_conflict" {
		t.Errorf("the listener heard %q %q", l.door, l.code)
	}
	reqlog.NoteRefusal(wrapper{httptest.NewRecorder()}, reqlog.DoorREST, "x") // no listener: no panic
	reqlog.NoteRefusal(nil, reqlog.DoorREST, "x")
}
