package server

import (
	"database/sql"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"foundry/internal/account"
	"foundry/internal/mcpserver"
	"foundry/internal/reqlog"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Latency buckets of calls and requests, in seconds: from a cached read
// (a millisecond) to a long poll (service.MaxWait, 25 s).
var callBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// observer is what one server counts of its calls, on its own registry.
type observer struct {
	toolCalls    *prometheus.CounterVec   // tool, outcome
	toolDuration *prometheus.HistogramVec // tool
	requests     *prometheus.CounterVec   // route, code
	reqDuration  *prometheus.HistogramVec // route
	refusals     *prometheus.CounterVec   // door, code
	eventStreams *prometheus.GaugeVec     // route
	inFlight     prometheus.Gauge
}

func newObserver(reg prometheus.Registerer, version string) *observer {
	o := &observer{
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "foundry_mcp_tool_calls_total",
			Help: "MCP tool calls by tool and outcome: ok, error (a fault on Foundry's side), or the refusal's code (version_conflict, invalid_argument, …).",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "foundry_mcp_tool_call_duration_seconds",
			Help:    "How long MCP tool calls took, by tool, from validated arguments to result.",
			Buckets: callBuckets,
		}, []string{"tool"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "foundry_http_requests_total",
			Help: "HTTP requests answered, by route pattern (\"unmatched\" for none) and status class (2xx, 3xx, 4xx, 5xx).",
		}, []string{"route", "code"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "foundry_http_request_duration_seconds",
			Help:    "How long HTTP requests took to answer, by route pattern; an event stream counts until it ends.",
			Buckets: callBuckets,
		}, []string{"route"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "foundry_refusals_total",
			Help: "Calls refused with a rule's code, by door (mcp, rest, oauth) and code (version_conflict, invalid_argument, too_many_waiters, rate_limited, invalid_grant, …).",
		}, []string{"door", "code"}),
		eventStreams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "foundry_http_event_streams",
			Help: "Server-sent event streams open now, by route pattern.",
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "foundry_http_requests_in_flight",
			Help: "HTTP requests being answered now, event streams and long polls included.",
		}),
	}
	reg.MustRegister(o.toolCalls, o.toolDuration, o.requests, o.reqDuration, o.refusals, o.eventStreams, o.inFlight)
	if version == "" {
		version = "dev"
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "foundry_build_info",
		Help:        "Always 1; its version label is the Foundry release this node runs.",
		ConstLabels: prometheus.Labels{"version": version},
	}, func() float64 { return 1 }))
	return o
}

// knowTools makes every tool's ok and error counts exist from the start, at
// 0, so that a rate over them is defined before the first call.
func (o *observer) knowTools(tools []*mcpserver.Tool) {
	for _, t := range tools {
		o.toolCalls.WithLabelValues(t.Def.Name, mcpserver.OutcomeOK)
		o.toolCalls.WithLabelValues(t.Def.Name, mcpserver.OutcomeError)
	}
}

// toolCall is mcpserver.Options.Observe.
func (o *observer) toolCall(tool, outcome string, d time.Duration) {
	o.toolCalls.WithLabelValues(tool, outcome).Inc()
	o.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
	if outcome != mcpserver.OutcomeOK && outcome != mcpserver.OutcomeError {
		o.refusals.WithLabelValues(doorMCP, outcome).Inc()
	}
}

