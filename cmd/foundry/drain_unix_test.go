//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/mcpserver"
	"foundry/internal/server/servertest"
)

// idempotent marks every request as one that may be sent again: Go's
// transport then resends a request written to a kept-alive connection the
// server closed as idle before reading it (what a server that shuts down
// does to idle connections). The tool calls it carries are idempotent
// indeed: each has its idempotency_key.
//
// It also tells apart a call on a connection the server never accepted: a
// new connection the kernel completed just as the listener closed sits in
// its queue and is reset when it closes, a race of TCP no server can
// answer for (a balancer sends such a call to another node). A server that
// shuts down never closes a connection it accepted less than 5 s before
// without answering it (net/http), so a reset or EOF on a new connection
// before any byte of answer is that race, and is reported as such.
type idempotent struct{ base http.RoundTripper }

const unaccepted = "the connection was reset before the server accepted it"

func (t idempotent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Idempotency-Key", "1")
	var reused, answered atomic.Bool
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { reused.Store(i.Reused) },
		GotFirstResponseByte: func() { answered.Store(true) },
	}))
	resp, err := t.base.RoundTrip(r)
	if err != nil && !reused.Load() && !answered.Load() && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)) {
		return nil, fmt.Errorf("%s: %w", unaccepted, err)
	}
	return resp, err
}

// connRefused: the call never reached a server (nothing listens, or the
// connection never was accepted).
func connRefused(err error) bool {
	return err != nil && (errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), unaccepted))
}

// noteWriter appends lines to one Note's markdown, one acknowledged write
// at a time, and remembers the text of the last acknowledged one.
type noteWriter struct {
	cs      *mcp.ClientSession
	note    string
	prefix  string
	version int64
	text    string

	until <-chan struct{} // closed: stop writing (nil: write until refused)

	mu      sync.Mutex
	acked   int
	lastAck string
	failed  []string
	ended   string // why it stopped writing
}

func newNoteWriter(t *testing.T, url, token, note, prefix string) *noteWriter {
	t.Helper()
	// A transport of its own, that keeps its connection: with the shared
	// one's two idle connections per host for every client of the test,
	// calls would open new connections all the time, and one opened just
	// as the listener closes is reset by the kernel with no server ever
	// seeing it, a race of TCP that no server can answer for.
	rt := http.DefaultTransport.(*http.Transport).Clone()
	rt.MaxIdleConnsPerHost = 4
	t.Cleanup(rt.CloseIdleConnections)
	cs := servertest.Connect(t, url, token, "", idempotent{rt})
	cur := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": note, "tab_id": "markdown"})
	return &noteWriter{cs: cs, note: note, prefix: prefix, version: cur.Int("version"), text: cur.Str("text")}
}

func (w *noteWriter) ackedNow() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// run writes until a call is refused (the server stopped listening), at
// most max writes, each bounded by a client timeout: any other error, a
// refusal by the tool or no answer is a failure.
func (w *noteWriter) run(max int) {
	for i := 0; i < max; i++ {
		select {
		case <-w.until:
			return
		default:
		}
		text := w.text + fmt.Sprintf("%s-%d\n", w.prefix, i)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := mcpclient.Call(ctx, w.cs, "edit_note_tab", map[string]any{"note_id": w.note, "tab_id": "markdown", "expected_version": w.version,
			"idempotency_key": fmt.Sprintf("drain-%s-%d", w.prefix, i), "operation": "replace_text", "text": text})
		cancel()
		w.mu.Lock()
		switch {
		case connRefused(err):
			w.ended = err.Error()
			w.mu.Unlock()
			return
		case err != nil:
			w.failed = append(w.failed, fmt.Sprintf("write %d: %v", i, err))
		case r.IsError:
			w.failed = append(w.failed, fmt.Sprintf("write %d refused: %s", i, r.Text))
		default:
			w.version, w.text = r.Int("version"), text
			w.acked++
			w.lastAck = text
		}
		stop := err != nil || r.IsError
		w.mu.Unlock()
		if stop {
			return
		}
	}
}

