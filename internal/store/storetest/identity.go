package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
)

// identityCases is the contract of store.Identity; Run runs them with the
// rest of the suite.
var identityCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"users: created once per email and ID, found by either", testUsers},
	{"SetPassword replaces the hash and ends only that user's sessions", testSetPassword},
	{"RehashPassword replaces the hash it was given only, keeping sessions", testRehashPassword},
	{"DeleteUser removes sessions and tokens and revokes connections and grants", testDeleteUser},
	{"SetUserRole never takes the last owner's role; RenameWorkspace renames", testSetUserRole},
	{"sessions are found by hash until they expire", testSessions},
	{"ServerSecret keeps the first value, whatever its bytes", testServerSecret},
	{"clients round-trip, are unique by ID and can be deleted", testClients},
	{"PutConnection keeps one live connection per person and client", testPutConnection},
	{"a grant of nil (all) and of empty (none) round-trip apart", testConnectionGrantShapes},
	{"RevokeConnection revokes its grants; a new consent makes a new connection", testRevokeConnection},
	{"SetGrantState moves a grant only from the listed states", testSetGrantState},
	{"RevokeGrants revokes by request and kind", testRevokeGrants},
	{"RotateRefresh rotates, revokes the linked access and stores the new grants", testRotateRefresh},
	{"RotateRefresh is all or nothing", testRotateRefreshAtomic},
	{"RotateRefresh within the grace succeeds again, after it writes nothing", testRotateRefreshGrace},
	{"concurrent rotations of one refresh token within the grace both succeed", testRotateRefreshConcurrent},
	{"concurrent creates of one user, client or connection make one", testConcurrentCreates},
	{"Actors names only the actors asked for, of the workspace, alike on every store", testActors},
	{"Actors answers 1,000 actors and more in one lookup", testActorsMany},
	{"sign-in counters count in their window, start again once expired, and lose no failure", testSignInCounters},
}

// identityRetentionCases is the pruning part of the contract; RunRetention
// runs them.
var identityRetentionCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"Prune deletes expired sessions, old grants and unused dynamic clients", testPruneIdentity},
	{"Prune deletes expired sign-in counters", testPruneSignInCounters},
}

// UnusedClients is the store.Retention.UnusedClients RunRetention opens its
// stores with.
const UnusedClients = time.Hour

func owner(t *testing.T, s store.Store, ws string) store.User {
	t.Helper()
	users, err := s.Users(context.Background(), ws)
	if err != nil || len(users) == 0 {
		t.Fatalf("users of %s: %v, %v", ws, users, err)
	}
	return users[0]
}

