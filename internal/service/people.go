package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"foundry/internal/account"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// The workspace's people and its own settings: every door (the web app's
// Settings pages, the CLI) calls these. Members see the people; owners
// invite, change roles, remove and rename.

// Roles of the workspace's people.
const (
	RoleMember = account.RoleMember
)

// Statuses of a person.
const (
	StatusActive  = "active"  // has a password: signs in
	StatusInvited = "invited" // has not set a password yet (their one-time link is unused)
)

// Member is one person of the workspace, as the people list shows them.
type Member struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	// Status is StatusActive or StatusInvited.
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

func memberOf(u store.User) Member {
	st := StatusActive
	if u.PasswordHash == "" {
		st = StatusInvited
	}
	return Member{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, Status: st, CreatedAt: u.CreatedAt.UTC()}
}

// OwnerOnly is the code of a member trying a workspace owner's act.
const OwnerOnly = "owner_only"

// EmailTaken is the code of inviting an email the workspace has.
const EmailTaken = account.CodeExists

// LastOwner is the code of a change that would leave the workspace
// without an owner.
const LastOwner = "last_owner"

// ownerOnly refuses anyone but a workspace owner (and the operator) the
// act what names.
func (c Caller) ownerOnly(what string) error {
	if err := c.personOnly(what); err != nil {
		return err
	}
	if c.Role != RoleOwner {
		return problem.New(OwnerOnly, "", "%s is a workspace owner's act: ask an owner of the workspace", what)
	}
	return nil
}

// People lists the workspace's people, oldest first. Every person of the
// workspace may see it.
func (s *Service) People(ctx context.Context, c Caller) ([]Member, error) {
	if err := c.personOnly("seeing the people"); err != nil {
		return nil, err
	}
	users, err := s.Store.Users(ctx, c.Workspace)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]Member, 0, len(users))
	for _, u := range users {
		out = append(out, memberOf(u))
	}
	return out, nil
}

// PersonByEmail finds the person of the workspace with this email.
func (s *Service) PersonByEmail(ctx context.Context, c Caller, email string) (Member, error) {
	if err := c.personOnly("looking up a person"); err != nil {
		return Member{}, err
	}
	u, err := account.UserByEmail(ctx, s.Store, c.Workspace, email)
	return memberOf(u), err
}

// InviteArgs is who to invite.
type InviteArgs struct {
	Email, Name, Role string
	// Password, if set, is the person's password at once (no link);
	// otherwise they choose it by the one-time link.
	Password string
}

