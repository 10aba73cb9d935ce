package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"foundry/internal/account"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// A rate so slow that no token comes back while a test runs: every
// refusal is decided by the burst alone, never by the clock.
const perHour = rate.Limit(1.0 / 3600)

func limitedEnv(t *testing.T, l server.Limits) *servertest.Env {
	t.Helper()
	return servertest.Start(t, servertest.Options{Config: server.Config{Limits: l}})
}

// limGet is one request to the server from the client c with token ("" for
// none); the body is read and closed.
func limGet(t *testing.T, c *http.Client, method, url, token, body string) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp, m
}

// limCheckRefusal checks a rate_limited problem (REST or MCP) names limit and
// flag and carries retry_after, and returns it.
func limCheckRefusal(t *testing.T, m map[string]any, limit, flag string) int {
	t.Helper()
	if m["error"] != "rate_limited" || m["limit"] != limit || m["flag"] != flag {
		t.Fatalf("refusal %v: want error rate_limited, limit %s, flag %s", m, limit, flag)
	}
	secs, _ := m["retry_after"].(float64)
	if secs < 1 {
		t.Fatalf("retry_after %v, want whole seconds ≥ 1", m["retry_after"])
	}
	if msg, _ := m["message"].(string); !strings.Contains(msg, flag) || !strings.Contains(msg, fmt.Sprintf("retry after %d s", int(secs))) {
		t.Errorf("message %q should say when to retry and name %s", msg, flag)
	}
	return int(secs)
}

