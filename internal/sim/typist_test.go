package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// staleVersion is a transport that does what a careless client does after a
// refusal: it swaps the expected_version of every edit_note_tab for the
// Note's current one (and drops depends_on), so the server checks the write
// against a version the agent never read.
type staleVersion struct {
	next    http.RoundTripper
	current func(noteID string) int64
}

func (s staleVersion) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m["method"] == "tools/call" {
			params, _ := m["params"].(map[string]any)
			args, _ := params["arguments"].(map[string]any)
			if params["name"] == "edit_note_tab" && args != nil {
				id, _ := args["note_id"].(string)
				args["expected_version"] = s.current(id)
				delete(args, "depends_on")
				b, _ = json.Marshal(m)
			}
		}
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	next := s.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

// TestTypistAgentCrossTabCheckSeesStaleWrites: the cross-tab invariant is
// checked from the Note's history against what the agent read, not from the
// server's answers; when the versions the server checked are not the ones
// the agent read, it fails.
func TestTypistAgentCrossTabCheckSeesStaleWrites(t *testing.T) {
	ctx := context.Background()
	env := quickEnv(ctx, t)
	reader := env.People.(noteReader)
	dial := env.Client
	env.Client = func(ctx context.Context, rt http.RoundTripper) (*mcp.ClientSession, error) {
		return dial(ctx, staleVersion{next: rt, current: func(noteID string) int64 {
			_, v, err := reader.Snapshot(ctx, noteID)
			if err != nil {
				t.Error(err)
			}
			return v
		}})
	}
	rep, err := runTypistAgent(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, inv := range rep.Invariants {
		t.Logf("held=%v %s — %s", inv.Held, inv.Name, inv.Got)
		if strings.Contains(inv.Name, "after the Sheet changed") {
			found = true
			if inv.Held {
				t.Errorf("the server checked writes against versions the agent never read, yet the cross-tab invariant held: %s", inv.Got)
			}
		}
	}
	if !found {
		t.Fatal("no cross-tab invariant in the report")
	}
}
