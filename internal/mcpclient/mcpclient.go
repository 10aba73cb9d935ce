// Package mcpclient is the small client side Foundry's tests, benchmarks
// and simulations share: the official go-sdk client over HTTP with a bearer
// token, and tool results decoded for reading.
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bearer adds a bearer token to every request, then sends it through Base
// (nil: http.DefaultTransport).
type Bearer struct {
	Token string
	Base  http.RoundTripper
}

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// Dial connects a go-sdk client called name to an MCP endpoint with token,
// its HTTP through rt (nil: plain). version "" uses the SDK's newest
// protocol revision. The client never retries on its own: a lost answer is
// the caller's to handle.
func Dial(ctx context.Context, name, endpoint, token, version string, rt http.RoundTripper) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: Bearer{Token: token, Base: rt}},
		DisableStandaloneSSE: true, MaxRetries: -1}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	return c.Connect(ctx, tr, opts)
}

// Result is one decoded tool result: a write's {note_id, version, replayed,
// …} or a refusal's {error, field, message, …details}.
type Result struct {
	IsError bool
	Data    map[string]any
	Text    string
}

func (r Result) Str(k string) string { s, _ := r.Data[k].(string); return s }
func (r Result) Bool(k string) bool  { b, _ := r.Data[k].(bool); return b }
func (r Result) Int(k string) int64  { f, _ := r.Data[k].(float64); return int64(f) }
func (r Result) List(k string) []any { l, _ := r.Data[k].([]any); return l }

// Code is a refusal's error code ("version_conflict", "unknown_tab", …).
func (r Result) Code() string {
	if !r.IsError {
		return ""
	}
	return r.Str("error")
}

// Conflict reports a version_conflict refusal.
func (r Result) Conflict() bool { return r.Code() == "version_conflict" }

// Call calls a tool and decodes its structured content and text. A
// transport error, a lost answer included, is err.
func Call(ctx context.Context, cs *mcp.ClientSession, tool string, args any) (Result, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return Result{}, err
	}
	r := Result{IsError: res.IsError}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return Result{}, err
		}
		if err := json.Unmarshal(b, &r.Data); err != nil {
			return Result{}, fmt.Errorf("%s: structured content: %w", tool, err)
		}
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r.Text = strings.Join(texts, "\n")
	return r, nil
}
