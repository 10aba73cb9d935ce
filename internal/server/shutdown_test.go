package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/logtest"
	"foundry/internal/mcpclient"
	"foundry/internal/mcpserver"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/store/sqlite"
)

// TestShutdownPastItsTimeout: a call that does not finish within the
// shutdown timeout is cut, the log and the answer say which call was still
// running, and the store is closed all the same.
func TestShutdownPastItsTimeout(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logged logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	srv := server.New(st, server.Config{Logger: log})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	var once sync.Once
	mux.HandleFunc("GET /stuck", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(entered) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.Handle("/", srv.Handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := server.HTTPServer(mux, ln.Addr().String())
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(ctx, hs, ln, server.ServeOptions{ShutdownTimeout: time.Second, Logger: log})
	}()
	called := make(chan error, 1)
	go func() {
		c := &http.Client{Timeout: 60 * time.Second}
		resp, err := c.Get("http://" + ln.Addr().String() + "/stuck")
		if err == nil {
			resp.Body.Close()
		}
		called <- err
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the server")
	}
	stop()
	select {
	case err = <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return past its shutdown timeout")
	}
	if err == nil || !strings.Contains(err.Error(), "still running: 1× GET /stuck") {
		t.Errorf("Serve answered %v, want an error naming the call still running", err)
	}
	if err := <-called; err == nil {
		t.Error("the stuck call got an answer, want its connection cut")
	}
	if !strings.Contains(logged.String(), "shutdown timeout: closing the connections still open") || !strings.Contains(logged.String(), "GET /stuck") {
		t.Errorf("the log does not say what was still open:\n%s", logged.String())
	}
	if _, err := st.LastCursor(context.Background(), "", "", ""); err == nil {
		t.Error("the store still answers after Serve returned: it was not closed")
	}
}

// TestServeShutdownEndsWhatWaits: in process (so under the race detector
// too), a shutdown answers a waiting long poll with its page, ends an
// event stream with a retry hint and an MCP listen stream with its result,
// and Serve answers nil: nothing was left open.
func TestServeShutdownEndsWhatWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := server.New(st, server.Config{PublicURL: base, Logger: slog.New(slog.DiscardHandler)})
	owner, _, err := srv.Service.Bootstrap(ctx, "Test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	noteID, err := srv.Service.Demo(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := auth.CreateToken(ctx, st, auth.NewTokenSpec{Workspace: owner.Workspace.ID, User: owner.User.ID, Name: "test", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(stop, server.HTTPServer(srv.Handler, ln.Addr().String()), ln, server.ServeOptions{ShutdownTimeout: 20 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	}()

	// An event stream and a listen stream, read to their ends.
	read := func(req *http.Request) <-chan string {
		out, opened := make(chan string, 1), make(chan struct{})
		go func() {
			resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
			close(opened)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				out <- "error: " + err.Error() + " after " + string(b)
				return
			}
			out <- string(b)
		}()
		select {
		case <-opened:
		case <-time.After(30 * time.Second):
			t.Fatal("a stream did not open")
		}
		return out
	}
	sse, _ := http.NewRequest(http.MethodGet, base+"/api/events?note_id="+noteID, nil)
	sse.Header.Set("Authorization", "Bearer "+token)
	events := read(sse)
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":["` + mcpserver.ResourceURI("note", noteID) + `"]}}}`
	listen, _ := http.NewRequest(http.MethodPost, base+"/mcp?subscriptions=1", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen", "Authorization": "Bearer " + token} {
		listen.Header.Set(k, v)
	}
	listened := read(listen)
	// A long poll that would wait 25 s, past the timeout.
	cs := servertest.Connect(t, base+"/mcp", token, "", nil)
	polled := make(chan mcpclient.Result, 1)
	go func() {
		r, err := mcpclient.Call(ctx, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": noteID, "wait_seconds": 25})
		if err != nil {
			r = mcpclient.Result{IsError: true, Text: err.Error()}
		}
		polled <- r
	}()
	// The poll and the event stream share the waiters' gate; listen streams
	// have their own.
	for k := 0; k < 400 && (srv.Service.Waiting() < 2 || srv.MCP.OpenStreams() < 1); k++ {
		time.Sleep(10 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	if r := <-polled; r.IsError || len(r.List("events")) != 0 || r.Str("next_cursor") == "" {
		t.Errorf("long poll answered %s, want its empty page", r.Text)
	}
	if got := <-events; !strings.Contains(got, "\n: the server is restarting") || !strings.Contains(got, "\nretry: ") || strings.Contains(got, "event: end") {
		t.Errorf("event stream: %q, want its end with a retry hint", got)
	}
	if got := <-listened; !strings.Contains(got, `"result"`) || !strings.Contains(got, `"id":7`) {
		t.Errorf("listen stream: %q, want its result", got)
	}
}
