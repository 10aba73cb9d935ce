package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// faultStore answers tokens as told and has nothing else: any other call
// panics (a nil interface), as a bug deep in a handler would.
type faultStore struct {
	store.Store
	tokenErr error
	scopes   []string // of the token; default read and write
}

func (f *faultStore) OnChange(func(typ, id string)) func() { return func() {} }

func (f *faultStore) TokenByHash(context.Context, string) (store.Token, error) {
	if f.tokenErr != nil {
		return store.Token{}, f.tokenErr
	}
	scopes := f.scopes
	if scopes == nil {
		scopes = []string{auth.ScopeRead, auth.ScopeWrite}
	}
	return store.Token{ID: "tok1", Workspace: "w1", User: "u1", Scopes: scopes}, nil
}

func faultFront(t *testing.T, f *faultStore) (*Handler, *httptest.Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	h := New(service.New(f), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	h.opts.PublicURL = hs.URL
	return h, hs, &logs
}

// post sends one body to /mcp and returns status, headers and body.
func post(t *testing.T, url, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const newMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

var newHeaders = func(method string) map[string]string {
	return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Authorization": "Bearer " + auth.TokenPrefix + "x"}
}

// TestPanicInSDKGoroutineIsInternalError: a handler the SDK runs in its own
// goroutine panics (here resources/read reaching a store method that is not
// there); that call answers "internal error", the stack is logged, and the
// process goes on serving.
func TestPanicInSDKGoroutineIsInternalError(t *testing.T) {
	_, hs, logs := faultFront(t, &faultStore{})
	url := hs.URL + "/mcp?subscriptions=1"
	body := `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{` + newMeta + `,"uri":"foundry://notes/n1"}}`
	for i := 0; i < 2; i++ {
		hd := newHeaders("resources/read")
		hd["Mcp-Name"] = "foundry://notes/n1"
		status, _, got := post(t, url, body, hd)
		if status != http.StatusOK || !strings.Contains(got, "internal error") {
			t.Fatalf("resources/read on a panicking store: %d %s", status, got)
		}
	}
	if !strings.Contains(logs.String(), "panic") || !strings.Contains(logs.String(), "goroutine") {
		t.Fatalf("the panic was not logged with a stack: %s", logs.String())
	}
	status, _, got := post(t, hs.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if status != http.StatusOK || !strings.Contains(got, `"tools"`) {
		t.Fatalf("after the panic: %d %s", status, got)
	}
}

// TestStoreErrorNeverReachesClient: a failing token lookup answers a bare
// JSON-RPC internal error; the store's text is only logged.
func TestStoreErrorNeverReachesClient(t *testing.T) {
	secret := `pq: SQLSTATE 22021 invalid byte sequence for encoding "UTF8": 0x00`
	_, hs, logs := faultFront(t, &faultStore{tokenErr: errors.New(secret)})
	for _, m := range []string{"tools/call", "initialize", "tools/list", "ping"} {
		status, _, got := post(t, hs.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":{}}`,
			map[string]string{"Authorization": "Bearer " + auth.TokenPrefix + "abc"})
		if status != http.StatusInternalServerError || !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, `"message":"internal error"`) ||
			strings.Contains(got, "SQLSTATE") || strings.Contains(got, "pq:") {
			t.Fatalf("%s with a failing store: %d %s", m, status, got)
		}
	}
	if !strings.Contains(logs.String(), "SQLSTATE") {
		t.Fatalf("the store error was not logged: %s", logs.String())
	}
}

// TestFrontAuthorizesWhatTheSDKRuns: a method or a tool name spelled twice,
// in another case or escaped is read by the front as the SDK reads it, so
// it cannot get a call past the scope check, nor an anonymous listen past
// the token check; batches are refused (the front authorizes one message
// at a time).
func TestFrontAuthorizesWhatTheSDKRuns(t *testing.T) {
	_, hs, _ := faultFront(t, &faultStore{scopes: []string{auth.ScopeRead}})
	read := map[string]string{"Authorization": "Bearer " + auth.TokenPrefix + "read"}
	listen := `"params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://notes/n1"]}}`
	for _, c := range []struct {
		body    string
		headers map[string]string
		status  int
	}{
		// The SDK runs edit_note_tab: a read token is refused it.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_note_tab","NAME":"list_notes","arguments":{}}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"list_notes","name":"edit_note_tab","arguments":{}}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","name":"edit_note_tab","arguments":{}}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"edit_note_tab","arguments":{}}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes"},"params":{"name":"edit_note_tab"}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"edit_note_tab"}}`, read, http.StatusForbidden},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"tools/list","params":{"name":"edit_note_tab"}}`, read, http.StatusForbidden},
		// The SDK runs list_notes, which a read token may call.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","Name":"edit_note_tab"}}`, read, http.StatusOK},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"name":"edit_note_tab"},"params":{"name":"list_notes"}}`, read, http.StatusOK},
		// An anonymous listen, however it is spelled, needs a token.
		{`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","METHOD":"tools/list",` + listen + `}`, newHeaders("subscriptions/listen"), http.StatusUnauthorized},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"subscriptions/listen",` + listen + `}`, newHeaders("subscriptions/listen"), http.StatusUnauthorized},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"list_notes","arguments":{}}}`, nil, http.StatusUnauthorized},
		// Batches.
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}]`, nil, http.StatusBadRequest},
		{` [{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, read, http.StatusBadRequest},
	} {
		hd := c.headers
		if c.status == http.StatusUnauthorized && hd != nil {
			hd = map[string]string{"Mcp-Protocol-Version": hd["Mcp-Protocol-Version"], "Mcp-Method": hd["Mcp-Method"]} // no token
		}
		status, h, got := post(t, hs.URL+"/mcp?subscriptions=1", c.body, hd)
		if status != c.status {
			t.Errorf("%s\n→ %d %s; want %d", c.body, status, got, c.status)
		}
		if status == http.StatusForbidden && (!strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope"`) || !strings.Contains(got, "edit_note_tab needs the osfoundry:write scope")) {
			t.Errorf("%s\n→ %s %s", c.body, h.Get("WWW-Authenticate"), got)
		}
	}
}

