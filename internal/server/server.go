// Package server assembles Foundry: it opens the store named by the
// configuration and mounts every door on one mux.
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"foundry/internal/mcpserver"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/sqlite"
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
}

// OpenStore opens the configured store and applies migrations.
func OpenStore(ctx context.Context, c Config) (store.Store, error) {
	if c.Database != "" {
		if !strings.HasPrefix(c.Database, "postgres://") && !strings.HasPrefix(c.Database, "postgresql://") {
			return nil, fmt.Errorf("--database: %q is not a postgres:// URL (leave it out to use SQLite in --data)", c.Database)
		}
		return postgres.Open(ctx, c.Database)
	}
	if c.DataDir == "" {
		c.DataDir = "foundry-data"
	}
	return sqlite.Open(ctx, c.DataDir, sqlite.Options{Sync: c.Sync})
}

// Server is the assembled application.
type Server struct {
	Store   store.Store
	Service *service.Service
	MCP     *mcpserver.Handler
	Handler http.Handler
}

// New mounts every door on one mux.
func New(st store.Store, c Config) *Server {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	svc := service.New(st)
	h := mcpserver.New(svc, mcpserver.Options{
		PublicURL: c.PublicURL, Toolsets: c.Toolsets, ReadOnly: c.ReadOnly, AllowedOrigins: c.Origins,
		Version: c.Version, Logger: c.Logger,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", h.ResourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", h.ResourceMetadata)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if _, err := st.LastCursor(r.Context(), "", "", ""); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	return &Server{Store: st, Service: svc, MCP: h, Handler: logRequests(c.Logger, mux)}
}

func logRequests(l *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if l.Enabled(r.Context(), slog.LevelDebug) {
			l.Debug("request", "method", r.Method, "path", r.URL.Path)
		}
	})
}
