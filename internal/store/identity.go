package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrExists: a row with that unique key (an email, an ID) is already there.
var ErrExists = errors.New("already exists")

// ErrLastOwner: the change would leave the workspace without an owner.
var ErrLastOwner = errors.New("the workspace's last owner")

// OwnerRole is the role of a workspace's owners, as users rows store it.
const OwnerRole = "owner"

// Session is a person's browser session. Hash is the SHA-256 (hex) of the
// cookie's secret: the secret itself is never stored.
type Session struct {
	Hash, Workspace, User string
	CSRF                  string // the form token of this session
	CreatedAt, ExpiresAt  time.Time
}

// Client kinds: how an OAuth client came to be known.
const (
	ClientDynamic    = "dynamic"    // RFC 7591 registration at /register
	ClientRegistered = "registered" // `foundry client add`
	ClientMetadata   = "metadata"   // a client ID metadata document, fetched and cached
)

// Client is an OAuth client. SecretHash is "" for a public client (PKCE
// only) and the SHA-256 (hex) of its secret for a confidential one.
type Client struct {
	ID           string
	SecretHash   string
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	Scopes       []string
	Kind         string
	Metadata     json.RawMessage // the registration or document as received (client_uri, logo_uri, …)
	CreatedAt    time.Time
}

// Connection is what a person granted one client: scopes and the Notes and
// Rooms it may reach (nil: all, now and later; empty: none). A person has
// at most one live connection per client; consenting again replaces its
// scopes and grant.
type Connection struct {
	ID, Workspace, User, Client string
	Scopes                      []string
	Notes, Rooms                []string
	CreatedAt                   time.Time
	LastUsed, RevokedAt         *time.Time
}

// Grant kinds and states. A grant is one OAuth artefact (an authorization
// code, an access or refresh token, a PKCE record) or a one-time link,
// stored under the SHA-256 (hex) of its signature.
const (
	GrantCode    = "code"
	GrantAccess  = "access"
	GrantRefresh = "refresh"
	GrantPKCE    = "pkce"
	GrantSetup   = "setup" // a one-time link to set a password

	GrantActive  = "active"
	GrantUsed    = "used"    // a code exchanged, a link followed
	GrantRotated = "rotated" // a refresh token exchanged for a new one
	GrantRevoked = "revoked"
)

// Grant is one stored OAuth artefact. Data is opaque to the store (the OAuth
// layer's serialized request). AccessHash links a refresh token to the
// access token issued with it.
type Grant struct {
	Kind, Hash                   string
	RequestID, Client            string
	Connection                   string // "" until consent made one
	State                        string
	Data                         json.RawMessage
	AccessHash                   string
	CreatedAt, ExpiresAt, Change time.Time
}

// Actor kinds: who an actor string of history names (see Actors).
const (
	ActorPerson = "person" // "user:<id>": a person of the workspace
	ActorToken  = "token"  // "token:<id>": a personal access token
	ActorClient = "client" // "token:<id>" of a connection: the OAuth client it was granted to
)

// Actor is who an actor string of history names, as people see it.
type Actor struct {
	Kind string // ActorPerson, ActorToken or ActorClient
	// ID is the user's, the token's or the connection's ID (the part of
	// the actor string after its prefix).
	ID string
	// Name is the person's name (their email if they have none), the
	// token's name, or the OAuth client's name (its client ID if it has
	// none, or is gone).
	Name string
}

