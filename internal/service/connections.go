package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// Entry kinds.
const (
	KindOAuth = "oauth" // a client a person connected through OAuth
	KindToken = "token" // a personal access token
)

// UserRef names the person an entry belongs to.
type UserRef struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// Entry is one connected OAuth client or one personal access token, as
// GET /api/connections and `foundry connections list` show it.
type Entry struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // KindOAuth or KindToken
	// Name is the client's name, or the token's.
	Name string `json:"name"`
	// ClientID, ClientKind (store.ClientDynamic, …) and, for a client
	// whose ID is an https URL (a metadata document), ClientHost: OAuth
	// entries only.
	ClientID   string   `json:"client_id,omitempty"`
	ClientKind string   `json:"client_kind,omitempty"`
	ClientHost string   `json:"client_host,omitempty"`
	User       UserRef  `json:"user"`
	Scopes     []string `json:"scopes"`
	// Notes and Rooms: null is every one (approved Notes), now and later;
	// [] is none.
	Notes []string `json:"notes"`
	Rooms []string `json:"rooms"`
	// Names are the titles of the Notes and the names of the Rooms that
	// Notes and Rooms list, by ID; an ID whose Note or Room was deleted
	// since is absent. Never null.
	Names      map[string]string `json:"names"`
	CreatedAt  time.Time         `json:"created_at"`
	LastUsedAt *time.Time        `json:"last_used_at"`
	RevokedAt  *time.Time        `json:"revoked_at"`
	Revoked    bool              `json:"revoked"`
}

// ListConnections is every connected client and personal access token c
// may see, newest first, revoked ones included: a workspace owner (and
// the operator) sees the workspace's, a member their own. Seeing and
// revoking connections is a person's act.
func (s *Service) ListConnections(ctx context.Context, c Caller) ([]Entry, error) {
	if err := c.personOnly("seeing the connections"); err != nil {
		return nil, err
	}
	return listConnections(ctx, s.Store, c.Workspace, c.ownEntries())
}

// ownEntries is the user whose connections c sees ("": everyone's).
func (c Caller) ownEntries() string {
	if c.Role == RoleOwner {
		return ""
	}
	return c.User
}

