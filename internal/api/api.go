// Package api is the REST API under /api/: the one door for people's
// browsers (the web app) and for scripts. A browser is authenticated by its
// session cookie, and every mutating request carries the session's CSRF
// token in the X-CSRF-Token header; a script sends Authorization: Bearer
// <token> (a personal access token or an OAuth access token), and the
// token's scopes and grant apply as they do over MCP. Every error is an RFC
// 9457 problem document (problem.go); every mutating call on a Note carries
// the version it was based on (precondition.go). The OpenAPI 3.1 document
// of it all is GET /api/openapi.json (openapi.json).
//
// Members see and revoke their own connections and tokens; the owner sees
// and revokes the workspace's. Every person of the workspace, owner or
// member, reaches every Note of it.
package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Prefix is where the handler is mounted.
const Prefix = "/api/"

// MaxBody bounds a request body of the calls that take a small one (or none).
const MaxBody = 4 << 10

// MaxTextBody bounds the body of a text save: the markdown tab's limit,
// JSON-escaped, and a little more for the rest of the object.
const MaxTextBody = 6*note.MaxMarkdownBytes + 4<<10

// RoleOwner is the role that sees the whole workspace.
const RoleOwner = "owner"

// Options tune the handler; the zero value is right for a test.
type Options struct {
	// Logger receives internal errors (nil: slog.Default()).
	Logger *slog.Logger
	// Service is the use cases the Notes endpoints call (nil: a new one over
	// the store); the server passes the one MCP uses, so both doors share
	// its cache.
	Service *service.Service
	// Verify resolves a bearer token (nil: personal access tokens only,
	// through auth.Verify); the server passes the one MCP uses.
	Verify auth.Verifier
}

type handler struct {
	st     store.Store
	svc    *service.Service
	verify auth.Verifier
	people auth.People
	log    *slog.Logger
	cop    *http.CrossOriginProtection
	mux    *http.ServeMux
}

// New returns the handler of /api/. st should be the server's store (the
// one wrapped by store.WithTokenCache) so that a revoked token is refused
// at once on this node.
func New(st store.Store, people auth.People, opts Options) http.Handler {
	h := &handler{st: st, svc: opts.Service, verify: opts.Verify, people: people, log: opts.Logger, cop: http.NewCrossOriginProtection()}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.svc == nil {
		h.svc = service.New(st)
	}
	if h.verify == nil {
		h.verify = func(ctx context.Context, secret string) (auth.Principal, error) { return auth.Verify(ctx, st, secret) }
	}
	h.mux = http.NewServeMux()
	byPath := map[string][]route{}
	var order []string
	for _, rt := range h.routes() {
		if byPath[rt.path] == nil {
			order = append(order, rt.path)
		}
		byPath[rt.path] = append(byPath[rt.path], rt)
	}
	for _, path := range order {
		h.mux.Handle(path, h.dispatch(byPath[path]))
	}
	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, problem.New(problem.NotFound, "path", "%s is not an API path: the paths are listed in GET /api/openapi.json", problem.Excerpt(r.URL.Path)))
	})
	return h
}

// access is who may call a route.
type access int

const (
	public         access = iota // anyone (the OpenAPI document)
	sessionOnly                  // a person signed in, never a token
	sessionOrToken               // a person, or a token with the route's scope
)

// route is one method on one path (ServeMux's pattern syntax, which is
// OpenAPI's path template syntax too).
type route struct {
	method, path string
	access       access
	scope        string // a token's scope for the call
	maxBody      int64
	serve        func(w http.ResponseWriter, r *http.Request, c *caller)
}

// Route is one method and path the handler serves, as the OpenAPI document
// names it, and who may call it.
type Route struct {
	Method, Path string
	// Access is who may call it: AccessPublic, AccessSession or
	// AccessSessionOrToken.
	Access string
	// Scope is what a token needs for it ("" where no token may call it).
	Scope string
}

// Who may call a Route.
const (
	AccessPublic         = "public"           // anyone, signed in or not
	AccessSession        = "session"          // a person signed in, never a token
	AccessSessionOrToken = "session or token" // a person, or a token with the Scope
)