// Identity is the part of Store that knows people, sessions and OAuth.
type Identity interface {
	// CreateUser adds a person to u.Workspace (ErrExists if the ID or the
	// email is taken, also by a concurrent call).
	CreateUser(ctx context.Context, u User) error
	// UserByID finds a user in any workspace (a session names its user).
	UserByID(ctx context.Context, id string) (User, error)
	// UserByEmail finds a user by email, compared as stored (the account
	// layer stores emails lower-cased).
	UserByEmail(ctx context.Context, email string) (User, error)
	// SetPassword replaces a user's password hash and ends every session of
	// theirs, in one transaction.
	SetPassword(ctx context.Context, id, hash string) error
	// RehashPassword replaces a user's password hash old with hash, the
	// same password hashed anew (stronger parameters), keeping their
	// sessions. It does nothing and answers false if the user's hash is no
	// longer old (the password changed meanwhile).
	RehashPassword(ctx context.Context, id, old, hash string) (bool, error)
	// DeleteUser removes a user of the workspace with their sessions and
	// personal access tokens, and revokes their connections and grants.
	DeleteUser(ctx context.Context, workspace, id string) error
	// SetUserRole gives a user of the workspace the role, in one statement
	// that refuses (ErrLastOwner, nothing written) to take the role "owner"
	// from the workspace's last owner; ErrNotFound if the workspace has no
	// such user.
	SetUserRole(ctx context.Context, workspace, id, role string) error
	// RenameWorkspace sets a workspace's name (ErrNotFound if there is none).
	RenameWorkspace(ctx context.Context, id, name string) error
	// Actors names the actors of history ("user:<id>", "token:<id>") of
	// the workspace, for pages that show who wrote what. It answers only
	// the actors asked for, keyed by the actor string, in one query however
	// many are asked; an actor that is malformed, unknown, or of another
	// workspace is left out (a deleted person is unknown; a revoked token
	// or connection is still named). Should a token and a connection share
	// an ID, the connection's client is the answer.
	Actors(ctx context.Context, workspace string, actors []string) (map[string]Actor, error)

	// CreateSession stores a person's browser session at sign-in.
	CreateSession(ctx context.Context, s Session) error
	// SessionByHash answers ErrNotFound for an unknown or expired session.
	SessionByHash(ctx context.Context, hash string, now time.Time) (Session, error)
	// DeleteSession ends a session (sign-out); an unknown one is no error.
	DeleteSession(ctx context.Context, hash string) error

	// ServerSecret is the value stored under name, storing fresh first if
	// there is none: every node gets the same value.
	ServerSecret(ctx context.Context, name string, fresh []byte) ([]byte, error)

	// SignInCounters are the counters of failed sign-ins under keys that
	// are live at now, by key, read in one query; a key with no counter, or
	// an expired one, is left out.
	SignInCounters(ctx context.Context, keys []string, now time.Time) (map[string]SignInCounter, error)
	// CountSignInFailure adds one failure at now to the counter of each
	// key of windows, in one statement: a counter that is missing or
	// expired at now starts again at 1 and expires its window after now.
	CountSignInFailure(ctx context.Context, now time.Time, windows map[string]time.Duration) error
	// ForgetSignInFailures deletes the counters of keys; an unknown key is
	// no error.
	ForgetSignInFailures(ctx context.Context, keys ...string) error

	// CreateClient registers an OAuth client (ErrExists if its ID is
	// taken). Clients belong to the server, not to a workspace.
	CreateClient(ctx context.Context, c Client) error
	// Client finds an OAuth client by its client ID.
	Client(ctx context.Context, id string) (Client, error)
	// Clients lists every OAuth client, oldest first.
	Clients(ctx context.Context) ([]Client, error)
	// DeleteClient removes an OAuth client (ErrNotFound if there is none).
	DeleteClient(ctx context.Context, id string) error

	// PutConnection stores c as the person's live connection to c.Client:
	// if there is one, its scopes and grant are replaced and its ID and
	// creation kept; otherwise c is inserted. It answers what is stored.
	PutConnection(ctx context.Context, c Connection) (Connection, error)
	// Connection finds a connection, revoked or not, by ID: what an OAuth
	// access token is checked against on every call.
	Connection(ctx context.Context, id string) (Connection, error)
	// Connections lists the workspace's connections, revoked ones included,
	// oldest first.
	Connections(ctx context.Context, workspace string) ([]Connection, error)
	// RevokeConnection revokes a live connection and every grant made
	// under it, in one transaction (ErrNotFound if none is live).
	RevokeConnection(ctx context.Context, workspace, id string) error
	// TouchConnection records a use (last_used).
	TouchConnection(ctx context.Context, id string, at time.Time) error
	// TouchToken records a use of a personal access token (last_used).
	TouchToken(ctx context.Context, id string, at time.Time) error

	// PutGrant stores one OAuth artefact (State "" is active).
	PutGrant(ctx context.Context, g Grant) error
	// Grant finds an OAuth artefact by kind and hash, whatever its state.
	Grant(ctx context.Context, kind, hash string) (Grant, error)
	// SetGrantState moves a grant from one of the states from to state to,
	// atomically; it answers false (and changes nothing) if the grant is in
	// none of them.
	SetGrantState(ctx context.Context, kind, hash string, from []string, to string) (bool, error)
	// RevokeGrants revokes every grant of the request (an authorization
	// and all the tokens issued from it) of the given kinds (none: all).
	RevokeGrants(ctx context.Context, requestID string, kinds ...string) error
	// DeleteGrant removes an OAuth artefact; an unknown one is no error.
	DeleteGrant(ctx context.Context, kind, hash string) error
	// RotateRefresh exchanges refresh token oldHash, in one transaction: it
	// is marked rotated (if it is active, or was rotated at graceSince or
	// later: a concurrent refresh of the same token), the access token
	// issued with it is revoked, and puts are stored. If the old token is
	// in no such state nothing is written and the answer is ErrNotFound.
	RotateRefresh(ctx context.Context, oldHash string, graceSince time.Time, puts []Grant) error
}