// TestListenCheckedWhereSDKDispatches: the SDK side checks a listen itself
// (token and grant), whatever the front did: here the SDK handler is called
// directly, without the front.
func TestListenCheckedWhereSDKDispatches(t *testing.T) {
	h, _, _ := faultFront(t, &faultStore{})
	toolsets, ro, _ := h.selection(httptest.NewRequest(http.MethodPost, "/mcp", nil))
	sdk := h.variant(toolsets, ro, true).sdk
	body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://notes/n1"]}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { sdk.ServeHTTP(rec, req.WithContext(ctx)); close(done) }()
	select {
	case <-done: // refused: the listen does not block
	case <-time.After(10 * time.Second):
		t.Fatal("an anonymous listen behind the front was accepted: its stream stays open")
	}
	if !strings.Contains(rec.Body.String(), "unauthorized") || h.OpenStreams() != 0 {
		t.Fatalf("anonymous listen behind the front: %s", rec.Body.String())
	}
	// A principal whose grant does not include the Note (a real store).
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st)
	owner, _, err := svc.Bootstrap(context.Background(), "T", "o@example.org")
	if err != nil {
		t.Fatal(err)
	}
	noteID, err := svc.Demo(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	h = New(svc, Options{})
	sdk = h.variant(toolsets, ro, true).sdk
	body = strings.Replace(body, "foundry://notes/n1", ResourceURI("note", noteID), 1)
	p := auth.Principal{Workspace: owner.Workspace.ID, User: owner.User.ID, TokenID: "t", Scopes: []string{auth.ScopeRead}, Notes: []string{"other"}}
	req = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer x")
	rec = httptest.NewRecorder()
	withPrincipal(p, "x", sdk).ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), "was not found") {
		t.Fatalf("listen outside the grant behind the front: %s", rec.Body.String())
	}
}

