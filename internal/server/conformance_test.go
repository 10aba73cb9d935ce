package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/logtest"
	"foundry/internal/mcpserver"
	"foundry/internal/problem"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// answer is one HTTP exchange with the endpoint, its JSON-RPC message read
// from a JSON body or the first SSE data frame.
type answer struct {
	status int
	header http.Header
	raw    string
	frames []map[string]any // every JSON-RPC message, in order
}

func (a answer) msg() map[string]any {
	if len(a.frames) == 0 {
		return nil
	}
	return a.frames[len(a.frames)-1]
}

func (a answer) code() float64 {
	e, _ := a.msg()["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// post sends one JSON-RPC request; version "2026-07-28" adds the headers
// the new protocol requires (params must carry meta26 then).
func rpcPost(t *testing.T, target, version, method, body string, hdr map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if version >= "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return parseAnswer(resp.StatusCode, resp.Header, b)
}

func parseAnswer(status int, h http.Header, b []byte) answer {
	a := answer{status: status, header: h, raw: string(b)}
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					a.frames = append(a.frames, m)
				}
			}
		}
		return a
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		a.frames = []map[string]any{m}
	}
	return a
}

func req26(id int, method, params string) string {
	if params != "" {
		params = "," + params
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, meta26, params)
}

// bareSDK is a bare go-sdk server (stateless, nothing added): what the
// front must answer exactly where Foundry adds nothing.
func bareSDK(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "v1"}, nil)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestRouteBeforeAuthentication: a removed or unknown method answers what
// the bare SDK answers (2026-07-28: HTTP 404, -32601, the request's id),
// with or without a token; so does a request the SDK refuses before
// dispatch (a header that does not match the body). A presented but
// invalid token is still 401 on every method.
func TestRouteBeforeAuthentication(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	bare := bareSDK(t)
	token := e.WriteToken(t)
	type probe struct {
		name, version, method, body string
		hdr                         map[string]string
	}
	probes := []probe{
		{"removed resources/subscribe", "2026-07-28", "resources/subscribe", req26(7, "resources/subscribe", `"uri":"foundry://notes/x"`), nil},
		{"removed resources/unsubscribe", "2026-07-28", "resources/unsubscribe", req26(8, "resources/unsubscribe", `"uri":"foundry://notes/x"`), nil},
		{"removed logging/setLevel", "2026-07-28", "logging/setLevel", req26(9, "logging/setLevel", `"level":"info"`), nil},
		{"removed initialize", "2026-07-28", "initialize", req26(10, "initialize", `"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}`), nil},
		{"removed ping", "2026-07-28", "ping", req26(11, "ping", ""), nil},
		{"unknown method", "2026-07-28", "foo/bar", req26(12, "foo/bar", ""), nil},
		{"unknown method, string id", "2026-07-28", "nope", `{"jsonrpc":"2.0","id":"abc","method":"nope","params":{` + meta26 + `}}`, nil},
		{"unknown method on 2025-11-25", "2025-11-25", "foo/bar", `{"jsonrpc":"2.0","id":13,"method":"foo/bar","params":{}}`, nil},
		{"Mcp-Name does not match", "2026-07-28", "tools/call", req26(14, "tools/call", `"name":"list_notes","arguments":{}`), map[string]string{"Mcp-Name": "other_tool"}},
		{"Mcp-Name missing", "2026-07-28", "tools/call", req26(15, "tools/call", `"name":"list_notes","arguments":{}`), nil},
		{"Mcp-Method does not match", "2026-07-28", "tools/call", req26(16, "tools/call", `"name":"list_notes","arguments":{}`), map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": "list_notes"}},
		{"protocol header does not match _meta", "2026-07-28", "tools/call", req26(17, "tools/call", `"name":"list_notes","arguments":{}`), map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Name": "list_notes"}},
	}
	for _, p := range probes {
		want := rpcPost(t, bare, p.version, p.method, p.body, p.hdr)
		if want.status == http.StatusUnauthorized || want.status == http.StatusOK && want.code() == 0 {
			t.Fatalf("%s: the bare SDK answers %d %s: not a refusal to compare with", p.name, want.status, want.raw)
		}
		for _, tok := range []string{"", token} {
			hdr := map[string]string{}
			for k, v := range p.hdr {
				hdr[k] = v
			}
			if tok != "" {
				hdr["Authorization"] = "Bearer " + tok
			}
			got := rpcPost(t, e.URL+"/mcp", p.version, p.method, p.body, hdr)
			if got.status != want.status || got.raw != want.raw {
				t.Errorf("%s (token %v): Foundry answers %d %q, the bare SDK %d %q", p.name, tok != "", got.status, got.raw, want.status, want.raw)
			}
		}
		if p.version == "2026-07-28" && p.method != "tools/call" && (want.status != http.StatusNotFound || want.code() != -32601) {
			t.Errorf("%s: the bare SDK answers %d %v (expected 404/-32601)", p.name, want.status, want.code())
		}
		// Issue 8: a presented but invalid token is 401 on every method.
		hdr := map[string]string{"Authorization": "Bearer fdy_not_a_token"}
		for k, v := range p.hdr {
			hdr[k] = v
		}
		if got := rpcPost(t, e.URL+"/mcp", p.version, p.method, p.body, hdr); got.status != http.StatusUnauthorized || !strings.Contains(got.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("%s with an invalid token: %d %s", p.name, got.status, got.raw)
		}
	}
	// What needs a token still needs one: a well-formed call without one
	// is 401 with the RFC 9728 pointer, on both revisions.
	for _, c := range []struct{ version, body string }{
		{"2026-07-28", req26(20, "tools/call", `"name":"list_notes","arguments":{}`)},
		{"2025-11-25", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`},
		{"2026-07-28", req26(22, "tools/call", `"name":"no_such_tool","arguments":{}`)},
		{"2026-07-28", req26(23, "resources/read", `"uri":"foundry://notes/`+e.NoteID+`"`)},
	} {
		var p struct {
			Method string
			Params struct{ Name, URI string }
		}
		json.Unmarshal([]byte(c.body), &p)
		hdr := map[string]string{"Mcp-Name": p.Params.Name + p.Params.URI}
		got := rpcPost(t, e.URL+"/mcp", c.version, p.Method, c.body, hdr)
		if got.status != http.StatusUnauthorized || !strings.Contains(got.header.Get("WWW-Authenticate"), "resource_metadata=") || got.code() != -32001 {
			t.Errorf("%s without a token on %s: %d %s", p.Method, c.version, got.status, got.raw)
		}
	}
}

// TestListenWithoutToken: a subscriptions/listen that asks for nothing
// private is acknowledged without a token (the acknowledgement first,
// with the empty set Foundry honours); one that names a Note or Room needs
// a token (401), as reading it does.
func TestListenWithoutToken(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	for _, q := range []string{"", "?subscriptions=1"} {
		got := rpcPost(t, e.URL+"/mcp"+q, "2026-07-28", "subscriptions/listen", req26(5, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), nil)
		if got.status != http.StatusOK || len(got.frames) < 2 || got.frames[0]["method"] != "notifications/subscriptions/acknowledged" {
			t.Fatalf("anonymous listen for nothing private (%q): %d %s", q, got.status, got.raw)
		}
		params, _ := got.frames[0]["params"].(map[string]any)
		if n, _ := params["notifications"].(map[string]any); len(n) != 0 {
			t.Errorf("anonymous listen (%q) agreed to %v: Foundry honours nothing for it", q, n)
		}
		if m, _ := params["_meta"].(map[string]any); m["io.modelcontextprotocol/subscriptionId"] != float64(5) {
			t.Errorf("acknowledgement not tagged with the listen's id: %s", got.raw)
		}
		got = rpcPost(t, e.URL+"/mcp"+q, "2026-07-28", "subscriptions/listen", req26(6, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["foundry://notes/`+e.NoteID+`"]}`), nil)
		if got.status != http.StatusUnauthorized || got.code() != -32001 {
			t.Errorf("anonymous listen to a Note (%q): %d %s", q, got.status, got.raw)
		}
	}
	if n := e.Server.MCP.OpenStreams(); n != 0 {
		t.Errorf("%d listen streams still held", n)
	}
}

// TestDeclaredIsServed: initialize and server/discover declare exactly
// what Foundry serves. Methods of undeclared capabilities answer -32601;
// a 2025-11-25 client that opted in to subscriptions is not told
// resources.subscribe, and resources/subscribe answers -32601 (never an
// error with code 0); an unknown or unreachable resource is -32602 with
// its URI in data.
func TestDeclaredIsServed(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	token := e.WriteToken(t)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, tok := range []map[string]string{nil, bearer} {
		for _, m := range []struct{ method, params string }{
			{"prompts/list", ""}, {"prompts/get", `"name":"x"`}, {"completion/complete", `"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}`},
			{"resources/list", ""}, {"resources/templates/list", ""},
		} {
			hdr := map[string]string{}
			for k, v := range tok {
				hdr[k] = v
			}
			if m.method == "prompts/get" {
				hdr["Mcp-Name"] = "x"
			}
			got := rpcPost(t, e.URL+"/mcp", "2026-07-28", m.method, req26(3, m.method, m.params), hdr)
			if got.status != http.StatusNotFound || got.code() != -32601 {
				t.Errorf("%s (token %v), not declared: %d %s", m.method, tok != nil, got.status, got.raw)
			}
			old := rpcPost(t, e.URL+"/mcp", "2025-11-25", m.method, `{"jsonrpc":"2.0","id":4,"method":"`+m.method+`","params":{`+m.params+`}}`, tok)
			if old.code() != -32601 {
				t.Errorf("%s on 2025-11-25 (token %v), not declared: %d %s", m.method, tok != nil, old.status, old.raw)
			}
		}
	}
	for _, q := range []string{"", "?subscriptions=1"} {
		disc := rpcPost(t, e.URL+"/mcp"+q, "2026-07-28", "server/discover", req26(1, "server/discover", ""), nil)
		res, _ := disc.msg()["result"].(map[string]any)
		caps, _ := res["capabilities"].(map[string]any)
		if caps == nil || caps["prompts"] != nil || caps["logging"] != nil || caps["completions"] != nil {
			t.Errorf("server/discover (%q) declares what is not served: %s", q, disc.raw)
		}
		init := rpcPost(t, e.URL+"/mcp"+q, "2025-11-25", "initialize", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, bearer)
		if strings.Contains(init.raw, `"subscribe":true`) || !strings.Contains(init.raw, `"tools":{"listChanged":false}`) {
			t.Errorf("2025-11-25 initialize (%q): %s", q, init.raw)
		}
		for _, tok := range []map[string]string{nil, bearer} {
			sub := rpcPost(t, e.URL+"/mcp"+q, "2025-11-25", "resources/subscribe", `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"foundry://notes/`+e.NoteID+`"}}`, tok)
			if sub.code() != -32601 {
				t.Errorf("2025-11-25 resources/subscribe (%q, token %v): %d %s", q, tok != nil, sub.status, sub.raw)
			}
		}
	}
	// Unknown or unreachable resources: -32602, the URI in data.
	narrow := e.Token(t, []string{}, auth.ScopeRead)
	for _, c := range []struct {
		q, uri string
		hdr    map[string]string
	}{
		{"", "test://nonexistent", nil},
		{"", "test://nonexistent", bearer},
		{"?subscriptions=1", "test://nonexistent", nil},
		{"?subscriptions=1", "foundry://notes/note_nope", bearer},
		{"?subscriptions=1", "foundry://notes/" + e.NoteID, map[string]string{"Authorization": "Bearer " + narrow}},
	} {
		hdr := map[string]string{"Mcp-Name": c.uri}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		got := rpcPost(t, e.URL+"/mcp"+c.q, "2026-07-28", "resources/read", req26(4, "resources/read", `"uri":"`+c.uri+`"`), hdr)
		errObj, _ := got.msg()["error"].(map[string]any)
		data, _ := errObj["data"].(map[string]any)
		if got.code() != -32602 || data["uri"] != c.uri {
			t.Errorf("resources/read %s (%q): %d %s", c.uri, c.q, got.status, got.raw)
		}
	}
	// A readable Note reads.
	got := rpcPost(t, e.URL+"/mcp?subscriptions=1", "2026-07-28", "resources/read", req26(5, "resources/read", `"uri":"foundry://notes/`+e.NoteID+`"`),
		map[string]string{"Authorization": "Bearer " + token, "Mcp-Name": "foundry://notes/" + e.NoteID})
	if got.msg()["result"] == nil {
		t.Errorf("resources/read of the demo Note: %d %s", got.status, got.raw)
	}
}

// TestMcpNameWhitespace: optional whitespace around the Mcp-Name value is
// not part of it (RFC 9110 §5.5): the call is served. The request is written
// by hand (Go's client would trim the value itself).
func TestMcpNameWhitespace(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	token := e.WriteToken(t)
	u, _ := url.Parse(e.URL)
	for _, name := range []string{"  list_notes  ", "\tlist_notes\t", " list_notes"} {
		body := req26(1, "tools/call", `"name":"list_notes","arguments":{}`)
		raw := "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name:" + name + "\r\nAuthorization: Bearer " + token + "\r\n" +
			fmt.Sprintf("Content-Length: %d\r\nConnection: close\r\n\r\n", len(body)) + body
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.Close()
		got := parseAnswer(resp.StatusCode, resp.Header, b)
		if got.status != http.StatusOK || got.msg()["result"] == nil {
			t.Errorf("Mcp-Name %q: %d %s", name, got.status, got.raw)
		}
	}
}

// TestUnknownToolsetRefused: a toolset name that does not exist, in the
// header or the query, is refused (HTTP 400, -32602) naming it and the
// valid ones, instead of serving zero tools.
func TestUnknownToolsetRefused(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		q, header, bad string
	}{
		{"", "note", "note"},
		{"", "notes,bogus", "bogus"},
		{"", "Notes", "Notes"},
		{"", " notes , room ", "room"},
		{"?toolsets=event", "", "event"},
		{"?toolsets=notes,rooms,x", "notes", "x"},
	} {
		got := rpcPost(t, e.URL+"/mcp"+c.q, "", "tools/list", list, map[string]string{"X-MCP-Toolsets": c.header})
		errObj, _ := got.msg()["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		data, _ := errObj["data"].(map[string]any)
		if got.status != http.StatusBadRequest || got.code() != -32602 || !strings.Contains(msg, `"`+c.bad+`"`) ||
			!strings.Contains(msg, "notes, rooms, events") || data["error"] != problem.Invalid || data["field"] == nil {
			t.Errorf("toolsets %q%s: %d %s", c.header, c.q, got.status, got.raw)
		}
	}
	// Valid spellings still select.
	for _, h := range []string{"notes", " notes , rooms ", "events,notes,"} {
		got := rpcPost(t, e.URL+"/mcp", "", "tools/list", list, map[string]string{"X-MCP-Toolsets": h})
		res, _ := got.msg()["result"].(map[string]any)
		if tools, _ := res["tools"].([]any); len(tools) == 0 {
			t.Errorf("toolsets %q: %d %s", h, got.status, got.raw)
		}
	}
	if err := mcpserver.CheckToolsets([]string{"notes", "rooms", "events"}); err != nil {
		t.Errorf("CheckToolsets of the valid names: %v", err)
	}
	err := mcpserver.CheckToolsets([]string{"notes", "bogus"})
	var pr *problem.Problem
	if !errors.As(err, &pr) || pr.Field != "toolsets" || !strings.Contains(pr.Message, `"bogus"`) || !strings.Contains(pr.Message, "notes, rooms, events") {
		t.Errorf("CheckToolsets(bogus): %v", err)
	}
}

// TestClientMistakesLogAtWarn: a client's protocol mistake (a removed
// method, bad JSON, an unknown method, invalid params) is logged at warn at
// most, never at error.
func TestClientMistakesLogAtWarn(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	e := servertest.Start(t, servertest.Options{Config: server.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}})
	u := e.URL + "/mcp"
	rpcPost(t, u, "2026-07-28", "initialize", req26(1, "initialize", `"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}`), nil)
	rpcPost(t, u, "2026-07-28", "ping", req26(2, "ping", ""), nil)
	rpcPost(t, u, "2026-07-28", "logging/setLevel", req26(3, "logging/setLevel", `"level":"info"`), nil)
	rpcPost(t, u, "2026-07-28", "foo", req26(4, "foo", ""), nil)
	rpcPost(t, u, "", "tools/list", `{"jsonrpc":"2.0","id":5,"method":"tools/list"`, nil)
	rpcPost(t, u, "2025-11-25", "tools/list", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":7}}`, nil)
	rpcPost(t, u, "2025-11-25", "initialize", `{"jsonrpc":"2.0","id":7,"method":"initialize","params":"x"}`, nil)
	rpcPost(t, u, "2025-11-25", "notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	out := logs.String()
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("a client's protocol mistake logged as an error:\n%s", out)
	}
	if !strings.Contains(out, `level=WARN msg="method removed in the new protocol"`) {
		t.Errorf("the removed method is not logged at warn:\n%s", out)
	}
}