func (b *Base) CreateUser(ctx context.Context, u User) error {
	// ON CONFLICT, not a count first: two callers at once must get one
	// user and one ErrExists, never a unique-key error.
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO users (id, workspace_id, email, name, password_hash, role, created_us) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			u.ID, u.Workspace, u.Email, u.Name, u.PasswordHash, u.Role, u.CreatedAt.UnixMicro())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrExists
		}
		return nil
	})
}

const userCols = `id, workspace_id, email, name, password_hash, role, created_us`

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var u User
	var us int64
	err := sc.Scan(&u.ID, &u.Workspace, &u.Email, &u.Name, &u.PasswordHash, &u.Role, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	u.CreatedAt = time.UnixMicro(us).UTC()
	return u, err
}

func (b *Base) UserByID(ctx context.Context, id string) (User, error) {
	return scanUser(b.R.QueryRowContext(ctx, b.D.Q(`SELECT `+userCols+` FROM users WHERE id = ?`), id))
}

func (b *Base) UserByEmail(ctx context.Context, email string) (User, error) {
	return scanUser(b.R.QueryRowContext(ctx, b.D.Q(`SELECT `+userCols+` FROM users WHERE email = ?`), email))
}

func (b *Base) SetPassword(ctx context.Context, id, hash string) error {
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE users SET password_hash = ? WHERE id = ?`), hash, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = q.ExecContext(ctx, b.D.Q(`DELETE FROM sessions WHERE user_id = ?`), id)
		return err
	})
}

func (b *Base) RehashPassword(ctx context.Context, id, old, hash string) (done bool, err error) {
	err = b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?`), hash, id, old)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		done = n == 1
		return err
	})
	return done, err
}

func (b *Base) DeleteUser(ctx context.Context, workspace, id string) error {
	now := time.Now().UnixMicro()
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM sessions WHERE user_id = ? AND workspace_id = ?`), id, workspace)
		if err != nil {
			return err
		}
		_ = res
		for _, s := range []string{
			`UPDATE grants SET state = 'revoked', changed_us = ? WHERE state <> 'revoked' AND connection_id IN (SELECT id FROM connections WHERE user_id = ? AND workspace_id = ?)`,
			`UPDATE connections SET revoked_us = ? WHERE revoked_us IS NULL AND user_id = ? AND workspace_id = ?`,
		} {
			if _, err := q.ExecContext(ctx, b.D.Q(s), now, id, workspace); err != nil {
				return err
			}
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM tokens WHERE user_id = ? AND workspace_id = ?`), id, workspace); err != nil {
			return err
		}
		res, err = q.ExecContext(ctx, b.D.Q(`DELETE FROM users WHERE id = ? AND workspace_id = ?`), id, workspace)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

