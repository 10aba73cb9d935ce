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
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"foundry/internal/account"
	"foundry/internal/logtest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// scrape reads url's /metrics as Prometheus would.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics does not parse: %v", err)
	}
	return fams
}

// findMetric is the family's metric with exactly these labels, or nil.
func findMetric(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m
	}
	return nil
}

// sample is the value of the family's metric with exactly these labels
// (a counter's or a gauge's value, a histogram's count); 0 if none.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := findMetric(fams, name, labels...)
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// TestMetricsCountKnownCalls scrapes /metrics before and after known calls
// over MCP, REST and the sign-in form, and finds each counted exactly.
func TestMetricsCountKnownCalls(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", ownerPassword); err != nil {
		t.Fatal(err)
	}
	token := e.WriteToken(t)
	cs := e.Client(t, token, "")
	before := scrape(t, e.URL)

	const lists = 3
	for range lists {
		if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	read := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	v := read.Int("version")
	edit := map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": v,
		"idempotency_key": "metrics-edit-0001", "operation": "replace_text", "text": "counted"}
	if r := servertest.MustCall(t, cs, "edit_note_tab", edit); r.IsError {
		t.Fatal(r.Text)
	}
	if r := servertest.MustCall(t, cs, "edit_note_tab", edit); r.IsError || !r.Bool("replayed") {
		t.Fatalf("the same edit again is not a replay: %s", r.Text)
	}
	stale := map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": v,
		"idempotency_key": "metrics-edit-0002", "operation": "replace_text", "text": "stale"}
	if r := servertest.MustCall(t, cs, "edit_note_tab", stale); r.Code() != "version_conflict" {
		t.Fatalf("stale edit: %s", r.Text)
	}

	const restCalls = 4
	for range restCalls {
		req, _ := http.NewRequest(http.MethodGet, e.URL+"/api/notes", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/notes: %d", resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/api/notes/no-such-note", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET /api/notes/no-such-note: %d", resp.StatusCode)
		}
	}

	// Two refusals of the OAuth endpoints: a registration that is not
	// JSON, a code that was never issued.
	oauthCodes := map[string]float64{}
	for _, c := range []struct{ path, ctype, body string }{
		{"/register", "text/plain", "{}"},
		{"/token", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=fdyac_never.issued&client_id=nobody&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&code_verifier=" + strings.Repeat("v", 43)},
	} {
		resp, err := http.Post(e.URL+c.path, c.ctype, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error string `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || body.Error == "" {
			t.Fatalf("POST %s: %d %q", c.path, resp.StatusCode, body.Error)
		}
		oauthCodes[body.Error]++
	}

	b := newBrowser(t, "")
	if p := b.submit(b.get(e.URL+"/signin"), "", map[string]string{"email": e.Owner.User.Email, "password": "not the password"}); p.Status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", p.Status)
	}
	if p := b.submit(b.get(e.URL+"/signin"), "", map[string]string{"email": e.Owner.User.Email, "password": ownerPassword}); p.Status != http.StatusOK {
		t.Fatalf("sign-in: %d", p.Status)
	}

	after := scrape(t, e.URL)
	delta := func(name string, labels ...string) float64 {
		return sample(after, name, labels...) - sample(before, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"foundry_mcp_tool_calls_total", []string{"tool", "list_notes", "outcome", "ok"}, lists},
		{"foundry_mcp_tool_call_duration_seconds", []string{"tool", "list_notes"}, lists},
		{"foundry_mcp_tool_calls_total", []string{"tool", "read_note_tab", "outcome", "ok"}, 1},
		{"foundry_mcp_tool_calls_total", []string{"tool", "edit_note_tab", "outcome", "ok"}, 2},
		{"foundry_mcp_tool_calls_total", []string{"tool", "edit_note_tab", "outcome", "version_conflict"}, 1},
		{"foundry_mcp_tool_call_duration_seconds", []string{"tool", "edit_note_tab"}, 3},
		{"foundry_writes_total", []string{"outcome", "committed"}, 1},
		{"foundry_writes_total", []string{"outcome", "replayed"}, 1},
		{"foundry_writes_total", []string{"outcome", "conflict"}, 1},
		{"foundry_writes_total", []string{"outcome", "key_reused"}, 0},
		{"foundry_refusals_total", []string{"door", "mcp", "code", "version_conflict"}, 1},
		{"foundry_refusals_total", []string{"door", "rest", "code", "not_found"}, 1},
		{"foundry_http_requests_total", []string{"route", "GET /api/notes", "code", "2xx"}, restCalls},
		{"foundry_http_request_duration_seconds", []string{"route", "GET /api/notes"}, restCalls},
		{"foundry_http_requests_total", []string{"route", "GET /api/notes/{note_id}", "code", "4xx"}, 1},
		{"foundry_signins_total", []string{"outcome", "refused"}, 1},
		{"foundry_signins_total", []string{"outcome", "ok"}, 1},
		{"foundry_signins_total", []string{"outcome", "throttled"}, 0},
		{"foundry_long_polls_waiting", nil, 0},
		{"foundry_http_event_streams", []string{"route", "GET /api/events"}, 0},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v went up by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for code, n := range oauthCodes {
		if got := delta("foundry_refusals_total", "door", "oauth", "code", code); got != n {
			t.Errorf("foundry_refusals_total{door=oauth,code=%s} went up by %v, want %v", code, got, n)
		}
	}
	// Every route label is a pattern: no raw path (here, no Note's ID).
	for _, m := range after["foundry_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && (strings.Contains(l.GetValue(), "no-such-note") || strings.Contains(l.GetValue(), e.NoteID)) {
				t.Errorf("route label %q is a path, not a pattern", l.GetValue())
			}
		}
	}
	// The edit went through one group commit at least.
	if n := delta("foundry_sqlite_group_commit_writes"); n < 1 {
		t.Errorf("foundry_sqlite_group_commit_writes: %v commits counted, want ≥ 1", n)
	}
	if n := delta("foundry_sqlite_commit_duration_seconds"); n != delta("foundry_sqlite_group_commit_writes") {
		t.Errorf("%v commits timed, %v counted", n, delta("foundry_sqlite_group_commit_writes"))
	}
	if sample(after, "foundry_password_hash_slots") < 1 {
		t.Errorf("foundry_password_hash_slots is %v", sample(after, "foundry_password_hash_slots"))
	}
	// A tool never called is there, at 0.
	if f := findMetric(after, "foundry_mcp_tool_calls_total", "tool", "add_note_source", "outcome", "error"); f == nil || f.GetCounter().GetValue() != 0 {
		t.Errorf("foundry_mcp_tool_calls_total{tool=add_note_source,outcome=error} is %v, want present at 0", f)
	}
	if n := sample(after, "foundry_build_info", "version", "dev"); n != 1 {
		t.Errorf("foundry_build_info{version=dev} = %v, want 1", n)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "foundry_mcp_listen_streams", "foundry_password_hashes_running", "foundry_http_requests_in_flight"} {
		if after[name] == nil {
			t.Errorf("%s is not served", name)
		}
	}
}

// TestMetricsEventStreamsAndLongPolls: an open event stream, a waiting
// long poll and an MCP listen stream are each counted while they last, and
// no longer after.
func TestMetricsEventStreamsAndLongPolls(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	token := e.WriteToken(t)
	cs := e.Client(t, token, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gauges := func(want map[string]float64) {
		t.Helper()
		fams := scrape(t, e.URL)
		for name, v := range want {
			k, labels, _ := strings.Cut(name, "|")
			var ls []string
			if labels != "" {
				ls = strings.Split(labels, "|")
			}
			if got := sample(fams, k, ls...); got != v {
				t.Errorf("%s = %v, want %v", name, got, v)
			}
		}
	}
	const events, mcpStreams = "foundry_http_event_streams|route|GET /api/events", "foundry_http_event_streams|route|POST /mcp"
	gauges(map[string]float64{events: 0, "foundry_long_polls_waiting": 0, "foundry_waiters": 0, "foundry_mcp_listen_streams": 0})

	// An event stream of the REST API.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"/api/events?note_id="+e.NoteID, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	gauges(map[string]float64{events: 1, "foundry_long_polls_waiting": 0, "foundry_waiters": 1})

	// A long poll, waiting for a write.
	read := servertest.MustCall(t, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID})
	if read.IsError {
		t.Fatal(read.Text)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		servertest.MustCall(t, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID, "cursor": read.Str("cursor"), "wait_seconds": 20})
	}()
	waitFor(t, "the long poll to wait", func() bool { return e.Server.Service.LongPolls() == 1 })
	gauges(map[string]float64{events: 1, "foundry_long_polls_waiting": 1, "foundry_waiters": 2})

	// An MCP subscriptions/listen stream.
	listen, err := http.DefaultClient.Do(listenReq(ctx, e, token))
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Body.Close()
	if listen.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", listen.StatusCode)
	}
	waitFor(t, "the listen stream", func() bool { return e.Server.MCP.OpenStreams() == 1 })
	gauges(map[string]float64{"foundry_mcp_listen_streams": 1, mcpStreams: 1})

	md := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	if r := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": md.Int("version"),
		"idempotency_key": "metrics-wake-0001", "operation": "replace_text", "text": "wake"}); r.IsError {
		t.Fatal(r.Text)
	}
	<-done
	cancel()
	waitFor(t, "every stream to end", func() bool {
		fams := scrape(t, e.URL)
		return sample(fams, "foundry_http_event_streams", "route", "GET /api/events") == 0 && sample(fams, "foundry_mcp_listen_streams") == 0
	})
	gauges(map[string]float64{events: 0, mcpStreams: 0, "foundry_long_polls_waiting": 0, "foundry_waiters": 0, "foundry_mcp_listen_streams": 0})
}

// jsonLogs is a server logger writing JSON lines at debug level to buf.
func jsonLogs(buf *logtest.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logLines parses every line of buf as one JSON object.
func logLines(t *testing.T, buf *logtest.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

var hexID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// TestRequestIDs: every answer has an X-Request-Id, a sane one a client
// sends is kept, and the request's log lines carry it.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	e := servertest.Start(t, servertest.Options{Config: server.Config{Logger: jsonLogs(&logs)}})
	get := func(path, sent string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.URL+path, nil)
		if sent != "" {
			req.Header.Set("X-Request-Id", sent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if got := get("/readyz", "trace-42.a:b_c").Header.Get("X-Request-Id"); got != "trace-42.a:b_c" {
		t.Errorf("a sane request ID is not kept: %q", got)
	}
	seen := map[string]bool{}
	for _, bad := range []string{"", "has space", "new\\nline", strings.Repeat("x", 65), "<script>", "ünïcode"} {
		got := get("/healthz", bad).Header.Get("X-Request-Id")
		if !hexID.MatchString(got) || seen[got] {
			t.Errorf("sent %q: X-Request-Id %q, want a fresh 16-hex-digit ID", bad, got)
		}
		seen[got] = true
	}
	// A refusal of the API answers it too.
	if got := get("/api/notes", "api-call-1"); got.StatusCode != http.StatusUnauthorized || got.Header.Get("X-Request-Id") != "api-call-1" {
		t.Errorf("GET /api/notes unauthenticated: %d, X-Request-Id %q", got.StatusCode, got.Header.Get("X-Request-Id"))
	}
	found := map[string]bool{}
	for _, l := range logLines(t, &logs) {
		if l["msg"] == "request" {
			id, _ := l["request_id"].(string)
			if id == "" {
				t.Errorf("request log line without request_id: %v", l)
			}
			found[id] = true
		}
	}
	for _, id := range []string{"trace-42.a:b_c", "api-call-1"} {
		if !found[id] {
			t.Errorf("no log line with request_id %q in:\n%s", id, logs.String())
		}
	}
	for id := range seen {
		if !found[id] {
			t.Errorf("no log line with the ID made for a request, %q", id)
		}
	}
}

// TestRequestIDInA500: a handler's panic is logged with the request's ID,
// and the 500 names it to the caller (nothing else of the fault).
func TestRequestIDInA500(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	srv := server.New(&brokenStore{panics: true}, server.Config{Logger: jsonLogs(&logs)})
	hs := httptest.NewServer(srv.Handler)
	defer hs.Close()
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/readyz", nil)
	req.Header.Set("X-Request-Id", "incident-7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil || resp.StatusCode != http.StatusInternalServerError || body["request_id"] != "incident-7" || resp.Header.Get("X-Request-Id") != "incident-7" {
		t.Fatalf("500: %d %s (X-Request-Id %q)", resp.StatusCode, b, resp.Header.Get("X-Request-Id"))
	}
	if strings.Contains(string(b), "boom") {
		t.Fatalf("the 500 tells the fault: %s", b)
	}
	panicked := false
	for _, l := range logLines(t, &logs) {
		if l["msg"] == "panic" {
			panicked = true
			if l["request_id"] != "incident-7" {
				t.Errorf("panic logged without the request's ID: %v", l)
			}
		}
	}
	if !panicked {
		t.Fatalf("the panic is not logged:\n%s", logs.String())
	}
	fams := scrapeHandler(t, srv.Handler)
	if n := sample(fams, "foundry_http_requests_total", "route", "GET /readyz", "code", "5xx"); n != 1 {
		t.Errorf("the 500 counted %v times, want 1", n)
	}
}

// scrapeHandler scrapes h's /metrics without a listener.
func scrapeHandler(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", rec.Code, err)
	}
	return fams
}

// TestMetricsOwnAddr: with Config.MetricsOwnAddr the main handler does not
// serve /metrics; Server.MetricsHandler does.
func TestMetricsOwnAddr(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{Config: server.Config{MetricsOwnAddr: true}})
	resp, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK && strings.Contains(string(b), "foundry_") {
		t.Fatalf("/metrics is served on the main address too: %d", resp.StatusCode)
	}
	own := httptest.NewServer(e.Server.MetricsHandler)
	defer own.Close()
	if fams := scrape(t, own.URL); fams["foundry_http_requests_total"] == nil || fams["go_goroutines"] == nil {
		t.Fatalf("the metrics handler serves %d families, without the request counts", len(fams))
	}
}

// TestMetricsPostgres: on PostgreSQL the pool's statistics are served, and
// a write and a conflict are counted as on SQLite; there is no SQLite
// group commit.
func TestMetricsPostgres(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	st, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	e := servertest.Start(t, servertest.Options{Store: st})
	cs := e.Client(t, e.WriteToken(t), "")
	before := scrape(t, e.URL)
	md := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	edit := map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": md.Int("version"),
		"idempotency_key": "pg-metrics-0001", "operation": "replace_text", "text": "on postgres"}
	if r := servertest.MustCall(t, cs, "edit_note_tab", edit); r.IsError {
		t.Fatal(r.Text)
	}
	edit["idempotency_key"] = "pg-metrics-0002"
	if r := servertest.MustCall(t, cs, "edit_note_tab", edit); r.Code() != "version_conflict" {
		t.Fatalf("stale edit: %s", r.Text)
	}
	after := scrape(t, e.URL)
	for _, c := range []struct {
		outcome string
		want    float64
	}{{"committed", 1}, {"conflict", 1}, {"replayed", 0}} {
		if got := sample(after, "foundry_writes_total", "outcome", c.outcome) - sample(before, "foundry_writes_total", "outcome", c.outcome); got != c.want {
			t.Errorf("foundry_writes_total{outcome=%q} went up by %v, want %v", c.outcome, got, c.want)
		}
	}
	if n := sample(after, "go_sql_open_connections", "db_name", "postgres"); n < 1 {
		t.Errorf("go_sql_open_connections{db_name=postgres} = %v, want ≥ 1", n)
	}
	if n := sample(after, "go_sql_max_open_connections", "db_name", "postgres"); n < 1 {
		t.Errorf("go_sql_max_open_connections{db_name=postgres} = %v, want the pool's bound", n)
	}
	if after["foundry_sqlite_group_commit_writes"] != nil {
		t.Errorf("a PostgreSQL node serves SQLite's group commit metrics")
	}
}

// failingList is a real store whose List fails once failing is set, as a
// database that stops answering mid-call does.
type failingList struct {
	store.Store
	failing *atomic.Bool
}

func (f failingList) List(ctx context.Context, q store.ListQuery) ([]store.Resource, error) {
	if f.failing.Load() {
		return nil, errors.New("list: connection reset by peer")
	}
	return f.Store.List(ctx, q)
}

// TestToolFaultLoggedWithRequestID: a tool call that fails is logged with
// the request's ID (the one its client sent), counted as an error, and
// answers an incident ID, not the cause.
func TestToolFaultLoggedWithRequestID(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var failing atomic.Bool
	e := servertest.Start(t, servertest.Options{Store: failingList{st, &failing}, Config: server.Config{Logger: jsonLogs(&logs)}})
	failing.Store(true)
	cs := servertest.Connect(t, e.URL+"/mcp", e.WriteToken(t), "", headerTransport{h: http.Header{"X-Request-Id": {"agent-call-9"}}, base: http.DefaultTransport})
	r := servertest.MustCall(t, cs, "list_notes", map[string]any{})
	if r.Code() != "internal_error" || strings.Contains(r.Text, "connection reset") {
		t.Fatalf("list_notes on a failing store: %s", r.Text)
	}
	logged := false
	for _, l := range logLines(t, &logs) {
		if l["msg"] == "tool failed" {
			logged = true
			if l["request_id"] != "agent-call-9" || !strings.Contains(fmt.Sprint(l["err"]), "connection reset") {
				t.Errorf("the fault's log line: %v", l)
			}
		}
	}
	if !logged {
		t.Fatalf("the fault is not logged:\n%s", logs.String())
	}
	if n := sample(scrape(t, e.URL), "foundry_mcp_tool_calls_total", "tool", "list_notes", "outcome", "error"); n != 1 {
		t.Errorf("list_notes errors counted: %v, want 1", n)
	}
}

// TestMetricsConnections: TrackConnections counts the connections a client
// holds open, and lets them go when they close.
func TestMetricsConnections(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Config{})
	hs := httptest.NewUnstartedServer(srv.Handler)
	server.TrackConnections(srv.Metrics, hs.Config)
	hs.Start()
	defer func() { hs.Close(); st.Close() }()
	// Three clients, each with its own kept-alive connection.
	var clients []*http.Client
	for range 3 {
		c := &http.Client{Transport: &http.Transport{}}
		clients = append(clients, c)
		resp, err := c.Get(hs.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := sample(scrapeHandler(t, srv.Handler), "foundry_http_connections"); n != 3 {
		t.Errorf("connections open: %v, want 3", n)
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	waitFor(t, "the connections to close", func() bool { return sample(scrapeHandler(t, srv.Handler), "foundry_http_connections") == 0 })
}
