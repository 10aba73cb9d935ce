//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/server/servertest"
	"foundry/internal/store/postgres/pgtest"
)

// balancer is the smallest load balancer a rolling restart needs, as an
// operator's would be set up: it health-checks every node's /readyz often
// and sends each call to a ready node, round robin; a call that gets no
// answer at all from a node (the connection refused or closed before any
// answer) goes to another ready node. That is safe here twice over: a
// Foundry that shuts down answers every call it accepted, so a call with
// no answer never ran; and every write carries its idempotency key, so
// even a resent one would be replayed, not done twice.
type balancer struct {
	nodes []string // base URLs
	ready []atomic.Bool
	next  atomic.Uint64
	rt    *http.Transport
	// retried counts calls sent again to another node.
	retried atomic.Int64
}

func newBalancer(t *testing.T, nodes ...string) (b *balancer, url string) {
	t.Helper()
	b = &balancer{nodes: nodes, ready: make([]atomic.Bool, len(nodes)), rt: &http.Transport{MaxIdleConnsPerHost: 16}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b.check(ctx) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		hs.Close()
		b.rt.CloseIdleConnections()
	})
	return b, "http://" + ln.Addr().String()
}

// check polls every node's /readyz every 100 ms (the interval the nodes'
// --drain-delay must be above).
func (b *balancer) check(ctx context.Context) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for i, n := range b.nodes {
			resp, err := c.Get(n + "/readyz")
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ready[i].Store(ok)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (b *balancer) allReady() bool {
	for i := range b.ready {
		if !b.ready[i].Load() {
			return false
		}
	}
	return true
}

// pick is a ready node other than skip (-1: any), or -1 when none is.
func (b *balancer) pick(skip int) int {
	n := len(b.nodes)
	start := int(b.next.Add(1))
	for k := 0; k < n; k++ {
		i := (start + k) % n
		if i != skip && b.ready[i].Load() {
			return i
		}
	}
	return -1
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, "read the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	last, tried := -1, 0
	// Bounded: at most 50 tries over about 5 s.
	for attempt := 0; attempt < 50; attempt++ {
		i := b.pick(last)
		if i < 0 {
			i = b.pick(-1)
		}
		if i < 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, b.nodes[i]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := b.rt.RoundTrip(out)
		if err != nil {
			// No answer from this node: it is going away. Try another.
			b.ready[i].Store(false)
			last = i
			if tried++; tried > 1 {
				time.Sleep(100 * time.Millisecond)
			}
			b.retried.Add(1)
			continue
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		rc := http.NewResponseController(w)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				rc.Flush()
			}
			if err != nil {
				return
			}
		}
	}
	http.Error(w, "no node answered", http.StatusBadGateway)
}