func (b *Base) SetUserRole(ctx context.Context, workspace, id, role string) error {
	return b.Tx(ctx, func(q Querier) error {
		// The count of the other owners is in the UPDATE itself, so a
		// demotion never leaves the workspace without one.
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE users SET role = ? WHERE id = ? AND workspace_id = ?
			AND (role <> ? OR ? = ? OR EXISTS (SELECT 1 FROM users o WHERE o.workspace_id = ? AND o.role = ? AND o.id <> ?))`),
			role, id, workspace, OwnerRole, role, OwnerRole, workspace, OwnerRole, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var one int
		err = q.QueryRowContext(ctx, b.D.Q(`SELECT 1 FROM users WHERE id = ? AND workspace_id = ?`), id, workspace).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return err
		}
		return ErrLastOwner
	})
}

func (b *Base) RenameWorkspace(ctx context.Context, id, name string) error {
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE workspaces SET name = ? WHERE id = ?`), name, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

func (b *Base) Actors(ctx context.Context, workspace string, actors []string) (map[string]Actor, error) {
	out := map[string]Actor{}
	users, tokens := actorIDs(actors)
	// One statement, one branch per kind asked for; each kind's IDs are
	// one parameter (a JSON array), so the statement is the same size
	// however many actors are asked for.
	var branches []string
	var args []any
	if len(users) > 0 {
		branches = append(branches, `SELECT 'person', id, name, email FROM users WHERE workspace_id = ? AND id IN (`+b.D.jsonStrings()+`)`)
		args = append(args, workspace, jsonList(users))
	}
	if len(tokens) > 0 {
		branches = append(branches,
			`SELECT 'token', id, name, '' FROM tokens WHERE workspace_id = ? AND id IN (`+b.D.jsonStrings()+`)`,
			`SELECT 'client', n.id, COALESCE(c.name, ''), n.client_id
				FROM (SELECT id, client_id FROM connections WHERE workspace_id = ? AND id IN (`+b.D.jsonStrings()+`)) n
				LEFT JOIN oauth_clients c ON c.id = n.client_id`)
		list := jsonList(tokens)
		args = append(args, workspace, list, workspace, list)
	}
	if len(branches) == 0 {
		return out, nil
	}
	st, err := b.hot(ctx, strings.Join(branches, ` UNION ALL `))
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a Actor
		var fallback string
		if err := rows.Scan(&a.Kind, &a.ID, &a.Name, &fallback); err != nil {
			return nil, err
		}
		if a.Name == "" {
			a.Name = fallback // a person's email, a client's ID
		}
		key := "user:" + a.ID
		if a.Kind != ActorPerson {
			key = "token:" + a.ID
			if out[key].Kind == ActorClient {
				continue // a connection of the same ID wins
			}
		}
		out[key] = a
	}
	return out, rows.Err()
}

// actorIDs are the distinct user and token IDs that actors name, leaving
// out what can name no row: no known prefix, an empty ID, or text that is
// not valid UTF-8 or holds a NUL (which PostgreSQL cannot store, so both
// stores answer alike).
func actorIDs(actors []string) (users, tokens []string) {
	seen := make(map[string]bool, len(actors))
	for _, a := range actors {
		if seen[a] || !utf8.ValidString(a) || strings.IndexByte(a, 0) >= 0 {
			continue
		}
		seen[a] = true
		if id, ok := strings.CutPrefix(a, "user:"); ok && id != "" {
			users = append(users, id)
		} else if id, ok := strings.CutPrefix(a, "token:"); ok && id != "" {
			tokens = append(tokens, id)
		}
	}
	return users, tokens
}

func jsonList(ids []string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

func (b *Base) CreateSession(ctx context.Context, s Session) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO sessions (hash, workspace_id, user_id, csrf, created_us, expires_us) VALUES (?, ?, ?, ?, ?, ?)`),
			s.Hash, s.Workspace, s.User, s.CSRF, s.CreatedAt.UnixMicro(), s.ExpiresAt.UnixMicro())
		return err
	})
}

func (b *Base) SessionByHash(ctx context.Context, hash string, now time.Time) (Session, error) {
	st, err := b.hot(ctx, `SELECT workspace_id, user_id, csrf, created_us, expires_us FROM sessions WHERE hash = ?`)
	if err != nil {
		return Session{}, err
	}
	s := Session{Hash: hash}
	var c, e int64
	err = st.QueryRowContext(ctx, hash).Scan(&s.Workspace, &s.User, &s.CSRF, &c, &e)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, err
	}
	s.CreatedAt, s.ExpiresAt = time.UnixMicro(c).UTC(), time.UnixMicro(e).UTC()
	if !now.Before(s.ExpiresAt) {
		return Session{}, ErrNotFound
	}
	return s, nil
}

func (b *Base) DeleteSession(ctx context.Context, hash string) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM sessions WHERE hash = ?`), hash)
		return err
	})
}