// Routes lists every route of the handler.
func Routes() []Route {
	var out []Route
	for _, rt := range (&handler{}).routes() {
		r := Route{Method: rt.method, Path: rt.path, Access: AccessSessionOrToken, Scope: rt.scope}
		switch rt.access {
		case public:
			r.Access = AccessPublic
		case sessionOnly:
			r.Access = AccessSession
		}
		out = append(out, r)
	}
	return out
}

func (h *handler) routes() []route {
	read, write := auth.ScopeRead, auth.ScopeWrite
	return []route{
		{"GET", "/api/openapi.json", public, "", MaxBody, h.openapi},
		{"GET", "/api/me", sessionOnly, "", MaxBody, h.me},
		{"GET", "/api/connections", sessionOnly, "", MaxBody, h.list},
		{"DELETE", "/api/connections/{id}", sessionOnly, "", MaxBody, h.revoke},
		{"GET", "/api/notes", sessionOrToken, read, MaxBody, h.listNotes},
		{"POST", "/api/notes", sessionOrToken, write, MaxBody, h.createNote},
		{"GET", "/api/notes/{id}", sessionOrToken, read, MaxBody, h.getNote},
		{"PATCH", "/api/notes/{id}", sessionOrToken, write, MaxBody, h.updateNote},
		{"DELETE", "/api/notes/{id}", sessionOrToken, write, MaxBody, h.deleteNote},
		{"GET", "/api/notes/{id}/tabs/{tab_id}", sessionOrToken, read, MaxBody, h.getTab},
		{"PUT", "/api/notes/{id}/tabs/{tab_id}/text", sessionOrToken, write, MaxTextBody, h.putText},
		{"POST", "/api/notes/{id}/tabs", sessionOrToken, write, MaxBody, h.createTab},
		{"PATCH", "/api/notes/{id}/tabs/{tab_id}", sessionOrToken, write, MaxBody, h.updateTab},
		{"DELETE", "/api/notes/{id}/tabs/{tab_id}", sessionOrToken, write, MaxBody, h.deleteTab},
		{"POST", "/api/notes/{id}/sources", sessionOrToken, write, MaxBody, h.addSource},
		{"DELETE", "/api/notes/{id}/sources/{source_id}", sessionOrToken, write, MaxBody, h.deleteSource},
		{"POST", "/api/notes/{id}/files", sessionOrToken, write, MaxUploadBody, h.uploadFile},
		{"GET", "/api/notes/{id}/files/{file_id}", sessionOrToken, read, MaxBody, h.downloadFile},
		{"DELETE", "/api/notes/{id}/files/{file_id}", sessionOrToken, write, MaxBody, h.deleteFile},
		{"POST", "/api/notes/{id}/tabs/{tab_id}/slides", sessionOrToken, write, MaxSlideBody, h.addSlide},
		{"PATCH", "/api/notes/{id}/tabs/{tab_id}/slides/{slide_id}", sessionOrToken, write, MaxSlideBody, h.updateSlide},
		{"DELETE", "/api/notes/{id}/tabs/{tab_id}/slides/{slide_id}", sessionOrToken, write, MaxBody, h.deleteSlide},
		{"GET", "/api/notes/{id}/tabs/{tab_id}/cells", sessionOrToken, read, MaxBody, h.getCells},
		{"PUT", "/api/notes/{id}/tabs/{tab_id}/cells", sessionOrToken, write, MaxCellsBody, h.putCells},
		{"POST", "/api/notes/{id}/tabs/{tab_id}/sheets", sessionOrToken, write, MaxBody, h.addSheet},
		{"PATCH", "/api/notes/{id}/tabs/{tab_id}/sheets/{sheet_id}", sessionOrToken, write, MaxBody, h.renameSheet},
		{"DELETE", "/api/notes/{id}/tabs/{tab_id}/sheets/{sheet_id}", sessionOrToken, write, MaxBody, h.deleteSheet},
		{"GET", "/api/notes/{id}/history", sessionOrToken, read, MaxBody, h.history},
		{"GET", "/api/notes/{id}/versions/{version}", sessionOrToken, read, MaxBody, h.getVersion},
		{"GET", "/api/notes/{id}/versions/{version}/tabs/{tab_id}", sessionOrToken, read, MaxBody, h.getVersionTab},
		{"GET", "/api/events", sessionOrToken, read, MaxBody, h.events},
		{"POST", "/api/notes/{id}/restore", sessionOrToken, write, MaxBody, h.restore},
		{"GET", "/api/rooms", sessionOnly, "", MaxBody, h.listRooms},
		{"GET", "/api/rooms/{room_id}", sessionOnly, "", MaxBody, h.getRoom},
		{"PATCH", "/api/rooms/{room_id}/apps/{instance_id}", sessionOnly, "", MaxBody, h.updateApp},
		{"DELETE", "/api/rooms/{room_id}/apps/{instance_id}", sessionOnly, "", MaxBody, h.removeApp},
		{"GET", "/api/rooms/{room_id}/apps/{instance_id}/bundle", sessionOnly, "", MaxBody, h.appBundle},
		{"GET", "/api/proposals", sessionOnly, "", MaxBody, h.listProposals},
		{"GET", "/api/proposals/count", sessionOnly, "", MaxBody, h.proposalCount},
		{"GET", "/api/proposals/events", sessionOnly, "", MaxBody, h.proposalEvents},
		{"GET", "/api/proposals/{proposal_id}", sessionOnly, "", MaxBody, h.getProposal},
		{"POST", "/api/proposals/{proposal_id}/approve", sessionOnly, "", MaxBody, h.approveProposal},
		{"POST", "/api/proposals/{proposal_id}/decline", sessionOnly, "", MaxBody, h.declineProposal},
	}
}

