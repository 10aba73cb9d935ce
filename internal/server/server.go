// Package server assembles Foundry: it opens the store named by the
// configuration and mounts every door on one mux.
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"foundry/internal/account"
	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/mcpserver"
	"foundry/internal/oauth"
	"foundry/internal/oauth/clients"
	"foundry/internal/problem"
	"foundry/internal/reqlog"
	"foundry/internal/sandbox"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/sqlite"
	"foundry/internal/web"
)

// Config names where the data lives and how the server behaves.
type Config struct {
	DataDir   string // SQLite folder (default ./foundry-data)
	Database  string // postgres://… to use PostgreSQL instead
	Sync      string // SQLite synchronous: full (default) or normal
	PublicURL string
	Toolsets  []string
	ReadOnly  bool
	Origins   []string
	Version   string
	Logger    *slog.Logger
	// Caps of concurrent long polls (poll_resource_events with
	// wait_seconds > 0) and subscriptions/listen streams, per token and on
	// this node; zero: the defaults (8 and 1024 each).
	WaitersPerToken, WaitersPerNode int
	StreamsPerToken, StreamsPerNode int
	ListenLifetime                  time.Duration // zero: 10 minutes
	// PasswordHashes bounds the password hashes (sign-ins) this node
	// computes at once, 19 MiB each; zero: account.HashSlots of the Go
	// memory limit.
	PasswordHashes int
	// Files (blobs.go): the grace period after which an upload no version
	// references is removed (zero: 1 hour), and the bytes one workspace's
	// files may hold, uploads not yet in a Note included (zero: no limit).
	BlobGrace         time.Duration
	MaxWorkspaceBytes int64

	// OAuth: access token lifetime (zero: 1 hour), registrations per
	// client address per hour (zero: 20; negative: no limit), and the
	// client that fetches client ID metadata documents (nil: the
	// SSRF-guarded one; tests pass one that trusts their TLS server).
	AccessTokenLifespan time.Duration
	RegisterRate        int
	ClientMetadataHTTP  *http.Client

	// MetricsOwnAddr: /metrics is not served on Handler; the caller serves
	// Server.MetricsHandler on its own address (serve --metrics-addr).
	MetricsOwnAddr bool

	// Limits are the rate limits of /mcp and /api/ (limits.go); zero:
	// none, serve gives DefaultLimits.
	Limits Limits
}

// OpenStore opens the configured store and applies migrations, the Notes
// still stored whole included (service.UpgradeNotes).
func OpenStore(ctx context.Context, c Config) (store.Store, error) {
	var st store.Store
	var err error
	switch {
	case c.Database != "":
		if !strings.HasPrefix(c.Database, "postgres://") && !strings.HasPrefix(c.Database, "postgresql://") {
			return nil, problem.New(problem.Invalid, "database", "%q is not a postgres:// URL (leave it out to use SQLite in --data)", c.Database)
		}
		st, err = postgres.Open(ctx, c.Database)
	default:
		if c.DataDir == "" {
			c.DataDir = "foundry-data"
		}
		st, err = sqlite.Open(ctx, c.DataDir, sqlite.Options{Sync: c.Sync})
	}
	if err != nil {
		return nil, err
	}
	n, err := service.UpgradeNotes(ctx, st)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("upgrade Notes to storage by parts: %w", err)
	}
	if n > 0 && c.Logger != nil {
		c.Logger.Info("Notes now stored by parts", "notes", n)
	}
	return st, nil
}

// Server is the assembled application.
type Server struct {
	Store   store.Store
	Service *service.Service
	MCP     *mcpserver.Handler
	People  *account.Manager  // sign-in, sessions
	Clients *clients.Registry // OAuth client registration and lookup
	OAuth   *oauth.Server     // nil if it could not start (OAuthErr)
	// OAuthErr is why the authorization server did not start (its store
	// did not answer): personal access tokens still work, and its routes
	// answer 503. serve refuses to run with it.
	OAuthErr error
	// Ready answers /readyz; Drain it first when shutting down.
	Ready *Readiness
	// Metrics is this server's Prometheus registry, served at /metrics:
	// each part registers its own collectors on it.
	Metrics *prometheus.Registry
	// MetricsHandler serves Metrics in Prometheus' text format: on Handler
	// at GET /metrics, unless Config.MetricsOwnAddr.
	MetricsHandler http.Handler
	// Blobs removes unreferenced uploads' bytes (blobs.go): Start it
	// when serving.
	Blobs *BlobCollector
	// Handler serves every door.
	Handler http.Handler
}

