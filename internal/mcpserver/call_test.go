package mcpserver

// Tool.call is the door every MCP request goes through after the HTTP
// front: these tests call it directly (bypassing the front, as a request
// the front misread would) and over real HTTP with the go-sdk client.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/logtest"
	"foundry/internal/mcpclient"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

type callEnv struct {
	name   string
	st     store.Store
	svc    *service.Service
	owner  service.Owner
	noteID string
	roomID string
	tools  map[string]*Tool
	all    auth.Principal // read+write, every Note and Room
}

func newCallEnv(t *testing.T, st store.Store, name string) *callEnv {
	t.Helper()
	ctx := context.Background()
	svc := service.New(st)
	owner, _, err := svc.Bootstrap(ctx, "Test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	e := &callEnv{name: name, st: st, svc: svc, owner: owner, tools: map[string]*Tool{}}
	if e.noteID, err = svc.Demo(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if e.roomID, err = svc.DemoRoom(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for _, tl := range Tools(svc) {
		e.tools[tl.Def.Name] = tl
	}
	e.all = auth.Principal{Workspace: owner.Workspace.ID, User: owner.User.ID, TokenID: "t1", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
	return e
}

func sqliteEnv(t *testing.T) *callEnv {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newCallEnv(t, st, "sqlite")
}

// bothStores is SQLite always, and PostgreSQL when FOUNDRY_TEST_POSTGRES_URL
// is set (logged as skipped otherwise).
func bothStores(t *testing.T) []*callEnv {
	t.Helper()
	envs := []*callEnv{sqliteEnv(t)}
	if pgtestURLSet() {
		u, _ := pgtest.Schema(t)
		st, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		envs = append(envs, newCallEnv(t, st, "postgres"))
	} else {
		t.Logf("PostgreSQL part skipped: set %s to run it", pgtest.URLEnv)
	}
	return envs
}

func pgtestURLSet() bool { return os.Getenv(pgtest.URLEnv) != "" }

// callAs runs one tools/call through the tool's SDK handler, as the SDK
// dispatches it, with principal p (whatever an HTTP front decided).
func (e *callEnv) callAs(t *testing.T, p auth.Principal, tool, args string) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	tl := e.tools[tool]
	if tl == nil {
		t.Fatalf("no tool %s", tool)
	}
	req := &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: json.RawMessage(args)},
		Extra:  &mcp.RequestExtra{TokenInfo: &sdkauth.TokenInfo{Scopes: p.Scopes, UserID: p.User, Extra: map[string]any{principalKey: p}}},
	}
	res, err := tl.call(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %s: protocol error %v; every answer must be a tool result", tool, clipArgs(args), err)
	}
	var data map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &data)
	return res, data
}

func (e *callEnv) call(t *testing.T, tool, args string) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	return e.callAs(t, e.all, tool, args)
}