func (b *Base) ServerSecret(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	// Stored as base64: a secret is random bytes, which a PostgreSQL TEXT
	// column refuses (a NUL, or bytes that are not UTF-8).
	var v string
	err := b.Tx(ctx, func(q Querier) error {
		if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), name, base64.StdEncoding.EncodeToString(fresh)); err != nil {
			return err
		}
		return q.QueryRowContext(ctx, b.D.Q(`SELECT value FROM server_secrets WHERE name = ?`), name).Scan(&v)
	})
	if err != nil {
		return nil, err
	}
	out, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("server secret %q is not stored as base64: %w", name, err)
	}
	return out, nil
}

func (b *Base) CreateClient(ctx context.Context, c Client) error {
	uris, _ := json.Marshal(c.RedirectURIs)
	meta := string(c.Metadata)
	if meta == "" {
		meta = "{}"
	}
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, grant_types, scopes, kind, metadata, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			c.ID, c.SecretHash, c.Name, string(uris), strings.Join(c.GrantTypes, " "), strings.Join(c.Scopes, " "), c.Kind, meta, c.CreatedAt.UnixMicro())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrExists
		}
		return nil
	})
}

const clientCols = `id, secret_hash, name, redirect_uris, grant_types, scopes, kind, metadata, created_us`

func scanClient(sc interface{ Scan(...any) error }) (Client, error) {
	var c Client
	var uris, grants, scopes, meta string
	var us int64
	err := sc.Scan(&c.ID, &c.SecretHash, &c.Name, &uris, &grants, &scopes, &c.Kind, &meta, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return Client{}, ErrNotFound
	}
	if err != nil {
		return Client{}, err
	}
	_ = json.Unmarshal([]byte(uris), &c.RedirectURIs)
	if c.RedirectURIs == nil { // stored as null by a client created without any
		c.RedirectURIs = []string{}
	}
	c.GrantTypes, c.Scopes = strings.Fields(grants), strings.Fields(scopes)
	c.Metadata, c.CreatedAt = json.RawMessage(meta), time.UnixMicro(us).UTC()
	return c, nil
}

func (b *Base) Client(ctx context.Context, id string) (Client, error) {
	return scanClient(b.R.QueryRowContext(ctx, b.D.Q(`SELECT `+clientCols+` FROM oauth_clients WHERE id = ?`), id))
}

func (b *Base) Clients(ctx context.Context) ([]Client, error) {
	return queryAll(ctx, b.R, `SELECT `+clientCols+` FROM oauth_clients ORDER BY created_us, id`, scanClient)
}