// stream is one event stream read to its end.
type stream struct {
	status int
	body   string
	err    error
}

// openStream sends req and reads the answer to its end (bounded by the
// client's timeout); opened is closed once the headers came.
func openStream(req *http.Request, opened chan<- struct{}) stream {
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	close(opened)
	if err != nil {
		return stream{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return stream{status: resp.StatusCode, body: string(b), err: err}
}

func sseRequest(t *testing.T, url, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	return req
}

func listenRequest(t *testing.T, base, token, note string) *http.Request {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"notifications":{"resourceSubscriptions":["` + mcpserver.ResourceURI("note", note) + `"]}}}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp?subscriptions=1", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// mcpURL is the MCP endpoint a serving Foundry logged.
func mcpURL(t *testing.T, s *serving) string {
	t.Helper()
	m := regexp.MustCompile(`mcp=(\S+)`).FindStringSubmatch(s.printed)
	if m == nil {
		t.Fatalf("no mcp= in the log:\n%s", s.printed)
	}
	return m[1]
}

// terminate sends SIGTERM and waits (bounded) for the process to exit,
// answering its exit code and what it logged after it started serving.
func terminate(t *testing.T, s *serving, within time.Duration) (int, string) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(within):
		killGroup(s.cmd)
		<-s.done
		s.cmd.Wait()
		t.Fatalf("no exit %s after SIGTERM:\n%s", within, s.log())
	}
	s.cmd.Wait()
	return s.cmd.ProcessState.ExitCode(), s.log()
}

func (s *serving) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rest.String()
}

// watchReady polls /readyz until nothing answers there, and reports
// whether it answered 503 draining before that.
func watchReady(base string) <-chan bool {
	out := make(chan bool, 1)
	go func() {
		c := &http.Client{Timeout: 5 * time.Second}
		sawDraining := false
		for i := 0; i < 2000; i++ {
			resp, err := c.Get(base + "/readyz")
			if err != nil {
				break
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(b), `"draining"`) {
				sawDraining = true
			}
			time.Sleep(20 * time.Millisecond)
		}
		out <- sawDraining
	}()
	return out
}