func clipArgs(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// tabs returns the demo Note's version and its first tab ID of each type.
func (e *callEnv) tabs(t *testing.T) (version int64, byType map[string]string) {
	t.Helper()
	res, data := e.call(t, "list_note_tabs", fmt.Sprintf(`{"note_id":%q}`, e.noteID))
	if res.IsError {
		t.Fatalf("list_note_tabs: %s", resultText(res))
	}
	byType = map[string]string{}
	for _, x := range data["tabs"].([]any) {
		m := x.(map[string]any)
		typ, _ := m["type"].(string)
		if _, ok := byType[typ]; !ok {
			byType[typ], _ = m["tab_id"].(string)
		}
	}
	return int64(data["version"].(float64)), byType
}

// serve runs the real endpoint over loopback HTTP with extra tools beside
// Foundry's, and returns its URL and a read token.
func (e *callEnv) serve(t *testing.T, log *slog.Logger, scopes []string, extra ...*Tool) (url, secret string) {
	t.Helper()
	h := &Handler{svc: e.svc, opts: Options{Path: "/mcp", Logger: log, Version: "test"}, all: append(Tools(e.svc), extra...), log: log, variants: map[string]*variant{}}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	secret, _, err := auth.CreateToken(context.Background(), e.st, auth.NewTokenSpec{Workspace: e.owner.Workspace.ID, User: e.owner.User.ID, Name: "t", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return hs.URL + "/mcp", secret
}

// TestToolPanicIsAnInternalErrorForThatCallOnly: a panic in a tool handler,
// called through the real HTTP endpoint with the go-sdk client, answers that
// call internal_error (no panic text), is logged with its stack, and the
// process and the next calls carry on.
func TestToolPanicIsAnInternalErrorForThatCallOnly(t *testing.T) {
	e := sqliteEnv(t)
	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	boom := toolFor(spec{Toolset: ToolsetNotes, Name: "boom", Scope: auth.ScopeRead, Description: "Panics.", Input: object(nil, props{})},
		func(ctx context.Context, c service.Caller, _ struct{}) (service.NoteTabs, error) {
			panic("secret-panic-text")
		})
	setDefaultLogger(t, log) // what Foundry's serve does with its logger
	url, secret := e.serve(t, log, []string{auth.ScopeRead}, boom)
	cs, err := mcpclient.Dial(context.Background(), "panic-test", url, secret, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for i := range 2 {
		r, err := mcpclient.Call(context.Background(), cs, "boom", map[string]any{})
		if err != nil {
			t.Fatalf("call %d: a panic must answer a tool result, got protocol error %v", i, err)
		}
		if r.Code() != "internal_error" || r.Str("incident") == "" {
			t.Fatalf("call %d: got %v %s, want internal_error with an incident", i, r.Data, r.Text)
		}
		if strings.Contains(r.Text, "secret-panic-text") || strings.Contains(fmt.Sprint(r.Data), "secret-panic-text") {
			t.Errorf("call %d: the answer leaks the panic: %s", i, r.Text)
		}
		if !strings.Contains(logs.String(), r.Str("incident")) {
			t.Errorf("call %d: incident %s not logged", i, r.Str("incident"))
		}
		ok, err := mcpclient.Call(context.Background(), cs, "list_notes", map[string]any{})
		if err != nil || ok.IsError {
			t.Fatalf("after a panic, list_notes: %v %s", err, ok.Text)
		}
	}
	l := logs.String()
	if !strings.Contains(l, "secret-panic-text") || !strings.Contains(l, "runtime/debug.Stack") || !strings.Contains(l, "call_test.go") {
		t.Errorf("the log lacks the panic and its stack:\n%s", l)
	}
}

func setDefaultLogger(t *testing.T, l *slog.Logger) {
	prev := slog.Default()
	slog.SetDefault(l)
	t.Cleanup(func() { slog.SetDefault(prev) })
}

// TestFaultTextNeverReachesTheClient: an error that is not a problem (a
// database's, Go's) answers a generic internal_error, logged with details.
func TestFaultTextNeverReachesTheClient(t *testing.T) {
	e := sqliteEnv(t)
	var logs logtest.Buffer
	tl := toolFor(spec{Toolset: ToolsetNotes, Name: "fault", Scope: auth.ScopeRead, Description: "Fails.", Input: &jsonschema.Schema{Type: "object", Properties: props{}}},
		func(ctx context.Context, c service.Caller, _ struct{}) (service.NoteTabs, error) {
			return service.NoteTabs{}, fmt.Errorf("read note: %w", errors.New(`ERROR: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)`))
		})
	setDefaultLogger(t, slog.New(slog.NewTextHandler(&logs, nil)))
	e.tools["fault"] = tl
	res, data := e.call(t, "fault", `{}`)
	if !res.IsError || data["error"] != "internal_error" {
		t.Fatalf("got %v, want internal_error", data)
	}
	b, _ := json.Marshal(res)
	if bytes.Contains(b, []byte("SQLSTATE")) || bytes.Contains(b, []byte("UTF8")) {
		t.Errorf("the answer leaks the fault: %s", b)
	}
	if !strings.Contains(logs.String(), "SQLSTATE 22021") {
		t.Errorf("the fault is not logged: %s", logs.String())
	}
}

// TestScopeIsCheckedInsideTheTool: a read-only principal reaching a write
// tool's handler (whatever the front decided) is refused there, naming the
// scope, and nothing is written.
func TestScopeIsCheckedInsideTheTool(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	ro := e.all
	ro.Scopes = []string{auth.ScopeRead}
	for _, c := range []struct{ tool, args string }{
		{"create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"scope-test-1","tab_type":"sheet"}`, e.noteID, v)},
		{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"scope-test-2","operation":"slide_add","title":"x"}`, e.noteID, tabs["slides"], v)},
		{"add_note_source", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"scope-test-3","title":"x","url":"https://example.org/"}`, e.noteID, v)},
		{"propose_room_snippet_app", fmt.Sprintf(`{"room_id":%q,"name":"x","files":{"src/App.tsx":"x"},"idempotency_key":"scope-test-4"}`, e.roomID)},
	} {
		res, data := e.callAs(t, ro, c.tool, c.args)
		if !res.IsError || data["error"] != "insufficient_scope" || data["required_scope"] != auth.ScopeWrite || !strings.Contains(fmt.Sprint(data["message"]), auth.ScopeWrite) {
			t.Errorf("%s with a read-only principal: got %v, want insufficient_scope naming %s", c.tool, data, auth.ScopeWrite)
		}
	}
	if v2, _ := e.tabs(t); v2 != v {
		t.Errorf("the Note moved from version %d to %d: a refused write wrote", v, v2)
	}
	none := e.all
	none.Scopes = nil
	if res, data := e.callAs(t, none, "list_notes", `{}`); !res.IsError || data["error"] != "insufficient_scope" || data["required_scope"] != auth.ScopeRead {
		t.Errorf("list_notes without the read scope: got %v", data)
	}
}

// TestGrantIsCheckedInsideTheTool: a Note or Room outside the principal's
// grant is not found through the tool handler itself.
func TestGrantIsCheckedInsideTheTool(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	p := e.all
	p.Notes, p.Rooms = []string{"n-other"}, []string{"r-other"}
	for _, c := range []struct{ tool, args, field string }{
		{"list_note_tabs", fmt.Sprintf(`{"note_id":%q}`, e.noteID), "note_id"},
		{"read_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q}`, e.noteID, tabs["slides"]), "note_id"},
		{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"grant-test-1","operation":"slide_add","title":"x"}`, e.noteID, tabs["slides"], v), "note_id"},
		{"read_room", fmt.Sprintf(`{"room_id":%q}`, e.roomID), "room_id"},
	} {
		res, data := e.callAs(t, p, c.tool, c.args)
		if !res.IsError || data["error"] != "not_found" || data["field"] != c.field {
			t.Errorf("%s outside the grant: got %v, want not_found on %s", c.tool, data, c.field)
		}
	}
	res, data := e.callAs(t, p, "list_notes", `{}`)
	if res.IsError || len(data["notes"].([]any)) != 0 {
		t.Errorf("list_notes outside the grant lists %v", data)
	}
}

// badIDs are identifier spellings no store may see, as JSON string bodies.
var badIDs = []string{
	`\u0000`, `a\u0000b`, `\u0001`, `\u001f`, `\u007f`, `\u0085`, `\u009b`,
	`\u202e`, `\u202a`, `\u2066`, `\u2069`, `\u200e`, `\u061c`, `\u200b`, `\ufeff`, `\u2028`,
	`\ufffd`, `\ud800`, `\udfff`, `\ud800x`, `\udc00\ud800`, `\ud83d`,
}

// TestIdentifiersRefuseControlCharacters: a control, bidi or format
// character, or a lone surrogate, in any *_id, idempotency_key or cursor,
// nested ones included, is refused by name before any store call, with the
// same answer on SQLite and PostgreSQL.
func TestIdentifiersRefuseControlCharacters(t *testing.T) {
	envs := bothStores(t)
	answers := map[string]map[string]any{}
	for _, e := range envs {
		v, tabs := e.tabs(t)
		for _, bad := range badIDs {
			for _, c := range []struct{ tool, args, field string }{
				{"read_note_tab", `{"note_id":"n` + bad + `x","tab_id":"t"}`, "note_id"},
				{"read_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":"t%sx"}`, e.noteID, bad), "tab_id"},
				{"list_note_tabs", `{"note_id":"` + bad + `"}`, "note_id"},
				{"list_notes", `{"cursor":"bm` + bad + `"}`, "cursor"},
				{"list_note_attachments", fmt.Sprintf(`{"note_id":%q,"kind":"sources","cursor":"%s"}`, e.noteID, bad), "cursor"},
				{"create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"key-1234%s","tab_type":"sheet"}`, e.noteID, v, bad), "idempotency_key"},
				{"add_note_source", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"%s-key-1234","title":"t","url":"https://example.org/"}`, e.noteID, v, bad), "idempotency_key"},
				{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"key-12345","operation":"replace_tab_data","data":{"sheets":[{"sheet_id":"s%s","name":"n","cells":[]}]}}`, e.noteID, tabs["sheet"], v, bad), "data.sheets[0].sheet_id"},
				{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"key-12345","operation":"sheet_set_range","sheet_id":"%s","start_row":0,"start_col":0,"values":[[1]]}`, e.noteID, tabs["sheet"], v, bad), "sheet_id"},
				{"read_room", `{"room_id":"r` + bad + `"}`, "room_id"},
				{"read_room_app_status", fmt.Sprintf(`{"room_id":%q,"instance_id":"i%s"}`, e.roomID, bad), "instance_id"},
				{"propose_room_repo_app", fmt.Sprintf(`{"room_id":%q,"name":"x","repository_id":"r%s","version_id":"v","idempotency_key":"key-12345"}`, e.roomID, bad), "repository_id"},
				{"propose_room_snippet_app", fmt.Sprintf(`{"room_id":%q,"name":"x","files":{"src/App.tsx":"x"},"idempotency_key":"key-1234%s"}`, e.roomID, bad), "idempotency_key"},
				{"poll_resource_events", `{"resource_type":"note","resource_id":"n` + bad + `"}`, "resource_id"},
				{"list_rooms", `{"cursor":"` + bad + `"}`, "cursor"},
			} {
				res, data := e.call(t, c.tool, c.args)
				if !res.IsError || data["error"] != "invalid_argument" || data["field"] != c.field {
					t.Errorf("%s: %s %s: got %v, want invalid_argument on %s", e.name, c.tool, bad, data, c.field)
					continue
				}
				if b, _ := json.Marshal(res); bytes.Contains(b, []byte("SQLSTATE")) || bytes.Contains(b, []byte(`"code"`)) {
					t.Errorf("%s: %s %s: a database message reached the client: %s", e.name, c.tool, bad, b)
				}
				k := c.tool + c.field + bad
				if prev, ok := answers[k]; ok && !reflect.DeepEqual(prev, data) {
					t.Errorf("%s %s: the stores answer differently:\n%v\n%v", c.tool, bad, prev, data)
				}
				answers[k] = data
			}
		}
		if v2, _ := e.tabs(t); v2 != v {
			t.Errorf("%s: the Note moved from version %d to %d", e.name, v, v2)
		}
	}
}

// TestNULIsRefusedInAnyText: PostgreSQL cannot store NUL, SQLite can; both
// stores must answer alike, so a NUL anywhere is refused by name.
func TestNULIsRefusedInAnyText(t *testing.T) {
	for _, e := range bothStores(t) {
		v, tabs := e.tabs(t)
		for _, c := range []struct{ tool, args, field string }{
			{"list_notes", `{"query":"a\u0000"}`, "query"},
			{"add_note_source", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"nul-key-1","title":"t\u0000","url":"https://example.org/"}`, e.noteID, v), "title"},
			{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"nul-key-2","operation":"sheet_set_range","start_row":0,"start_col":0,"values":[["ok","x\u0000"]]}`, e.noteID, tabs["sheet"], v), "values[0][1]"},
			{"propose_room_snippet_app", fmt.Sprintf(`{"room_id":%q,"name":"x","files":{"src/App.tsx":"x\u0000"},"idempotency_key":"nul-key-3"}`, e.roomID), "files.src/App.tsx"},
		} {
			res, data := e.call(t, c.tool, c.args)
			if !res.IsError || data["error"] != "invalid_argument" || data["field"] != c.field {
				t.Errorf("%s: %s: got %v, want invalid_argument on %q", e.name, c.tool, data, c.field)
			}
		}
	}
}

// TestIntegralNumbersAreIntegers: JSON Schema counts 10.0 and 1e1 as
// integers; they are accepted end to end, in every integer field.
func TestIntegralNumbersAreIntegers(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	for _, c := range []struct{ tool, args string }{
		{"list_notes", `{"limit":10.0}`},
		{"list_notes", `{"limit":1e1}`},
		{"list_rooms", `{"limit":2.0}`},
		{"list_repositories", `{"limit":0.5e1}`},
		{"list_note_attachments", fmt.Sprintf(`{"note_id":%q,"kind":"sources","limit":50.0}`, e.noteID)},
		{"read_sheet_range", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"start_row":0.0,"start_col":-0.0,"rows":2.0,"cols":1E1}`, e.noteID, tabs["sheet"])},
		{"poll_resource_events", fmt.Sprintf(`{"resource_type":"note","resource_id":%q,"wait_seconds":0.0,"limit":5.00}`, e.noteID)},
		{"create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d.0,"idempotency_key":"float-key-1","tab_type":"sheet"}`, e.noteID, v)},
		{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%de0,"idempotency_key":"float-key-2","operation":"sheet_set_range","start_row":1.0,"start_col":0e3,"values":[[1.5,2.0,1e308]]}`, e.noteID, tabs["sheet"], v+1)},
	} {
		if res, data := e.call(t, c.tool, c.args); res.IsError {
			t.Errorf("%s %s: refused %v; an integral number is an integer", c.tool, c.args, data)
		}
	}
}

// TestOutOfRangeNumbersAreRefusedByName: 2^63, 1e308, -1e400 and non-integers
// in integer fields, and numbers no float64 holds anywhere, are refused
// naming the field, never with decoder text.
func TestOutOfRangeNumbersAreRefusedByName(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	for _, n := range []string{"9223372036854775808", "-9223372036854775809", "1e308", "-1e400", "1e400", "1.5", "1e-400", "99999999999999999999999"} {
		for _, c := range []struct{ tool, args, field string }{
			{"list_notes", `{"limit":` + n + `}`, "limit"},
			{"create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%s,"idempotency_key":"big-key-1","tab_type":"sheet"}`, e.noteID, n), "expected_version"},
			{"read_sheet_range", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"start_row":%s,"start_col":0,"rows":1,"cols":1}`, e.noteID, tabs["sheet"], n), "start_row"},
			{"read_sheet_range", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"start_row":0,"start_col":0,"rows":%s,"cols":1}`, e.noteID, tabs["sheet"], n), "rows"},
			{"poll_resource_events", fmt.Sprintf(`{"resource_type":"note","resource_id":%q,"wait_seconds":%s}`, e.noteID, n), "wait_seconds"},
			{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"big-key-2","operation":"sheet_set_range","start_row":%s,"start_col":0,"values":[[1]]}`, e.noteID, tabs["sheet"], v, n), "start_row"},
		} {
			res, data := e.call(t, c.tool, c.args)
			msg := fmt.Sprint(data["message"])
			if !res.IsError || data["error"] != "invalid_argument" || data["field"] != c.field {
				t.Errorf("%s %s=%s: got %v, want invalid_argument on %s", c.tool, c.field, n, data, c.field)
			} else if strings.Contains(msg, "json:") || strings.Contains(msg, "Go ") || strings.Contains(msg, "unmarshal") {
				t.Errorf("%s %s=%s: decoder text in %q", c.tool, c.field, n, msg)
			}
		}
	}
	for _, n := range []string{"-1e400", "1e400"} {
		res, data := e.call(t, "edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"big-key-3","operation":"sheet_set_range","start_row":0,"start_col":0,"values":[[1,%s]]}`, e.noteID, tabs["sheet"], v, n))
		if !res.IsError || data["field"] != "values[0][1]" {
			t.Errorf("cell %s: got %v, want a refusal on values[0][1]", n, data)
		}
	}
}