// Invitation is the person invited and, unless a password was given, the
// one-time link (valid account.SetupLifetime) to choose their password:
// shown once, never stored.
type Invitation struct {
	Person    Member     `json:"person"`
	Link      string     `json:"link,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// InvitePerson adds a person to the workspace with the role and, unless a
// password is given, makes their one-time link on publicURL (the server's
// address as people reach it). A workspace owner's act.
func (s *Service) InvitePerson(ctx context.Context, c Caller, in InviteArgs, publicURL string) (Invitation, error) {
	if err := c.ownerOnly("inviting a person"); err != nil {
		return Invitation{}, err
	}
	if in.Role == "" {
		in.Role = RoleMember
	}
	u, err := account.AddUser(ctx, s.Store, c.Workspace, account.NewUser{Email: in.Email, Name: in.Name, Role: in.Role, Password: in.Password})
	if err != nil {
		return Invitation{}, err
	}
	inv := Invitation{Person: memberOf(u)}
	if in.Password != "" {
		return inv, nil
	}
	link, exp, err := account.CreateSetupLink(ctx, s.Store, u, publicURL, s.Now())
	if err != nil {
		return Invitation{}, err
	}
	inv.Link, inv.ExpiresAt = link, &exp
	return inv, nil
}

// person finds a user of c's workspace by ID.
func (s *Service) person(ctx context.Context, c Caller, id string) (store.User, error) {
	if err := CheckID("id", id); err != nil {
		return store.User{}, err
	}
	u, err := s.Store.UserByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Workspace != c.Workspace) {
		return store.User{}, problem.New(problem.NotFound, "id", "there is no person %q in this workspace", problem.Excerpt(id))
	}
	return u, err
}

func lastOwner(email, act string) error {
	return problem.New(LastOwner, "id", "%s is the workspace's last owner, and a workspace needs an owner to manage its people: make another person an owner first, then %s", problem.Excerpt(email), act)
}

// ChangeRole gives the person id the role (member or owner). The
// workspace's last owner keeps theirs. A workspace owner's act.
func (s *Service) ChangeRole(ctx context.Context, c Caller, id, role string) (Member, error) {
	if err := c.ownerOnly("changing a person's role"); err != nil {
		return Member{}, err
	}
	if role != RoleOwner && role != RoleMember {
		return Member{}, problem.New(problem.Invalid, "role", "%q is not a role; give %s or %s", problem.Excerpt(role), RoleMember, RoleOwner)
	}
	u, err := s.person(ctx, c, id)
	if err != nil {
		return Member{}, err
	}
	switch err := s.Store.SetUserRole(ctx, c.Workspace, u.ID, role); {
	case errors.Is(err, store.ErrLastOwner):
		return Member{}, lastOwner(u.Email, "change this one's role")
	case errors.Is(err, store.ErrNotFound):
		return Member{}, problem.New(problem.NotFound, "id", "there is no person %q in this workspace any more", problem.Excerpt(id))
	case err != nil:
		return Member{}, err
	}
	u.Role = role
	return memberOf(u), nil
}

// RemovePerson removes the person id with their sessions and personal
// access tokens, and revokes their connections. The workspace's last owner
// is never removed. A workspace owner's act.
//
// The count of owners is read before the delete, outside its transaction:
// two owners removed at the same instant could both pass.
func (s *Service) RemovePerson(ctx context.Context, c Caller, id string) (Member, error) {
	if err := c.ownerOnly("removing a person"); err != nil {
		return Member{}, err
	}
	u, err := s.person(ctx, c, id)
	if err != nil {
		return Member{}, err
	}
	if u.Role == RoleOwner {
		users, err := s.Store.Users(ctx, c.Workspace)
		if err != nil {
			return Member{}, err
		}
		owners := 0
		for _, o := range users {
			if o.Role == RoleOwner {
				owners++
			}
		}
		if owners <= 1 {
			return Member{}, lastOwner(u.Email, "remove this one")
		}
	}
	err = s.Store.DeleteUser(ctx, c.Workspace, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Member{}, problem.New(problem.NotFound, "id", "there is no person %s in this workspace any more", problem.Excerpt(u.Email))
	}
	return memberOf(u), err
}

// WorkspaceInfo is the workspace's name and the server's address as it
// sees it.
type WorkspaceInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// PublicURL is the address people and agents reach the server at
	// (its configured public URL, else the address the request came to);
	// MCPURL is where agents connect.
	PublicURL string `json:"public_url"`
	MCPURL    string `json:"mcp_url"`
	// Configured says whether PublicURL is the server's configured public
	// URL (false: the address the request came to).
	Configured bool `json:"public_url_configured"`
}

// Workspace is c's workspace, with publicURL (the server's address as
// people reach it); configured says whether it is the server's configured
// one.
func (s *Service) Workspace(ctx context.Context, c Caller, publicURL string, configured bool) (WorkspaceInfo, error) {
	if err := c.personOnly("seeing the workspace's settings"); err != nil {
		return WorkspaceInfo{}, err
	}
	name, err := s.WorkspaceName(ctx, c)
	if err != nil {
		return WorkspaceInfo{}, err
	}
	base := strings.TrimRight(publicURL, "/")
	return WorkspaceInfo{ID: c.Workspace, Name: name, PublicURL: base, MCPURL: base + "/mcp", Configured: configured}, nil
}

// MaxWorkspaceNameBytes bounds a workspace's name.
const MaxWorkspaceNameBytes = 200

// RenameWorkspace sets the workspace's name. A workspace owner's act.
func (s *Service) RenameWorkspace(ctx context.Context, c Caller, name string) error {
	if err := c.ownerOnly("renaming the workspace"); err != nil {
		return err
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return problem.New(problem.Invalid, "name", "is empty; give the workspace a name, like Acme")
	case !utf8.ValidString(name):
		return problem.New(problem.Invalid, "name", "is not valid UTF-8 text")
	case len(name) > MaxWorkspaceNameBytes:
		return problem.New(problem.Invalid, "name", "is %d bytes long; a workspace's name has at most %d bytes", len(name), MaxWorkspaceNameBytes)
	case strings.ContainsFunc(name, unicode.IsControl):
		return problem.New(problem.Invalid, "name", "has a control character; give a name on one line")
	}
	return s.Store.RenameWorkspace(ctx, c.Workspace, name)
}
