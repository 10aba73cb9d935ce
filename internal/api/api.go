// Package api is the REST API under /api/: the one door for people's
// browsers (the web app) and for scripts. It is HTTP only: it decodes a
// request, reads its preconditions (If-Match, Idempotency-Key),
// authenticates the caller, calls the service's use case for it, and
// answers in HTTP's words (status codes, headers, RFC 9457 problems). What
// is done, and who may do it, is the service's.
//
// A browser is authenticated by its session cookie, and every mutating
// request carries the session's CSRF token in the X-CSRF-Token header; a
// script sends Authorization: Bearer <token> (a personal access token, or
// an OAuth access token whose audience is the API: one issued for the MCP
// endpoint is refused), and the token's scopes and grant apply as they do
// over MCP. The OpenAPI 3.1 document of it all is generated from the
// request and answer types of the routes below (openapi.go) and served at
// GET /api/openapi.json.
package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/reqlog"
	"foundry/internal/service"
)

// Prefix is where the handler is mounted.
const Prefix = "/api/"

// MaxBody bounds a request body of the calls that take a small one (or none).
const MaxBody = 4 << 10

// MaxTextBody bounds the body of a text save: the markdown tab's limit,
// JSON-escaped, and a little more for the rest of the object.
const MaxTextBody = 6*note.MaxMarkdownBytes + 4<<10

// Options tune the handler; the zero value is right for a test.
type Options struct {
	// Logger receives internal errors (nil: slog.Default()).
	Logger *slog.Logger
	// Verify resolves a bearer token (nil: personal access tokens only);
	// the server passes the one MCP uses.
	Verify auth.Verifier
	// PublicURL is the server's configured address as people reach it, for
	// the one-time links of invitations and the workspace's settings ("":
	// the address each request came to).
	PublicURL string
}

type handler struct {
	svc    *service.Service
	verify auth.Verifier
	people auth.People
	public string // Options.PublicURL, without a trailing slash
	log    *slog.Logger
	cop    *http.CrossOriginProtection
	mux    *http.ServeMux
}