func listConnections(ctx context.Context, st store.Store, workspace, user string) ([]Entry, error) {
	users, err := st.Users(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	email := map[string]string{}
	for _, u := range users {
		email[u.ID] = u.Email
	}
	conns, err := st.Connections(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	toks, err := st.Tokens(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := []Entry{}
	clients := map[string]store.Client{}
	for _, c := range conns {
		if user != "" && c.User != user {
			continue
		}
		cl, ok := clients[c.Client]
		if !ok {
			cl, err = st.Client(ctx, c.Client)
			if errors.Is(err, store.ErrNotFound) {
				// The client was deleted; the connection is still shown.
				cl, err = store.Client{ID: c.Client, Name: c.Client}, nil
			}
			if err != nil {
				return nil, fmt.Errorf("look up client %s: %w", c.Client, err)
			}
			clients[c.Client] = cl
		}
		out = append(out, Entry{
			ID: c.ID, Kind: KindOAuth, Name: cmp.Or(cl.Name, cl.ID),
			ClientID: cl.ID, ClientKind: cl.Kind, ClientHost: httpsHost(cl.ID),
			User:   UserRef{ID: c.User, Email: email[c.User]},
			Scopes: nonNilIDs(c.Scopes), Notes: c.Notes, Rooms: c.Rooms,
			CreatedAt: c.CreatedAt.UTC(), LastUsedAt: c.LastUsed, RevokedAt: c.RevokedAt, Revoked: c.RevokedAt != nil,
		})
	}
	for _, t := range toks {
		if user != "" && t.User != user {
			continue
		}
		out = append(out, tokenEntry(t, email[t.User]))
	}
	if err := name(ctx, st, workspace, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}

// name fills each entry's Names: one look-up per resource type for every
// ID the entries' grants list.
func name(ctx context.Context, st store.Store, workspace string, out []Entry) error {
	for _, typ := range []string{store.TypeNote, store.TypeRoom} {
		seen := map[string]bool{}
		var ids []string
		for _, e := range out {
			list := e.Notes
			if typ == store.TypeRoom {
				list = e.Rooms
			}
			for _, id := range list {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		titles := map[string]string{}
		// The IDs go in batches, so that no query gets an unbounded IN list.
		for len(ids) > 0 {
			batch := ids[:min(len(ids), 200)]
			ids = ids[len(batch):]
			q := store.ListQuery{Workspace: workspace, Type: typ, IDs: batch, Limit: len(batch)}
			if typ == store.TypeNote {
				q.Unmarked = KindNoteDeleted // a deleted Note keeps its row, marked by an object
			} else {
				q.Unmarked = store.KindRoomDeleted
			}
			rs, err := st.List(ctx, q)
			if err != nil {
				return fmt.Errorf("look up the granted %ss: %w", typ, err)
			}
			for _, r := range rs {
				titles[r.ID] = r.Title
			}
		}
		for i := range out {
			if out[i].Names == nil {
				out[i].Names = map[string]string{}
			}
			list := out[i].Notes
			if typ == store.TypeRoom {
				list = out[i].Rooms
			}
			for _, id := range list {
				if t, ok := titles[id]; ok {
					out[i].Names[id] = t
				}
			}
		}
	}
	return nil
}

// RevokeConnection revokes the connection or personal access token id of the
// workspace that c may see (see ListConnections). An ID the workspace (or the
// user) does not have is a not-found problem, one already revoked an
// invalid-argument problem with revoked_at. A revoked token is refused at
// once through the revoking store (store.WithTokenCache) and within
// store.TokenRecheck on every other node.
func (s *Service) RevokeConnection(ctx context.Context, c Caller, id string) error {
	if err := c.personOnly("revoking a connection"); err != nil {
		return err
	}
	return revokeConnection(ctx, s.Store, c.Workspace, c.ownEntries(), id)
}

func revokeConnection(ctx context.Context, st store.Store, workspace, user, id string) error {
	if err := checkConnectionID(id); err != nil {
		return err
	}
	if c, err := st.Connection(ctx, id); err == nil && c.Workspace == workspace && (user == "" || c.User == user) {
		if c.RevokedAt != nil {
			return alreadyRevoked("connection", id, *c.RevokedAt)
		}
		err := st.RevokeConnection(ctx, workspace, id)
		if errors.Is(err, store.ErrNotFound) { // revoked meanwhile
			if c, err := st.Connection(ctx, id); err == nil && c.RevokedAt != nil {
				return alreadyRevoked("connection", id, *c.RevokedAt)
			}
			return connectionNotFound(id)
		}
		return err
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("look up connection %s: %w", id, err)
	}
	toks, err := st.Tokens(ctx, workspace)
	if err != nil {
		return fmt.Errorf("list tokens: %w", err)
	}
	for _, t := range toks {
		if t.ID != id || (user != "" && t.User != user) {
			continue
		}
		if t.RevokedAt != nil {
			return alreadyRevoked("token", id, *t.RevokedAt)
		}
		err := st.RevokeToken(ctx, workspace, id)
		if errors.Is(err, store.ErrNotFound) {
			return connectionNotFound(id) // revoked meanwhile
		}
		return err
	}
	return connectionNotFound(id)
}

func connectionNotFound(id string) error {
	return problem.New(problem.NotFound, "id", "%q is neither a live connection nor a token you can see in this workspace: list the connections to see their IDs", problem.Excerpt(id))
}

// MaxIDBytes bounds an ID a client sends: no ID Foundry makes is near it.
const MaxIDBytes = 200

func checkConnectionID(id string) error {
	if id == "" {
		return problem.New(problem.Invalid, "id", "is empty: give the ID of a connection or token, as the list of connections shows it")
	}
	if len(id) > MaxIDBytes {
		return problem.New(problem.Invalid, "id", "is %d bytes long, which no connection or token ID is (at most %d)", len(id), MaxIDBytes)
	}
	return CheckID("id", id)
}

func alreadyRevoked(what, id string, at time.Time) error {
	return problem.New(problem.Invalid, "id", "%s %s was already revoked at %s", what, id, at.UTC().Format("2006-01-02 15:04 UTC")).With("revoked_at", at.UTC())
}

// httpsHost is the host of a client ID that is an https URL (a client ID
// metadata document), "" for any other ID.
func httpsHost(id string) string {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" {
		return ""
	}
	return u.Hostname()
}
