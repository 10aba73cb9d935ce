package oauth_test

import (
	"context"
	"testing"

	"foundry/internal/auth"
)

// BenchmarkVerify is what every MCP call pays to resolve its bearer token:
// an OAuth access token (HMAC check, the grant and its connection read
// from the store) against a personal access token (one read by hash;
// servers add store.WithTokenCache in front of both).
func BenchmarkVerify(b *testing.B) {
	e := newEnv(b, openSQLite(b), nil)
	ctx := context.Background()
	v, c := pkcePair()
	tr := e.mustTokens(e.exchange(e.code(c), v))
	pat, _, err := auth.CreateToken(ctx, e.st, auth.NewTokenSpec{Workspace: e.ws, User: e.user.ID, Name: "bench", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []struct{ name, secret string }{{"oauth", tr.AccessToken}, {"token", pat}} {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.srv.Verify(ctx, k.secret); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/verify")
		})
	}
}
