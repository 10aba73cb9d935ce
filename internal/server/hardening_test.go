package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/logtest"
	"foundry/internal/mcpclient"
	"foundry/internal/mcpserver"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
)

// brokenStore has only what server.New needs; LastCursor fails or panics.
type brokenStore struct {
	store.Store
	panics bool
}

func (b *brokenStore) OnChange(func(typ, id string)) func() { return func() {} }
func (b *brokenStore) ServerSecret(context.Context, string, []byte) ([]byte, error) {
	return nil, errors.New("server_secrets: the store does not answer")
}
func (b *brokenStore) LastCursor(context.Context, string, string, string) (int64, error) {
	if b.panics {
		panic("LastCursor: boom")
	}
	return 0, errors.New(`pq: SQLSTATE 08006 connection to 10.0.0.5:5432 failed: password authentication failed for user "foundry"`)
}

// TestPanicInHandlerIs500: a panic in a handler on the mux is a 500 for
// that request only, logged with its stack; the server keeps serving.
func TestPanicInHandlerIs500(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	srv := server.New(&brokenStore{panics: true}, server.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	hs := httptest.NewServer(srv.Handler)
	defer hs.Close()
	for i := 0; i < 2; i++ {
		resp, err := http.Get(hs.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || strings.Contains(string(b), "boom") {
			t.Fatalf("panicking handler: %d %s", resp.StatusCode, b)
		}
	}
	if s := logs.String(); !strings.Contains(s, "panic") || !strings.Contains(s, "boom") || !strings.Contains(s, "goroutine") {
		t.Fatalf("panic not logged with a stack: %s", s)
	}
	resp, err := http.Get(hs.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panic: %v %v", resp, err)
	}
	resp.Body.Close()

	// Any handler, wrapped the same way (the MCP front included).
	h := server.Recover(slog.New(slog.NewTextHandler(io.Discard, nil)), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("front") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}")))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"code":-32603`) {
		t.Fatalf("panicking /mcp: %d %s", rec.Code, rec.Body.String())
	}
}

// TestReadyzHidesStoreError: the store's message is logged, not served.
func TestReadyzHidesStoreError(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	srv := server.New(&brokenStore{}, server.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	srv.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), "SQLSTATE") || strings.Contains(rec.Body.String(), "10.0.0.5") {
		t.Fatalf("readyz: %d %s", rec.Code, rec.Body.String())
	}
	if !strings.Contains(logs.String(), "SQLSTATE") {
		t.Fatalf("store error not logged: %s", logs.String())
	}
}

// TestHTTPServerTimeouts: the server foundry serve runs bounds every
// connection, with room for a 25 s long poll.
func TestHTTPServerTimeouts(t *testing.T) {
	t.Parallel()
	hs := server.HTTPServer(http.NotFoundHandler(), "127.0.0.1:0")
	if hs.Addr != "127.0.0.1:0" || hs.Handler == nil {
		t.Fatalf("addr %q handler %v", hs.Addr, hs.Handler)
	}
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("unbounded: %+v", hs)
	}
	if hs.WriteTimeout < service.MaxWait+5*time.Second {
		t.Fatalf("write timeout %v leaves a %v long poll no margin", hs.WriteTimeout, service.MaxWait)
	}
}

