package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// revocationReachesTheOtherNode revokes, through the API on node a, a
// personal access token and a connection, and checks that node b (its own
// store handle on the same database, wrapped as a server wraps it) refuses
// the token and sees the connection and its grant revoked within 1 s.
func revocationReachesTheOtherNode(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	a, b = store.WithTokenCache(a), store.WithTokenCache(b)
	f := newFixture(t, a)
	secret, tok := f.token(t, f.owner.user, "agent")
	cl := f.client(t, store.NewID("client"), "Client", store.ClientDynamic)
	conn := f.connect(t, f.owner.user, cl, []string{auth.ScopeRead}, nil, nil)
	now := time.Now().UTC()
	access := store.Grant{Kind: store.GrantAccess, Hash: store.NewID("h"), RequestID: store.NewID("req"), Client: cl.ID, Connection: conn.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := a.PutGrant(ctx, access); err != nil {
		t.Fatal(err)
	}
	// Node b has verified the token, so its cache holds it.
	for range 3 {
		if _, err := auth.Verify(ctx, b, secret); err != nil {
			t.Fatalf("node b before the revocation: %v", err)
		}
	}
	for _, id := range []string{tok.ID, conn.ID} {
		if code, body, _ := f.call(t, &f.owner, "DELETE", "/api/connections/"+id, f.owner.csrf, nil); code != http.StatusNoContent {
			t.Fatalf("revoking %s on node a: %d %v", id, code, body)
		}
	}
	revoked := func() bool {
		if _, err := auth.Verify(ctx, b, secret); !errors.Is(err, auth.ErrInvalidToken) {
			return false
		}
		c, err := b.Connection(ctx, conn.ID)
		if err != nil || c.RevokedAt == nil {
			return false
		}
		g, err := b.Grant(ctx, store.GrantAccess, access.Hash)
		return err == nil && g.State == store.GrantRevoked
	}
	deadline := time.Now().Add(time.Second)
	for !revoked() {
		if time.Now().After(deadline) {
			t.Fatal("node b still accepts the token, or sees the connection live, 1 s after the revocation on node a")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRevocationReachesEveryNodeSQLite(t *testing.T) {
	dir := t.TempDir()
	var nodes []store.Store
	for range 2 {
		s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes = append(nodes, s)
	}
	revocationReachesTheOtherNode(t, nodes[0], nodes[1])
	storetest.ServerSecretShared(t, nodes[0], nodes[1])
	storetest.SignInCountersShared(t, nodes[0], nodes[1])
}

func TestRevocationReachesEveryNodePostgres(t *testing.T) {
	u, _ := pgtest.Schema(t)
	var nodes []store.Store
	for range 2 {
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes = append(nodes, s)
	}
	revocationReachesTheOtherNode(t, nodes[0], nodes[1])
	storetest.ServerSecretShared(t, nodes[0], nodes[1])
	storetest.SignInCountersShared(t, nodes[0], nodes[1])
}