// registerParts registers what the server's parts count themselves.
func registerParts(reg prometheus.Registerer, raw store.Store, svc *service.Service, h *mcpserver.Handler, people *account.Manager) {
	writes := func(pick func(service.WriteStats) uint64) func() float64 {
		return func() float64 { return float64(pick(svc.WriteStats())) }
	}
	for _, w := range []struct {
		outcome string
		pick    func(service.WriteStats) uint64
	}{
		{"committed", func(s service.WriteStats) uint64 { return s.Committed }},
		{"replayed", func(s service.WriteStats) uint64 { return s.Replayed }},
		{"conflict", func(s service.WriteStats) uint64 { return s.Conflicts }},
		{"key_reused", func(s service.WriteStats) uint64 { return s.KeyReused }},
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "foundry_writes_total",
			Help:        "Guarded writes of Notes, Rooms and repositories by outcome: committed (a new version), replayed (same idempotency key and arguments: the first result answered), conflict (stale expected_version), key_reused (the key was used for other arguments).",
			ConstLabels: prometheus.Labels{"outcome": w.outcome},
		}, writes(w.pick)))
	}
	for _, outcome := range account.SignInOutcomes {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "foundry_signins_total",
			Help:        "Sign-ins by outcome: ok, refused (wrong email or password), throttled (too many failures for the account or the address), busy (no password check slot came free), error.",
			ConstLabels: prometheus.Labels{"outcome": outcome},
		}, func() float64 { return float64(people.Stats().SignIns[outcome]) }))
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "foundry_password_hashes_running",
			Help: "Password hashes (sign-ins, passwords set) being computed now.",
		}, func() float64 { return float64(people.Stats().HashesBusy) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "foundry_password_hash_slots",
			Help: "Password hashes this node computes at once at most (--max-password-hashes).",
		}, func() float64 { return float64(people.Stats().HashSlots) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "foundry_long_polls_waiting",
			Help: "Event polls (poll_resource_events with wait_seconds > 0) waiting for a write now.",
		}, func() float64 { return float64(svc.LongPolls()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "foundry_waiters",
			Help: "Places taken in the cap long polls and event streams share (--max-waiters-per-node): the long polls waiting and the event streams open.",
		}, func() float64 { return float64(svc.Waiting()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "foundry_mcp_listen_streams",
			Help: "MCP subscriptions/listen streams open now.",
		}, func() float64 { return float64(h.OpenStreams()) }),
	)
	if c, ok := raw.(interface {
		ObserveCommits(func(jobs int, commit time.Duration))
	}); ok {
		size := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "foundry_sqlite_group_commit_writes",
			Help:    "Writes per SQLite group commit (one transaction, one fsync).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1 … 256
		})
		took := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "foundry_sqlite_commit_duration_seconds",
			Help:    "How long each SQLite group commit's COMMIT took: the fsync that makes its writes durable.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12), // 0.1 ms … 2.4 s
		})
		reg.MustRegister(size, took)
		c.ObserveCommits(func(jobs int, d time.Duration) {
			size.Observe(float64(jobs))
			took.Observe(d.Seconds())
		})
	}
	if p, ok := raw.(interface{ SQLDB() *sql.DB }); ok {
		reg.MustRegister(collectors.NewDBStatsCollector(p.SQLDB(), "postgres"))
	}
}

// observeRequests gives every request its ID (the client's X-Request-Id if
// it is a sane one, else a new one) in its context, for every log line of
// it, and in the X-Request-Id answer header; it counts the request by
// route pattern and status class, times it, and logs it at debug level.
func (o *observer) observeRequests(l *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := reqlog.FromClient(r.Header.Get(reqlog.Header))
		if !ok {
			id = reqlog.NewID()
		}
		w.Header().Set(reqlog.Header, id)
		r = r.WithContext(reqlog.WithID(r.Context(), id))
		rw := &statusWriter{ResponseWriter: w, o: o, r: r}
		start := time.Now()
		o.inFlight.Inc()
		panicked := true
		defer func() {
			o.inFlight.Dec()
			if rw.stream != "" {
				o.eventStreams.WithLabelValues(rw.stream).Dec()
			}
			route := routeLabel(r)
			status := rw.status
			switch {
			case status == 0 && panicked:
				status = http.StatusInternalServerError // cut off (http.ErrAbortHandler)
			case status == 0:
				status = http.StatusOK // nothing written: net/http answers 200
			}
			d := time.Since(start)
			o.requests.WithLabelValues(route, strconv.Itoa(status/100)+"xx").Inc()
			o.reqDuration.WithLabelValues(route).Observe(d.Seconds())
			if rw.refusal != "" {
				o.refusals.WithLabelValues(rw.door, rw.refusal).Inc()
			}
			if l.Enabled(r.Context(), slog.LevelDebug) {
				l.DebugContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path, "route", route, "status", status, "duration", d.String())
			}
		}()
		next.ServeHTTP(rw, r)
		panicked = false
	})
}

// routeLabel is the pattern r was served by, never its path (a label per
// path would have no bound).
// A pattern without a method (the API's, which picks the route by method
// itself) is prefixed with the request's method, if it is a standard one.
func routeLabel(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	if strings.Contains(r.Pattern, " ") {
		return r.Pattern
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return r.Method + " " + r.Pattern
	}
	return "OTHER " + r.Pattern
}

// statusWriter notes the status of the answer, whether it is an event
// stream, and the refusal code a door reported (reqlog.NoteRefusal).
type statusWriter struct {
	http.ResponseWriter
	o       *observer
	r       *http.Request
	status  int
	stream  string // the route, once the answer is known to be an event stream
	door    string // of the refusal
	refusal string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			w.stream = routeLabel(w.r)
			w.o.eventStreams.WithLabelValues(w.stream).Inc()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// NoteRefusal implements reqlog.Refusals.
func (w *statusWriter) NoteRefusal(door, code string) { w.door, w.refusal = door, code }

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TrackConnections counts hs's open client connections (kept-alive idle
// ones included) in foundry_http_connections on reg, the server's
// registry. Call it before hs serves.
func TrackConnections(reg prometheus.Registerer, hs *http.Server) {
	open := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "foundry_http_connections",
		Help: "Client connections open now (HTTP/1.1 keep-alive ones idle between requests included).",
	})
	reg.MustRegister(open)
	prev := hs.ConnState
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Inc()
		case http.StateClosed, http.StateHijacked:
			open.Dec()
		}
		if prev != nil {
			prev(c, st)
		}
	}
}