// TestLongPollCapPerToken: over its cap a token's long poll is refused with
// too_many_waiters and retry_after; other tokens, and polls that do not
// wait, still work.
func TestLongPollCapPerToken(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{Config: server.Config{WaitersPerToken: 2, WaitersPerNode: 3}})
	tokA, tokB, tokC := e.WriteToken(t), e.WriteToken(t), e.WriteToken(t)
	a := e.Client(t, tokA, "")
	poll := map[string]any{"resource_type": "note", "resource_id": e.NoteID, "wait_seconds": 25}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mcpclient.Call(context.Background(), a, "poll_resource_events", poll)
		}()
	}
	waitFor(t, "two waiting polls", func() bool { return e.Server.Service.Waiting() == 2 })
	r := servertest.MustCall(t, a, "poll_resource_events", poll)
	if r.Code() != service.TooManyWaiters || r.Str("field") != "wait_seconds" || r.Int("retry_after") < 1 || r.Int("retry_after") > 25 {
		t.Fatalf("third poll of one token: %s", r.Text)
	}
	// Without waiting, the same token still polls.
	if r := servertest.MustCall(t, a, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID}); r.IsError {
		t.Fatalf("poll without wait: %s", r.Text)
	}
	// Another token still waits: the node has room for one more.
	b := e.Client(t, tokB, "")
	wg.Add(1)
	go func() {
		defer wg.Done()
		mcpclient.Call(context.Background(), b, "poll_resource_events", poll)
	}()
	waitFor(t, "three waiting polls", func() bool { return e.Server.Service.Waiting() == 3 })
	// The node is full now: a third token is refused by the node's cap.
	if r := servertest.MustCall(t, e.Client(t, tokC, ""), "poll_resource_events", poll); r.Code() != service.TooManyWaiters || r.Int("retry_after") < 1 {
		t.Fatalf("poll over the node's cap: %s", r.Text)
	}
	// A write wakes every waiter; their places free.
	cur := servertest.MustCall(t, a, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	if w := servertest.MustCall(t, a, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
		"idempotency_key": "wake-the-waiters", "operation": "replace_text", "text": cur.Str("text") + "."}); w.IsError {
		t.Fatal(w.Text)
	}
	wg.Wait()
	if n := e.Server.Service.Waiting(); n != 0 {
		t.Fatalf("%d places still held after the polls returned", n)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ { // bounded: 20 s at most
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// listenReq is a raw 2026-07-28 subscriptions/listen on the Note.
func listenReq(ctx context.Context, e *servertest.Env, token string) *http.Request {
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":["` + mcpserver.ResourceURI("note", e.NoteID) + `"]}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/mcp?subscriptions=1", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// TestListenStreamCap: subscription streams are capped per token the same
// way, with the problem in the JSON-RPC error's data.
func TestListenStreamCap(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{Config: server.Config{StreamsPerToken: 1}})
	tokA, tokB := e.WriteToken(t), e.WriteToken(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(tok string) *http.Response {
		resp, err := http.DefaultClient.Do(listenReq(ctx, e, tok))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := open(tokA)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first listen: %d", first.StatusCode)
	}
	line, _ := bufio.NewReader(first.Body).ReadString('\n') // the stream is open
	_ = line
	waitFor(t, "one open stream", func() bool { return e.Server.MCP.OpenStreams() == 1 })
	second := open(tokA)
	b, _ := io.ReadAll(second.Body)
	second.Body.Close()
	var msg struct {
		Error struct {
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	json.Unmarshal(b, &msg)
	if second.StatusCode != http.StatusTooManyRequests || msg.Error.Data["error"] != service.TooManyWaiters || msg.Error.Data["retry_after"] == nil || second.Header.Get("Retry-After") == "" {
		t.Fatalf("second listen of one token: %d %s", second.StatusCode, b)
	}
	other := open(tokB)
	defer other.Body.Close()
	if other.StatusCode != http.StatusOK {
		t.Fatalf("another token's listen: %d", other.StatusCode)
	}
	cancel()
	waitFor(t, "streams closed", func() bool { return e.Server.MCP.OpenStreams() == 0 })
}

// TestStreamBounds: a subscriptions/listen stream is exempt from the write
// timeout (its pushes still arrive after it) but ends at its lifetime, and
// the client listens again.
func TestStreamBounds(t *testing.T) {
	e := servertest.Start(t, servertest.Options{Config: server.Config{ListenLifetime: 3 * time.Second},
		HTTP: func(hs *http.Server) { hs.WriteTimeout = 200 * time.Millisecond }})
	tok := e.WriteToken(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(listenReq(ctx, e, tok))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitFor(t, "the open stream", func() bool { return e.Server.MCP.OpenStreams() == 1 })
	time.Sleep(500 * time.Millisecond) // past the server's write timeout
	cs := e.Client(t, tok, "")
	cur := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	if w := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
		"idempotency_key": "after-write-timeout", "operation": "replace_text", "text": cur.Str("text") + "."}); w.IsError {
		t.Fatal(w.Text)
	}
	pushed, ended := false, false
	for l := range lines {
		if strings.Contains(l, "notifications/resources/updated") {
			pushed = true
		}
		if strings.Contains(l, `"result"`) {
			ended = true // the listen's final answer: its lifetime is over
		}
	}
	if !pushed || !ended {
		t.Fatalf("pushed %v, ended at its lifetime %v", pushed, ended)
	}
	waitFor(t, "the stream's place to free", func() bool { return e.Server.MCP.OpenStreams() == 0 })
}

// TestRevokedTokenSubscriptionEnds: once its token is revoked, a
// subscription is pushed nothing more and its stream ends (real client).
func TestRevokedTokenSubscriptionEnds(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	secret, tok, err := auth.CreateToken(ctx, e.Server.Store, auth.NewTokenSpec{Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "watch", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	updates := make(chan string, 64)
	cs := subscriber(t, e, secret, "", updates)
	uri := mcpserver.ResourceURI("note", e.NoteID)
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	writer := e.Client(t, e.WriteToken(t), "")
	n := 0
	edit := func() {
		n++
		cur := servertest.MustCall(t, writer, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
		if w := servertest.MustCall(t, writer, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
			"idempotency_key": fmt.Sprintf("revoke-edit-%04d", n), "operation": "replace_text", "text": cur.Str("text") + "."}); w.IsError {
			t.Fatal(w.Text)
		}
	}
	got := false
	for i := 0; i < 40 && !got; i++ {
		edit()
		select {
		case <-updates:
			got = true
		case <-time.After(250 * time.Millisecond):
		}
	}
	if !got {
		t.Fatal("the subscription never received an update before revocation")
	}
	waitFor(t, "the open stream", func() bool { return e.Server.MCP.OpenStreams() == 1 })
	if err := e.Server.Store.RevokeToken(ctx, e.Owner.Workspace.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	for len(updates) > 0 {
		<-updates
	}
	edit()
	waitFor(t, "the revoked token's stream to end", func() bool { return e.Server.MCP.OpenStreams() == 0 })
	edit()
	select {
	case u := <-updates:
		t.Fatalf("a revoked token's subscription was pushed %s", u)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestInvalidTokenRefusedOnEveryMethod: a presented token that is unknown,
// malformed or revoked is 401 with WWW-Authenticate on every method, so no
// client shows "Connected" with it; without a token, initialize is that
// same 401 (a session needs credentials) while tools/list and
// server/discover answer as published.
func TestInvalidTokenRefusedOnEveryMethod(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	revoked, tok, err := auth.CreateToken(context.Background(), e.Server.Store, auth.NewTokenSpec{Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "gone", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Server.Store.RevokeToken(context.Background(), e.Owner.Workspace.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	type call struct{ method, body, version string }
	calls := []call{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, ""},
		{"notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-11-25"},
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2025-11-25"},
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, "2026-07-28"},
		{"server/discover", `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + meta + `}}`, "2026-07-28"},
		{"ping", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "2025-11-25"},
		{"resources/list", `{"jsonrpc":"2.0","id":4,"method":"resources/list"}`, "2025-11-25"},
		{"resources/templates/list", `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`, "2025-11-25"},
		{"logging/setLevel", `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}`, "2025-11-25"},
		{"tools/call", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`, "2025-11-25"},
		{"unknown", `{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`, "2025-11-25"},
		{"response", `{"jsonrpc":"2.0","id":8,"result":{}}`, "2025-11-25"},
		{"notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "2025-11-25"},
	}
	wantAuth := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", error="invalid_token"`, e.URL)
	for _, hdr := range []string{"Bearer " + auth.TokenPrefix + "0000000000000000", "Bearer garbage", "Bearer " + revoked, "bearer " + revoked, "Basic dXNlcjpwdw==", "Bearer", "Bearer a b"} {
		for _, c := range calls {
			req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", hdr)
			if c.version != "" {
				req.Header.Set("Mcp-Protocol-Version", c.version)
			}
			if c.version == "2026-07-28" {
				req.Header.Set("Mcp-Method", c.method)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), wantAuth) || !strings.Contains(string(b), `"code":-32001`) {
				t.Errorf("%s with %q: %d %q %.200s", c.method, hdr, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b)
			}
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(m, e.URL+"/mcp", nil)
			req.Header.Set("Authorization", hdr)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("HTTP %s with %q: %d", m, hdr, resp.StatusCode)
			}
		}
	}
	// The real client with a wrong token cannot connect.
	if _, err := mcpclient.Dial(context.Background(), "wrong", e.URL+"/mcp", auth.TokenPrefix+"wrong", "", nil); err == nil {
		t.Error("the go-sdk client connected with an invalid token (2026-07-28)")
	}
	if _, err := mcpclient.Dial(context.Background(), "wrong", e.URL+"/mcp", revoked, "2025-11-25", nil); err == nil {
		t.Error("the go-sdk client connected with a revoked token (2025-11-25)")
	}
	// Without a token, initialize is 401 with the RFC 9728 pointer (what
	// sends a client into its OAuth flow); notifications, tools/list and
	// server/discover answer as published.
	for _, c := range calls[:5] {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.version != "" {
			req.Header.Set("Mcp-Protocol-Version", c.version)
		}
		if c.version == "2026-07-28" {
			req.Header.Set("Mcp-Method", c.method)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if c.method == "initialize" {
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), wantAuth) || !strings.Contains(string(b), `"code":-32001`) {
				t.Errorf("initialize without a token: %d %q %.200s, want 401 with resource_metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b)
			}
			continue
		}
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s without a token: %d", c.method, resp.StatusCode)
		}
	}
	// The real client without a token: a 2025-11-25 session cannot start
	// (its initialize is 401); the stateless 2026-07-28 client discovers
	// and lists the tools.
	if cs, err := mcpclient.Dial(context.Background(), "anon", e.URL+"/mcp", "", "2025-11-25", nil); err == nil {
		cs.Close()
		t.Error("the go-sdk client started a 2025-11-25 session without a token")
	}
	if cs, err := mcpclient.Dial(context.Background(), "anon", e.URL+"/mcp", "", "", nil); err != nil {
		t.Errorf("anonymous connect (2026-07-28): %v", err)
	} else {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Errorf("anonymous tools/list: %v", err)
		}
		cs.Close()
	}
	// With a valid token initialize answers.
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp", strings.NewReader(calls[0].body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.Token(t, nil, auth.ScopeRead))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize with a token: %d %.300s", resp.StatusCode, b)
	}
}

// TestBodyLimitIsTheDocumentedOne: a 1 MiB markdown text written entirely
// as \u escapes (6 MiB of JSON) passes through the real server; a body over
// MaxBody is refused by a JSON-RPC error that names the limit.
func TestBodyLimitIsTheDocumentedOne(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	tok := e.WriteToken(t)
	cs := e.Client(t, tok, "")
	cur := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	text := strings.Repeat(`\u0061`, 1<<20)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_note_tab","arguments":{"note_id":%q,"tab_id":"markdown","expected_version":%d,"idempotency_key":"escaped-mebibyte","operation":"replace_text","text":"%s"}}}`,
		e.NoteID, cur.Int("version"), text)
	if len(body) <= 6<<20 {
		t.Fatalf("body is %d bytes; the test wants over 6 MiB", len(body))
	}
	status, got := rawPost(t, e.URL+"/mcp", tok, body)
	if status != http.StatusOK || !strings.Contains(got, `"result"`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("escaped 1 MiB text: %d %.400s", status, got)
	}
	after := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	if after.Str("text") != strings.Repeat("a", 1<<20) {
		t.Fatalf("stored text is %d bytes", len(after.Str("text")))
	}

	over := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","arguments":{},"pad":"` + strings.Repeat("x", mcpserver.MaxBody) + `"}}`
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(over)
		if chunked {
			rd = io.MultiReader(strings.NewReader(over)) // no Content-Length
		}
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp", rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		limit := fmt.Sprint(mcpserver.MaxBody)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(string(b), `"jsonrpc":"2.0"`) || !strings.Contains(string(b), limit+"-byte limit") {
			t.Fatalf("body over MaxBody (chunked %v): %d %q %.300s", chunked, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
}

// rawPost sends one JSON-RPC body and returns the answer message (the data
// of a one-event SSE stream, or the JSON body).
func rawPost(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	resp := send(t, url, token, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(l, "data:"); ok {
				return resp.StatusCode, strings.TrimSpace(d)
			}
		}
	}
	return resp.StatusCode, string(b)
}

// TestFrontScopeCheckCannotBeSpelledAround: a read token cannot name a
// write tool twice to pass the scope check (real server, real store).
func TestFrontScopeCheckCannotBeSpelledAround(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	read := e.Token(t, nil, auth.ScopeRead)
	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_note_tab","NAME":"list_notes","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"list_notes","name":"edit_note_tab","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","name":"edit_note_tab","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"tools/list","params":{"name":"edit_note_tab","arguments":{}}}`,
	} {
		status, got := rawPost(t, e.URL+"/mcp", read, b)
		if status == http.StatusOK || strings.Contains(got, `"result"`) {
			t.Errorf("%s: %d %s", b, status, got)
		}
	}
	// Anonymous listen disguised as tools/list.
	b := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","METHOD":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["` + mcpserver.ResourceURI("note", e.NoteID) + `"]}}}`
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp?subscriptions=1", strings.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The front reads the method as the SDK does (exact key): a listen,
	// which needs a token.
	if resp.StatusCode != http.StatusUnauthorized || e.Server.MCP.OpenStreams() != 0 {
		t.Fatalf("anonymous listen spelled as tools/list: %d", resp.StatusCode)
	}
}

// captureTransport keeps the answers to tools/list.
type captureTransport struct {
	mu    sync.Mutex
	lists []string
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !strings.Contains(string(body), `"tools/list"`) {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	c.mu.Lock()
	c.lists = append(c.lists, string(b))
	c.mu.Unlock()
	return resp, nil
}

// TestRealClientGetsCachedToolsList: the strict cache conditions still
// serve the go-sdk client's own tools/list (with the top-level
// securitySchemes only the cached answer carries), on both revisions.
func TestRealClientGetsCachedToolsList(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	for _, v := range []string{"", "2025-11-25"} {
		ct := &captureTransport{}
		cs, err := mcpclient.Dial(context.Background(), "lister", e.URL+"/mcp", e.WriteToken(t), v, ct)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		var msg struct {
			Result struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		if len(ct.lists) == 0 || json.Unmarshal([]byte(ct.lists[0]), &msg) != nil || len(msg.Result.Tools) == 0 || msg.Result.Tools[0]["securitySchemes"] == nil {
			t.Fatalf("version %q: tools/list was not the cached answer: %.300s", v, ct.lists)
		}
	}
}
