package account

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// Roles of a workspace's users.
const (
	RoleOwner  = "owner"
	RoleMember = "member"
)

// CodeExists is the code of adding a person whose email is taken.
const CodeExists = "already_exists"

// MaxEmailBytes is the longest email address SMTP can carry (RFC 5321).
const MaxEmailBytes = 254

// NormalizeEmail trims and lower-cases an email and checks that it looks
// like one: one @ with something on each side, no spaces or control
// characters, at most 254 bytes. Emails are stored as it answers.
func NormalizeEmail(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", problem.New(problem.Invalid, field, "is not valid UTF-8 text; give an email address like ada@example.com")
	}
	e := strings.ToLower(strings.TrimSpace(s))
	switch {
	case e == "":
		return "", problem.New(problem.Invalid, field, "is empty; give an email address like ada@example.com")
	case len(e) > MaxEmailBytes:
		return "", problem.New(problem.Invalid, field, "is %d bytes long; an email address has at most %d bytes", len(e), MaxEmailBytes)
	case strings.ContainsFunc(e, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "", problem.New(problem.Invalid, field, "%q has a space or a control character; give an email address like ada@example.com", problem.Excerpt(e))
	}
	local, domain, ok := strings.Cut(e, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") {
		return "", problem.New(problem.Invalid, field, "%q is not an email address: it needs exactly one @ with a name before it and a domain after it, like ada@example.com", problem.Excerpt(e))
	}
	return e, nil
}

// MaxNameBytes bounds a user's display name.
const MaxNameBytes = 200

func checkName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case len(name) > MaxNameBytes:
		return "", problem.New(problem.Invalid, field, "is %d bytes long; a name has at most %d bytes", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return "", problem.New(problem.Invalid, field, "is not valid UTF-8 text")
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", problem.New(problem.Invalid, field, "has a control character; give a name on one line")
	}
	return name, nil
}

// NewUser is who AddUser adds.
type NewUser struct {
	Email, Name, Role string
	// Password, if not empty, is set at once (it must pass
	// CheckPasswordRules); otherwise the user has no password until they
	// follow a setup link.
	Password string
}

// AddUser adds a user to workspace ws.
func AddUser(ctx context.Context, st store.Store, ws string, nu NewUser) (store.User, error) {
	email, err := NormalizeEmail("email", nu.Email)
	if err != nil {
		return store.User{}, err
	}
	name, err := checkName("name", nu.Name)
	if err != nil {
		return store.User{}, err
	}
	if nu.Role != RoleOwner && nu.Role != RoleMember {
		return store.User{}, problem.New(problem.Invalid, "role", "%q is not a role; give %s or %s", problem.Excerpt(nu.Role), RoleMember, RoleOwner)
	}
	hash := ""
	if nu.Password != "" {
		if err := CheckPasswordRules("password", nu.Password); err != nil {
			return store.User{}, err
		}
		if hash, err = HashPassword(nu.Password); err != nil {
			return store.User{}, err
		}
	}
	u := store.User{ID: store.NewID("usr"), Workspace: ws, Email: email, Name: name, Role: nu.Role, PasswordHash: hash, CreatedAt: time.Now().UTC()}
	if err := st.CreateUser(ctx, u); errors.Is(err, store.ErrExists) {
		return store.User{}, problem.New(CodeExists, "email", "there is already a user %s in this workspace", problem.Excerpt(email))
	} else if err != nil {
		return store.User{}, err
	}
	return u, nil
}

// UserByEmail finds the user of workspace ws with this email; a user of
// another workspace is not found.
func UserByEmail(ctx context.Context, st store.Store, ws, email string) (store.User, error) {
	e, err := NormalizeEmail("email", email)
	if err != nil {
		return store.User{}, err
	}
	u, err := st.UserByEmail(ctx, e)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Workspace != ws) {
		return store.User{}, problem.New(problem.NotFound, "email", "there is no user %s in this workspace; `foundry user list` shows them", problem.Excerpt(e))
	}
	return u, err
}

// SetPassword checks pw against the rules, stores its hash for u, ends
// every session of u's and voids u's unused setup links.
func SetPassword(ctx context.Context, st store.Store, u store.User, field, pw string) error {
	if err := CheckPasswordRules(field, pw); err != nil {
		return err
	}
	h, err := HashPassword(pw)
	if err != nil {
		return err
	}
	if err := st.SetPassword(ctx, u.ID, h); err != nil {
		return err
	}
	return st.RevokeGrants(ctx, setupRequest(u.ID), store.GrantSetup)
}

// Users lists the users of workspace ws.
func Users(ctx context.Context, st store.Store, ws string) ([]store.User, error) {
	return st.Users(ctx, ws)
}

// RemoveUser removes u from its workspace with their sessions and personal
// access tokens, and revokes their connections. The last owner is never
// removed: nobody could manage the workspace after.
//
// The count of owners is read before the delete, outside its transaction:
// two owners removed at the same instant could both pass.
func RemoveUser(ctx context.Context, st store.Store, u store.User) error {
	if u.Role == RoleOwner {
		users, err := st.Users(ctx, u.Workspace)
		if err != nil {
			return err
		}
		owners := 0
		for _, o := range users {
			if o.Role == RoleOwner {
				owners++
			}
		}
		if owners <= 1 {
			return problem.New(problem.Invalid, "email", "%s is the workspace's last owner, and a workspace needs an owner to manage its people: add another owner first (`foundry user add EMAIL --role owner`), then remove this one", problem.Excerpt(u.Email))
		}
	}
	err := st.DeleteUser(ctx, u.Workspace, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return problem.New(problem.NotFound, "email", "there is no user %s in this workspace any more", problem.Excerpt(u.Email))
	}
	return err
}

// OwnerToSetUp is the owner who needs a link to set a password: the first
// owner of ws, while no owner of ws has a password (nobody could sign in
// to manage the workspace). ok is false once an owner has one.
func OwnerToSetUp(ctx context.Context, st store.Store, ws string) (u store.User, ok bool, err error) {
	users, err := st.Users(ctx, ws)
	if err != nil {
		return store.User{}, false, err
	}
	for _, o := range users {
		if o.Role != RoleOwner {
			continue
		}
		if o.PasswordHash != "" {
			return store.User{}, false, nil
		}
		if !ok {
			u, ok = o, true
		}
	}
	return u, ok, nil
}