// TestCachedToolsListAnswersAsTheSDK: for every odd tools/list request the
// front with its cache answers exactly (status, content type, body) what the
// SDK alone answers, or the SDK answers it with the list and the cache with
// its own, to the same id: the cache never answers what the SDK refuses.
func TestCachedToolsListAnswersAsTheSDK(t *testing.T) {
	h, front, _ := faultFront(t, &faultStore{})
	toolsets, ro, _ := h.selection(httptest.NewRequest(http.MethodPost, "/mcp", nil))
	plain := httptest.NewServer(h.variant(toolsets, ro, false).sdk)
	defer plain.Close()
	type odd struct {
		body    string
		headers map[string]string
	}
	var cases []odd
	for _, b := range []string{
		`{"jsonrpc":"2.0","method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":2.0,"id":1,"method":"tools/list"}`,
		`{"id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1e0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a\u0041","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"<&>","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"é","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"other":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1},"x":2}}`,
	} {
		cases = append(cases, odd{b, nil})
	}
	ok := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, hd := range []map[string]string{
		{"Content-Type": "text/plain"},
		{"Content-Type": ""},
		{"Accept": "application/json"},
		{"Accept": "text/event-stream"},
		{"Accept": ""},
		{"Mcp-Protocol-Version": "1999-01-01"},
		{"Mcp-Protocol-Version": "2026-07-28"},
		{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
	} {
		cases = append(cases, odd{ok, hd})
	}
	newOK := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + newMeta + `}}`
	for _, hd := range []map[string]string{
		nil,
		{"Mcp-Protocol-Version": "2026-07-28"},
		{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"},
		{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"},
	} {
		cases = append(cases, odd{newOK, hd})
	}
	do := func(url string, c odd) (int, string, string) {
		status, h, b := post(t, url+"/mcp", c.body, c.headers)
		return status, h.Get("Content-Type"), b
	}
	// listed is the id and tool names of a tools/list answer (JSON or the
	// last SSE frame); ok false when it is no list.
	listed := func(body string) (id string, names []string, ok bool) {
		if i := strings.LastIndex(body, "data: "); i >= 0 {
			body = body[i+len("data: "):]
		}
		var m struct {
			ID     json.RawMessage
			Result struct{ Tools []struct{ Name string } }
		}
		if json.Unmarshal([]byte(body), &m) != nil || m.Result.Tools == nil {
			return "", nil, false
		}
		for _, tl := range m.Result.Tools {
			names = append(names, tl.Name)
		}
		return string(m.ID), names, true
	}
	for _, c := range cases {
		fs, fct, fb := do(front.URL, c)
		ps, pct, pb := do(plain.URL, c)
		if strings.Contains(fb, `"securitySchemes":[{`) {
			fid, fnames, _ := listed(fb)
			pid, pnames, ok := listed(pb)
			if !ok || fid != pid || !slices.Equal(fnames, pnames) {
				t.Errorf("%s %v: the cache answers what the SDK does not:\nfront %q\nsdk   %d %q", c.body, c.headers, fb, ps, pb)
			}
			continue
		}
		if fs != ps || fct != pct || fb != pb {
			t.Errorf("%s %v:\nfront %d %s %q\nsdk   %d %s %q", c.body, c.headers, fs, fct, fb, ps, pct, pb)
		}
		if strings.Contains(fb, `"id":,`) {
			t.Errorf("%s: invalid JSON answer %q", c.body, fb)
		}
	}
	// Well-formed requests still get the cached answer (with the top-level
	// securitySchemes only the cache adds).
	for _, c := range []odd{{ok, nil}, {`{"jsonrpc":"2.0","id":"req-7","method":"tools/list","params":{}}`, nil},
		{newOK, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}}} {
		if s, _, b := do(front.URL, c); s != http.StatusOK || !strings.Contains(b, `"securitySchemes":[{`) || !strings.HasPrefix(b, `{"jsonrpc":"2.0","id":`) {
			t.Errorf("%s: not the cached answer: %d %.200s", c.body, s, b)
		}
	}
}

// TestFrontRefusalsDoNotEchoLargeValues: an id or a URI of a mebibyte is
// not quoted back in full.
func TestFrontRefusalsDoNotEchoLargeValues(t *testing.T) {
	_, hs, _ := faultFront(t, &faultStore{})
	big := strings.Repeat("x", 1<<20)
	for _, c := range []struct {
		body    string
		headers map[string]string
	}{
		{`{"jsonrpc":"2.0","id":"` + big + `","method":"tools/call","params":{"name":"list_notes","arguments":{}}}`, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://` + big + `"]}}}`, newHeaders("subscriptions/listen")},
		{`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://notes/a/` + big + `"]}}}`, newHeaders("subscriptions/listen")},
	} {
		_, _, got := post(t, hs.URL+"/mcp?subscriptions=1", c.body, c.headers)
		if len(got) > 2048 {
			t.Errorf("refusal of %.80s… is %d bytes", c.body, len(got))
		}
	}
}
