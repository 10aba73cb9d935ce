package api

import (
	"errors"
	"io"
	"net/http"
	"net/url"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// Settings: the workspace's people, its personal access tokens and its
// name. Every person sees the people and their own tokens; owners invite,
// change roles, remove, rename, and see every token.

// PeopleList is GET /api/people's answer, oldest first.
type PeopleList struct {
	People []service.Member `json:"people" nullable:"false"`
}

var listPeopleDoc = doc{summary: "The workspace's people, their roles and whether they have set a password", resp: PeopleList{}}

func (h *handler) listPeople(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	out, err := h.svc.People(r.Context(), c.svc)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PeopleList{People: out})
}

// InviteRequest is POST /api/people.
type InviteRequest struct {
	Email *string `json:"email" required:"true" missing:"give the person's email address, like ada@example.com"`
	Name  string  `json:"name,omitempty" description:"The person's name, as pages show it"`
	Role  string  `json:"role,omitempty" enum:"member,owner" default:"member"`
}

var invitePersonDoc = doc{summary: "Invite a person (a workspace owner): the answer holds their one-time link to set a password, shown once", req: InviteRequest{}, resp: service.Invitation{}, status: http.StatusCreated}

func (h *handler) invitePerson(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[InviteRequest](r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	base, _ := h.publicURL(r)
	inv, err := h.svc.InvitePerson(r.Context(), c.svc, service.InviteArgs{Email: *in.Email, Name: in.Name, Role: in.Role}, base)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, inv)
}

// PersonRequest names one person.
type PersonRequest struct {
	ID string `path:"id" json:"-"`
}

// ChangeRoleRequest is PATCH /api/people/{id}.
type ChangeRoleRequest struct {
	ID   string  `path:"id" json:"-"`
	Role *string `json:"role" required:"true" enum:"member,owner" missing:"give member or owner"`
}

var changeRoleDoc = doc{summary: "Change a person's role (a workspace owner; the last owner stays one)", req: ChangeRoleRequest{}, resp: service.Member{}}

func (h *handler) changeRole(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ChangeRoleRequest](r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	m, err := h.svc.ChangeRole(r.Context(), c.svc, in.ID, *in.Role)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

var removePersonDoc = doc{summary: "Remove a person (a workspace owner; never the last owner): their sessions and tokens end, their connections are revoked", req: PersonRequest{}}

func (h *handler) removePerson(w http.ResponseWriter, r *http.Request, c *caller) {
	in, ok := bindNoBody[PersonRequest](h, w, r)
	if !ok {
		return
	}
	if _, err := h.svc.RemovePerson(r.Context(), c.svc, in.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// publicURL is the server's address as people reach it: its configured
// public URL, else the address r came to (configured false).
func (h *handler) publicURL(r *http.Request) (base string, configured bool) {
	if h.public != "" {
		return h.public, true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: r.Host}).String(), false
}

var getWorkspaceDoc = doc{summary: "The workspace's name and the server's public URL and MCP address", resp: service.WorkspaceInfo{}}

func (h *handler) getWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	h.workspaceAnswer(w, r, c)
}

func (h *handler) workspaceAnswer(w http.ResponseWriter, r *http.Request, c *caller) {
	base, configured := h.publicURL(r)
	info, err := h.svc.Workspace(r.Context(), c.svc, base, configured)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// RenameWorkspaceRequest is PATCH /api/workspace.
type RenameWorkspaceRequest struct {
	Name *string `json:"name" required:"true" missing:"give the workspace's new name"`
}

var renameWorkspaceDoc = doc{summary: "Rename the workspace (a workspace owner)", req: RenameWorkspaceRequest{}, resp: service.WorkspaceInfo{}}

func (h *handler) renameWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[RenameWorkspaceRequest](r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.svc.RenameWorkspace(r.Context(), c.svc, *in.Name); err != nil {
		h.fail(w, r, err)
		return
	}
	h.workspaceAnswer(w, r, c)
}

// TokenList is GET /api/tokens's answer, oldest first.
type TokenList struct {
	Tokens []service.Entry `json:"tokens" nullable:"false"`
}

var listTokensDoc = doc{summary: "The personal access tokens the caller may see (an owner every one, a member their own), with their last use", resp: TokenList{}}

func (h *handler) listTokens(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	out, err := h.svc.ListTokens(r.Context(), c.svc)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, TokenList{Tokens: out})
}

// CreateTokenRequest is POST /api/tokens.
type CreateTokenRequest struct {
	Name   string   `json:"name,omitempty" maxLength:"100" description:"What the token is recognised by; empty: \"Personal token N\""`
	Scopes []string `json:"scopes" required:"true" missing:"give one or both of osfoundry:read and osfoundry:write"`
	Notes  []string `json:"notes,omitempty" description:"The IDs of the Notes the token may reach (they must also be approved); absent or null: every approved Note, now and later; []: none"`
	Rooms  []string `json:"rooms,omitempty" description:"The IDs of the Rooms the token may reach; absent or null: every Room, now and later; []: none"`
}

// CreatedToken is POST /api/tokens's answer: the secret, shown this once.
type CreatedToken struct {
	Secret string        `json:"secret"`
	Token  service.Entry `json:"token"`
}

var createTokenDoc = doc{summary: "Create a personal access token of the caller's: its secret is in the answer, shown once", req: CreateTokenRequest{}, resp: CreatedToken{}, status: http.StatusCreated}

func (h *handler) createToken(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[CreateTokenRequest](r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	secret, tok, err := h.svc.CreateToken(r.Context(), c.svc, service.TokenSpec{Name: in.Name, Scopes: in.Scopes, Notes: in.Notes, Rooms: in.Rooms})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, CreatedToken{Secret: secret, Token: tok})
}

// TokenRequest names one token.
type TokenRequest struct {
	ID string `path:"id" json:"-"`
}

var revokeTokenDoc = doc{summary: "Revoke a personal access token (at once on this node)", req: TokenRequest{}}

func (h *handler) revokeToken(w http.ResponseWriter, r *http.Request, c *caller) {
	in, ok := bindNoBody[TokenRequest](h, w, r)
	if !ok {
		return
	}
	err := h.svc.RevokeToken(r.Context(), c.svc, in.ID)
	var pr *problem.Problem
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &pr) && pr.Details["revoked_at"] != nil:
		writeProblem(w, http.StatusConflict, h.inRESTWords(r, pr))
	default:
		h.fail(w, r, err)
	}
}

// bindNoBody binds a DELETE's path; a body is not part of the call, and
// one larger than MaxBody is refused.
func bindNoBody[T any](h *handler, w http.ResponseWriter, r *http.Request) (*T, bool) {
	in, err := bind[T](r, true)
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		writeProblem(w, http.StatusRequestEntityTooLarge, problem.New(problem.Limit, "body", "%s takes no body (at most %d bytes are read)", r.Method, MaxBody))
		return nil, false
	}
	return in, true
}