// Toolsets are the MCP toolsets a server can serve (Config.Toolsets).
var Toolsets = []string{mcpserver.ToolsetNotes, mcpserver.ToolsetRooms, mcpserver.ToolsetEvents}

// New mounts every door on one mux.
func New(st store.Store, c Config) *Server {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = reqlog.NewLogger(c.Logger) // a request's log lines carry its request_id
	metrics := newMetrics()
	obs := newObserver(metrics, c.Version)
	raw := st
	// Every call verifies its token: from memory, re-checked in the store
	// at most every store.TokenRecheck (see store.WithTokenCache).
	st = store.WithTokenCache(st)
	svc := service.New(st)
	svc.SetWaitLimits(c.WaitersPerToken, c.WaitersPerNode)
	svc.MaxWorkspaceBytes = c.MaxWorkspaceBytes
	publicURL := strings.TrimRight(c.PublicURL, "/")
	// Proposals are reviewed on the web app's inbox (the CLI stays the fallback).
	reviewPage := ""
	if publicURL != "" {
		reviewPage = publicURL + "/approvals"
	}
	people := account.New(st, account.Options{PublicURL: publicURL, Logger: c.Logger, PasswordHashes: c.PasswordHashes})
	reg := clients.New(st, clients.Options{Logger: c.Logger, RegisterRate: c.RegisterRate, HTTPClient: c.ClientMetadataHTTP})
	mcpOpts := mcpserver.Options{
		PublicURL: c.PublicURL, Toolsets: c.Toolsets, ReadOnly: c.ReadOnly, AllowedOrigins: c.Origins,
		Version: c.Version, Logger: c.Logger, ReviewPage: reviewPage,
		ListenLifetime: c.ListenLifetime, MaxStreamsPerToken: c.StreamsPerToken, MaxStreamsPerNode: c.StreamsPerNode,
		Observe: obs.toolCall,
	}
	issuer := publicURL
	if issuer == "" {
		issuer = "http://127.0.0.1"
	}
	as, asErr := oauth.New(st, oauth.Options{
		Issuer: issuer, Resource: issuer + "/mcp", People: people, LookupClient: reg.Lookup,
		Logger: c.Logger, AccessTokenLifespan: c.AccessTokenLifespan,
	})
	var apiVerify auth.Verifier // nil: personal access tokens only
	if asErr == nil {
		mcpOpts.Verify = as.Verify // OAuth access tokens and personal access tokens alike
		apiVerify = as.VerifyAPI   // OAuth access tokens only for the API's audience
	} else {
		c.Logger.Error("the OAuth authorization server did not start: MCP clients can connect with personal access tokens only", "err", asErr)
	}
	h := mcpserver.New(svc, mcpOpts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	// Browser-based clients (the MCP Inspector) read the metadata from
	// another origin: any origin may, never with credentials.
	prm := anyOrigin(http.HandlerFunc(h.ResourceMetadata))
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		mux.Handle("GET "+p, prm)
		mux.Handle("OPTIONS "+p, prm)
	}
	people.Mount(mux)
	reg.Mount(mux)
	if asErr == nil {
		as.Mount(mux)
	} else {
		unavailable := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"temporarily_unavailable","error_description":"the authorization server did not start; see the server log"}` + "\n"))
		}
		for _, p := range []string{"/.well-known/oauth-authorization-server", "/authorize", "/token", "/revoke"} {
			mux.HandleFunc(p, unavailable)
		}
	}
	mux.Handle(api.Prefix, api.New(svc, people, api.Options{Logger: c.Logger, Verify: apiVerify, PublicURL: publicURL}))
	ready := newReadiness(st, c.Logger)
	// The store a Server is built on has been migrated (OpenStore, or the
	// store's own Open).
	ready.SetDetail("migrations", func() any { return "done" })
	mux.HandleFunc("GET /healthz", serveHealth)
	mux.HandleFunc("GET /readyz", ready.serveReady)
	registerParts(metrics, raw, svc, h, people)
	obs.knowTools(h.Tools())
	// A collector that fails (the blob totals, while the database does not
	// answer) leaves its metrics out of the scrape, never the others: the
	// moment the database fails is when the rest are most needed.
	metricsHandler := promhttp.HandlerFor(metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promErrorLog{c.Logger}})
	if !c.MetricsOwnAddr {
		mux.Handle("GET /metrics", metricsHandler)
	}
	// The people's web app takes / and its client routes (/notes, …) and
	// its own assets, ahead of every other door: the sign-in pages'
	// signed-in page at / gives way to it.
	root := mux
	if app, err := web.New(people); err != nil {
		c.Logger.Error("the web app is not served", "err", err)
	} else {
		root = http.NewServeMux()
		app.Mount(root)
		root.Handle("/", mux)
	}
	if files, err := web.Sandbox(); err != nil {
		c.Logger.Error("Room apps cannot run: the sandbox page is not served", "err", err)
	} else if sb, err := sandbox.New(files); err != nil {
		c.Logger.Error("Room apps cannot run: the sandbox page is not served", "err", err)
	} else {
		sb.Mount(mux)
	}
	return &Server{Store: st, Service: svc, MCP: h, People: people, Clients: reg, OAuth: as, OAuthErr: asErr,
		Ready: ready, Metrics: metrics, MetricsHandler: metricsHandler,
		Blobs:   newBlobCollector(st, c, metrics, ready, svc.PurgeTrash),
		Handler: obs.observeRequests(c.Logger, Recover(c.Logger, newLimits(c.Limits, metrics, c.Logger).wrap(root)))}
}

// anyOrigin lets any web origin read a public document, without
// credentials, and answers its preflight.
func anyOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Timeouts of every connection. The read timeout covers headers and body
// (net/http lifts it once the body is read). A long poll waits up to
// service.MaxWait (25 s): the write timeout leaves it 10 s of margin. A
// subscriptions/listen stream is the exception: the MCP front extends its
// write deadline to the stream's lifetime (mcpserver.Options.ListenLifetime,
// 10 minutes by default), after which the stream ends and the client
// listens again.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 60 * time.Second // headers and a body of up to mcpserver.MaxBody
	WriteTimeout      = service.MaxWait + 10*time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 64 << 10
)

// HTTPServer is the http.Server that serves handler on addr, with Foundry's
// timeouts.
func HTTPServer(handler http.Handler, addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Recover turns a panic in any handler into a 500 for that request only,
// logged with its stack; the process goes on serving.
func Recover(l *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &watchWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own way to abort a response
			}
			l.ErrorContext(r.Context(), "panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rw.wrote {
				panic(http.ErrAbortHandler) // too late for a status: cut the response
			}
			h := w.Header()
			for k := range h {
				delete(h, k)
			}
			if id := reqlog.ID(r.Context()); id != "" {
				h.Set(reqlog.Header, id)
			}
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			if strings.HasPrefix(r.URL.Path, "/mcp") {
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32603, "message": "internal error", "data": map[string]string{"request_id": reqlog.ID(r.Context())}}})
				w.Write(append(body, '\n'))
				return
			}
			body, _ := json.Marshal(map[string]string{"error": "internal", "message": "internal error; see the server log", "request_id": reqlog.ID(r.Context())})
			w.Write(append(body, '\n'))
		}()
		next.ServeHTTP(rw, r)
	})
}

// watchWriter notes whether the response has started.
type watchWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *watchWriter) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *watchWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *watchWriter) Flush() {
	w.wrote = true
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *watchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ErrorLog is the http.Server's own log (accept errors, TLS handshakes,
// malformed requests) as lines of l: a TLS handshake that fails is what
// every scanner on the internet causes, so it is a debug line; any other
// is a warning.
func ErrorLog(l *slog.Logger) *log.Logger {
	return log.New(errorLogWriter{l}, "", 0)
}

type errorLogWriter struct{ l *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	lvl := slog.LevelWarn
	if strings.Contains(msg, "TLS handshake error") {
		lvl = slog.LevelDebug
	}
	w.l.Log(context.Background(), lvl, "http server", "err", msg)
	return len(p), nil
}

// promErrorLog is promhttp's log of a collector that failed, as a warning.
type promErrorLog struct{ l *slog.Logger }

func (p promErrorLog) Println(v ...any) {
	p.l.Warn("metrics: a collector failed", "err", fmt.Sprint(v...))
}
