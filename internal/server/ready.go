package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"foundry/internal/store"
)

// Readiness is what GET /readyz answers: ready while the database answers
// and the server is not draining, with the details its parts report (the
// last scheduled backup, …). /healthz only says the process is alive: a
// balancer stops sending to a node that is not ready, an orchestrator
// restarts one that is not alive.
type Readiness struct {
	st       store.Store
	log      *slog.Logger
	draining atomic.Bool

	mu      sync.Mutex
	details map[string]func() any
}

func newReadiness(st store.Store, log *slog.Logger) *Readiness {
	return &Readiness{st: st, log: log, details: map[string]func() any{}}
}

// Drain makes /readyz answer 503 "draining" from now on: the first step of
// a graceful shutdown, so that balancers send new calls elsewhere.
func (r *Readiness) Drain() { r.draining.Store(true) }

// Draining reports whether Drain was called.
func (r *Readiness) Draining() bool { return r.draining.Load() }

// SetDetail adds (or, with a nil f, removes) a named detail to every
// /readyz answer: f is called on each request and must not block.
func (r *Readiness) SetDetail(name string, f func() any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f == nil {
		delete(r.details, name)
		return
	}
	r.details[name] = f
}

// readyTimeout bounds the database check of one /readyz request.
const readyTimeout = 2 * time.Second

func (r *Readiness) serveReady(w http.ResponseWriter, req *http.Request) {
	body := map[string]any{"status": "ready"}
	code := http.StatusOK
	r.mu.Lock()
	names := make([]string, 0, len(r.details))
	for n := range r.details {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		detail := map[string]any{}
		for _, n := range names {
			detail[n] = r.details[n]()
		}
		body["detail"] = detail
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
	defer cancel()
	switch _, err := r.st.LastCursor(ctx, "", "", ""); {
	case r.Draining():
		body["status"], code = "draining", http.StatusServiceUnavailable
	case err != nil:
		r.log.ErrorContext(req.Context(), "readyz: store unavailable", "err", err)
		body["status"], code = "unavailable", http.StatusServiceUnavailable
		body["error"] = "the store does not answer; see the server log"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// serveHealth: the process is alive and serving HTTP.
func serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(`{"status":"ok"}` + "\n"))
}
