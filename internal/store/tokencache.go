package store

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"foundry/internal/parts"
)

// TokenRecheck bounds how old the state of a cached token may be when a
// call uses it: a token revoked on another node, or by another process on
// the same SQLite file, is refused there within this time. A revocation
// through the cache's own store is refused by the very next call.
const TokenRecheck = 250 * time.Millisecond

// maxCachedTokens bounds the cache; when full it starts over.
const maxCachedTokens = 4096

// WithTokenCache wraps s so that TokenByHash answers a token it verified
// less than TokenRecheck ago from memory, instead of a query on every call.
// Only valid tokens are kept: an unknown hash is looked up each time (so a
// token created on another node works at once), and a revoked one is
// dropped. RevokeToken through the wrapper empties the cache when it
// commits, as DeleteUser does. Nothing is written per call: tokens.last_used_us is not kept up
// to date by verification.
//
// Wrapping a wrapper answers it as it is: two caches in a row would let a
// token be answered from memory for up to twice TokenRecheck, and miss a
// revocation made through the inner one. (This asks s what it is, never
// what else it can do: every method is in Store.)
func WithTokenCache(s Store) Store {
	if c, ok := s.(*tokenCache); ok {
		return c
	}
	return &tokenCache{s: s, now: time.Now, recheck: TokenRecheck, m: map[string]cachedToken{}}
}

// tokenCache forwards every method of Store to s, each by a method of its
// own (it does not embed s): a method added to Store breaks the build until
// it is forwarded here, and none is answered by anything but s.
type tokenCache struct {
	s       Store
	now     func() time.Time
	recheck time.Duration

	mu  sync.Mutex
	gen uint64 // bumped by every revocation through this wrapper
	m   map[string]cachedToken
}

type cachedToken struct {
	tok     Token
	checked time.Time // the lookup that found it valid started then
}

func (c *tokenCache) TokenByHash(ctx context.Context, hash string) (Token, error) {
	c.mu.Lock()
	e, ok := c.m[hash]
	gen := c.gen
	c.mu.Unlock()
	start := c.now()
	if ok && start.Sub(e.checked) < c.recheck && !start.Before(e.checked) {
		return e.tok, nil
	}
	t, err := c.s.TokenByHash(ctx, hash)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil || t.RevokedAt != nil:
		delete(c.m, hash)
	case c.gen == gen:
		// A revocation that committed while the lookup ran may not be in
		// what it read: then it is not kept.
		if len(c.m) >= maxCachedTokens {
			clear(c.m)
		}
		c.m[hash] = cachedToken{tok: t, checked: start}
	}
	return t, err
}

func (c *tokenCache) RevokeToken(ctx context.Context, workspace, id string) error {
	err := c.s.RevokeToken(ctx, workspace, id)
	c.forget()
	return err
}

// forget empties the cache after a write that may end tokens: whatever its
// outcome (it may have committed before an error), the next call looks
// every token up again.
func (c *tokenCache) forget() {
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.mu.Unlock()
}

var _ Store = (*tokenCache)(nil)

// What follows only forwards.

func (c *tokenCache) Guarded(ctx context.Context, m Mutation) (Outcome, error) {
	return c.s.Guarded(ctx, m)
}

func (c *tokenCache) Get(ctx context.Context, typ string, id string) (Resource, error) {
	return c.s.Get(ctx, typ, id)
}

func (c *tokenCache) Head(ctx context.Context, typ string, id string) (Resource, error) {
	return c.s.Head(ctx, typ, id)
}

func (c *tokenCache) List(ctx context.Context, q ListQuery) ([]Resource, error) {
	return c.s.List(ctx, q)
}

func (c *tokenCache) History(ctx context.Context, typ string, id string) ([]VersionInfo, error) {
	return c.s.History(ctx, typ, id)
}

func (c *tokenCache) VersionRange(ctx context.Context, typ string, id string, from int64, to int64) ([]VersionInfo, error) {
	return c.s.VersionRange(ctx, typ, id, from, to)
}

func (c *tokenCache) VersionDoc(ctx context.Context, typ string, id string, version int64) (json.RawMessage, error) {
	return c.s.VersionDoc(ctx, typ, id, version)
}

func (c *tokenCache) Parts(ctx context.Context, typ string, id string, after int64) (Resource, []parts.Part, error) {
	return c.s.Parts(ctx, typ, id, after)
}

