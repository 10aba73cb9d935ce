package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestErrorLogLevels: the http.Server's own lines reach the structured
// log, a failed TLS handshake as debug, anything else as a warning.
func TestErrorLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := ErrorLog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Printf("http: TLS handshake error from 127.0.0.1:5555: EOF")
	l.Printf("http: Accept error: too many open files; retrying in 5ms")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d log lines, want 2: %q", len(lines), buf.String())
	}
	for i, want := range []struct{ level, err string }{
		{"DEBUG", "http: TLS handshake error from 127.0.0.1:5555: EOF"},
		{"WARN", "http: Accept error: too many open files; retrying in 5ms"},
	} {
		var got struct{ Level, Msg, Err string }
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		if got.Level != want.level || got.Err != want.err || got.Msg != "http server" {
			t.Errorf("line %d = %+v, want level %s and err %q", i, got, want.level, want.err)
		}
	}
}