func addUser(t *testing.T, s store.Store, ws, role string) store.User {
	t.Helper()
	id := store.NewID("usr")
	u := store.User{ID: id, Workspace: ws, Email: id + "@example.com", Name: "Ünïcode " + role, PasswordHash: "$argon2id$" + id, Role: role, CreatedAt: time.Now().UTC()}
	if err := s.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func addSession(t *testing.T, s store.Store, u store.User, ttl time.Duration) store.Session {
	t.Helper()
	now := time.Now().UTC()
	ss := store.Session{Hash: store.NewID("sess"), Workspace: u.Workspace, User: u.ID, CSRF: store.NewID("csrf"), CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := s.CreateSession(context.Background(), ss); err != nil {
		t.Fatal(err)
	}
	return ss
}

func addToken(t *testing.T, s store.Store, u store.User) store.Token {
	t.Helper()
	tok := store.Token{ID: store.NewID("tok"), Workspace: u.Workspace, User: u.ID, Name: "cli", Hash: store.NewID("hash"), Scopes: []string{"osfoundry:read"}, CreatedAt: time.Now().UTC()}
	if err := s.CreateToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func addClient(t *testing.T, s store.Store, kind string, created time.Time) store.Client {
	t.Helper()
	c := store.Client{ID: store.NewID("client"), Name: "Client " + kind, RedirectURIs: []string{"http://127.0.0.1/callback"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: []string{"osfoundry:read"}, Kind: kind, CreatedAt: created.UTC()}
	if err := s.CreateClient(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func connect(t *testing.T, s store.Store, u store.User, client string, scopes ...string) store.Connection {
	t.Helper()
	c, err := s.PutConnection(context.Background(), store.Connection{ID: store.NewID("conn"), Workspace: u.Workspace, User: u.ID, Client: client, Scopes: scopes, CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// grant stores an active grant of kind under a fresh hash.
func grant(t *testing.T, s store.Store, kind, request, client, conn string, mod ...func(*store.Grant)) store.Grant {
	t.Helper()
	now := time.Now().UTC()
	g := store.Grant{Kind: kind, Hash: store.NewID(kind), RequestID: request, Client: client, Connection: conn,
		Data: json.RawMessage(`{"scopes":["osfoundry:read"]}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	for _, m := range mod {
		m(&g)
	}
	if err := s.PutGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	g.State = cmpOr(g.State, store.GrantActive)
	return g
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func state(t *testing.T, s store.Store, kind, hash string) string {
	t.Helper()
	g, err := s.Grant(context.Background(), kind, hash)
	if err != nil {
		t.Fatalf("grant %s %s: %v", kind, hash, err)
	}
	return g.State
}

func wantState(t *testing.T, s store.Store, g store.Grant, want string) {
	t.Helper()
	if got := state(t, s, g.Kind, g.Hash); got != want {
		t.Errorf("%s grant %s is %s, want %s", g.Kind, g.Hash, got, want)
	}
}

func wantNoGrant(t *testing.T, s store.Store, kind, hash string) {
	t.Helper()
	if g, err := s.Grant(context.Background(), kind, hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s grant %s: %+v, %v; want ErrNotFound (it must not have been written)", kind, hash, g, err)
	}
}

func testUsers(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u := addUser(t, s, ws, "member")
	for _, by := range []func() (store.User, error){
		func() (store.User, error) { return s.UserByID(ctx, u.ID) },
		func() (store.User, error) { return s.UserByEmail(ctx, u.Email) },
	} {
		got, err := by()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || got.Workspace != ws || got.Email != u.Email || got.Name != u.Name || got.PasswordHash != u.PasswordHash || got.Role != "member" || got.CreatedAt.UnixMicro() != u.CreatedAt.UnixMicro() {
			t.Fatalf("read back %+v, want %+v", got, u)
		}
	}
	dupEmail := u
	dupEmail.ID = store.NewID("usr")
	if err := s.CreateUser(ctx, dupEmail); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second user with email %s: %v, want ErrExists", u.Email, err)
	}
	dupID := u
	dupID.Email = "other-" + u.Email
	if err := s.CreateUser(ctx, dupID); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second user with ID %s: %v, want ErrExists", u.ID, err)
	}
	if _, err := s.UserByEmail(ctx, dupID.Email); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused user was stored: %v", err)
	}
	if users, _ := s.Users(ctx, ws); len(users) != 2 {
		t.Fatalf("workspace has %d users, want the owner and one member", len(users))
	}
	if _, err := s.UserByID(ctx, "usr_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown ID: %v, want ErrNotFound", err)
	}
	if _, err := s.UserByEmail(ctx, "nobody@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown email: %v, want ErrNotFound", err)
	}
}

func testSetPassword(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	a, b := addUser(t, s, ws, "member"), addUser(t, s, ws, "member")
	a1, a2, b1 := addSession(t, s, a, time.Hour), addSession(t, s, a, time.Hour), addSession(t, s, b, time.Hour)
	if err := s.SetPassword(ctx, a.ID, "$argon2id$new"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByID(ctx, a.ID); got.PasswordHash != "$argon2id$new" {
		t.Fatalf("hash after SetPassword = %q", got.PasswordHash)
	}
	if got, _ := s.UserByID(ctx, b.ID); got.PasswordHash != b.PasswordHash {
		t.Fatalf("another user's hash changed to %q", got.PasswordHash)
	}
	for _, ss := range []store.Session{a1, a2} {
		if _, err := s.SessionByHash(ctx, ss.Hash, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a session of the user whose password changed: %v, want ErrNotFound", err)
		}
	}
	if _, err := s.SessionByHash(ctx, b1.Hash, time.Now()); err != nil {
		t.Fatalf("another user's session ended: %v", err)
	}
	if err := s.SetPassword(ctx, "usr_unknown", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetPassword of an unknown user: %v, want ErrNotFound", err)
	}
}

func testRehashPassword(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	a, b := addUser(t, s, ws, "member"), addUser(t, s, ws, "member")
	a1 := addSession(t, s, a, time.Hour)
	done, err := s.RehashPassword(ctx, a.ID, a.PasswordHash, "$argon2id$rehashed")
	if err != nil || !done {
		t.Fatalf("RehashPassword of the current hash: %v, %v; want done", done, err)
	}
	if got, _ := s.UserByID(ctx, a.ID); got.PasswordHash != "$argon2id$rehashed" {
		t.Fatalf("hash after RehashPassword = %q", got.PasswordHash)
	}
	if _, err := s.SessionByHash(ctx, a1.Hash, time.Now()); err != nil {
		t.Fatalf("the user's session after a rehash: %v, want it kept", err)
	}
	// The password changed meanwhile: the old hash is not current.
	done, err = s.RehashPassword(ctx, a.ID, a.PasswordHash, "$argon2id$late")
	if err != nil || done {
		t.Fatalf("RehashPassword of a replaced hash: %v, %v; want not done", done, err)
	}
	if got, _ := s.UserByID(ctx, a.ID); got.PasswordHash != "$argon2id$rehashed" {
		t.Fatalf("a rehash of a replaced hash changed it to %q", got.PasswordHash)
	}
	if got, _ := s.UserByID(ctx, b.ID); got.PasswordHash != b.PasswordHash {
		t.Fatalf("another user's hash changed to %q", got.PasswordHash)
	}
	if done, err := s.RehashPassword(ctx, "usr_unknown", "x", "y"); err != nil || done {
		t.Fatalf("RehashPassword of an unknown user: %v, %v; want not done", done, err)
	}
}

func testDeleteUser(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	gone, kept := addUser(t, s, ws, "member"), addUser(t, s, ws, "member")
	client := addClient(t, s, store.ClientDynamic, time.Now())
	type stuff struct {
		sess            store.Session
		tok             store.Token
		conn            store.Connection
		access, refresh store.Grant
	}
	mk := func(u store.User) stuff {
		c := connect(t, s, u, client.ID, "osfoundry:read")
		req := store.NewID("req")
		return stuff{addSession(t, s, u, time.Hour), addToken(t, s, u), c,
			grant(t, s, store.GrantAccess, req, client.ID, c.ID), grant(t, s, store.GrantRefresh, req, client.ID, c.ID)}
	}
	g, k := mk(gone), mk(kept)

	if err := s.DeleteUser(ctx, Seed(t, s), gone.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteUser from another workspace: %v, want ErrNotFound", err)
	}
	if _, err := s.SessionByHash(ctx, g.sess.Hash, time.Now()); err != nil {
		t.Fatalf("a refused DeleteUser ended a session: %v", err)
	}
	if err := s.DeleteUser(ctx, ws, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByID(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted user: %v, want ErrNotFound", err)
	}
	if _, err := s.SessionByHash(ctx, g.sess.Hash, time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted user's session: %v, want ErrNotFound", err)
	}
	if tok, err := s.TokenByHash(ctx, g.tok.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted user's token: %+v, %v; want ErrNotFound", tok, err)
	}
	if c, err := s.Connection(ctx, g.conn.ID); err != nil || c.RevokedAt == nil {
		t.Fatalf("deleted user's connection: %+v, %v; want it revoked", c, err)
	}
	wantState(t, s, g.access, store.GrantRevoked)
	wantState(t, s, g.refresh, store.GrantRevoked)

	if _, err := s.SessionByHash(ctx, k.sess.Hash, time.Now()); err != nil {
		t.Errorf("another user's session: %v", err)
	}
	if tok, err := s.TokenByHash(ctx, k.tok.Hash); err != nil || tok.RevokedAt != nil {
		t.Errorf("another user's token: %+v, %v", tok, err)
	}
	if c, err := s.Connection(ctx, k.conn.ID); err != nil || c.RevokedAt != nil {
		t.Errorf("another user's connection: %+v, %v", c, err)
	}
	wantState(t, s, k.access, store.GrantActive)
	wantState(t, s, k.refresh, store.GrantActive)
	if err := s.DeleteUser(ctx, ws, gone.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting the user again: %v, want ErrNotFound", err)
	}
}

func testSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u := owner(t, s, ws)
	ss := addSession(t, s, u, time.Hour)
	got, err := s.SessionByHash(ctx, ss.Hash, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != ss.Hash || got.Workspace != ws || got.User != u.ID || got.CSRF != ss.CSRF ||
		got.CreatedAt.UnixMicro() != ss.CreatedAt.UnixMicro() || got.ExpiresAt.UnixMicro() != ss.ExpiresAt.UnixMicro() {
		t.Fatalf("session read back %+v, want %+v", got, ss)
	}
	exp := time.UnixMicro(ss.ExpiresAt.UnixMicro())
	if _, err := s.SessionByHash(ctx, ss.Hash, exp.Add(-time.Microsecond)); err != nil {
		t.Fatalf("a session just before it expires: %v", err)
	}
	for _, at := range []time.Time{exp, exp.Add(time.Second)} {
		if _, err := s.SessionByHash(ctx, ss.Hash, at); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("session at %v (expires %v): %v, want ErrNotFound", at, exp, err)
		}
	}
	if err := s.DeleteSession(ctx, ss.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, ss.Hash, time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted session: %v, want ErrNotFound", err)
	}
	if _, err := s.SessionByHash(ctx, "unknown", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: %v, want ErrNotFound", err)
	}
}

// secretBytes is a secret as a caller makes one: random bytes, here with a
// NUL and bytes that are not UTF-8 for certain.
func secretBytes() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	b[0], b[1], b[2] = 0x00, 0xff, 0xc3
	return b
}

func testServerSecret(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := secretBytes()
	got, err := s.ServerSecret(ctx, "oauth_hmac", first)
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("first ServerSecret = %x, %v; want %x", got, err, first)
	}
	if got, err := s.ServerSecret(ctx, "oauth_hmac", secretBytes()); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("second ServerSecret = %x, %v; want the first value %x", got, err, first)
	}
	other := secretBytes()
	if got, err := s.ServerSecret(ctx, "another", other); err != nil || !bytes.Equal(got, other) {
		t.Fatalf("another name = %x, %v; want its own value", got, err)
	}
	// Callers racing on a fresh name all get one value.
	const n = 8
	vals := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals[i], errs[i] = s.ServerSecret(ctx, "raced", secretBytes())
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(vals[i], vals[0]) {
			t.Fatalf("caller %d got %x, %v; caller 0 got %x", i, vals[i], errs[i], vals[0])
		}
	}
}

// ServerSecretShared checks that concurrent ServerSecret callers on two
// store handles of one database get one value: what every node of a
// deployment relies on. a and b are open on the same database.
func ServerSecretShared(t *testing.T, a, b store.Store) {
	t.Helper()
	ctx := context.Background()
	name := store.NewID("shared")
	const n = 8
	vals := make([][]byte, 2*n)
	errs := make([]error, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			h := a
			if i%2 == 1 {
				h = b
			}
			vals[i], errs[i] = h.ServerSecret(ctx, name, secretBytes())
		}()
	}
	close(start)
	wg.Wait()
	for i := range vals {
		if errs[i] != nil || len(vals[i]) != 32 || !bytes.Equal(vals[i], vals[0]) {
			t.Fatalf("caller %d (handle %d) got %x, %v; caller 0 got %x", i, i%2, vals[i], errs[i], vals[0])
		}
	}
}

func testClients(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	c := store.Client{ID: "https://client.example.com/oauth/metadata.json", SecretHash: "", Name: "Клиент ✓",
		RedirectURIs: []string{"https://client.example.com/cb", "http://127.0.0.1/cb"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		Scopes: []string{"osfoundry:read", "osfoundry:write"}, Kind: store.ClientMetadata, Metadata: json.RawMessage(`{"client_uri":"https://client.example.com"}`), CreatedAt: now}
	if err := s.CreateClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	conf := store.Client{ID: store.NewID("client"), SecretHash: "abc123", Name: "CI", Kind: store.ClientRegistered, CreatedAt: now.Add(time.Second)}
	if err := s.CreateClient(ctx, conf); err != nil {
		t.Fatal(err)
	}
	got, err := s.Client(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != c.ID || got.Name != c.Name || got.Kind != c.Kind || got.SecretHash != "" || !slices.Equal(got.RedirectURIs, c.RedirectURIs) ||
		!slices.Equal(got.GrantTypes, c.GrantTypes) || !slices.Equal(got.Scopes, c.Scopes) || got.CreatedAt.UnixMicro() != now.UnixMicro() {
		t.Fatalf("client read back %+v, want %+v", got, c)
	}
	var meta map[string]string
	if err := json.Unmarshal(got.Metadata, &meta); err != nil || meta["client_uri"] != "https://client.example.com" {
		t.Fatalf("metadata read back %s (%v)", got.Metadata, err)
	}
	got, err = s.Client(ctx, conf.ID)
	if err != nil || got.SecretHash != "abc123" || got.RedirectURIs == nil || len(got.RedirectURIs) != 0 || !json.Valid(got.Metadata) {
		t.Fatalf("client without URIs or metadata: %+v, %v; want [] and valid JSON", got, err)
	}
	dup := conf
	dup.Name = "another"
	if err := s.CreateClient(ctx, dup); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second client with ID %s: %v, want ErrExists", conf.ID, err)
	}
	all, err := s.Clients(ctx)
	if err != nil || len(all) != 2 || all[0].ID != c.ID || all[1].ID != conf.ID || all[1].Name != "CI" {
		t.Fatalf("Clients = %+v, %v; want both, oldest first, the refused one not stored", all, err)
	}
	if err := s.DeleteClient(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted client: %v, want ErrNotFound", err)
	}
	if err := s.DeleteClient(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
}

func testPutConnection(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u, other := owner(t, s, ws), addUser(t, s, ws, "member")
	a, b := addClient(t, s, store.ClientDynamic, time.Now()), addClient(t, s, store.ClientDynamic, time.Now())
	first, err := s.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: u.ID, Client: a.ID,
		Scopes: []string{"osfoundry:read"}, Notes: []string{"note_1"}, Rooms: nil, CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: u.ID, Client: a.ID,
		Scopes: []string{"osfoundry:read", "osfoundry:write"}, Notes: nil, Rooms: []string{"room_1", "room_2"}, CreatedAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.CreatedAt.UnixMicro() != first.CreatedAt.UnixMicro() {
		t.Fatalf("second consent answered %s created %v, want the first connection %s created %v", again.ID, again.CreatedAt, first.ID, first.CreatedAt)
	}
	stored, err := s.Connection(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(stored.Scopes) != "[osfoundry:read osfoundry:write]" || stored.Notes != nil || fmt.Sprint(stored.Rooms) != "[room_1 room_2]" ||
		stored.Workspace != ws || stored.User != u.ID || stored.Client != a.ID || stored.RevokedAt != nil {
		t.Fatalf("stored connection %+v, want the second consent's scopes and grant", stored)
	}
	// Another client, or another person, is another connection.
	cb := connect(t, s, u, b.ID, "osfoundry:read")
	co := connect(t, s, other, a.ID, "osfoundry:read")
	if cb.ID == first.ID || co.ID == first.ID || cb.ID == co.ID {
		t.Fatalf("connections %s, %s, %s share an ID", first.ID, cb.ID, co.ID)
	}
	// Connections: this workspace's only, oldest first.
	connect(t, s, owner(t, s, Seed(t, s)), a.ID, "osfoundry:read")
	list, err := s.Connections(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint([]string{first.ID, cb.ID, co.ID}) {
		t.Fatalf("Connections = %v, want %v", ids, []string{first.ID, cb.ID, co.ID})
	}
	// TouchConnection records the use.
	at := time.Now().UTC().Add(time.Minute)
	if err := s.TouchConnection(ctx, cb.ID, at); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Connection(ctx, cb.ID); c.LastUsed == nil || c.LastUsed.UnixMicro() != at.UnixMicro() {
		t.Fatalf("last use after TouchConnection: %v, want %v", c.LastUsed, at)
	}
	if c, _ := s.Connection(ctx, co.ID); c.LastUsed != nil {
		t.Fatalf("an untouched connection has a last use: %v", c.LastUsed)
	}
	if _, err := s.Connection(ctx, "conn_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown connection: %v, want ErrNotFound", err)
	}
}

func testConnectionGrantShapes(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u := owner(t, s, ws)
	for i, c := range []struct{ notes, rooms []string }{
		{nil, []string{}},
		{[]string{}, nil},
		{[]string{"note_ü", "note_2"}, []string{}},
	} {
		cl := addClient(t, s, store.ClientDynamic, time.Now())
		put, err := s.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: u.ID, Client: cl.ID, Notes: c.notes, Rooms: c.rooms, CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Connection(ctx, put.ID)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := s.Connections(ctx, ws)
		for _, read := range []store.Connection{put, got, list[i]} {
			if (read.Notes == nil) != (c.notes == nil) || (read.Rooms == nil) != (c.rooms == nil) ||
				!slices.Equal(read.Notes, c.notes) || !slices.Equal(read.Rooms, c.rooms) {
				t.Fatalf("case %d: grant read back notes %#v rooms %#v, want %#v and %#v (nil: all, empty: none)", i, read.Notes, read.Rooms, c.notes, c.rooms)
			}
		}
		if len(got.Scopes) != 0 {
			t.Fatalf("no scopes read back as %#v", got.Scopes)
		}
	}
}

func testRevokeConnection(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u := owner(t, s, ws)
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	c := connect(t, s, u, cl.ID, "osfoundry:read")
	keep := connect(t, s, u, addClient(t, s, store.ClientDynamic, time.Now()).ID, "osfoundry:read")
	req := store.NewID("req")
	access, refresh := grant(t, s, store.GrantAccess, req, cl.ID, c.ID), grant(t, s, store.GrantRefresh, req, cl.ID, c.ID)
	used := grant(t, s, store.GrantCode, req, cl.ID, c.ID, func(g *store.Grant) { g.State = store.GrantUsed })
	other := grant(t, s, store.GrantAccess, store.NewID("req"), keep.Client, keep.ID)

	if err := s.RevokeConnection(ctx, Seed(t, s), c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking from another workspace: %v, want ErrNotFound", err)
	}
	wantState(t, s, access, store.GrantActive)
	if err := s.RevokeConnection(ctx, ws, c.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Connection(ctx, c.ID); got.RevokedAt == nil {
		t.Fatal("revoked connection has no revocation time")
	}
	for _, g := range []store.Grant{access, refresh, used} {
		wantState(t, s, g, store.GrantRevoked)
	}
	wantState(t, s, other, store.GrantActive)
	if got, _ := s.Connection(ctx, keep.ID); got.RevokedAt != nil {
		t.Fatal("another connection was revoked")
	}
	if err := s.RevokeConnection(ctx, ws, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking it again: %v, want ErrNotFound", err)
	}
	if err := s.RevokeConnection(ctx, ws, "conn_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown connection: %v, want ErrNotFound", err)
	}
	// Consenting again after a revocation makes a new connection; the old
	// one stays revoked and listed.
	fresh, err := s.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: u.ID, Client: cl.ID, Scopes: []string{"osfoundry:write"}, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.ID == c.ID || fresh.RevokedAt != nil {
		t.Fatalf("consent after revocation answered %+v, want a new live connection", fresh)
	}
	if old, _ := s.Connection(ctx, c.ID); old.RevokedAt == nil || fmt.Sprint(old.Scopes) != "[osfoundry:read]" {
		t.Fatalf("the revoked connection became %+v", old)
	}
	list, _ := s.Connections(ctx, ws)
	if len(list) != 3 {
		t.Fatalf("Connections lists %d, want 3 (the revoked one included)", len(list))
	}
}

func testSetGrantState(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	exp := time.Now().UTC().Add(10 * time.Minute)
	code := grant(t, s, store.GrantCode, "req_1", cl.ID, "conn_1", func(g *store.Grant) {
		g.AccessHash, g.ExpiresAt, g.Data = "linked", exp, json.RawMessage(`{"redirect_uri":"http://127.0.0.1:1234/cb","ü":"✓"}`)
	})
	got, err := s.Grant(ctx, store.GrantCode, code.Hash)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]string
	if err := json.Unmarshal(got.Data, &data); err != nil || data["ü"] != "✓" || got.State != store.GrantActive || got.RequestID != "req_1" ||
		got.Client != cl.ID || got.Connection != "conn_1" || got.AccessHash != "linked" || got.ExpiresAt.UnixMicro() != exp.UnixMicro() {
		t.Fatalf("grant read back %+v (%v)", got, err)
	}
	if _, err := s.Grant(ctx, store.GrantAccess, code.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the code's hash as another kind: %v, want ErrNotFound", err)
	}
	for _, step := range []struct {
		from []string
		to   string
		ok   bool
		want string
	}{
		{nil, store.GrantRevoked, false, store.GrantActive},
		{[]string{store.GrantUsed, store.GrantRotated}, store.GrantRevoked, false, store.GrantActive},
		{[]string{store.GrantActive}, store.GrantUsed, true, store.GrantUsed},
		{[]string{store.GrantActive}, store.GrantUsed, false, store.GrantUsed}, // a code is exchanged once
		{[]string{store.GrantActive, store.GrantUsed}, store.GrantRevoked, true, store.GrantRevoked},
		{[]string{store.GrantActive, store.GrantUsed}, store.GrantActive, false, store.GrantRevoked},
	} {
		ok, err := s.SetGrantState(ctx, store.GrantCode, code.Hash, step.from, step.to)
		if err != nil || ok != step.ok {
			t.Fatalf("SetGrantState %v → %s = %v, %v; want %v", step.from, step.to, ok, err, step.ok)
		}
		if st := state(t, s, store.GrantCode, code.Hash); st != step.want {
			t.Fatalf("after %v → %s the grant is %s, want %s", step.from, step.to, st, step.want)
		}
	}
	if ok, err := s.SetGrantState(ctx, store.GrantCode, "unknown", []string{store.GrantActive}, store.GrantUsed); ok || err != nil {
		t.Fatalf("SetGrantState of an unknown grant = %v, %v; want false", ok, err)
	}
	// Concurrent exchanges of one code: exactly one wins.
	race := grant(t, s, store.GrantCode, "req_race", cl.ID, "")
	const n = 8
	wins := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins[i], _ = s.SetGrantState(ctx, store.GrantCode, race.Hash, []string{store.GrantActive}, store.GrantUsed)
		}()
	}
	wg.Wait()
	won := 0
	for _, w := range wins {
		if w {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent exchanges of one code won, want exactly 1", won, n)
	}
	if err := s.DeleteGrant(ctx, store.GrantCode, code.Hash); err != nil {
		t.Fatal(err)
	}
	wantNoGrant(t, s, store.GrantCode, code.Hash)
}

func testRevokeGrants(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	req, other := store.NewID("req"), store.NewID("req")
	code := grant(t, s, store.GrantCode, req, cl.ID, "", func(g *store.Grant) { g.State = store.GrantUsed })
	a1, a2 := grant(t, s, store.GrantAccess, req, cl.ID, ""), grant(t, s, store.GrantAccess, req, cl.ID, "")
	r1 := grant(t, s, store.GrantRefresh, req, cl.ID, "")
	pk := grant(t, s, store.GrantPKCE, req, cl.ID, "")
	oa, or := grant(t, s, store.GrantAccess, other, cl.ID, ""), grant(t, s, store.GrantRefresh, other, cl.ID, "")

	if err := s.RevokeGrants(ctx, req, store.GrantAccess); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, a1, store.GrantRevoked)
	wantState(t, s, a2, store.GrantRevoked)
	wantState(t, s, r1, store.GrantActive)
	wantState(t, s, code, store.GrantUsed)
	wantState(t, s, oa, store.GrantActive)

	if err := s.RevokeGrants(ctx, req, store.GrantRefresh, store.GrantPKCE); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, r1, store.GrantRevoked)
	wantState(t, s, pk, store.GrantRevoked)
	wantState(t, s, code, store.GrantUsed)

	if err := s.RevokeGrants(ctx, other); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, oa, store.GrantRevoked)
	wantState(t, s, or, store.GrantRevoked)
	if err := s.RevokeGrants(ctx, req); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, code, store.GrantRevoked)
	if err := s.RevokeGrants(ctx, "req_unknown"); err != nil {
		t.Fatalf("RevokeGrants of an unknown request: %v, want nil (nothing to revoke)", err)
	}
}

// pair stores an access token and the refresh token issued with it.
func pair(t *testing.T, s store.Store, client string) (access, refresh store.Grant) {
	t.Helper()
	req := store.NewID("req")
	access = grant(t, s, store.GrantAccess, req, client, "")
	refresh = grant(t, s, store.GrantRefresh, req, client, "", func(g *store.Grant) { g.AccessHash = access.Hash })
	return access, refresh
}

// newPair is the access and refresh grants a rotation of old puts.
func newPair(old store.Grant) []store.Grant {
	now := time.Now().UTC()
	a := store.Grant{Kind: store.GrantAccess, Hash: store.NewID("access"), RequestID: old.RequestID, Client: old.Client, Connection: old.Connection, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	r := store.Grant{Kind: store.GrantRefresh, Hash: store.NewID("refresh"), RequestID: old.RequestID, Client: old.Client, Connection: old.Connection, AccessHash: a.Hash, CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
	return []store.Grant{a, r}
}

func testRotateRefresh(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	access, refresh := pair(t, s, cl.ID)
	bystander, _ := pair(t, s, cl.ID)
	puts := newPair(refresh)
	if err := s.RotateRefresh(ctx, refresh.Hash, time.Now(), puts); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, refresh, store.GrantRotated)
	wantState(t, s, access, store.GrantRevoked)
	wantState(t, s, bystander, store.GrantActive)
	for _, p := range puts {
		got, err := s.Grant(ctx, p.Kind, p.Hash)
		if err != nil || got.State != store.GrantActive || got.RequestID != refresh.RequestID || got.AccessHash != p.AccessHash {
			t.Fatalf("put %s: %+v, %v; want it stored active", p.Kind, got, err)
		}
	}
	// The new refresh token rotates in turn, revoking the new access token.
	if err := s.RotateRefresh(ctx, puts[1].Hash, time.Now(), newPair(refresh)); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, puts[0], store.GrantRevoked)

	// A revoked refresh token: ErrNotFound, nothing written.
	_, revoked := pair(t, s, cl.ID)
	if ok, err := s.SetGrantState(ctx, store.GrantRefresh, revoked.Hash, []string{store.GrantActive}, store.GrantRevoked); !ok || err != nil {
		t.Fatalf("revoking: %v, %v", ok, err)
	}
	p := newPair(revoked)
	if err := s.RotateRefresh(ctx, revoked.Hash, time.Now().Add(-time.Hour), p); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotating a revoked token: %v, want ErrNotFound", err)
	}
	wantNoGrant(t, s, p[0].Kind, p[0].Hash)
	wantNoGrant(t, s, p[1].Kind, p[1].Hash)
	// An unknown hash, or an access token's hash: ErrNotFound.
	for _, h := range []string{"unknown", bystander.Hash} {
		p := newPair(refresh)
		if err := s.RotateRefresh(ctx, h, time.Now().Add(-time.Hour), p); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("rotating %s: %v, want ErrNotFound", h, err)
		}
		wantNoGrant(t, s, p[0].Kind, p[0].Hash)
	}
	wantState(t, s, bystander, store.GrantActive)
}

func testRotateRefreshAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	access, refresh := pair(t, s, cl.ID)
	taken := grant(t, s, store.GrantAccess, store.NewID("req"), cl.ID, "")
	puts := newPair(refresh)
	dup := puts[1]
	dup.Kind, dup.Hash = store.GrantAccess, taken.Hash // a duplicate key: the put fails
	if err := s.RotateRefresh(ctx, refresh.Hash, time.Now(), []store.Grant{puts[0], dup}); err == nil {
		t.Fatal("a rotation whose put hits an existing key succeeded")
	}
	wantState(t, s, refresh, store.GrantActive)
	wantState(t, s, access, store.GrantActive)
	wantState(t, s, taken, store.GrantActive)
	wantNoGrant(t, s, puts[0].Kind, puts[0].Hash)
	// The failed rotation left the token usable.
	if err := s.RotateRefresh(ctx, refresh.Hash, time.Now(), puts); err != nil {
		t.Fatalf("rotating after a failed rotation: %v", err)
	}
	wantState(t, s, refresh, store.GrantRotated)
}

func testRotateRefreshGrace(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	_, refresh := pair(t, s, cl.ID)
	before := time.Now().Add(-time.Minute)
	if err := s.RotateRefresh(ctx, refresh.Hash, before, newPair(refresh)); err != nil {
		t.Fatal(err)
	}
	rotated, err := s.Grant(ctx, store.GrantRefresh, refresh.Hash)
	if err != nil || rotated.State != store.GrantRotated {
		t.Fatalf("after rotation: %+v, %v", rotated, err)
	}
	// Within the grace (rotated at graceSince or later): a second rotation
	// succeeds and stores its grants, and the rotation time stays.
	second := newPair(refresh)
	if err := s.RotateRefresh(ctx, refresh.Hash, rotated.Change, second); err != nil {
		t.Fatalf("second rotation within the grace: %v", err)
	}
	for _, p := range second {
		if st := state(t, s, p.Kind, p.Hash); st != store.GrantActive {
			t.Fatalf("second rotation's %s is %s, want active", p.Kind, st)
		}
	}
	again, _ := s.Grant(ctx, store.GrantRefresh, refresh.Hash)
	if again.State != store.GrantRotated || !again.Change.Equal(rotated.Change) {
		t.Fatalf("after the second rotation: %s changed %v, want rotated at %v (the grace never extends itself)", again.State, again.Change, rotated.Change)
	}
	// After the grace: ErrNotFound and nothing written.
	late := newPair(refresh)
	if err := s.RotateRefresh(ctx, refresh.Hash, rotated.Change.Add(time.Microsecond), late); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotation after the grace: %v, want ErrNotFound", err)
	}
	wantNoGrant(t, s, late[0].Kind, late[0].Hash)
	wantNoGrant(t, s, late[1].Kind, late[1].Hash)
	for _, p := range second {
		if st := state(t, s, p.Kind, p.Hash); st != store.GrantActive {
			t.Fatalf("a refused rotation changed the second rotation's %s to %s", p.Kind, st)
		}
	}
}

func testRotateRefreshConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	_, refresh := pair(t, s, cl.ID)
	grace := time.Now().Add(-time.Minute)
	const n = 4
	puts := make([][]store.Grant, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		puts[i] = newPair(refresh)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.RotateRefresh(ctx, refresh.Hash, grace, puts[i])
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent rotation %d: %v (a client refreshing twice at once must not be logged out)", i, errs[i])
		}
		if st := state(t, s, store.GrantRefresh, puts[i][1].Hash); st != store.GrantActive {
			t.Fatalf("rotation %d's refresh token is %s, want active", i, st)
		}
	}
}

func testPruneIdentity(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	u := owner(t, s, ws)
	now := time.Now()
	var expired []store.Session
	for range RetentionBatch + 1 { // more than one batch
		expired = append(expired, addSession(t, s, u, time.Minute))
	}
	live := addSession(t, s, u, 30*time.Hour)

	base := addClient(t, s, store.ClientRegistered, now)
	at := now.Add(26 * time.Hour)                                            // the prune runs a day and 2 h later
	old := func(g *store.Grant) { g.ExpiresAt = now.Add(-time.Hour) }        // expired 27 h before it
	recent := func(g *store.Grant) { g.ExpiresAt = at.Add(-23 * time.Hour) } // expired less than a day before it
	valid := func(g *store.Grant) { g.ExpiresAt = at.Add(time.Hour) }        // expires after it
	oldGrants := []store.Grant{grant(t, s, store.GrantCode, "req_old", base.ID, "", old), grant(t, s, store.GrantRefresh, "req_old", base.ID, "", old)}
	keptGrants := []store.Grant{grant(t, s, store.GrantRefresh, "req_recent", base.ID, "", recent), grant(t, s, store.GrantAccess, "req_valid", base.ID, "", valid)}

	stale := now.Add(-2 * UnusedClients)
	unusedDynamic := addClient(t, s, store.ClientDynamic, stale)
	unusedFetched := addClient(t, s, store.ClientMetadata, stale)
	usedDynamic := addClient(t, s, store.ClientDynamic, stale)
	c := connect(t, s, u, usedDynamic.ID, "osfoundry:read")
	revokedUse := addClient(t, s, store.ClientDynamic, stale)
	rc := connect(t, s, u, revokedUse.ID, "osfoundry:read")
	if err := s.RevokeConnection(ctx, ws, rc.ID); err != nil {
		t.Fatal(err)
	}
	registered := addClient(t, s, store.ClientRegistered, stale)
	young := addClient(t, s, store.ClientDynamic, at.Add(-UnusedClients/2))

	rep, err := s.Prune(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(expired) + len(oldGrants) + 2); rep.Identity != want {
		t.Errorf("Prune deleted %d identity rows, want %d (%d sessions, %d grants, 2 clients)", rep.Identity, want, len(expired), len(oldGrants))
	}
	for _, ss := range expired {
		// Looked up at a time it was valid, to tell deleted from expired.
		if _, err := s.SessionByHash(ctx, ss.Hash, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired session %s survived the prune: %v", ss.Hash, err)
		}
	}
	if _, err := s.SessionByHash(ctx, live.Hash, now); err != nil {
		t.Errorf("a live session was pruned: %v", err)
	}
	for _, g := range oldGrants {
		wantNoGrant(t, s, g.Kind, g.Hash)
	}
	for _, g := range keptGrants {
		wantState(t, s, g, store.GrantActive)
	}
	for _, cl := range []store.Client{unusedDynamic, unusedFetched} {
		if _, err := s.Client(ctx, cl.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unused %s client older than %v survived the prune: %v", cl.Kind, UnusedClients, err)
		}
	}
	for _, cl := range []store.Client{base, usedDynamic, revokedUse, registered, young} {
		if _, err := s.Client(ctx, cl.ID); err != nil {
			t.Errorf("%s client %s was pruned: %v", cl.Kind, cl.Name, err)
		}
	}
	if got, err := s.Connection(ctx, c.ID); err != nil || got.RevokedAt != nil {
		t.Errorf("the used client's connection: %+v, %v", got, err)
	}
	if rep, err := s.Prune(ctx, at); err != nil || rep.Identity != 0 {
		t.Errorf("second prune: %+v, %v; want nothing deleted", rep, err)
	}
}

// race runs n calls of fn at once and answers their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// onceThenExists checks that exactly one of errs is nil and every other is
// ErrExists.
func onceThenExists(t *testing.T, what string, errs []error) {
	t.Helper()
	created := 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrExists):
			t.Errorf("%s, call %d: %v; want nil or ErrExists", what, i, err)
		}
	}
	if created != 1 {
		t.Errorf("%s: %d calls created it, want exactly 1", what, created)
	}
}

func testConcurrentCreates(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	const n = 6
	email := store.NewID("race") + "@example.com"
	onceThenExists(t, "concurrent CreateUser of one email", race(n, func(int) error {
		return s.CreateUser(ctx, store.User{ID: store.NewID("usr"), Workspace: ws, Email: email, Role: "member", CreatedAt: time.Now()})
	}))
	id := "https://client.example.com/" + store.NewID("doc") + ".json"
	onceThenExists(t, "concurrent CreateClient of one ID", race(n, func(int) error {
		return s.CreateClient(ctx, store.Client{ID: id, Name: "Doc", Kind: store.ClientMetadata, CreatedAt: time.Now()})
	}))
	// Two consents of one person to one client at once (a double click):
	// both succeed, and there is one live connection.
	u := owner(t, s, ws)
	cl := addClient(t, s, store.ClientDynamic, time.Now())
	got := make([]store.Connection, n)
	errs := race(n, func(i int) error {
		var err error
		got[i], err = s.PutConnection(ctx, store.Connection{ID: store.NewID("conn"), Workspace: ws, User: u.ID, Client: cl.ID, Scopes: []string{"osfoundry:read"}, CreatedAt: time.Now()})
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent consent %d: %v", i, err)
		}
		if got[i].ID != got[0].ID {
			t.Fatalf("concurrent consents answered connections %s and %s, want one", got[0].ID, got[i].ID)
		}
	}
	if list, _ := s.Connections(ctx, ws); len(list) != 1 {
		t.Fatalf("%d connections after concurrent consents, want 1", len(list))
	}
}

func testSetUserRole(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	first := owner(t, s, ws)
	m := addUser(t, s, ws, "member")
	role := func(id string) string {
		t.Helper()
		u, err := s.UserByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return u.Role
	}
	if err := s.SetUserRole(ctx, ws, first.ID, "member"); !errors.Is(err, store.ErrLastOwner) {
		t.Fatalf("demoting the last owner: %v, want ErrLastOwner", err)
	}
	if role(first.ID) != "owner" {
		t.Fatal("a refused demotion changed the role")
	}
	if err := s.SetUserRole(ctx, ws, first.ID, "owner"); err != nil {
		t.Fatalf("the last owner made owner again: %v", err)
	}
	if err := s.SetUserRole(ctx, Seed(t, s), m.ID, "owner"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetUserRole in another workspace: %v, want ErrNotFound", err)
	}
	if err := s.SetUserRole(ctx, ws, "usr_unknown", "owner"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetUserRole of an unknown user: %v, want ErrNotFound", err)
	}
	if err := s.SetUserRole(ctx, ws, m.ID, "owner"); err != nil || role(m.ID) != "owner" {
		t.Fatalf("promoting a member: %v, role %q", err, role(m.ID))
	}
	if err := s.SetUserRole(ctx, ws, first.ID, "member"); err != nil || role(first.ID) != "member" {
		t.Fatalf("demoting an owner while another is left: %v, role %q", err, role(first.ID))
	}
	if err := s.SetUserRole(ctx, ws, m.ID, "member"); !errors.Is(err, store.ErrLastOwner) {
		t.Fatalf("demoting the new last owner: %v, want ErrLastOwner", err)
	}

	if err := s.RenameWorkspace(ctx, ws, "Renamed Ünïcode"); err != nil {
		t.Fatal(err)
	}
	all, err := s.Workspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range all {
		if w.ID == ws {
			found = w.Name == "Renamed Ünïcode"
		}
	}
	if !found {
		t.Fatal("RenameWorkspace: the workspace does not have the new name")
	}
	if err := s.RenameWorkspace(ctx, "ws_unknown", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RenameWorkspace of an unknown workspace: %v, want ErrNotFound", err)
	}
}