// TestLengthsAreCharacters: maxLength and the key's bounds count
// characters (code points), not bytes.
func TestLengthsAreCharacters(t *testing.T) {
	e := sqliteEnv(t)
	v, _ := e.tabs(t)
	euro := func(n int) string { return strings.Repeat("€", n) } // 3 bytes each
	_, data := e.call(t, "propose_room_repo_app", fmt.Sprintf(`{"room_id":%q,"name":%q,"repository_id":"nope","version_id":"nope","idempotency_key":"len-key-1"}`, e.roomID, euro(200)))
	if data["field"] == "name" {
		t.Errorf("200 three-byte characters in a maxLength-200 name refused: %v", data)
	}
	res, data := e.call(t, "propose_room_repo_app", fmt.Sprintf(`{"room_id":%q,"name":%q,"repository_id":"nope","version_id":"nope","idempotency_key":"len-key-2"}`, e.roomID, euro(201)))
	if !res.IsError || data["field"] != "name" || !strings.Contains(fmt.Sprint(data["message"]), "200") {
		t.Errorf("201 characters in a maxLength-200 name: got %v, want a refusal on name naming 200", data)
	}
	// A key of 128 two-byte characters is 256 bytes and 128 characters.
	res, data = e.call(t, "create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":%q,"tab_type":"sheet","label":%q}`, e.noteID, v, strings.Repeat("é", 128), strings.Repeat("日", 100)))
	if res.IsError {
		t.Errorf("a 128-character key and a 100-character label: refused %v", data)
	}
	res, data = e.call(t, "create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":%q,"tab_type":"sheet"}`, e.noteID, v+1, strings.Repeat("é", 129)))
	if !res.IsError || data["field"] != "idempotency_key" {
		t.Errorf("a 129-character key: got %v", data)
	}
}

