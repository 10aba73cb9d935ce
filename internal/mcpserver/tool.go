// Package mcpserver is Foundry's MCP endpoint: the tools (one file per
// family, schemas next to handlers), and the HTTP front that checks Origin,
// authenticates tools/call, and answers tools/list from a pre-encoded cache.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

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
	// Log receives faults and panics (nil: slog.Default()).
	Log *slog.Logger
	// Observe, if set, hears every call's outcome (Options.Observe).
	Observe func(tool, outcome string, d time.Duration)
	hint    hint // the tool's own next step for a refusal (wording.go)
	schema  *jsonschema.Resolved
	raw     map[string]any // the input schema as data, to locate failures
	quick   *quickSchema   // the common case of schema, checked without reflection
	subs    sync.Map       // schema pointer → *jsonschema.Resolved
}

// sdkDef is Def as the SDK server holds it: the same tool with its schemas
// encoded once. The SDK marshals a tool's input schema again on every
// tools/call of the 2026-07-28 revision (to look for x-mcp-header
// annotations): a *jsonschema.Schema costs a reflective encoding per call,
// its JSON only a copy. The bytes are the schema's own encoding, so
// tools/list answers exactly what Def says.
func (t *Tool) sdkDef() *mcp.Tool {
	def := *t.Def
	def.InputSchema = mustEncode(t.Def.InputSchema)
	if def.OutputSchema != nil {
		def.OutputSchema = mustEncode(t.Def.OutputSchema)
	}
	return &def
}

func mustEncode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// ReadOnly reports whether the tool only reads.
func (t *Tool) ReadOnly() bool { return t.Scope == auth.ScopeRead }

func boolPtr(b bool) *bool { return &b }

// spec is what a tool's constructor says about it; toolFor does the rest.
type spec struct {
	Toolset     string
	Name        string
	Scope       string // auth.ScopeRead or auth.ScopeWrite
	Description string
	Input       *jsonschema.Schema
	Hint        hint // the tool's own next step for a refusal (nil: the common ones)
	// Output names the result fields the output schema declares (nil:
	// all); see outputSchemaFor.
	Output []string
}

// toolFor is the one way to define a tool: the constructor gives the spec
// and a typed handler, and every call goes decode → run → result, after
// call has checked the scope, prepared and validated the arguments against
// the spec's input schema (see call). The output schema is derived from
// Out, so what a tool declares is what it answers.
//
// run is the service's use case itself: the tool calls it for the agent
// whose token made the call (service.Agent), as every other door calls it
// for its own caller.
func toolFor[In, Out any](s spec, run func(ctx context.Context, c service.Caller, in In) (Out, error)) *Tool {
	return newTool(s, outputSchemaFor[Out](s.Output), func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error) {
		in, err := decode[In](args)
		if err != nil {
			return nil, err
		}
		return run(ctx, service.Agent(p), in)
	})
}

// byID adapts a service read of one resource by its ID to toolFor, for a
// tool whose one argument, named field, is that ID.
func byID[Out any](field string, read func(ctx context.Context, c service.Caller, id string) (Out, error)) func(context.Context, service.Caller, map[string]string) (Out, error) {
	return func(ctx context.Context, c service.Caller, a map[string]string) (Out, error) {
		return read(ctx, c, a[field])
	}
}

// newTool fills in what every tool declares the same way: annotations by
// scope, securitySchemes in _meta, and the compiled input schema.
func newTool(s spec, output *jsonschema.Schema, handle func(ctx context.Context, p auth.Principal, args json.RawMessage) (any, error)) *Tool {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: s.Scope == auth.ScopeRead}
	if s.Scope == auth.ScopeWrite {
		// destructiveHint is true on every write, including the ones that
		// only add (create_note_tab, add_note_source) or only propose (the
		// Room tools): the published contract records it so for every
		// write tool, and clients key their confirmation prompts on it.
		// An agent's write does change what a person sees, and nothing a
		// tool writes is undone by calling it again.
		ann.DestructiveHint = boolPtr(true)
		// Every write takes an idempotency key: the same arguments (key
		// included) sent again replay the first result, so a client may
		// retry safely.
		ann.IdempotentHint = true
	}
	if s.Toolset == ToolsetRooms && s.Scope == auth.ScopeWrite {
		ann.OpenWorldHint = boolPtr(false) // as published for Room proposals: nothing leaves Foundry
	}
	def := &mcp.Tool{
		Name:         s.Name,
		Description:  s.Description,
		InputSchema:  s.Input,
		OutputSchema: output,
		Annotations:  ann,
		Meta:         mcp.Meta{"securitySchemes": securitySchemes(s.Scope)},
	}
	resolved, err := s.Input.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("%s: input schema: %v", s.Name, err))
	}
	raw := refSchema(s.Input) // $refs inlined, to walk arguments along it
	return &Tool{Def: def, Scope: s.Scope, Toolset: s.Toolset, Handle: handle, hint: s.Hint, schema: resolved, raw: raw, quick: compileQuick(raw)}
}

func securitySchemes(scope string) []map[string]any {
	return []map[string]any{{"type": "oauth2", "scopes": []string{scope}}}
}

