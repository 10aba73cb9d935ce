// Package mcpserver is Foundry's MCP endpoint: the tools (one file per
// family, schemas next to handlers), and the HTTP front that checks Origin,
// authenticates tools/call, and answers tools/list from a pre-encoded cache.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// Toolsets an operator or a connection can choose.
const (
	ToolsetNotes  = "notes"
	ToolsetRooms  = "rooms"
	ToolsetEvents = "events"
)

// Tool is one tool's whole story: definition, scope, toolset and handler.
type Tool struct {
	Def     *mcp.Tool
	Scope   string // auth.ScopeRead or auth.ScopeWrite
	Toolset string
	// Handle gets arguments already validated against Def.InputSchema and
	// returns the structured result, a *problem.Problem, or a fault.
	Handle func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error)
	schema *jsonschema.Resolved
	raw    map[string]any // the input schema as data, to locate failures
	subs   sync.Map       // schema pointer → *jsonschema.Resolved
}

// ReadOnly reports whether the tool only reads.
func (t *Tool) ReadOnly() bool { return t.Scope == auth.ScopeRead }

func boolPtr(b bool) *bool { return &b }

// newTool fills in what every tool declares the same way: annotations by
// scope, securitySchemes in _meta, and the compiled input schema.
func newTool(toolset, name, scope, description, input, output string, handle func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error)) *Tool {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: scope == auth.ScopeRead}
	if scope == auth.ScopeWrite {
		ann.DestructiveHint = boolPtr(true)
		// Every write takes an idempotency key: the same arguments (key
		// included) sent again replay the first result, so a client may
		// retry safely.
		ann.IdempotentHint = true
	}
	if toolset == ToolsetRooms && scope == auth.ScopeWrite {
		ann.OpenWorldHint = boolPtr(false) // as published for Room proposals: nothing leaves Foundry
	}
	def := &mcp.Tool{
		Name:         name,
		Description:  description,
		InputSchema:  json.RawMessage(input),
		OutputSchema: json.RawMessage(output),
		Annotations:  ann,
		Meta:         mcp.Meta{"securitySchemes": securitySchemes(scope)},
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(input), &s); err != nil {
		panic(fmt.Sprintf("%s: input schema: %v", name, err))
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("%s: input schema: %v", name, err))
	}
	raw := refSchema(json.RawMessage(input)) // $refs inlined, to walk arguments along it
	return &Tool{Def: def, Scope: scope, Toolset: toolset, Handle: handle, schema: resolved, raw: raw}
}

func securitySchemes(scope string) []map[string]any {
	return []map[string]any{{"type": "oauth2", "scopes": []string{scope}}}
}

// call is the SDK handler for a tool: validate, decode, run, shape.
func (t *Tool) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, ok := principalFrom(req)
	if !ok {
		// The HTTP front answers 401 before this; reaching here means a
		// transport without it (e.g. in-memory tests without a token).
		return errorResult(problem.New("unauthorized", "", "this call needs a bearer token")), nil
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return errorResult(problem.New(problem.Invalid, "arguments", "are not valid JSON: %v", err)), nil
	}
	if err := t.schema.Validate(inst); err != nil {
		return errorResult(t.schemaProblem(err, inst)), nil
	}
	res, err := t.Handle(ctx, p, args)
	if err != nil {
		var pr *problem.Problem
		if errors.As(err, &pr) {
			return errorResult(pr), nil
		}
		return nil, err
	}
	return result(res), nil
}

func result(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

func errorResult(p *problem.Problem) *mcp.CallToolResult {
	b, _ := json.Marshal(p)
	text := p.Error()
	if len(p.Details) > 0 {
		text += " " + string(b)
	}
	return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func principalFrom(req *mcp.CallToolRequest) (auth.Principal, bool) {
	return principalFromExtra(req.Extra)
}

const principalKey = "foundry.principal"

// decode reads validated arguments into v; unknown fields were already
// refused by the schema.
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, problem.New(problem.Invalid, "arguments", "%v", err)
	}
	return v, nil
}

// Tools returns every tool Foundry serves, given the service.
func Tools(svc *service.Service) []*Tool {
	var out []*Tool
	out = append(out, noteTools(svc)...)
	out = append(out, roomTools(svc)...)
	return out
}
