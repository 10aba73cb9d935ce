package sim

import (
	"context"
	"fmt"
	"foundry/internal/mcpclient"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mustTool is mcpclient.Call for calls that must succeed (reads, setup): a lost
// answer, a transport error or a refusal is an error.
func mustTool(ctx context.Context, cs *mcp.ClientSession, name string, args any) (mcpclient.Result, error) {
	r, err := mcpclient.Call(ctx, cs, name, args)
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