// call is the SDK handler for a tool: check, validate, decode, run, shape.
// Whatever the HTTP front saw, the scope is checked here again, and every
// answer is a tool result: a refusal is a *problem.Problem, anything else
// (a fault, a panic) is a generic internal_error, logged, never its text.
func (t *Tool) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if t.Observe == nil {
		return t.run(ctx, req)
	}
	start := time.Now()
	res, err := t.run(ctx, req)
	t.Observe(t.Def.Name, Outcome(res, err), time.Since(start))
	return res, err
}

// Outcome names how a tool call ended, for the metrics: OutcomeOK, the
// refusal's code (version_conflict, invalid_argument, …), or OutcomeError
// for a fault (internal_error).
func Outcome(res *mcp.CallToolResult, err error) string {
	if err != nil || res == nil {
		return OutcomeError
	}
	if !res.IsError {
		return OutcomeOK
	}
	var p struct {
		Code string `json:"error"`
	}
	if b, ok := res.StructuredContent.(json.RawMessage); ok {
		json.Unmarshal(b, &p)
	}
	if p.Code == "" || p.Code == problem.Internal {
		return OutcomeError
	}
	return p.Code
}

// Outcomes of a tool call besides a refusal's code.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// run is call without the observer.
func (t *Tool) run(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = t.internalError(ctx, "tool panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack())), nil
		}
	}()
	p, ok := principalFrom(req)
	if !ok {
		// The HTTP front answers 401 before this; reaching here means a
		// transport without it (e.g. in-memory tests without a token).
		return errorResult(problem.New("unauthorized", "", "this call needs a bearer token")), nil
	}
	if !p.Has(t.Scope) {
		return errorResult(problem.New(problem.Scope, "", "%s needs the %s scope; this token has %s. Create a token with that scope (foundry token create --scopes …)",
			t.Def.Name, t.Scope, strings.Join(p.Scopes, " ")).With("required_scope", t.Scope)), nil
	}
	if pr := refusalOf(ctx); pr != nil { // over a rate limit: nothing runs (limits.go)
		return errorResult(pr), nil
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	args, inst, pr := t.prepare(args)
	if pr != nil {
		return errorResult(pr), nil
	}
	if !t.quick.valid(inst) {
		if err := t.schema.Validate(inst); err != nil {
			return errorResult(t.schemaProblem(err, inst)), nil
		}
	}
	out, err := t.Handle(ctx, p, args)
	if err != nil {
		var pr *problem.Problem
		if errors.As(err, &pr) {
			return errorResult(t.inMCPWords(pr)), nil
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// The client went away (or the request timed out): nobody
			// reads this answer, and it is no fault of Foundry's.
			t.logger().WarnContext(ctx, "tool call ended with its request", "tool", t.Def.Name, "err", err)
			return errorResult(problem.New(problem.Internal, "", "the request ended before the call completed; retry it with the same idempotency_key")), nil
		}
		return t.internalError(ctx, "tool failed", "err", err), nil
	}
	return result(out), nil
}

// internalError logs a fault with an incident ID and answers the call with
// that ID only: a database's or Go's message is for the operator.
func (t *Tool) internalError(ctx context.Context, msg string, attrs ...any) *mcp.CallToolResult {
	var b [6]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	t.logger().ErrorContext(ctx, msg, append([]any{"tool", t.Def.Name, "incident", id}, attrs...)...)
	return errorResult(problem.New(problem.Internal, "",
		"Foundry could not complete this call because of an internal error (incident %s, logged for the operator). Retry the same call with the same idempotency_key: a write that did land answers its first result, it is not applied twice.", id).
		With("incident", id))
}

func (t *Tool) logger() *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default()
}

func result(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// Bounds on what a refusal carries of its own text: a problem quotes
// excerpts, and these catch one that would not.
const maxField, maxMessage = 200, 4096

func errorResult(p *problem.Problem) *mcp.CallToolResult {
	if len(p.Field) > maxField || len(p.Message) > maxMessage {
		c := *p
		c.Field, c.Message = clip(c.Field, maxField/2), clip(c.Message, maxMessage/4)
		p = &c
	}
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
// refused by the schema, and prepare made integers integers. A failure
// names the field, never the decoder's text.
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return v, problem.New(problem.Invalid, te.Field, "must be %s (see the tool's input schema)", jsonKind(te.Type.Kind()))
		}
		return v, problem.New(problem.Invalid, "arguments", "do not match the tool's input schema")
	}
	return v, nil
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer between -9223372036854775808 and 9223372036854775807"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// Tools returns every tool Foundry serves, given the service, with
// proposals' next steps naming the web app's review page in general.
func Tools(svc *service.Service) []*Tool { return ToolsFor(svc, "") }

// ToolsFor is Tools whose proposals' next steps name reviewPage, the URL
// of the web app's review inbox ("" when the server does not know its
// public address).
func ToolsFor(svc *service.Service, reviewPage string) []*Tool {
	var out []*Tool
	out = append(out, noteTools(svc)...)
	out = append(out, roomTools(svc, func(p service.Proposed) string { return NextStep(reviewPage, p) })...)
	return out
}