// TestRollingRestartPostgres: two nodes on one PostgreSQL database behind
// a balancer that follows /readyz are restarted one after the other
// (SIGTERM, exit 0, start again on the same address) under a bounded load
// of writes and long polls through the balancer: not one call fails, and
// every acknowledged write is there at the end.
func TestRollingRestartPostgres(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	bin := foundryBin(t)
	addrs := []string{freeAddr(t), freeAddr(t)}
	start := func(i int) *serving {
		return startServe(t, ".", bin, append([]string{"serve", "--database", u, "--addr", addrs[i], "--drain-delay", "1s", "--shutdown-timeout", "20s"}, unlimited...)...)
	}
	nodes := []*serving{start(0), start(1)}
	out, _ := runCLI(t, bin, "token", "create", "--database", u, "--scopes", auth.ScopeRead+","+auth.ScopeWrite)
	token := strings.TrimSpace(out)
	const writers = 3
	notes := make([]string, writers)
	for i := range notes {
		out, _ := runCLI(t, bin, "notes", "create", "--database", u, "--title", fmt.Sprintf("Rolling %d", i), "--approve")
		notes[i] = strings.TrimSpace(out)
	}
	lb, lbURL := newBalancer(t, "http://"+addrs[0], "http://"+addrs[1])
	waitReady := func(what string) {
		t.Helper()
		for i := 0; i < 300 && !lb.allReady(); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if !lb.allReady() {
			t.Fatalf("the balancer does not see both nodes ready %s", what)
		}
	}
	waitReady("at the start")

	stop := make(chan struct{})
	ws := make([]*noteWriter, writers)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newNoteWriter(t, lbURL+"/mcp", token, notes[i], fmt.Sprintf("r%d", i))
		ws[i].until = stop
		wg.Add(1)
		go func() { defer wg.Done(); ws[i].run(5000) }()
	}
	// A long poller follows the first Note through the balancer.
	var polls, pollFailures atomic.Int64
	var pollErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		cs := servertest.Connect(t, lbURL+"/mcp", token, "", nil)
		cursor := ""
		for i := 0; i < 5000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			r, err := mcpclient.Call(ctx, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": notes[0], "cursor": cursor, "wait_seconds": 5})
			cancel()
			if err != nil || r.IsError {
				pollFailures.Add(1)
				pollErr.Store(fmt.Sprint(err, r.Text))
				return
			}
			polls.Add(1)
			cursor = r.Str("next_cursor")
		}
	}()
	progress := func(n int) {
		t.Helper()
		want := make([]int, writers)
		for i, w := range ws {
			want[i] = w.ackedNow() + n
		}
		for k := 0; k < 600; k++ {
			done := true
			for i, w := range ws {
				done = done && w.ackedNow() >= want[i]
			}
			if done {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the writers made no progress through the balancer")
	}

	// A page follows the first Note's writes through the balancer.
	follower := &sseFollower{url: lbURL + "/api/events?note_id=" + notes[0], token: token, versions: map[int64]bool{}}
	followCtx, stopFollowing := context.WithCancel(context.Background())
	defer stopFollowing()
	followed := make(chan struct{})
	go func() { defer close(followed); follower.run(followCtx) }()

	progress(10)
	for i := range nodes {
		code, logged := terminate(t, nodes[i], 40*time.Second)
		if code != 0 || !strings.Contains(logged, "shut down cleanly") {
			t.Errorf("node %d: exit code %d after SIGTERM:\n%s", i, code, logged)
		}
		progress(10) // the other node carries the load alone
		nodes[i] = start(i)
		waitReady(fmt.Sprintf("after node %d restarted", i))
		progress(10)
	}
	close(stop)
	wg.Wait()
	// The page sees every write of the first Note, the last one included.
	for k := 0; k < 200 && follower.seen() < ws[0].version; k++ {
		time.Sleep(50 * time.Millisecond)
	}
	stopFollowing()
	<-followed
	if len(follower.failures) > 0 {
		t.Errorf("event stream through the balancer: %s", strings.Join(follower.failures, "; "))
	}
	if m := follower.missing(ws[0].version); len(m) > 0 {
		t.Errorf("event stream through the balancer: versions %v of %s never arrived (newest seen %d)", m, notes[0], follower.seen())
	}
	// Its node was restarted once at least (each is): it reconnected.
	if follower.streams < 2 {
		t.Errorf("the event stream was opened %d times, want a reconnect after its node restarted", follower.streams)
	}

	for _, w := range ws {
		if len(w.failed) > 0 {
			t.Errorf("writer %s: %s", w.prefix, strings.Join(w.failed, "; "))
		}
	}
	if pollFailures.Load() > 0 {
		t.Errorf("long poll failed: %v", pollErr.Load())
	}
	cs := servertest.Connect(t, lbURL+"/mcp", token, "", nil)
	total := 0
	for _, w := range ws {
		total += w.acked
		r := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": w.note, "tab_id": "markdown"})
		if !strings.HasPrefix(r.Str("text"), w.lastAck) {
			t.Errorf("writer %s: %d writes acknowledged, but the Note holds %q", w.prefix, w.acked, lastLines(r.Str("text")))
		}
	}
	t.Logf("%d writes, %d long polls and %d event streams through two rolling restarts; %d calls resent to the other node after no answer", total, polls.Load(), follower.streams, lb.retried.Load())
	for _, n := range nodes {
		if code, logged := terminate(t, n, 40*time.Second); code != 0 {
			t.Errorf("final stop: exit code %d:\n%s", code, logged)
		}
	}
}

// sseFollower follows a Note's GET /api/events through the balancer as a
// browser does: when a stream ends it waits the last retry hint and
// reconnects with Last-Event-ID. It records the version of every write
// event, to find none missing.
type sseFollower struct {
	url, token string

	mu       sync.Mutex
	versions map[int64]bool
	newest   int64
	streams  int      // streams opened
	failures []string // a reconnect refused, a stream cut without its hint
}

func (f *sseFollower) seen() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.newest
}

func (f *sseFollower) fail(format string, a ...any) {
	f.mu.Lock()
	f.failures = append(f.failures, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

func (f *sseFollower) run(ctx context.Context) {
	last, retry := "", 3000
	for i := 0; i < 200 && ctx.Err() == nil; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
		req.Header.Set("Authorization", "Bearer "+f.token)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if ctx.Err() != nil {
			return
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			f.fail("reconnect %d: %v %v", i, err, resp)
			if resp != nil {
				resp.Body.Close()
			}
			return
		}
		f.mu.Lock()
		f.streams++
		f.mu.Unlock()
		hinted := false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "retry: "):
				fmt.Sscanf(line, "retry: %d", &retry)
			case strings.HasPrefix(line, ": the server is restarting"):
				hinted = true
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				var ev struct {
					Version int64 `json:"version"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev) == nil && ev.Version > 0 && id != "" {
					last = id
					f.mu.Lock()
					f.versions[ev.Version] = true
					f.newest = max(f.newest, ev.Version)
					f.mu.Unlock()
				}
				id = ""
			}
		}
		resp.Body.Close()
		if ctx.Err() != nil {
			return
		}
		if !hinted {
			f.fail("stream %d ended without the restart hint: %v", i, sc.Err())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(retry) * time.Millisecond):
		}
	}
}

// missing lists the versions from the first seen to upTo that no event
// carried.
func (f *sseFollower) missing(upTo int64) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := upTo
	for v := range f.versions {
		first = min(first, v)
	}
	var out []int64
	for v := first; v <= upTo; v++ {
		if !f.versions[v] {
			out = append(out, v)
		}
	}
	return out
}
