package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// BenchmarkRateLimits: what one MCP tools/call (list_notes, raw HTTP,
// 2025-11-25) costs the server served with no limits, served under limits
// it never reaches, refused as a tool result (the first 16 refusals in a
// row of a token: read and answered through the SDK, nothing run), and
// refused as a plain HTTP 429 (a client that keeps calling past them).
func BenchmarkRateLimits(b *testing.B) {
	benchGC(b)
	const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`
	post := func(ctx context.Context, url, token string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		bs, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(bs), err
	}
	for _, c := range []struct {
		name    string
		limits  server.Limits
		perTok  int64 // calls per token (0: one token for all)
		status  int
		refused bool
	}{
		{"served-off", server.Limits{}, 0, 200, false},
		{"served-on", server.Limits{PerToken: 1e9, PerAddress: 1e9, ConcurrentPerToken: 64}, 0, 200, false},
		{"refused-as-result", server.Limits{PerToken: perHour, BurstPerToken: 1}, 16, 200, true},
		{"refused-as-429", server.Limits{PerToken: perHour, BurstPerToken: 1}, 0, 429, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := servertest.Start(b, servertest.Options{Config: server.Config{Limits: c.limits}})
			n := 1
			if c.perTok > 0 {
				n = b.N/int(c.perTok) + 2
			}
			tokens := make([]string, n)
			for i := range tokens {
				tokens[i] = e.WriteToken(b)
				if c.refused { // use up the burst
					if _, _, err := post(context.Background(), e.URL+"/mcp", tokens[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			if c.status == 429 { // past the streak of answers in MCP's words
				for range 17 {
					post(context.Background(), e.URL+"/mcp", tokens[0])
				}
			}
			runPool(b, 2, func(ctx context.Context, w int, n int64) error {
				tok := tokens[0]
				if c.perTok > 0 {
					tok = tokens[(n-1)/c.perTok]
				}
				status, got, err := post(ctx, e.URL+"/mcp", tok)
				if err != nil {
					return err
				}
				if status != c.status || strings.Contains(got, "rate_limited") != c.refused {
					return fmt.Errorf("call %d: %d %s", n, status, got)
				}
				return nil
			})
		})
	}
}
