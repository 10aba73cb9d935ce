package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolReply is one decoded tool result: a write's {note_id, version,
// replayed, …} or a refusal's {error, field, message, …details}.
type toolReply struct {
	IsError bool
	Data    map[string]any
	Text    string
}

func (r toolReply) Str(k string) string { s, _ := r.Data[k].(string); return s }
func (r toolReply) Bool(k string) bool  { b, _ := r.Data[k].(bool); return b }
func (r toolReply) Int(k string) int64  { f, _ := r.Data[k].(float64); return int64(f) }
func (r toolReply) List(k string) []any { l, _ := r.Data[k].([]any); return l }

// Code is a refusal's error code ("version_conflict", "unknown_tab", …).
func (r toolReply) Code() string {
	if !r.IsError {
		return ""
	}
	return r.Str("error")
}

// Conflict reports a version_conflict refusal.
func (r toolReply) Conflict() bool { return r.Code() == "version_conflict" }

// Detail is a refusal's detail k, written beside error.
func (r toolReply) Detail(k string) any { return r.Data[k] }

// CurrentVersion is current_version of a conflict.
func (r toolReply) CurrentVersion() int64 {
	f, _ := r.Detail("current_version").(float64)
	return int64(f)
}

// mcpTool calls a tool over MCP and decodes its structured content. A
// transport error, a lost answer included, is err.
func mcpTool(ctx context.Context, cs *mcp.ClientSession, name string, args any) (toolReply, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return toolReply{}, err
	}
	r := toolReply{IsError: res.IsError}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return toolReply{}, err
		}
		if err := json.Unmarshal(b, &r.Data); err != nil {
			return toolReply{}, fmt.Errorf("%s: structured content: %w", name, err)
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

// mustTool is mcpTool for calls that must succeed (reads, setup): a lost
// answer, a transport error or a refusal is an error.
func mustTool(ctx context.Context, cs *mcp.ClientSession, name string, args any) (toolReply, error) {
	r, err := mcpTool(ctx, cs, name, args)
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	if r.IsError {
		return r, fmt.Errorf("%s refused: %s", name, r.Text)
	}
	return r, nil
}

// eachItem pages through a list tool, 50 at a time following next_cursor,
// and calls f with every object in the answers' list field.
func eachItem(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, list string, f func(map[string]any)) error {
	args["limit"] = 50
	for page := 0; page < 10000; page++ {
		r, err := mustTool(ctx, cs, tool, args)
		if err != nil {
			return err
		}
		for _, x := range r.List(list) {
			m, _ := x.(map[string]any)
			f(m)
		}
		next := r.Str("next_cursor")
		if next == "" {
			return nil
		}
		args["cursor"] = next
	}
	return fmt.Errorf("%s: more than 10000 pages", tool)
}

// tabInfo is one entry of list_note_tabs.
type tabInfo struct {
	ID, Type, Label string
	Position        int
}

// listTabs is list_note_tabs: the strip and the Note version.
func listTabs(ctx context.Context, cs *mcp.ClientSession, noteID string) ([]tabInfo, int64, error) {
	r, err := mustTool(ctx, cs, "list_note_tabs", map[string]any{"note_id": noteID})
	if err != nil {
		return nil, 0, err
	}
	var out []tabInfo
	for _, x := range r.List("tabs") {
		m, _ := x.(map[string]any)
		t := tabInfo{}
		t.ID, _ = m["tab_id"].(string)
		t.Type, _ = m["type"].(string)
		t.Label, _ = m["label"].(string)
		p, _ := m["position"].(float64)
		t.Position = int(p)
		out = append(out, t)
	}
	return out, r.Int("version"), nil
}

// readMarkdown is read_note_tab of the markdown tab: its text and the version.
func readMarkdown(ctx context.Context, cs *mcp.ClientSession, noteID string) (string, int64, error) {
	r, err := mustTool(ctx, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
	if err != nil {
		return "", 0, err
	}
	return r.Str("text"), r.Int("version"), nil
}

// dialAgent connects an agent's client, through f when it is not nil.
func dialAgent(ctx context.Context, env *Env, f *faultInjector) (*mcp.ClientSession, error) {
	if env.Client == nil {
		return nil, fmt.Errorf("no MCP client (Env.Client is nil)")
	}
	if f == nil {
		return env.Client(ctx, nil)
	}
	return env.Client(ctx, f)
}
