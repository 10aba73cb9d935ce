package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/mcpserver"
	"foundry/internal/server/servertest"
)

type headerTransport struct {
	h    http.Header
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

func subscriber(t *testing.T, e *servertest.Env, token, version string, updates chan<- string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- req.Params.URI:
			default:
			}
		},
	})
	rt := headerTransport{h: http.Header{"X-Mcp-Subscriptions": {"true"}}, base: mcpclient.Bearer{Token: token}}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestSubscriptionPushesNoteChanges: a 2026-07-28 client that opted in is
// pushed notifications/resources/updated when a watched Note changes.
func TestSubscriptionPushesNoteChanges(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	updates := make(chan string, 8)
	token := e.WriteToken(t)
	cs := subscriber(t, e, token, "", updates)
	if cs.InitializeResult() != nil && cs.InitializeResult().Capabilities.Resources == nil {
		t.Fatal("opted-in connection does not offer resources")
	}
	uri := mcpserver.ResourceURI("note", e.NoteID)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// Write until the subscription is in place and the push arrives; the
	// listen stream is set up asynchronously by the client. Bounded.
	writer := e.Client(t, token, "")
	got := ""
	for i := 0; i < 40 && got == ""; i++ {
		cur := servertest.MustCall(t, writer, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
		w := servertest.MustCall(t, writer, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
			"idempotency_key": "sub-edit-" + strings.Repeat("x", i+1), "operation": "replace_text", "text": cur.Str("text") + "."})
		if w.IsError {
			t.Fatal(w.Text)
		}
		select {
		case got = <-updates:
		case <-time.After(250 * time.Millisecond):
		}
	}
	if got != uri {
		t.Fatalf("no notifications/resources/updated for %s (got %q)", uri, got)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"tabs"`) {
		t.Fatalf("resources/read: %v %v", res, err)
	}
}

func TestSubscriptionRefusesWhatTheTokenCannotSee(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	narrow := e.Token(t, []string{}, auth.ScopeRead) // grants no Note
	// The go-sdk client starts subscriptions/listen in the background and
	// does not surface its refusal, so this asks over plain HTTP.
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":["` + mcpserver.ResourceURI("note", e.NoteID) + `"]}}}`
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp?subscriptions=1", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+narrow)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "was not found") {
		t.Fatalf("listen outside the grant: %d %s", resp.StatusCode, b)
	}
	req.Header.Del("Authorization")
	req.Body = io.NopCloser(strings.NewReader(body))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("listen without a token: %v %v", resp, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	legacy := subscriber(t, e, e.WriteToken(t), "2025-11-25", make(chan string, 1))
	// 2025-11-25 is never told resources.subscribe (a stateless endpoint
	// has no stream for its updates), and resources/subscribe is not
	// served: Method not found, never an error with code 0.
	if init := legacy.InitializeResult(); init.Capabilities.Resources != nil && init.Capabilities.Resources.Subscribe {
		t.Fatalf("a 2025-11-25 client is told resources.subscribe: %+v", init.Capabilities.Resources)
	}
	var je *jsonrpc.Error
	if err := legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpserver.ResourceURI("note", e.NoteID)}); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("legacy subscribe: %v", err)
	}
}