func (b *Base) DeleteClient(ctx context.Context, id string) error {
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM oauth_clients WHERE id = ?`), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

const connCols = `id, workspace_id, user_id, client_id, scopes, notes_grant, rooms_grant, created_us, last_used_us, revoked_us`

func scanConnection(sc interface{ Scan(...any) error }) (Connection, error) {
	var c Connection
	var scopes string
	var notes, rooms sql.NullString
	var created int64
	var used, revoked sql.NullInt64
	err := sc.Scan(&c.ID, &c.Workspace, &c.User, &c.Client, &scopes, &notes, &rooms, &created, &used, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, ErrNotFound
	}
	if err != nil {
		return Connection{}, err
	}
	c.Scopes, c.Notes, c.Rooms = strings.Fields(scopes), grantList(notes), grantList(rooms)
	c.CreatedAt = time.UnixMicro(created).UTC()
	c.LastUsed, c.RevokedAt = optTime(used), optTime(revoked)
	return c, nil
}

// queryAll runs query and scans every row with scan.
func queryAll[T any](ctx context.Context, q Querier, query string, scan func(interface{ Scan(...any) error }) (T, error), args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMicro(v.Int64).UTC()
	return &t
}

func (b *Base) PutConnection(ctx context.Context, c Connection) (Connection, error) {
	var out Connection
	err := b.Tx(ctx, func(q Querier) error {
		// Twice at most: an insert that meets a live connection committed
		// meanwhile (two consents at once) updates that one instead.
		for range 2 {
			have, err := scanConnection(q.QueryRowContext(ctx, b.D.Q(`SELECT `+connCols+` FROM connections WHERE workspace_id = ? AND user_id = ? AND client_id = ? AND revoked_us IS NULL`+b.D.ForUpdate), c.Workspace, c.User, c.Client))
			switch {
			case err == nil:
				if _, err := q.ExecContext(ctx, b.D.Q(`UPDATE connections SET scopes = ?, notes_grant = ?, rooms_grant = ? WHERE id = ?`),
					strings.Join(c.Scopes, " "), grantText(c.Notes), grantText(c.Rooms), have.ID); err != nil {
					return err
				}
				out = have
				out.Scopes, out.Notes, out.Rooms = c.Scopes, c.Notes, c.Rooms
				return nil
			case !errors.Is(err, ErrNotFound):
				return err
			}
			res, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO connections (id, workspace_id, user_id, client_id, scopes, notes_grant, rooms_grant, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
				c.ID, c.Workspace, c.User, c.Client, strings.Join(c.Scopes, " "), grantText(c.Notes), grantText(c.Rooms), c.CreatedAt.UnixMicro())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				out = c
				out.LastUsed, out.RevokedAt = nil, nil
				return nil
			}
		}
		return fmt.Errorf("connection %s: %w", c.ID, ErrExists)
	})
	return out, err
}

func (b *Base) Connection(ctx context.Context, id string) (Connection, error) {
	st, err := b.hot(ctx, `SELECT `+connCols+` FROM connections WHERE id = ?`)
	if err != nil {
		return Connection{}, err
	}
	return scanConnection(st.QueryRowContext(ctx, id))
}

func (b *Base) Connections(ctx context.Context, workspace string) ([]Connection, error) {
	return queryAll(ctx, b.R, b.D.Q(`SELECT `+connCols+` FROM connections WHERE workspace_id = ? ORDER BY created_us, id`), scanConnection, workspace)
}

func (b *Base) RevokeConnection(ctx context.Context, workspace, id string) error {
	now := time.Now().UnixMicro()
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE connections SET revoked_us = ? WHERE workspace_id = ? AND id = ? AND revoked_us IS NULL`), now, workspace, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = q.ExecContext(ctx, b.D.Q(`UPDATE grants SET state = 'revoked', changed_us = ? WHERE connection_id = ? AND state <> 'revoked'`), now, id)
		return err
	})
}

func (b *Base) TouchConnection(ctx context.Context, id string, at time.Time) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`UPDATE connections SET last_used_us = ? WHERE id = ?`), at.UnixMicro(), id)
		return err
	})
}

func (b *Base) TouchToken(ctx context.Context, id string, at time.Time) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`UPDATE tokens SET last_used_us = ? WHERE id = ?`), at.UnixMicro(), id)
		return err
	})
}

func putGrant(ctx context.Context, q Querier, d Dialect, g Grant) error {
	if g.State == "" {
		g.State = GrantActive
	}
	data := string(g.Data)
	if data == "" {
		data = "{}"
	}
	ch := g.Change
	if ch.IsZero() {
		ch = g.CreatedAt
	}
	_, err := q.ExecContext(ctx, d.Q(`INSERT INTO grants (kind, hash, request_id, client_id, connection_id, state, data, access_hash, created_us, expires_us, changed_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		g.Kind, g.Hash, g.RequestID, g.Client, g.Connection, g.State, data, g.AccessHash, g.CreatedAt.UnixMicro(), g.ExpiresAt.UnixMicro(), ch.UnixMicro())
	return err
}

func (b *Base) PutGrant(ctx context.Context, g Grant) error {
	return b.Tx(ctx, func(q Querier) error { return putGrant(ctx, q, b.D, g) })
}

func (b *Base) Grant(ctx context.Context, kind, hash string) (Grant, error) {
	st, err := b.hot(ctx, `SELECT request_id, client_id, connection_id, state, data, access_hash, created_us, expires_us, changed_us FROM grants WHERE kind = ? AND hash = ?`)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{Kind: kind, Hash: hash}
	var data string
	var c, e, ch int64
	err = st.QueryRowContext(ctx, kind, hash).Scan(&g.RequestID, &g.Client, &g.Connection, &g.State, &data, &g.AccessHash, &c, &e, &ch)
	if errors.Is(err, sql.ErrNoRows) {
		return Grant{}, ErrNotFound
	}
	if err != nil {
		return Grant{}, err
	}
	g.Data = json.RawMessage(data)
	g.CreatedAt, g.ExpiresAt, g.Change = time.UnixMicro(c).UTC(), time.UnixMicro(e).UTC(), time.UnixMicro(ch).UTC()
	return g, nil
}

func (b *Base) SetGrantState(ctx context.Context, kind, hash string, from []string, to string) (bool, error) {
	if len(from) == 0 {
		return false, nil
	}
	args := []any{to, time.Now().UnixMicro(), kind, hash}
	for _, f := range from {
		args = append(args, f)
	}
	var changed bool
	err := b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE grants SET state = ?, changed_us = ? WHERE kind = ? AND hash = ? AND state IN (?`+strings.Repeat(", ?", len(from)-1)+`)`), args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		return nil
	})
	return changed, err
}

