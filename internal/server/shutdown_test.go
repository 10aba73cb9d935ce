package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/logtest"
	"foundry/internal/server"
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