// New returns the handler of /api/ over the use cases of svc (whose store
// should be the server's, wrapped by store.WithTokenCache, so that a
// revoked token is refused at once on this node).
func New(svc *service.Service, people auth.People, opts Options) http.Handler {
	h := &handler{svc: svc, verify: opts.Verify, people: people, public: strings.TrimRight(opts.PublicURL, "/"), log: opts.Logger, cop: http.NewCrossOriginProtection()}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.verify == nil {
		h.verify = svc.VerifyToken
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

// route is one operation: a method on a path (ServeMux's pattern syntax,
// which is OpenAPI's path template syntax too), who may call it, and the
// types of its request and answers, which the OpenAPI document is
// generated from and the handler decodes and encodes.
type route struct {
	method, path string
	access       access
	scope        string // a token's scope for the call
	maxBody      int64
	doc          doc
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
	// Summary is what it does, as the OpenAPI document says.
	Summary string
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
		r := Route{Method: rt.method, Path: rt.path, Access: AccessSessionOrToken, Scope: rt.scope, Summary: rt.doc.summary}
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
		{"GET", "/api/openapi.json", public, "", MaxBody, openapiDoc, h.openapi},
		{"GET", "/api/me", sessionOnly, "", MaxBody, meDoc, h.me},
		{"GET", "/api/connections", sessionOnly, "", MaxBody, listConnectionsDoc, h.listConnections},
		{"DELETE", "/api/connections/{id}", sessionOnly, "", MaxBody, revokeConnectionDoc, h.revokeConnection},
		{"GET", "/api/people", sessionOnly, "", MaxBody, listPeopleDoc, h.listPeople},
		{"POST", "/api/people", sessionOnly, "", MaxBody, invitePersonDoc, h.invitePerson},
		{"PATCH", "/api/people/{id}", sessionOnly, "", MaxBody, changeRoleDoc, h.changeRole},
		{"DELETE", "/api/people/{id}", sessionOnly, "", MaxBody, removePersonDoc, h.removePerson},
		{"GET", "/api/workspace", sessionOnly, "", MaxBody, getWorkspaceDoc, h.getWorkspace},
		{"PATCH", "/api/workspace", sessionOnly, "", MaxBody, renameWorkspaceDoc, h.renameWorkspace},
		{"GET", "/api/tokens", sessionOnly, "", MaxBody, listTokensDoc, h.listTokens},
		{"POST", "/api/tokens", sessionOnly, "", MaxBody, createTokenDoc, h.createToken},
		{"DELETE", "/api/tokens/{id}", sessionOnly, "", MaxBody, revokeTokenDoc, h.revokeToken},
		{"GET", "/api/notes", sessionOrToken, read, MaxBody, listNotesDoc, h.listNotes},
		{"GET", "/api/search", sessionOrToken, read, MaxBody, searchDoc, h.search},
		{"POST", "/api/notes", sessionOrToken, write, MaxBody, createNoteDoc, h.createNote},
		{"GET", "/api/notes/{note_id}", sessionOrToken, read, MaxBody, getNoteDoc, h.getNote},
		{"PATCH", "/api/notes/{note_id}", sessionOrToken, write, MaxBody, updateNoteDoc, h.updateNote},
		{"DELETE", "/api/notes/{note_id}", sessionOrToken, write, MaxBody, deleteNoteDoc, h.deleteNote},
		{"GET", "/api/notes/{note_id}/tabs/{tab_id}", sessionOrToken, read, MaxBody, getTabDoc, h.getTab},
		{"PUT", "/api/notes/{note_id}/tabs/{tab_id}/text", sessionOrToken, write, MaxTextBody, putTextDoc, h.putText},
		{"GET", "/api/notes/{note_id}/text", sessionOrToken, read, MaxBody, pullTextDoc, h.pullText},
		{"POST", "/api/notes/{note_id}/text", sessionOrToken, write, MaxTextBody, pushTextDoc, h.pushText},
		{"POST", "/api/notes/{note_id}/presence", sessionOnly, "", MaxBody, presenceDoc, h.presence},
		{"POST", "/api/notes/{note_id}/tabs", sessionOrToken, write, MaxBody, createTabDoc, h.createTab},
		{"POST", "/api/notes/{note_id}/tabs/import", sessionOrToken, write, MaxUploadBody, importSheetDoc, h.importSheet},
		{"GET", "/api/notes/{note_id}/tabs/{tab_id}/export", sessionOrToken, read, MaxBody, exportTabDoc, h.exportTab},
		{"PATCH", "/api/notes/{note_id}/tabs/{tab_id}", sessionOrToken, write, MaxBody, updateTabDoc, h.updateTab},
		{"DELETE", "/api/notes/{note_id}/tabs/{tab_id}", sessionOrToken, write, MaxBody, deleteTabDoc, h.deleteTab},
		{"POST", "/api/notes/{note_id}/sources", sessionOrToken, write, MaxBody, addSourceDoc, h.addSource},
		{"DELETE", "/api/notes/{note_id}/sources/{source_id}", sessionOrToken, write, MaxBody, deleteSourceDoc, h.deleteSource},
		{"POST", "/api/notes/{note_id}/files", sessionOrToken, write, MaxUploadBody, uploadFileDoc, h.uploadFile},
		{"GET", "/api/notes/{note_id}/files/{file_id}", sessionOrToken, read, MaxBody, downloadFileDoc, h.downloadFile},
		{"DELETE", "/api/notes/{note_id}/files/{file_id}", sessionOrToken, write, MaxBody, deleteFileDoc, h.deleteFile},
		{"POST", "/api/notes/{note_id}/tabs/{tab_id}/slides", sessionOrToken, write, MaxSlideBody, addSlideDoc, h.addSlide},
		{"PATCH", "/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", sessionOrToken, write, MaxSlideBody, updateSlideDoc, h.updateSlide},
		{"DELETE", "/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", sessionOrToken, write, MaxBody, deleteSlideDoc, h.deleteSlide},
		{"GET", "/api/notes/{note_id}/tabs/{tab_id}/cells", sessionOrToken, read, MaxBody, getCellsDoc, h.getCells},
		{"PUT", "/api/notes/{note_id}/tabs/{tab_id}/cells", sessionOrToken, write, MaxCellsBody, putCellsDoc, h.putCells},
		{"POST", "/api/notes/{note_id}/tabs/{tab_id}/sheets", sessionOrToken, write, MaxBody, addSheetDoc, h.addSheet},
		{"PATCH", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}", sessionOrToken, write, MaxBody, renameSheetDoc, h.renameSheet},
		{"DELETE", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}", sessionOrToken, write, MaxBody, deleteSheetDoc, h.deleteSheet},
		{"PATCH", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}/layout", sessionOrToken, write, MaxBody, sheetLayoutDoc, h.sheetLayout},
		{"GET", "/api/notes/{note_id}/export", sessionOrToken, read, MaxBody, exportNoteDoc, h.exportNote},
		{"GET", "/api/notes/{note_id}/history", sessionOrToken, read, MaxBody, historyDoc, h.history},
		{"GET", "/api/notes/{note_id}/versions/{version}", sessionOrToken, read, MaxBody, getVersionDoc, h.getVersion},
		{"GET", "/api/notes/{note_id}/versions/{version}/tabs/{tab_id}", sessionOrToken, read, MaxBody, getVersionTabDoc, h.getVersionTab},
		{"GET", "/api/notes/{note_id}/versions/{version}/diff", sessionOrToken, read, MaxBody, getVersionDiffDoc, h.getVersionDiff},
		{"POST", "/api/notes/{note_id}/restore", sessionOrToken, write, MaxBody, restoreDoc, h.restore},
		{"POST", "/api/notes/{note_id}/untrash", sessionOrToken, write, MaxBody, untrashNoteDoc, h.untrashNote},
		{"POST", "/api/notes/{note_id}/duplicate", sessionOrToken, write, MaxBody, duplicateNoteDoc, h.duplicateNote},
		{"GET", "/api/trash", sessionOrToken, read, MaxBody, listTrashDoc, h.listTrash},
		{"GET", "/api/events", sessionOrToken, read, MaxBody, eventsDoc, h.events},
		{"GET", "/api/live", sessionOrToken, read, MaxBody, liveDoc, h.live},
		{"GET", "/api/rooms", sessionOnly, "", MaxBody, listRoomsDoc, h.listRooms},
		{"POST", "/api/rooms", sessionOnly, "", MaxBody, createRoomDoc, h.createRoom},
		{"GET", "/api/rooms/{room_id}", sessionOnly, "", MaxBody, getRoomDoc, h.getRoom},
		{"PATCH", "/api/rooms/{room_id}", sessionOnly, "", MaxBody, renameRoomDoc, h.renameRoom},
		{"DELETE", "/api/rooms/{room_id}", sessionOnly, "", MaxBody, deleteRoomDoc, h.deleteRoom},
		{"PATCH", "/api/rooms/{room_id}/apps/{instance_id}", sessionOnly, "", MaxBody, updateAppDoc, h.updateApp},
		{"DELETE", "/api/rooms/{room_id}/apps/{instance_id}", sessionOnly, "", MaxBody, removeAppDoc, h.removeApp},
		{"GET", "/api/rooms/{room_id}/apps/{instance_id}/bundle", sessionOnly, "", MaxBody, bundleDoc, h.appBundle},
		{"GET", "/api/proposals", sessionOnly, "", MaxBody, listProposalsDoc, h.listProposals},
		{"GET", "/api/proposals/count", sessionOnly, "", MaxBody, proposalCountDoc, h.proposalCount},
		{"GET", "/api/proposals/events", sessionOnly, "", MaxBody, proposalEventsDoc, h.proposalEvents},
		{"GET", "/api/proposals/{proposal_id}", sessionOnly, "", MaxBody, getProposalDoc, h.getProposal},
		{"POST", "/api/proposals/{proposal_id}/approve", sessionOnly, "", MaxBody, decideDoc("Approve and create: the app joins the launcher"), h.approveProposal},
		{"POST", "/api/proposals/{proposal_id}/decline", sessionOnly, "", MaxBody, decideDoc("Decline: the app never reaches the launcher"), h.declineProposal},
	}
}

// callerKey holds the *caller in a request's context.
type callerKey struct{}

// caller is who is calling: a person (by session) or a token.
type caller struct {
	person *auth.Person   // signed in by session; nil for a token
	svc    service.Caller // who the service acts for
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.ErrorContext(r.Context(), "api: handler panicked", "path", r.URL.Path, "panic", v)
			writeProblem(w, http.StatusInternalServerError, internalProblem(r))
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
			writeProblem(w, http.StatusUnauthorized, problem.New(CodeUnauthenticated, "Authorization", "send Authorization: Bearer <token> (a personal access token fdy_…), or call from a signed-in browser"))
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
			if ae := (*auth.AudienceError)(nil); errors.As(err, &ae) {
				// A valid token for another resource: say which, so the
				// caller does not reconnect in a loop.
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", error_description=%q`, ae.Error()))
				writeProblem(w, http.StatusUnauthorized, problem.New(CodeUnauthenticated, "Authorization", "%s", ae.Error()))
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
		return &caller{svc: service.Agent(p)}, true
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
	ws := cmp.Or(p.Session.Workspace, p.User.Workspace)
	return &caller{person: &p, svc: service.Person(ws, p.User.ID, p.User.Role)}, true
}

// Me is GET /api/me's answer: who is signed in, and the CSRF token their
// mutating calls send.
type Me struct {
	User      MeUser      `json:"user"`
	Workspace MeWorkspace `json:"workspace"`
	CSRFToken string      `json:"csrf_token"`
}

// MeUser is the person signed in.
type MeUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
}

// MeWorkspace is their workspace.
type MeWorkspace struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

var meDoc = doc{summary: "Who is signed in", resp: Me{}}

func (h *handler) me(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	p := *c.person
	name, err := h.svc.WorkspaceName(r.Context(), c.svc)
	if err != nil {
		h.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, Me{
		User:      MeUser{ID: p.User.ID, Email: p.User.Email, Name: p.User.Name, Role: p.User.Role},
		Workspace: MeWorkspace{ID: c.svc.Workspace, Name: name},
		CSRFToken: p.Session.CSRF,
	})
}

func (h *handler) internal(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the caller left
	}
	h.log.ErrorContext(r.Context(), "api: request failed", "path", r.URL.Path, "cause", err)
	writeProblem(w, http.StatusInternalServerError, internalProblem(r))
}

// internalProblem answers a fault: no cause, only the request ID the log
// lines of it carry, for the operator to find them.
func internalProblem(r *http.Request) *problem.Problem {
	p := problem.New(problem.Internal, "", "Foundry failed to answer; the error was logged, try again")
	if id := reqlog.ID(r.Context()); id != "" {
		p = p.With("request_id", id)
	}
	return p
}