// TestSIGTERMUnderLoad: a SQLite server under concurrent write load, with
// long polls, web app event streams and an MCP listen stream open, is sent
// SIGTERM. /readyz turns draining first; every write acknowledged is in
// the data folder after it; every long poll answers with its (empty) page,
// every stream ends cleanly (SSE with a retry hint, listen with its
// result), no caller hangs, and the process exits 0 well before the polls'
// and streams' own ends (which are past --shutdown-timeout: a clean exit
// proves they were ended by the shutdown).
func TestSIGTERMUnderLoad(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, ".", bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--drain-delay", "1s", "--shutdown-timeout", "15s"}, unlimited...)...)
	url := mcpURL(t, s)
	base := strings.TrimSuffix(url, "/mcp")
	out, _ := runCLI(t, bin, "token", "create", "--data", data, "--scopes", auth.ScopeRead+","+auth.ScopeWrite)
	token := strings.TrimSpace(out)
	const writers = 3
	notes := make([]string, writers+1) // the last one stays quiet: its polls wait
	for i := range notes {
		out, _ := runCLI(t, bin, "notes", "create", "--data", data, "--title", fmt.Sprintf("Drain %d", i), "--approve")
		notes[i] = strings.TrimSpace(out)
	}
	quiet := notes[writers]

	// Long polls on the quiet Note: each would wait 25 s, past the timeout.
	type polled struct {
		r   mcpclient.Result
		err error
	}
	const polls = 3
	pollc := make(chan polled, polls)
	for i := 0; i < polls; i++ {
		cs := servertest.Connect(t, url, token, "", nil)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r, err := mcpclient.Call(ctx, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": quiet, "wait_seconds": 25})
			pollc <- polled{r, err}
		}()
	}
	// Event streams: GET /api/events, GET /api/live, MCP subscriptions/listen.
	reqs := map[string]*http.Request{
		"events": sseRequest(t, base+"/api/events?note_id="+notes[0], token),
		"live":   sseRequest(t, base+"/api/live?topic=note:"+notes[1], token),
		"listen": listenRequest(t, base, token, quiet),
	}
	streams := map[string]chan stream{}
	for name, req := range reqs {
		opened, done := make(chan struct{}), make(chan stream, 1)
		streams[name] = done
		go func() { done <- openStream(req, opened) }()
		select {
		case <-opened:
		case <-time.After(30 * time.Second):
			t.Fatalf("the %s stream did not open", name)
		}
	}
	ws := make([]*noteWriter, writers)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newNoteWriter(t, url, token, notes[i], fmt.Sprintf("w%d", i))
		wg.Add(1)
		go func() { defer wg.Done(); ws[i].run(2000) }()
	}
	// Under load: every writer has had writes acknowledged.
	for i := 0; i < 600; i++ {
		n := 0
		for _, w := range ws {
			if w.ackedNow() >= 10 {
				n++
			}
		}
		if n == writers {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	ready := watchReady(base)
	code, logged := terminate(t, s, 40*time.Second)
	wg.Wait()
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, logged)
	}
	if !strings.Contains(logged, "shut down cleanly") {
		t.Errorf("no clean shutdown in the log:\n%s", logged)
	}
	if !<-ready {
		t.Error("/readyz never answered 503 draining before the server stopped listening")
	}
	for _, w := range ws {
		if len(w.failed) > 0 {
			t.Errorf("writer %s: %s", w.prefix, strings.Join(w.failed, "; "))
		}
		t.Logf("writer %s: %d writes acknowledged; stopped on: %s", w.prefix, w.acked, w.ended)
		if w.acked < 10 {
			t.Errorf("writer %s had only %d writes acknowledged before SIGTERM", w.prefix, w.acked)
		}
	}
	for i := 0; i < polls; i++ {
		p := <-pollc
		switch {
		case p.err != nil:
			t.Errorf("long poll: %v", p.err)
		case p.r.IsError:
			t.Errorf("long poll refused: %s", p.r.Text)
		case len(p.r.List("events")) != 0 || p.r.Str("next_cursor") == "":
			t.Errorf("long poll answered %s, want its empty page and a cursor", p.r.Text)
		}
	}
	for name, done := range streams {
		st := <-done
		if st.err != nil || st.status != http.StatusOK {
			t.Errorf("%s stream: status %d, err %v, body ending %q", name, st.status, st.err, tail(st.body))
			continue
		}
		if name == "listen" {
			if !strings.Contains(st.body, `"result"`) || !strings.Contains(st.body, `"id":7`) {
				t.Errorf("listen stream did not end with its result: %q", tail(st.body))
			}
			continue
		}
		end := tail(st.body)
		if !regexp.MustCompile(`\nretry: \d+\n: the server is restarting[^\n]*\n\n$`).MatchString(end) || strings.Contains(end, "event: end") {
			t.Errorf("%s stream did not end with a retry hint (and no end event): %q", name, end)
		}
	}

	// The data folder holds every acknowledged write.
	again := startServe(t, ".", bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	cs := servertest.Connect(t, mcpURL(t, again), token, "", nil)
	for _, w := range ws {
		r := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": w.note, "tab_id": "markdown"})
		if !strings.HasPrefix(r.Str("text"), w.lastAck) {
			t.Errorf("writer %s: %d writes acknowledged, but the Note holds %q", w.prefix, w.acked, lastLines(r.Str("text")))
		}
	}
	cs.Close()
	again.stop()
}

// tail is the end of a stream's body, short enough to quote.
func tail(s string) string {
	if len(s) > 400 {
		return "…" + s[len(s)-400:]
	}
	return s
}

func lastLines(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "\n")
}
