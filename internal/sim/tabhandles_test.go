package sim

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// misroute is a transport that rewrites what the agent sends: the position
// handle's slide goes out titled as the type handle's, so the server stores
// something other than what the client believes it wrote.
type misroute struct{ next http.RoundTripper }

func (m misroute) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		b = bytes.ReplaceAll(b, []byte(`"via position handle"`), []byte(`"via type handle"`))
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	next := m.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

// TestTabHandlesMeasureWhatTheServerDid: the tab-handle figures come from
// the decks read back from the server, so when what the server stored is not
// what the client meant, the invariants fail (they used to compare the
// client's resolve with itself).
func TestTabHandlesMeasureWhatTheServerDid(t *testing.T) {
	ctx := context.Background()
	env := quickEnv(ctx, t)
	dial := env.Client
	env.Client = func(ctx context.Context, rt http.RoundTripper) (*mcp.ClientSession, error) {
		return dial(ctx, misroute{next: rt})
	}
	rep, err := runTabHandles(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, inv := range rep.Invariants {
		if !inv.Held {
			failed[inv.Name] = true
		}
		t.Logf("held=%v %s — %s", inv.Held, inv.Name, inv.Got)
	}
	var modelFailed bool
	for name := range failed {
		if strings.Contains(name, "model") {
			modelFailed = true
		}
		if strings.Contains(name, "ID handle") {
			t.Errorf("the ID handle's writes were not touched, yet %q failed", name)
		}
	}
	if !modelFailed || len(failed) < 2 {
		t.Fatalf("the server stored other slides than the client sent, and only %d invariants failed: %v", len(failed), failed)
	}
}

// quickEnv starts an in-process Foundry for a quick-mode experiment; it is
// stopped when the test ends.
func quickEnv(ctx context.Context, t *testing.T) *Env {
	t.Helper()
	cfg := Config{Quick: true}
	tgt, err := startTarget(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tgt.close)
	env, err := tgt.env(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