// TestLoneSurrogatesAreRefused: Go decodes a lone surrogate escape to U+FFFD,
// so "\ud800" and "\udfff" would be one key; both are refused by path.
func TestLoneSurrogatesAreRefused(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	for _, bad := range []string{`\ud800`, `\udfff`, `\udbff\u0041`, `\ud800\ud800`, `\udc00\ud800`, `x\\\ud800`} {
		for _, c := range []struct{ tool, args, field string }{
			{"create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"sur-key-1","tab_type":"sheet","label":"a%s"}`, e.noteID, v, bad), "label"},
			{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"sur-key-2","operation":"slides_add_outline","slides":[{"title":"a"},{"title":"b","body":"%s"}]}`, e.noteID, tabs["slides"], v, bad), "slides[1].body"},
			{"propose_room_snippet_app", fmt.Sprintf(`{"room_id":%q,"name":"x","files":{"src/%s.tsx":"x"},"idempotency_key":"sur-key-3"}`, e.roomID, bad), "files.src/\ufffd.tsx"},
			{"list_notes", `{"query":"` + bad + `"}`, "query"},
		} {
			res, data := e.call(t, c.tool, c.args)
			if !res.IsError || data["error"] != "invalid_argument" {
				t.Errorf("%s %s: got %v, want invalid_argument", c.tool, bad, data)
				continue
			}
			if f, _ := data["field"].(string); f != c.field && !(c.tool == "propose_room_snippet_app" && strings.HasPrefix(f, "files.src/")) {
				t.Errorf("%s %s: field %q, want %q", c.tool, bad, f, c.field)
			}
		}
	}
	// A surrogate encoded as UTF-8 bytes (CESU-8) and other invalid UTF-8
	// decode to U+FFFD as well.
	for _, raw := range []string{"\xed\xa0\x80", "\xed\xbf\xbf", "\xff", "a\xc3"} {
		res, data := e.call(t, "list_notes", `{"query":"`+raw+`"}`)
		if !res.IsError || data["field"] != "query" {
			t.Errorf("query %q: got %v, want a refusal on query", raw, data)
		}
	}
	// A valid pair, and an escaped backslash before u, pass.
	if res, data := e.call(t, "list_notes", `{"query":"\ud83d\ude00 \\ud800"}`); res.IsError {
		t.Errorf("a valid surrogate pair refused: %v", data)
	}
}

// TestRefusalsDoNotEchoLargeValues: a refusal quotes at most an excerpt of
// what was sent, whatever rule it breaks.
func TestRefusalsDoNotEchoLargeValues(t *testing.T) {
	e := sqliteEnv(t)
	v, tabs := e.tabs(t)
	big := strings.Repeat("a", 1<<20+1)
	for _, c := range []struct{ args, field, want string }{
		{fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"echo-key-1","operation":"replace_text","text":%q}`, e.noteID, tabs["markdown"], v, big), "text", "1048576"},
		{fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"echo-key-1","operation":%q}`, e.noteID, tabs["markdown"], v, big), "operation", "enum"},
		{fmt.Sprintf(`{"note_id":{"x":%q},"tab_id":"t","expected_version":1,"idempotency_key":"echo-key-1","operation":"replace_text"}`, big), "note_id", "type"},
		{fmt.Sprintf(`{"note_id":"n","tab_id":"t","expected_version":1,"idempotency_key":"echo-key-1","operation":"replace_text",%q:1}`, big), "", "unexpected property"},
		{fmt.Sprintf(`{"note_id":"n","tab_id":"t","expected_version":1,"idempotency_key":"echo-key-1","operation":"replace_text","start_row":%s}`, strings.Repeat("9", 1<<20)), "start_row", "integer"},
	} {
		res, data := e.call(t, "edit_note_tab", c.args)
		b, _ := json.Marshal(res.StructuredContent)
		size := len(b) + len(resultText(res))
		f, _ := data["field"].(string)
		if !res.IsError || (c.field != "" && f != c.field) || !strings.Contains(fmt.Sprint(data["message"]), c.want) {
			t.Errorf("%s: got %.300v, want a refusal on %s saying %s", c.field, data, c.field, c.want)
		}
		if size >= 2048 {
			t.Errorf("%s: the refusal is %d bytes; it must quote an excerpt, not the value", c.field, size)
		}
	}
	// A huge map key in the path of a refusal is cut too.
	res, data := e.call(t, "propose_room_snippet_app", fmt.Sprintf(`{"room_id":%q,"name":"x","files":{%q:1},"idempotency_key":"echo-key-2"}`, e.roomID, big))
	b, _ := json.Marshal(res.StructuredContent)
	if f, _ := data["field"].(string); !res.IsError || !strings.HasPrefix(f, "files.aaa") || len(b)+len(resultText(res)) >= 2048 {
		t.Errorf("a huge file name with a wrong value: %d bytes, field %.100q", len(b)+len(resultText(res)), f)
	}
}

// TestArgumentsAreReadAsSentOverHTTP: escapes and numbers reach the tool as sent
// (the SDK keeps the raw arguments) and are judged there; a refusal sent
// over HTTP is as short as one made in process.
func TestArgumentsAreReadAsSentOverHTTP(t *testing.T) {
	e := sqliteEnv(t)
	url, secret := e.serve(t, slog.Default(), []string{auth.ScopeRead, auth.ScopeWrite})
	post := func(args string) []byte {
		t.Helper()
		_, raw := callOverHTTP(t, url, secret, "list_notes", args)
		return raw
	}
	for _, q := range []string{`\ud800`, `\udfff`, `a\ud800b`, `\u0000`} {
		if raw := post(`{"query":"` + q + `"}`); !bytes.Contains(raw, []byte(`"structuredContent":{"error":"invalid_argument","field":"query"`)) {
			t.Errorf("query %s over HTTP: %s", q, raw)
		}
	}
	// The raw number reaches the tool as sent, too.
	if raw := post(`{"limit":10.0}`); !bytes.Contains(raw, []byte(`"notes":[`)) {
		t.Errorf("limit 10.0 over HTTP: %s", raw)
	}
	if raw := post(`{"limit":1e308}`); !bytes.Contains(raw, []byte(`"field":"limit"`)) {
		t.Errorf("limit 1e308 over HTTP: %s", raw)
	}
	// A 1 MiB+1 text through the go-sdk client: the whole refusal is short.
	cs, err := mcpclient.Dial(context.Background(), "echo-test", url, secret, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	v, _ := e.tabs(t)
	r, err := mcpclient.Call(context.Background(), cs, "edit_note_tab", map[string]any{"note_id": e.noteID, "tab_id": "markdown", "expected_version": v,
		"idempotency_key": "echo-http-1", "operation": "replace_text", "text": strings.Repeat("x", 1<<20+1)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.Data)
	if r.Str("field") != "text" || !strings.Contains(r.Str("message"), "1048576") || len(b)+len(r.Text) >= 2048 {
		t.Errorf("1 MiB+1 text over HTTP: %d bytes: %.300s", len(b)+len(r.Text), r.Text)
	}
}

// TestDuplicatePropertiesAreRefused: which of two same-named properties
// wins differs between decoders; the call is refused naming it.
func TestDuplicatePropertiesAreRefused(t *testing.T) {
	e := sqliteEnv(t)
	for _, c := range []struct{ tool, args, field string }{
		{"list_notes", `{"limit":1,"limit":2}`, "limit"},
		{"read_note_tab", `{"note_id":"a","tab_id":"t","note_id":"b"}`, "note_id"},
		{"propose_room_snippet_app", `{"room_id":"r","name":"x","files":{"a.ts":"1","a.ts":"2"},"idempotency_key":"dup-key-1"}`, "files.a.ts"},
	} {
		res, data := e.call(t, c.tool, c.args)
		if !res.IsError || data["error"] != "invalid_argument" || data["field"] != c.field {
			t.Errorf("%s %s: got %v, want invalid_argument on %s", c.tool, c.args, data, c.field)
		}
	}
}

// TestPrepareKeepsTheBytes: the scan changes nothing but integral numbers
// in integer fields, and refuses text that is not one JSON value.
func TestPrepareKeepsTheBytes(t *testing.T) {
	tools := map[string]*Tool{}
	for _, tl := range Tools(nil) {
		tools[tl.Def.Name] = tl
	}
	tl := tools["list_notes"]
	for in, want := range map[string]string{
		` { "query" : "a\"b\\c\u00e9\ud83d\ude00" , "x" : [ 1 , -2.5e-3 , { "y" : null } , true , false , [] , {} ] } `: "",
		`{"limit":10.0,"query":"q"}`:              `{"limit":10,"query":"q"}`,
		`{"limit":-0.0}`:                          `{"limit":0}`,
		`{"x":10.0}`:                              "",
		`{"limit":1E1,"cursor":"c","limit2":2.0}`: `{"limit":10,"cursor":"c","limit2":2.0}`,
		"{\"query\":\"\xe2\x82\xac\"}":            "",
	} {
		out, inst, p := tl.prepare([]byte(in))
		if p != nil {
			t.Errorf("%s: refused %v", in, p)
			continue
		}
		if want == "" {
			want = in
		}
		if string(out) != want {
			t.Errorf("%s: became %s, want %s", in, out, want)
		}
		// What the schema validates is what decoding the text gives.
		var decoded any
		if err := json.Unmarshal(out, &decoded); err != nil || !reflect.DeepEqual(inst, decoded) {
			t.Errorf("%s: decoded as %#v, json.Unmarshal gives %#v (%v)", in, inst, decoded, err)
		}
	}
	for _, in := range []string{``, ` `, `{`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `[1,]`, `{"a":1}{}`, `{"a":01x}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":"x}`, `{'a':1}`, `{"a":nul}`} {
		if _, _, p := tl.prepare([]byte(in)); p == nil {
			t.Errorf("%q: accepted; it is not one JSON value", in)
		}
	}
}