func (c *tokenCache) Search(ctx context.Context, q SearchQuery) ([]SearchHit, error) {
	return c.s.Search(ctx, q)
}

func (c *tokenCache) IndexNote(ctx context.Context, id string, version int64, docs []SearchDoc) (bool, error) {
	return c.s.IndexNote(ctx, id, version, docs)
}

func (c *tokenCache) Unindexed(ctx context.Context, afterID string, limit int) ([]Resource, error) {
	return c.s.Unindexed(ctx, afterID, limit)
}

func (c *tokenCache) StoreParts(ctx context.Context, typ string, id string, version int64, doc []byte, ws []parts.Write) (bool, error) {
	return c.s.StoreParts(ctx, typ, id, version, doc, ws)
}

func (c *tokenCache) VersionParts(ctx context.Context, typ string, id string, version int64) ([]parts.Part, error) {
	return c.s.VersionParts(ctx, typ, id, version)
}

func (c *tokenCache) VersionPartsOf(ctx context.Context, typ string, id string, version int64, keys []string) ([]parts.Part, error) {
	return c.s.VersionPartsOf(ctx, typ, id, version, keys)
}

func (c *tokenCache) PartKeys(ctx context.Context, typ string, id string, from int64, to int64) ([]string, error) {
	return c.s.PartKeys(ctx, typ, id, from, to)
}

func (c *tokenCache) GetObject(ctx context.Context, kind string, id string) (Object, error) {
	return c.s.GetObject(ctx, kind, id)
}

func (c *tokenCache) ListObjects(ctx context.Context, q ObjectQuery) ([]Object, error) {
	return c.s.ListObjects(ctx, q)
}

func (c *tokenCache) Events(ctx context.Context, workspace string, typ string, id string, after int64, limit int) ([]Event, error) {
	return c.s.Events(ctx, workspace, typ, id, after, limit)
}

func (c *tokenCache) LastCursor(ctx context.Context, workspace string, typ string, id string) (int64, error) {
	return c.s.LastCursor(ctx, workspace, typ, id)
}

func (c *tokenCache) EventHorizon(ctx context.Context, typ string, id string) (int64, error) {
	return c.s.EventHorizon(ctx, typ, id)
}

func (c *tokenCache) Prune(ctx context.Context, now time.Time) (PruneReport, error) {
	return c.s.Prune(ctx, now)
}

func (c *tokenCache) Wait(typ string, id string) (<-chan struct{}, func()) {
	return c.s.Wait(typ, id)
}

func (c *tokenCache) OnChange(fn func(typ, id string)) func() {
	return c.s.OnChange(fn)
}

func (c *tokenCache) Blobs() Blobs {
	return c.s.Blobs()
}

func (c *tokenCache) CreateWorkspace(ctx context.Context, w Workspace, owner User) error {
	return c.s.CreateWorkspace(ctx, w, owner)
}

func (c *tokenCache) CreateFirstWorkspace(ctx context.Context, w Workspace, owner User) (created bool, err error) {
	return c.s.CreateFirstWorkspace(ctx, w, owner)
}

func (c *tokenCache) Workspaces(ctx context.Context) ([]Workspace, error) {
	return c.s.Workspaces(ctx)
}

func (c *tokenCache) Users(ctx context.Context, workspace string) ([]User, error) {
	return c.s.Users(ctx, workspace)
}

func (c *tokenCache) CreateToken(ctx context.Context, t Token) error {
	return c.s.CreateToken(ctx, t)
}

func (c *tokenCache) Tokens(ctx context.Context, workspace string) ([]Token, error) {
	return c.s.Tokens(ctx, workspace)
}

func (c *tokenCache) Close() error {
	return c.s.Close()
}

func (c *tokenCache) CreateUser(ctx context.Context, u User) error {
	return c.s.CreateUser(ctx, u)
}

func (c *tokenCache) UserByID(ctx context.Context, id string) (User, error) {
	return c.s.UserByID(ctx, id)
}

func (c *tokenCache) UserByEmail(ctx context.Context, email string) (User, error) {
	return c.s.UserByEmail(ctx, email)
}

func (c *tokenCache) SetPassword(ctx context.Context, id string, hash string) error {
	return c.s.SetPassword(ctx, id, hash)
}

func (c *tokenCache) RehashPassword(ctx context.Context, id, old, hash string) (bool, error) {
	return c.s.RehashPassword(ctx, id, old, hash)
}

