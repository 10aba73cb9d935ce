package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Graceful shutdown. On its signal (SIGTERM, SIGINT) a serving node:
//
//  1. turns /readyz to 503 "draining", and goes on serving every call for
//     the drain delay, so a balancer that checks /readyz stops sending
//     here before the listener closes;
//  2. closes its listener (new connections are refused, so a balancer
//     sends them to another node) and idle connections;
//  3. answers every waiting long poll at once with its page so far, and
//     ends every event stream (web app SSE with a retry hint, MCP
//     subscriptions/listen with its result), so their clients reconnect to
//     a node that is ready;
//  4. lets every other call in flight finish and answer: writes commit;
//  5. calls ServeOptions.Drained, then closes the store: SQLite's writer
//     commits what is queued (the group commit flushed) and the database
//     is closed;
//
// all within the shutdown timeout. Past it, the connections still open are
// closed, the log says which calls were still running, and Serve answers an
// error (the process exits non-zero).

// Default timings of a graceful shutdown.
const (
	DefaultDrainDelay      time.Duration = 0
	DefaultShutdownTimeout time.Duration = 30 * time.Second
)

// storeCloseGrace is how long a forced shutdown still waits for the store
// to close (queued writes to commit) past the timeout.
const storeCloseGrace = time.Second

// ServeOptions say how Serve shuts down.
type ServeOptions struct {
	// DrainDelay: once /readyz answers draining, calls are still served
	// for this long before the listener closes. Zero: it closes at once.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the whole shutdown, the drain delay
	// included, from the signal to the store closed. Zero:
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger // nil: slog.Default()
	// Drained, if set, is called once every call has answered (or been
	// cut), before the store closes: the place to stop background work
	// that uses the store (a scheduled backup, …). Its ctx ends at the
	// shutdown deadline.
	Drained func(ctx context.Context)
}

// Serve serves hs (HTTPServer of s.Handler, or one made for TLS) on ln
// until ctx is done (the process was told to stop), then shuts down
// gracefully as described above, and closes s.Store. A TLS config on hs is
// served with ServeTLS (its certificates from TLSConfig). It answers nil
// when everything finished and closed in time.
func (s *Server) Serve(ctx context.Context, hs *http.Server, ln net.Listener, o ServeOptions) error {
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.DrainDelay < 0 || o.DrainDelay >= o.ShutdownTimeout {
		return fmt.Errorf("the drain delay (%s) must be at least 0 and shorter than the shutdown timeout (%s)", o.DrainDelay, o.ShutdownTimeout)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	calls := &inFlight{open: map[uint64]openCall{}}
	if hs.Handler == nil {
		hs.Handler = http.DefaultServeMux
	}
	hs.Handler = calls.track(hs.Handler)
	ln = &closeOnce{Listener: ln}
	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		s.Store.Close()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	return s.shutdown(hs, ln, calls, o)
}

func (s *Server) shutdown(hs *http.Server, ln net.Listener, calls *inFlight, o ServeOptions) error {
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(o.ShutdownTimeout))
	defer cancel()
	s.Ready.Drain()
	o.Logger.Info("shutting down: /readyz answers draining; calls are still served for the drain delay", "drain_delay", o.DrainDelay.String(), "shutdown_timeout", o.ShutdownTimeout.String())
	if o.DrainDelay > 0 {
		t := time.NewTimer(o.DrainDelay)
		<-t.C
	}
	// The listener closes before any answer says Connection: close (which
	// http.Server.Shutdown makes every answer say): a client told to
	// reconnect is refused, and goes to another node, rather than opening
	// a connection that waits in the listener's queue and is reset. Kept
	// connections still carry answers until Shutdown closes them, each
	// once idle.
	ln.Close()
	// Then long polls answer and event streams end: their reconnects go
	// elsewhere too.
	s.Service.StopWaiting()
	o.Logger.Info("shutting down: the listener is closed; waiting for the calls in flight", "in_flight", calls.count(), "long_polls", s.Service.Waiting(), "streams", s.Service.OpenStreams().Total, "mcp_listen_streams", s.MCP.OpenStreams())
	var failed error
	if err := hs.Shutdown(ctx); err != nil {
		still := calls.describe()
		o.Logger.Error("shutdown timeout: closing the connections still open", "timeout", o.ShutdownTimeout.String(), "still_running", still)
		hs.Close()
		failed = fmt.Errorf("graceful shutdown did not finish within --shutdown-timeout %s; still running: %s", o.ShutdownTimeout, still)
	}
	if o.Drained != nil {
		o.Drained(ctx)
	}
	// The store last: SQLite's writer commits what is queued, then the
	// database closes.
	closed := make(chan error, 1)
	go func() { closed <- s.Store.Close() }()
	wait := time.Until(start.Add(o.ShutdownTimeout))
	if wait < storeCloseGrace {
		wait = storeCloseGrace
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-closed:
		if err != nil {
			o.Logger.Error("shutting down: close the store", "err", err)
			failed = errors.Join(failed, fmt.Errorf("close the store: %w", err))
		}
	case <-t.C:
		o.Logger.Error("shutdown timeout: the store did not close (writes still queued); exiting without it")
		failed = errors.Join(failed, errors.New("the store did not close within --shutdown-timeout"))
	}
	if failed != nil {
		return failed
	}
	o.Logger.Info("shut down cleanly", "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// inFlight counts the calls being served, to say which were still running
// when a shutdown timed out.
type inFlight struct {
	mu   sync.Mutex
	next uint64
	open map[uint64]openCall
}

type openCall struct {
	method, path string
	since        time.Time
}

func (f *inFlight) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.next++
		id := f.next
		f.open[id] = openCall{method: r.Method, path: r.URL.Path, since: time.Now()}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.open, id)
			f.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

func (f *inFlight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.open)
}

// describe names the calls still running, by route, the oldest first
// (never a query string or a header: no secret).
func (f *inFlight) describe() string {
	f.mu.Lock()
	byRoute := map[string]int{}
	oldest := map[string]time.Time{}
	for _, c := range f.open {
		k := c.method + " " + c.path
		byRoute[k]++
		if o, ok := oldest[k]; !ok || c.since.Before(o) {
			oldest[k] = c.since
		}
	}
	f.mu.Unlock()
	if len(byRoute) == 0 {
		return "no call (connections only)"
	}
	keys := make([]string, 0, len(byRoute))
	for k := range byRoute {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return oldest[keys[i]].Before(oldest[keys[j]]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d× %s (for %s)", byRoute[k], k, time.Since(oldest[k]).Round(time.Second)))
	}
	return strings.Join(parts, ", ")
}

// closeOnce is a listener that Close closes once: shutdown closes it first
// (and logs nothing of it: a listener that fails to close is closed all
// the same), then http.Server.Shutdown again, which so only reports a
// timeout.
type closeOnce struct {
	net.Listener
	once sync.Once
}

func (l *closeOnce) Close() error {
	var err error
	l.once.Do(func() { err = l.Listener.Close() })
	return err
}