// callerKey holds the *caller in a request's context.
type callerKey struct{}

// caller is who is calling: a person (by session) or a token.
type caller struct {
	person *auth.Person   // signed in by session; nil for a token
	svc    service.Caller // what the service acts for
	ws     string         // the workspace
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.Error("api: handler panicked", "path", r.URL.Path, "panic", v)
			writeProblem(w, http.StatusInternalServerError, problem.New(problem.Internal, "", "Foundry failed to answer; the error was logged, try again"))
		}
	}()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// dispatch serves the routes of one path: the method picks the route, then
// the caller is authenticated for it.
func (h *handler) dispatch(rs []route) http.Handler {
	var allow []string
	for _, rt := range rs {
		allow = append(allow, rt.method)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rt *route
		for i := range rs {
			if rs[i].method == r.Method || (rs[i].method == http.MethodGet && r.Method == http.MethodHead) {
				rt = &rs[i]
			}
		}
		if rt == nil {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeProblem(w, http.StatusMethodNotAllowed, problem.New(CodeMethodNotAllowed, "method", "%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), problem.Excerpt(r.Method)))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, rt.maxBody)
		if rt.access == public {
			rt.serve(w, r, nil)
			return
		}
		c, ok := h.authenticate(w, r, rt)
		if !ok {
			return
		}
		rt.serve(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)), c)
	})
}