// DeleteUser deletes the person's tokens too: the next call through the
// wrapper refuses them, as after RevokeToken.
func (c *tokenCache) DeleteUser(ctx context.Context, workspace string, id string) error {
	err := c.s.DeleteUser(ctx, workspace, id)
	c.forget()
	return err
}

func (c *tokenCache) SetUserRole(ctx context.Context, workspace, id, role string) error {
	return c.s.SetUserRole(ctx, workspace, id, role)
}

func (c *tokenCache) RenameWorkspace(ctx context.Context, id, name string) error {
	return c.s.RenameWorkspace(ctx, id, name)
}

func (c *tokenCache) Actors(ctx context.Context, workspace string, actors []string) (map[string]Actor, error) {
	return c.s.Actors(ctx, workspace, actors)
}

func (c *tokenCache) CreateSession(ctx context.Context, s Session) error {
	return c.s.CreateSession(ctx, s)
}

func (c *tokenCache) SessionByHash(ctx context.Context, hash string, now time.Time) (Session, error) {
	return c.s.SessionByHash(ctx, hash, now)
}

func (c *tokenCache) DeleteSession(ctx context.Context, hash string) error {
	return c.s.DeleteSession(ctx, hash)
}

func (c *tokenCache) ServerSecret(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	return c.s.ServerSecret(ctx, name, fresh)
}

func (c *tokenCache) SignInCounters(ctx context.Context, keys []string, now time.Time) (map[string]SignInCounter, error) {
	return c.s.SignInCounters(ctx, keys, now)
}

func (c *tokenCache) CountSignInFailure(ctx context.Context, now time.Time, windows map[string]time.Duration) error {
	return c.s.CountSignInFailure(ctx, now, windows)
}

func (c *tokenCache) ForgetSignInFailures(ctx context.Context, keys ...string) error {
	return c.s.ForgetSignInFailures(ctx, keys...)
}

func (c *tokenCache) CreateClient(ctx context.Context, cl Client) error {
	return c.s.CreateClient(ctx, cl)
}

func (c *tokenCache) Client(ctx context.Context, id string) (Client, error) {
	return c.s.Client(ctx, id)
}

func (c *tokenCache) Clients(ctx context.Context) ([]Client, error) {
	return c.s.Clients(ctx)
}

func (c *tokenCache) DeleteClient(ctx context.Context, id string) error {
	return c.s.DeleteClient(ctx, id)
}

func (c *tokenCache) PutConnection(ctx context.Context, cn Connection) (Connection, error) {
	return c.s.PutConnection(ctx, cn)
}

func (c *tokenCache) Connection(ctx context.Context, id string) (Connection, error) {
	return c.s.Connection(ctx, id)
}

func (c *tokenCache) Connections(ctx context.Context, workspace string) ([]Connection, error) {
	return c.s.Connections(ctx, workspace)
}

func (c *tokenCache) RevokeConnection(ctx context.Context, workspace string, id string) error {
	return c.s.RevokeConnection(ctx, workspace, id)
}

func (c *tokenCache) TouchConnection(ctx context.Context, id string, at time.Time) error {
	return c.s.TouchConnection(ctx, id, at)
}

func (c *tokenCache) TouchToken(ctx context.Context, id string, at time.Time) error {
	return c.s.TouchToken(ctx, id, at)
}

func (c *tokenCache) PutGrant(ctx context.Context, g Grant) error {
	return c.s.PutGrant(ctx, g)
}

func (c *tokenCache) Grant(ctx context.Context, kind string, hash string) (Grant, error) {
	return c.s.Grant(ctx, kind, hash)
}

func (c *tokenCache) SetGrantState(ctx context.Context, kind string, hash string, from []string, to string) (bool, error) {
	return c.s.SetGrantState(ctx, kind, hash, from, to)
}

func (c *tokenCache) RevokeGrants(ctx context.Context, requestID string, kinds ...string) error {
	return c.s.RevokeGrants(ctx, requestID, kinds...)
}

func (c *tokenCache) DeleteGrant(ctx context.Context, kind string, hash string) error {
	return c.s.DeleteGrant(ctx, kind, hash)
}

func (c *tokenCache) RotateRefresh(ctx context.Context, oldHash string, graceSince time.Time, puts []Grant) error {
	return c.s.RotateRefresh(ctx, oldHash, graceSince, puts)
}

func (c *tokenCache) Purge(ctx context.Context, workspace, typ, id string) (PurgeReport, error) {
	return c.s.Purge(ctx, workspace, typ, id)
}
