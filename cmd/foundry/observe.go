package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"foundry/internal/reqlog"
	"foundry/internal/server"
)

// logFormats are what --log-format takes.
var logFormats = []string{"text", "json"}

// newLogger is the server's logger: key=value lines (text) or one JSON
// object a line (json), at level lvl and above, to w.
func newLogger(format string, lvl slog.Level, w io.Writer) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: lvl}
	// Wrapped so that a line logged with a request's context, through this
	// logger or slog's default, carries its request_id.
	switch format {
	case "text":
		return reqlog.NewLogger(slog.New(slog.NewTextHandler(w, opts))), nil
	case "json":
		return reqlog.NewLogger(slog.New(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, usagef("--log-format: %q is not %s", format, strings.Join(logFormats, " or "))
}

// listenMetrics opens --metrics-addr's listener (nil when it is empty:
// /metrics is then served on --addr).
func listenMetrics(addr, mainAddr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return nil, usagef("--metrics-addr: %q is not HOST:PORT; give e.g. 127.0.0.1:9090 (or leave it out to serve /metrics on --addr)", addr)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		return nil, usagef("--metrics-addr: %q: give an IP address or localhost as the host, e.g. 127.0.0.1:9090", addr)
	}
	if addr == mainAddr {
		return nil, usagef("--metrics-addr: %s is --addr too; give another port, or leave --metrics-addr out to serve /metrics on --addr", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (choose another with --metrics-addr)", addr, err)
	}
	return ln, nil
}

// serveMetrics serves GET /metrics (and nothing else) on ln until the
// returned stop is called.
func serveMetrics(ln net.Listener, metrics http.Handler, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	hs := server.HTTPServer(mux, ln.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	log.Info("metrics are served on their own address", "metrics", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		<-done
	}
}
