package store

import (
	"context"
	"sync"
	"time"
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
// commits. Nothing is written per call: tokens.last_used_us is not kept up
// to date by verification.
func WithTokenCache(s Store) Store {
	if c, ok := s.(*tokenCache); ok {
		return c
	}
	return &tokenCache{Store: s, now: time.Now, recheck: TokenRecheck, m: map[string]cachedToken{}}
}

type tokenCache struct {
	Store
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
	t, err := c.Store.TokenByHash(ctx, hash)
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
	err := c.Store.RevokeToken(ctx, workspace, id)
	// Whatever the outcome (a revocation may have committed before an
	// error), the next call looks every token up again.
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.mu.Unlock()
	return err
}