func limScrape(t *testing.T, e *servertest.Env) string {
	t.Helper()
	resp, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// limMetric is the value of one sample line of /metrics (its name and
// labels exactly as written), or -1 if absent.
func limMetric(t *testing.T, e *servertest.Env, sample string) float64 {
	t.Helper()
	for _, line := range strings.Split(limScrape(t, e), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

func TestRESTTokenOverItsRateGets429WithRetryAfterWhileOthersAreServed(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{PerToken: perHour, BurstPerToken: 3})
	a, b := e.WriteToken(t), e.WriteToken(t)
	c := http.DefaultClient
	for i := range 3 {
		if resp, m := limGet(t, c, "GET", e.URL+"/api/notes", a, ""); resp.StatusCode != 200 {
			t.Fatalf("request %d of a burst of 3: %d %v", i+1, resp.StatusCode, m)
		}
	}
	resp, m := limGet(t, c, "GET", e.URL+"/api/notes", a, "")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th request: %d %v, want 429", resp.StatusCode, m)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	secs := limCheckRefusal(t, m, "rate_per_token", "--rate-per-token")
	if got := resp.Header.Get("Retry-After"); got != strconv.Itoa(secs) {
		t.Errorf("Retry-After %q, want %d (retry_after)", got, secs)
	}
	// 1 an hour: the next token is an hour away.
	if secs < 3500 || secs > 3600 {
		t.Errorf("retry after %d s, want about an hour", secs)
	}
	if m["status"] != float64(429) || m["type"] != "https://foundry.dev/problems/rate_limited" || m["rule"] != "rate_per_token" {
		t.Errorf("problem document %v", m)
	}
	// A write over the limit is refused the same way, and writes nothing.
	if resp, m := limGet(t, c, "POST", e.URL+"/api/notes", a, `{"title":"over"}`); resp.StatusCode != 429 || m["error"] != "rate_limited" {
		t.Fatalf("a write over the limit: %d %v", resp.StatusCode, m)
	}
	// Another token is not starved meanwhile.
	for i := range 3 {
		if resp, m := limGet(t, c, "GET", e.URL+"/api/notes", b, ""); resp.StatusCode != 200 {
			t.Fatalf("other token, request %d: %d %v", i+1, resp.StatusCode, m)
		}
	}
	// Spelling the scheme another way is the same token.
	req, _ := http.NewRequest("GET", e.URL+"/api/notes", nil)
	req.Header.Set("Authorization", "BEARER   "+a)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 429 {
		t.Fatalf("the same token as \"BEARER   …\": %v %v, want 429", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	if got := limMetric(t, e, `foundry_rate_limited_total{door="rest",limit="rate_per_token"}`); got != 3 {
		t.Errorf("foundry_rate_limited_total{rest,rate_per_token} = %v, want 3", got)
	}
	if got := limMetric(t, e, `foundry_rate_limit_keys{kind="token"}`); got != 2 {
		t.Errorf("foundry_rate_limit_keys{token} = %v, want 2", got)
	}
	// Everything else is not limited: pages, metrics, health.
	for range 5 {
		if resp, _ := limGet(t, c, "GET", e.URL+"/healthz", a, ""); resp.StatusCode != 200 {
			t.Fatalf("/healthz with a limited token: %d", resp.StatusCode)
		}
	}
}

func TestMCPToolCallOverTheRateIsAToolResultWithRetryAfter(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			e := limitedEnv(t, server.Limits{PerToken: perHour, BurstPerToken: 6})
			a, b := e.WriteToken(t), e.WriteToken(t)
			cs := e.Client(t, a, version)
			var refusal mcpclient.Result
			calls := 0
			for ; calls < 20; calls++ {
				r, err := mcpclient.Call(context.Background(), cs, "list_notes", map[string]any{})
				if err != nil {
					t.Fatalf("call %d: a protocol error, want a tool result: %v", calls+1, err)
				}
				if r.IsError {
					refusal = r
					break
				}
			}
			if !refusal.IsError {
				t.Fatalf("%d calls over a burst of 6 were all served", calls)
			}
			secs := limCheckRefusal(t, refusal.Data, "rate_per_token", "--rate-per-token")
			if !strings.Contains(refusal.Text, "retry_after") || !strings.Contains(refusal.Data["message"].(string), "idempotency_key") {
				t.Errorf("text %q should carry retry_after and tell the model to keep its idempotency_key", refusal.Text)
			}
			if secs < 3500 {
				t.Errorf("retry_after %d, want about an hour", secs)
			}
			// A write is refused before it runs: nothing is written.
			r := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": e.NoteID, "expected_version": 1,
				"idempotency_key": "rate-limited-source", "title": "x", "url": "https://example.org/over"})
			if r.Code() != "rate_limited" {
				t.Fatalf("a write over the limit: %v", r.Data)
			}
			// Another token is served meanwhile.
			other := e.Client(t, b, version)
			if r := servertest.MustCall(t, other, "list_note_attachments", map[string]any{"note_id": e.NoteID, "kind": "sources"}); r.IsError {
				t.Fatalf("another token: %v", r.Data)
			} else if strings.Contains(fmt.Sprint(r.Data), "example.org/over") {
				t.Errorf("the refused write was applied: %v", r.Data)
			}
			// A method other than tools/call over the limit: HTTP 429.
			resp, m := limGet(t, http.DefaultClient, "POST", e.URL+"/mcp", a, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("ping over the limit: %d Retry-After %q %v", resp.StatusCode, resp.Header.Get("Retry-After"), m)
			}
			if m["id"] != float64(7) {
				t.Errorf("the 429's JSON-RPC error should answer id 7: %v", m)
			}
			data, _ := m["error"].(map[string]any)["data"].(map[string]any)
			limCheckRefusal(t, data, "rate_per_token", "--rate-per-token")
			if got := limMetric(t, e, `foundry_rate_limited_total{door="mcp",limit="rate_per_token"}`); got != 3 {
				t.Errorf("foundry_rate_limited_total{mcp,rate_per_token} = %v, want 3", got)
			}
		})
	}
}

