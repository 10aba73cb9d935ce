// Package api is the REST API that people's browsers (the web app) call,
// under /api/: it is authenticated by the browser session, never by a
// bearer token, and every mutating request carries the session's CSRF
// token in the X-CSRF-Token header.
//
//	GET    /api/me                  who is signed in, their workspace and CSRF token
//	GET    /api/connections         connected OAuth clients and personal access tokens
//	DELETE /api/connections/{id}    revoke one of them
//
// Members see and revoke their own connections and tokens; the owner sees
// and revokes the workspace's.
package api

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Prefix is where the handler is mounted.
const Prefix = "/api/"

// MaxBody bounds a request body: no call of this API takes one.
const MaxBody = 4 << 10

// RoleOwner is the role that sees the whole workspace.
const RoleOwner = "owner"

// Options tune the handler; the zero value is right for a server.
type Options struct {
	// Logger receives internal errors (nil: slog.Default()).
	Logger *slog.Logger
}

type handler struct {
	st     store.Store
	people auth.People
	log    *slog.Logger
	cop    *http.CrossOriginProtection
}

// New returns the handler of /api/. st should be the server's store (the
// one wrapped by store.WithTokenCache) so that a revoked token is refused
// at once on this node.
func New(st store.Store, people auth.People, opts Options) http.Handler {
	h := &handler{st: st, people: people, log: opts.Logger, cop: http.NewCrossOriginProtection()}
	if h.log == nil {
		h.log = slog.Default()
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.Error("api: handler panicked", "path", r.URL.Path, "panic", v)
			writeJSON(w, http.StatusInternalServerError, problem.New(problem.Internal, "", "Foundry failed to answer; the error was logged, try again"))
		}
	}()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)

	route, id, ok := h.route(r.URL.Path)
	if !ok {
		writeJSON(w, http.StatusNotFound, problem.New(problem.NotFound, "path", "%s is not an API path: use GET /api/me, GET /api/connections or DELETE /api/connections/{id}", problem.Excerpt(r.URL.Path)))
		return
	}
	allowed := map[string]string{"me": "GET", "connections": "GET", "connection": "DELETE"}[route]
	if r.Method != allowed && !(allowed == "GET" && r.Method == http.MethodHead) {
		w.Header().Set("Allow", allowed)
		writeJSON(w, http.StatusMethodNotAllowed, problem.New("method_not_allowed", "method", "%s takes %s, not %s", r.URL.Path, allowed, problem.Excerpt(r.Method)))
		return
	}
	p, ok := h.people.Current(r)
	if !ok {
		signin := h.people.SignInURL("/")
		if u, err := url.Parse(signin); err == nil && u.Path != "" {
			signin = u.Path
		}
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthenticated", "message": "Sign in at " + signin})
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := h.cop.Check(r); err != nil {
			writeJSON(w, http.StatusForbidden, problem.New("cross_origin", "Origin", "a cross-origin %s is refused: call the API from Foundry's own pages", r.Method))
			return
		}
		if r.Header.Get(auth.CSRFHeader) == "" {
			writeJSON(w, http.StatusForbidden, problem.New("csrf_missing", auth.CSRFHeader, "the %s header is missing: send the csrf_token of GET /api/me in it", auth.CSRFHeader))
			return
		}
		if !h.people.CheckCSRF(r, p) {
			writeJSON(w, http.StatusForbidden, problem.New("csrf_invalid", auth.CSRFHeader, "the %s header is not this session's CSRF token: read it again from GET /api/me", auth.CSRFHeader))
			return
		}
	}
	ws := p.Session.Workspace
	if ws == "" {
		ws = p.User.Workspace
	}
	switch route {
	case "me":
		h.me(w, r, p, ws)
	case "connections":
		h.list(w, r, p, ws)
	case "connection":
		h.revoke(w, r, p, ws, id)
	}
}

// route names the route of path, and the ID in it.
func (h *handler) route(path string) (route, id string, ok bool) {
	rest, found := strings.CutPrefix(path, Prefix)
	if !found {
		return "", "", false
	}
	switch {
	case rest == "me":
		return "me", "", true
	case rest == "connections":
		return "connections", "", true
	}
	if id, found := strings.CutPrefix(rest, "connections/"); found && id != "" && !strings.Contains(id, "/") {
		return "connection", id, true
	}
	return "", "", false
}

// owns is the user whose entries p may see: "" for the owner (all of the
// workspace's).
func owns(p auth.Person) string {
	if p.User.Role == RoleOwner {
		return ""
	}
	return p.User.ID
}

func (h *handler) me(w http.ResponseWriter, r *http.Request, p auth.Person, ws string) {
	all, err := h.st.Workspaces(r.Context())
	if err != nil {
		h.internal(w, r, err)
		return
	}
	workspace := map[string]string{"id": ws, "name": ""}
	for _, x := range all {
		if x.ID == ws {
			workspace["name"] = x.Name
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"user":       map[string]string{"id": p.User.ID, "email": p.User.Email, "name": p.User.Name, "role": p.User.Role},
		"workspace":  workspace,
		"csrf_token": p.Session.CSRF,
	})
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, p auth.Person, ws string) {
	out, err := List(r.Context(), h.st, ws, owns(p))
	if err != nil {
		h.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"connections": out})
}

func (h *handler) revoke(w http.ResponseWriter, r *http.Request, p auth.Person, ws, id string) {
	// A body is not part of the call; one larger than MaxBody is refused.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, problem.New(problem.Limit, "body", "DELETE takes no body (at most %d bytes are read)", MaxBody))
		return
	}
	err := Revoke(r.Context(), h.st, ws, owns(p), id)
	var pr *problem.Problem
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &pr) && pr.Code == problem.NotFound:
		writeJSON(w, http.StatusNotFound, pr)
	case errors.As(err, &pr) && pr.Details["revoked_at"] != nil:
		writeJSON(w, http.StatusConflict, pr)
	case errors.As(err, &pr):
		writeJSON(w, http.StatusBadRequest, pr)
	default:
		h.internal(w, r, err)
	}
}

func (h *handler) internal(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the caller left
	}
	h.log.Error("api: request failed", "path", r.URL.Path, "cause", err)
	writeJSON(w, http.StatusInternalServerError, problem.New(problem.Internal, "", "Foundry failed to answer; the error was logged, try again"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal_error","message":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
