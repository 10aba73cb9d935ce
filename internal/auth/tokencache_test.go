package auth_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// countingStore counts the token lookups that reach the store.
type countingStore struct {
	store.Store
	lookups atomic.Int64
}

func (c *countingStore) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	c.lookups.Add(1)
	return c.Store.TokenByHash(ctx, hash)
}

// TestTokenCache: a verified token is served from memory; a revocation is
// refused by the next call on the store it went through and within 1 s on
// another store over the same data (a second SQLite store on the same
// folder, as another process would open it; a second PostgreSQL node); a
// token created on the other store works at once.
func TestTokenCache(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		tokenCacheCases(t, func() store.Store {
			s, err := sqlite.Open(ctx, dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		tokenCacheCases(t, func() store.Store {
			s, err := postgres.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

func tokenCacheCases(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	rawA := &countingStore{Store: open()}
	a := store.WithTokenCache(rawA)
	b := store.WithTokenCache(open())
	ws := storetest.Seed(t, rawA)
	users, err := rawA.Users(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	create := func(s store.Store, name string) (string, store.Token) {
		t.Helper()
		secret, tok, err := auth.CreateToken(ctx, s, auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Name: name, Scopes: []string{auth.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	verify := func(s store.Store, secret string) error {
		t.Helper()
		_, err := auth.Verify(ctx, s, secret)
		if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatal(err)
		}
		return err
	}

	// Served from memory: one lookup per TokenRecheck at most.
	secret, tok := create(a, "cached")
	start := time.Now()
	const calls = 200
	for range calls {
		if err := verify(a, secret); err != nil {
			t.Fatalf("a valid token: %v", err)
		}
	}
	if n, most := rawA.lookups.Load(), int64(time.Since(start)/store.TokenRecheck)+2; n > most {
		t.Fatalf("%d verifications made %d token lookups, want at most %d", calls, n, most)
	}

	// A token created on B works on A at once, even right after A was
	// asked for it before it existed.
	if err := verify(a, "fdy_notyetcreated"); err == nil {
		t.Fatal("an unknown token verified")
	}
	secretB, _ := create(b, "from-b")
	if err := verify(a, secretB); err != nil {
		t.Fatalf("a token created on the other store: %v", err)
	}

	// Revoked through A: A refuses the very next call.
	if err := verify(b, secret); err != nil {
		t.Fatal(err) // B has it cached now
	}
	if err := a.RevokeToken(ctx, ws, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := verify(a, secret); err == nil {
		t.Fatal("the store the revocation went through still accepts the token")
	}
	// B, which had it cached, refuses it within 1 s.
	deadline := time.Now().Add(time.Second)
	for verify(b, secret) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the other store still accepts the revoked token after 1 s")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A person removed through A: A refuses their cached token at once.
	gone := store.User{ID: store.NewID("usr"), Workspace: ws, Email: store.NewID("gone") + "@example.com", Role: "member", CreatedAt: time.Now().UTC()}
	if err := a.CreateUser(ctx, gone); err != nil {
		t.Fatal(err)
	}
	goneSecret, _, err := auth.CreateToken(ctx, a, auth.NewTokenSpec{Workspace: ws, User: gone.ID, Name: "theirs", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(a, goneSecret); err != nil {
		t.Fatal(err) // A has it cached now
	}
	if err := a.DeleteUser(ctx, ws, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := verify(a, goneSecret); err == nil {
		t.Fatal("the store the removal went through still accepts the removed person's token")
	}
}