// A client connecting from 127.0.0.2 is another address.
func limClientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func TestAddressOverItsRateIsRefusedWhileAnotherAddressIsServed(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{PerAddress: perHour, BurstPerAddress: 3})
	here, there := limClientFrom("127.0.0.1"), limClientFrom("127.0.0.2")
	tok := e.WriteToken(t)
	for i := range 3 {
		if resp, m := limGet(t, here, "GET", e.URL+"/api/notes", tok, ""); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %v", i+1, resp.StatusCode, m)
		}
	}
	// Over the address's rate, with the token or without one, on either door.
	resp, m := limGet(t, here, "GET", e.URL+"/api/openapi.json", "", "")
	if resp.StatusCode != 429 {
		t.Fatalf("4th request from 127.0.0.1: %d, want 429", resp.StatusCode)
	}
	limCheckRefusal(t, m, "rate_per_address", "--rate-per-address")
	resp, m = limGet(t, here, "POST", e.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("initialize from a limited address: %d %v", resp.StatusCode, m)
	}
	// The same token from another address is served: the address is full,
	// not the token.
	for i := range 3 {
		if resp, m := limGet(t, there, "GET", e.URL+"/api/notes", tok, ""); resp.StatusCode != 200 {
			t.Fatalf("from 127.0.0.2, request %d: %d %v", i+1, resp.StatusCode, m)
		}
	}
	if got := limMetric(t, e, `foundry_rate_limit_keys{kind="address"}`); got != 2 {
		t.Errorf("foundry_rate_limit_keys{address} = %v, want 2", got)
	}
}

// limSlowCall opens an MCP request with token whose body never ends until
// the returned func is called: it stays in flight on the server.
func limSlowCall(t *testing.T, e *servertest.Env, token string) (finish func()) {
	t.Helper()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", e.URL+"/mcp", pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,`))
	return func() {
		pw.Write([]byte(`"method":"ping"}`))
		pw.Close()
		<-done
	}
}

func TestConcurrencyCapRefusesTheNextRequestOfThatTokenOnly(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{ConcurrentPerToken: 2})
	a, b := e.WriteToken(t), e.WriteToken(t)
	cs := e.Client(t, a, "")
	inFlight := func() float64 { return limMetric(t, e, "foundry_rate_limit_in_flight") }
	f1, f2 := limSlowCall(t, e, a), limSlowCall(t, e, a)
	waitFor(t, "two requests in flight", func() bool { return inFlight() == 2 })

	resp, m := limGet(t, http.DefaultClient, "GET", e.URL+"/api/notes", a, "")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("a 3rd request in flight: %d Retry-After %q %v", resp.StatusCode, resp.Header.Get("Retry-After"), m)
	}
	limCheckRefusal(t, m, "concurrent_per_token", "--max-concurrent-per-token")
	if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); r.Code() != "rate_limited" || r.Str("limit") != "concurrent_per_token" {
		t.Fatalf("a tool call as the 3rd in flight: %v", r.Data)
	}
	if resp, m := limGet(t, http.DefaultClient, "GET", e.URL+"/api/notes", b, ""); resp.StatusCode != 200 {
		t.Fatalf("another token: %d %v", resp.StatusCode, m)
	}
	f1()
	waitFor(t, "one request in flight", func() bool { return inFlight() == 1 })
	if resp, m := limGet(t, http.DefaultClient, "GET", e.URL+"/api/notes", a, ""); resp.StatusCode != 200 {
		t.Fatalf("after one ended: %d %v", resp.StatusCode, m)
	}
	f2()
	waitFor(t, "nothing in flight", func() bool { return inFlight() == 0 })
	if got := limMetric(t, e, `foundry_rate_limited_total{door="rest",limit="concurrent_per_token"}`); got != 1 {
		t.Errorf("foundry_rate_limited_total{rest,concurrent_per_token} = %v, want 1", got)
	}
}