func (b *Base) RevokeGrants(ctx context.Context, requestID string, kinds ...string) error {
	query := `UPDATE grants SET state = 'revoked', changed_us = ? WHERE request_id = ? AND state <> 'revoked'`
	args := []any{time.Now().UnixMicro(), requestID}
	if len(kinds) > 0 {
		query += ` AND kind IN (?` + strings.Repeat(", ?", len(kinds)-1) + `)`
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(query), args...)
		return err
	})
}

func (b *Base) DeleteGrant(ctx context.Context, kind, hash string) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM grants WHERE kind = ? AND hash = ?`), kind, hash)
		return err
	})
}

func (b *Base) RotateRefresh(ctx context.Context, oldHash string, graceSince time.Time, puts []Grant) error {
	now := time.Now().UnixMicro()
	return b.Tx(ctx, func(q Querier) error {
		var access string
		err := q.QueryRowContext(ctx, b.D.Q(`SELECT access_hash FROM grants WHERE kind = 'refresh' AND hash = ? AND (state = 'active' OR (state = 'rotated' AND changed_us >= ?))`+b.D.ForUpdate), oldHash, graceSince.UnixMicro()).Scan(&access)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		// A token rotated within the grace period keeps its first rotation
		// time, so the grace period never extends itself.
		if _, err := q.ExecContext(ctx, b.D.Q(`UPDATE grants SET state = 'rotated', changed_us = ? WHERE kind = 'refresh' AND hash = ? AND state = 'active'`), now, oldHash); err != nil {
			return err
		}
		if access != "" {
			if _, err := q.ExecContext(ctx, b.D.Q(`UPDATE grants SET state = 'revoked', changed_us = ? WHERE kind = 'access' AND hash = ? AND state = 'active'`), now, access); err != nil {
				return err
			}
		}
		for _, g := range puts {
			if err := putGrant(ctx, q, b.D, g); err != nil {
				return err
			}
		}
		return nil
	})
}

// pruneIdentity deletes expired sessions and sign-in counters, grants expired a day ago or more,
// and dynamic or fetched clients older than unusedClients that no
// connection ever used.
func (b *Base) pruneIdentity(ctx context.Context, now time.Time, unusedClients time.Duration, batch int) (int64, error) {
	var total int64
	for _, s := range []struct {
		query string
		args  []any
	}{
		{`DELETE FROM sessions WHERE hash IN (SELECT hash FROM sessions WHERE expires_us < ? LIMIT ?)`, []any{now.UnixMicro(), batch}},
		{`DELETE FROM signin_failures WHERE key IN (SELECT key FROM signin_failures WHERE expires_us < ? LIMIT ?)`, []any{now.UnixMicro(), batch}},
		{`DELETE FROM grants WHERE (kind, hash) IN (SELECT kind, hash FROM grants WHERE expires_us < ? LIMIT ?)`, []any{now.Add(-24 * time.Hour).UnixMicro(), batch}},
		{`DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c WHERE c.kind IN ('dynamic', 'metadata') AND c.created_us < ?
			AND NOT EXISTS (SELECT 1 FROM connections n WHERE n.client_id = c.id) AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = c.id) LIMIT ?)`, []any{now.Add(-unusedClients).UnixMicro(), batch}},
	} {
		for {
			var n int64
			err := b.Tx(ctx, func(q Querier) error {
				res, err := q.ExecContext(ctx, b.D.Q(s.query), s.args...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return total, err
			}
			total += n
			if n < int64(batch) {
				break
			}
		}
	}
	return total, nil
}
