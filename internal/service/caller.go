package service

import (
	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// Every use case takes a Caller: who acts. What differs by caller is policy,
// written here once beside the acts, never a second copy of an act:
//
//   - which Notes it reaches (an agent: approved Notes in its grant; a
//     person and the operator: every Note of the workspace),
//   - which acts are a person's alone (deleting, switching connected
//     access, file content, reviewing proposals),
//   - whether it may write at all (an agent's write scope),
//   - whose key scope its idempotency keys live in (an agent's keys share
//     the resource's scope, so keys derived from content dedupe across
//     agents; a person's live in store.ScopePeople, which no agent's key
//     reaches),
//   - which Rooms it manages (a workspace owner every Room, a person their
//     own; an agent none).

// CallerKind is what kind of caller acts.
type CallerKind int

const (
	// KindAgent is a token's principal: an MCP client, or a script calling
	// the REST API with a bearer token. Its scopes and grant apply.
	KindAgent CallerKind = iota + 1
	// KindPerson is a person signed in to the web app, with their role.
	KindPerson
	// KindOperator is the CLI on the server's data, acting as the
	// workspace's owner. It has no editor state: a write it makes without a
	// version applies to the version that is current.
	KindOperator
)

// Caller is who acts. Build one with Agent, Person or Operator.
type Caller struct {
	Kind      CallerKind
	Workspace string
	User      string // the person, or the token's owner
	Role      string // a person's role (RoleOwner manages every Room)
	token     *auth.Principal
}

// Agent is a token's principal acting.
func Agent(p auth.Principal) Caller {
	return Caller{Kind: KindAgent, Workspace: p.Workspace, User: p.User, token: &p}
}

// Person is a signed-in person of workspace ws acting, with their role.
func Person(ws, user, role string) Caller {
	return Caller{Kind: KindPerson, Workspace: ws, User: user, Role: role}
}

// Operator is the CLI acting on the server's data as the workspace's owner.
func Operator(o Owner) Caller {
	return Caller{Kind: KindOperator, Workspace: o.Workspace.ID, User: o.User.ID, Role: RoleOwner}
}

// RoleOwner is the role of a workspace owner.
const RoleOwner = "owner"

// Principal is the agent's principal (ok false for a person or the operator).
func (c Caller) Principal() (auth.Principal, bool) {
	if c.token == nil {
		return auth.Principal{}, false
	}
	return *c.token, true
}

// IsAgent says whether a token acts.
func (c Caller) IsAgent() bool { return c.token != nil }

// actor is how history and the feed record who wrote.
func (c Caller) actor() string {
	if c.token != nil {
		return "token:" + c.token.TokenID
	}
	return "user:" + c.User
}

// reachesNote says whether c may see Note r at all; anything else is not
// found, never forbidden. (Whether it is deleted is checked beside it.)
func (c Caller) reachesNote(r *store.Resource) bool {
	if r.Workspace != c.Workspace {
		return false
	}
	return c.token == nil || (r.Approved && c.token.CanNote(r.ID))
}

// reachesRoom says whether c may see Room r at all.
func (c Caller) reachesRoom(r *store.Resource) bool {
	if r.Workspace != c.Workspace {
		return false
	}
	return c.token == nil || c.token.CanRoom(r.ID)
}

// managesRoom says whether c reviews Room r's proposals and curates its
// launcher: a workspace owner (and the operator) every Room, a person the
// Rooms they own, an agent none.
func (c Caller) managesRoom(r *store.Resource) bool {
	if c.token != nil || c.User == "" {
		return false
	}
	return c.Role == RoleOwner || r.Owner == c.User
}

// mayWrite is the write scope's rule for an agent (a person and the
// operator may always write).
func (c Caller) mayWrite() error {
	if c.token != nil && !c.token.Has(auth.ScopeWrite) {
		return problem.New(problem.Scope, "", "this connection is read-only: it lacks the %s scope", auth.ScopeWrite).With("required_scope", auth.ScopeWrite)
	}
	return nil
}

// PersonOnly is the code of an agent trying a person's act.
const PersonOnly = "person_only"

// personOnly refuses an agent a person's act (what names it).
func (c Caller) personOnly(what string) error {
	if c.token != nil {
		return problem.New(PersonOnly, "", "%s is a person's act: sign in to Foundry's web app to do it; an agent's token cannot", what)
	}
	return nil
}

// keyScope is where c's idempotency keys live (see the package comment).
func (c Caller) keyScope() string {
	if c.token != nil {
		return ""
	}
	return store.ScopePeople
}

// fingerprintOf is what a request means for c's key scope: in the people's
// scope the person is part of it, so two people's keys never answer each
// other's writes.
func (c Caller) fingerprintOf(meaning any) string {
	if c.token != nil {
		return fingerprint(meaning)
	}
	return fingerprint(struct {
		Actor string
		Req   any
	}{c.actor(), meaning})
}

// versionFree says whether c may write without naming the version it was
// based on: only the operator, which has no editor state; its write then
// applies to the current version.
func (c Caller) versionFree() bool { return c.Kind == KindOperator }