// Long polls and event streams wait under caps of their own: they take no
// place among a token's requests in flight.
func TestLongPollsAndStreamsAreNotCountedInTheConcurrencyCap(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{ConcurrentPerToken: 1})
	a := e.WriteToken(t)
	cs := e.Client(t, a, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan error, 1)
	go func() {
		_, err := mcpclient.Call(ctx, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID, "wait_seconds": 25})
		polled <- err
	}()
	waitFor(t, "the long poll to wait", func() bool { return e.Server.Service.Waiting() == 1 })

	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+"/api/events?note_id="+e.NoteID, nil)
	req.Header.Set("Authorization", "Bearer "+a)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, stream)
	}
	defer stream.Body.Close()
	if _, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil { // the stream has started
		t.Fatal(err)
	}
	if got := limMetric(t, e, "foundry_rate_limit_in_flight"); got != 0 {
		t.Errorf("in flight with a long poll and a stream open: %v, want 0", got)
	}
	if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); r.IsError {
		t.Fatalf("a call beside a long poll and a stream, cap 1: %v", r.Data)
	}
	// A call counts until its handler has returned, which may be just
	// after its client read the answer.
	idle := func() bool { return limMetric(t, e, "foundry_rate_limit_in_flight") == 0 }
	waitFor(t, "the call to end", idle)
	if resp, m := limGet(t, http.DefaultClient, "GET", e.URL+"/api/notes", a, ""); resp.StatusCode != 200 {
		t.Fatalf("a REST call beside them: %d %v", resp.StatusCode, m)
	}
	waitFor(t, "the call to end", idle)
	// A write beside them (the cap still free) ends the poll with its event.
	if r := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": e.NoteID, "expected_version": 1,
		"idempotency_key": "beside-a-long-poll", "title": "x", "url": "https://example.org/beside"}); r.IsError {
		t.Fatalf("a write beside a long poll, cap 1: %v", r.Data)
	}
	if err := <-polled; err != nil {
		t.Fatalf("the long poll: %v", err)
	}
}

func TestZeroLimitsLimitNothing(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	a := e.WriteToken(t)
	for i := range 100 {
		if resp, m := limGet(t, http.DefaultClient, "GET", e.URL+"/api/notes", a, ""); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %v", i+1, resp.StatusCode, m)
		}
	}
	if got := limMetric(t, e, `foundry_rate_limited_total{door="rest",limit="rate_per_token"}`); got != 0 {
		t.Errorf("refusals counted with no limits: %v", got)
	}
}

// A client that keeps calling past its refusals without waiting stops
// costing the server an answer in MCP's words: past 16 refusals in a row
// it gets a plain HTTP 429.
func TestMCPFloodPastItsRefusalsGetsPlain429(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{PerToken: perHour, BurstPerToken: 1})
	a := e.WriteToken(t)
	call := func() (*http.Response, string) {
		req, _ := http.NewRequest("POST", e.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`))
		req.Header.Set("Authorization", "Bearer "+a)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := call(); resp.StatusCode != 200 || strings.Contains(body, "rate_limited") {
		t.Fatalf("the burst's call: %d %s", resp.StatusCode, body)
	}
	for i := 1; i <= 16; i++ {
		resp, body := call()
		if resp.StatusCode != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, `retry_after`) {
			t.Fatalf("refusal %d: %d %s, want a tool result", i, resp.StatusCode, body)
		}
	}
	resp, body := call()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "rate_limited") {
		t.Fatalf("refusal 17: %d %q %s, want HTTP 429", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// A person's browser session is counted as a token is: two people signed
// in are two buckets.
func TestSignedInSessionsAreLimitedEachOnTheirOwn(t *testing.T) {
	t.Parallel()
	e := limitedEnv(t, server.Limits{PerToken: perHour, BurstPerToken: 2})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	signedIn := func() *browser {
		b := newBrowser(t, "")
		p := b.submit(b.get(e.URL+"/signin"), "", map[string]string{"email": e.Owner.User.Email, "password": ownerPassword})
		if p.Status != 200 {
			t.Fatalf("sign in: %d %s", p.Status, p.Body)
		}
		return b
	}
	one, two := signedIn(), signedIn()
	for i := range 2 {
		if p := one.get(e.URL + "/api/notes"); p.Status != 200 {
			t.Fatalf("request %d: %d %s", i+1, p.Status, p.Body)
		}
	}
	p := one.get(e.URL + "/api/notes")
	if p.Status != 429 || !strings.Contains(p.Body, `"limit":"rate_per_token"`) {
		t.Fatalf("the session's 3rd request: %d %s", p.Status, p.Body)
	}
	if p := two.get(e.URL + "/api/notes"); p.Status != 200 {
		t.Fatalf("another session: %d %s", p.Status, p.Body)
	}
	// The pages themselves are not limited.
	if p := one.get(e.URL + "/notes"); p.Status != 200 {
		t.Fatalf("the web app's page: %d", p.Status)
	}
}