// authenticate finds the caller of r, or answers why there is none.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request, rt *route) (*caller, bool) {
	mutating := r.Method != http.MethodGet && r.Method != http.MethodHead
	if authz := r.Header.Get("Authorization"); authz != "" {
		scheme, secret, _ := strings.Cut(authz, " ")
		secret = strings.TrimSpace(secret)
		if !strings.EqualFold(scheme, "Bearer") || secret == "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_request"`)
			writeProblem(w, http.StatusUnauthorized, problem.New(CodeUnauthenticated, "Authorization", "send Authorization: Bearer <token> (a personal access token fdy_… or an OAuth access token), or call from a signed-in browser"))
			return nil, false
		}
		if rt.access == sessionOnly {
			writeProblem(w, http.StatusForbidden, problem.New(service.PersonOnly, "Authorization", "%s is for a person signed in to the web app; a token cannot call it", rt.path))
			return nil, false
		}
		p, err := h.verify(r.Context(), secret)
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidToken) {
				h.internal(w, r, err)
				return nil, false
			}
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			writeProblem(w, http.StatusUnauthorized, problem.New(CodeUnauthenticated, "Authorization", "%s", auth.ErrInvalidToken.Error()))
			return nil, false
		}
		if !p.Has(rt.scope) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, rt.scope))
			writeProblem(w, http.StatusForbidden, problem.New(problem.Scope, "Authorization", "%s %s needs the %s scope; this token has %s", r.Method, rt.path, rt.scope, cmp.Or(strings.Join(p.Scopes, " "), "none")).
				With("required_scope", rt.scope))
			return nil, false
		}
		return &caller{svc: service.TokenCaller(p), ws: p.Workspace}, true
	}
	p, ok := h.people.Current(r)
	if !ok {
		signin := h.people.SignInURL("/")
		if u, err := url.Parse(signin); err == nil && u.Path != "" {
			signin = u.Path
		}
		writeProblem(w, http.StatusUnauthorized, problem.New(CodeUnauthenticated, "", "Sign in at %s", signin))
		return nil, false
	}
	if mutating {
		if err := h.cop.Check(r); err != nil {
			writeProblem(w, http.StatusForbidden, problem.New(CodeCrossOrigin, "Origin", "a cross-origin %s is refused: call the API from Foundry's own pages", r.Method))
			return nil, false
		}
		if r.Header.Get(auth.CSRFHeader) == "" {
			writeProblem(w, http.StatusForbidden, problem.New(CodeCSRFMissing, auth.CSRFHeader, "the %s header is missing: send the csrf_token of GET /api/me in it", auth.CSRFHeader))
			return nil, false
		}
		if !h.people.CheckCSRF(r, p) {
			writeProblem(w, http.StatusForbidden, problem.New(CodeCSRFInvalid, auth.CSRFHeader, "the %s header is not this session's CSRF token: read it again from GET /api/me", auth.CSRFHeader))
			return nil, false
		}
	}
	ws := p.Session.Workspace
	if ws == "" {
		ws = p.User.Workspace
	}
	return &caller{person: &p, svc: service.PersonCaller(ws, p.User.ID), ws: ws}, true
}

// owns is the user whose entries p may see: "" for the owner (all of the
// workspace's).
func owns(p auth.Person) string {
	if p.User.Role == RoleOwner {
		return ""
	}
	return p.User.ID
}

func (h *handler) me(w http.ResponseWriter, r *http.Request, c *caller) {
	p, ws := *c.person, c.ws
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

func (h *handler) list(w http.ResponseWriter, r *http.Request, c *caller) {
	p, ws := *c.person, c.ws
	out, err := List(r.Context(), h.st, ws, owns(p))
	if err != nil {
		h.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"connections": out})
}

func (h *handler) revoke(w http.ResponseWriter, r *http.Request, c *caller) {
	p, ws, id := *c.person, c.ws, r.PathValue("id")
	// A body is not part of the call; one larger than MaxBody is refused.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		writeProblem(w, http.StatusRequestEntityTooLarge, problem.New(problem.Limit, "body", "DELETE takes no body (at most %d bytes are read)", MaxBody))
		return
	}
	err := Revoke(r.Context(), h.st, ws, owns(p), id)
	var pr *problem.Problem
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &pr) && pr.Code == problem.NotFound:
		writeProblem(w, http.StatusNotFound, pr)
	case errors.As(err, &pr) && pr.Details["revoked_at"] != nil:
		writeProblem(w, http.StatusConflict, pr)
	case errors.As(err, &pr):
		writeProblem(w, http.StatusBadRequest, pr)
	default:
		h.internal(w, r, err)
	}
}

func (h *handler) internal(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the caller left
	}
	h.log.Error("api: request failed", "path", r.URL.Path, "cause", err)
	writeProblem(w, http.StatusInternalServerError, problem.New(problem.Internal, "", "Foundry failed to answer; the error was logged, try again"))
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
