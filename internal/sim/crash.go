package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/problem"
)

// Experiment 11: agents write to a real `foundry serve` process, which is
// killed with SIGKILL mid-run and started again on the same data. Every
// write that was acknowledged must still be there, and every key resent
// after the restart must replay its first result.

func init() {
	registerNumbered(11, Experiment{
		Name:  "crash",
		Title: "kill -9 mid-run: acknowledged writes survive, resent keys replay",
		Run:   runCrash,
	})
}

// crashWrite is one intended write and what became of it.
type crashWrite struct {
	key     string
	kind    string // "tab" | "source"
	args    map[string]any
	id      string // tab_id or source_id from the acknowledgement
	version int64  // the Note version the acknowledged write made
}

func (w crashWrite) tool() string {
	if w.kind == "tab" {
		return "create_note_tab"
	}
	return "add_note_source"
}

func (w crashWrite) idField() string {
	if w.kind == "tab" {
		return "tab_id"
	}
	return "source_id"
}

func runCrash(ctx context.Context, env *Env) (*Report, error) {
	if env.People == nil || !loopbackURL(env.URL) {
		return &Report{
			Table: Table{Header: []string{"experiment", "result"}, Rows: [][]string{{"crash", "skipped"}}},
			Notes: []string{"Skipped: the run drives a remote server (" + env.URL + "); this experiment kills and restarts a local `foundry serve` it starts itself."},
		}, nil
	}
	writers, killAt := 8, 200
	if env.Quick {
		writers, killAt = 3, 12
	}
	tmp, err := os.MkdirTemp("", "foundry-crash-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	buildStart := time.Now()
	bin, how, err := foundryBinary(ctx, tmp)
	if err != nil {
		return nil, err
	}
	progress(env, "crash: %s in %s", how, time.Since(buildStart).Round(time.Millisecond))
	data := filepath.Join(tmp, "data")
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	srv, err := startServe(ctx, bin, data, addr, filepath.Join(tmp, "serve-1.log"), true)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	token, err := createToken(ctx, bin, data)
	if err != nil {
		return nil, err
	}
	cs, err := connectBearer(ctx, "http://"+addr+"/mcp", token)
	if err != nil {
		return nil, err
	}
	noteID, version, err := welcomeNote(ctx, cs)
	if err != nil {
		return nil, err
	}
	progress(env, "crash: serve pid %d on %s, Note %s at version %d; %d writers, kill -9 after %d acknowledged writes", srv.cmd.Process.Pid, addr, noteID, version, writers, killAt)

	// Writers: tabs and sources with unique keys, CAS on the latest version
	// seen; a conflict retries the same intent (nothing was recorded under
	// its key) with the current version.
	tag := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	var latest atomic.Int64
	latest.Store(version)
	var mu sync.Mutex
	var acked, inFlight []crashWrite
	var ackN atomic.Int64
	var killed atomic.Bool
	var wg sync.WaitGroup
	var writeErr error
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				cw := crashWrite{key: fmt.Sprintf("crash-%s-w%d-%04d", tag, w, j), kind: "tab"}
				// One tab in four writes: a Note holds at most 100 tabs, and
				// 200 acknowledgements plus those in flight must fit in one.
				if j%4 != 0 {
					cw.kind = "source"
					cw.args = map[string]any{"note_id": noteID, "idempotency_key": cw.key, "title": fmt.Sprintf("Crash source %d-%d", w, j),
						"url": fmt.Sprintf("https://example.org/crash/%s/%d/%d", tag, w, j)}
				} else {
					cw.args = map[string]any{"note_id": noteID, "idempotency_key": cw.key, "tab_type": "sheet", "label": fmt.Sprintf("crash %d-%d", w, j)}
				}
				for attempt := 0; ; attempt++ {
					cw.args["expected_version"] = latest.Load()
					cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					res, err := mcpclient.Call(cctx, cs, cw.tool(), cw.args)
					cancel()
					if err != nil {
						mu.Lock()
						if killed.Load() {
							inFlight = append(inFlight, cw) // may or may not have committed
						} else if writeErr == nil {
							writeErr = fmt.Errorf("%s before the kill: %w", cw.tool(), err)
						}
						mu.Unlock()
						return
					}
					if res.IsError && res.Str("error") == problem.Conflict && attempt < 200 {
						bump(&latest, res.Int("current_version"))
						continue
					}
					if res.IsError {
						mu.Lock()
						if writeErr == nil {
							writeErr = fmt.Errorf("%s refused: %s", cw.tool(), res.Text)
						}
						mu.Unlock()
						return
					}
					bump(&latest, res.Int("version"))
					cw.id, cw.version = res.Str(cw.idField()), res.Int("version")
					mu.Lock()
					acked = append(acked, cw)
					mu.Unlock()
					ackN.Add(1)
					break
				}
				if killed.Load() {
					return
				}
			}
		}()
	}
	for ackN.Load() < int64(killAt) {
		mu.Lock()
		failed := writeErr
		mu.Unlock()
		if failed != nil {
			killed.Store(true)
			srv.kill()
			wg.Wait()
			return nil, failed
		}
		time.Sleep(time.Millisecond)
	}
	killed.Store(true)
	killTime := time.Now()
	if err := srv.kill(); err != nil {
		return nil, err
	}
	wg.Wait()
	cs.Close()
	if writeErr != nil {
		return nil, writeErr
	}
	ackedAtKill := len(acked)
	progress(env, "crash: killed pid %d (SIGKILL) with %d writes acknowledged and %d in flight", srv.cmd.Process.Pid, ackedAtKill, len(inFlight))

	srv2, err := startServe(ctx, bin, data, addr, filepath.Join(tmp, "serve-2.log"), false)
	if err != nil {
		return nil, fmt.Errorf("restart after kill -9: %w", err)
	}
	defer srv2.stop()
	recovery := time.Since(killTime)
	cs2, err := connectBearer(ctx, "http://"+addr+"/mcp", token)
	if err != nil {
		return nil, err
	}
	defer cs2.Close()

	tabs, versionAfter, err := noteTabIDs(ctx, cs2, noteID)
	if err != nil {
		return nil, err
	}
	sources, err := noteSourceIDs(ctx, cs2, noteID)
	if err != nil {
		return nil, err
	}
	var present, missing, nTabs, nSources int
	var missingIDs []string
	for _, a := range acked {
		ok := tabs[a.id]
		if a.kind == "tab" {
			nTabs++
		} else {
			nSources++
			ok = sources[a.id]
		}
		if ok {
			present++
		} else {
			missing++
			missingIDs = append(missingIDs, a.id)
		}
	}
	// Resend every acknowledged key with its acknowledged arguments, as an
	// agent whose response was lost in the crash would.
	var replayedSame, replayBad int
	var badExample string
	for _, a := range acked {
		res, err := mcpclient.Call(ctx, cs2, a.tool(), a.args)
		if err != nil {
			return nil, fmt.Errorf("resend %s: %w", a.key, err)
		}
		if !res.IsError && res.Bool("replayed") && res.Str(a.idField()) == a.id {
			replayedSame++
			continue
		}
		replayBad++
		if badExample == "" {
			badExample = fmt.Sprintf("%s → %s", a.key, res.Text)
		}
	}
	// In-flight writes: each either committed before the kill (its key
	// replays) or did not (a resend with the old version is a conflict).
	var flightCommitted, flightNot, flightOther int
	for _, f := range inFlight {
		res, err := mcpclient.Call(ctx, cs2, f.tool(), f.args)
		switch {
		case err != nil:
			return nil, fmt.Errorf("resend in-flight %s: %w", f.key, err)
		case !res.IsError && res.Bool("replayed"):
			flightCommitted++
		case res.IsError && res.Str("error") == problem.Conflict:
			flightNot++
		default:
			flightOther++
		}
	}
	maxAcked := int64(0)
	for _, a := range acked {
		maxAcked = max(maxAcked, a.version)
	}

	rep := &Report{
		Table: Table{Header: []string{"writers", "acknowledged before kill -9", "tabs", "sources", "in flight at the kill", "present after restart", "lost",
			"resent keys replayed (same ID)", "in flight: had committed / had not", "restart", "seed"}},
		CSV: [][]string{{"idempotency_key", "kind", "id", "acknowledged", "present_after_restart", "resend_replayed_same_id"}},
	}
	rep.Table.Rows = [][]string{{itoa(writers), itoa(ackedAtKill), itoa(nTabs), itoa(nSources), itoa(len(inFlight)), fmt.Sprintf("%d/%d", present, len(acked)),
		itoa(missing), fmt.Sprintf("%d/%d", replayedSame, len(acked)), fmt.Sprintf("%d / %d", flightCommitted, flightNot),
		recovery.Round(time.Millisecond).String(), "— (not measured by the seeds)"}}
	for _, a := range acked {
		ok := tabs[a.id] || sources[a.id]
		rep.CSV = append(rep.CSV, []string{a.key, a.kind, a.id, "true", strconv.FormatBool(ok), "true"})
	}
	for _, f := range inFlight {
		rep.CSV = append(rep.CSV, []string{f.key, f.kind, "", "false", "", ""})
	}
	lostGot := fmt.Sprintf("%d of %d acknowledged writes present after kill -9 and restart (Note at version %d, highest acknowledged %d)", present, len(acked), versionAfter, maxAcked)
	if missing > 0 {
		lostGot += "; missing: " + strings.Join(missingIDs[:min(5, len(missingIDs))], ", ")
	}
	replayGot := fmt.Sprintf("%d of %d resent keys replayed their first result", replayedSame, len(acked))
	if badExample != "" {
		replayGot += "; e.g. " + badExample
	}
	rep.Invariants = []Invariant{
		{Name: "nothing acknowledged is lost in a crash", Held: missing == 0 && len(acked) > 0 && versionAfter >= maxAcked, Got: lostGot},
		{Name: "every key resent after the restart replays its first result", Held: replayBad == 0 && len(acked) > 0, Got: replayGot},
	}
	rep.Notes = []string{
		fmt.Sprintf("A child `foundry serve --demo` (SQLite, --sync full) on %s took create_note_tab and add_note_source calls from %d concurrent writers on the Note \"Welcome\"; after %d acknowledgements it was killed with SIGKILL (pid %d only) and started again on the same data in %s.",
			addr, writers, killAt, srv.cmd.Process.Pid, recovery.Round(time.Millisecond)),
		fmt.Sprintf("%d writes were in flight at the kill: %d had committed (their key replayed after the restart) and %d had not (a resend with the old version answered version_conflict)%s.",
			len(inFlight), flightCommitted, flightNot, otherNote(flightOther)),
		"Binary: " + how + ".",
	}
	return rep, nil
}

func otherNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d applied fresh", n)
}

func bump(v *atomic.Int64, seen int64) {
	for {
		cur := v.Load()
		if seen <= cur || v.CompareAndSwap(cur, seen) {
			return
		}
	}
}

// loopbackURL reports whether u names this machine.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// foundryBinary builds cmd/foundry from the module this code belongs to,
// or, without a source tree, uses the running binary when it is foundry.
func foundryBinary(ctx context.Context, dir string) (path, how string, err error) {
	out := filepath.Join(dir, "foundry")
	if gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output(); err == nil {
		mod := strings.TrimSpace(string(gomod))
		if b, err := os.ReadFile(mod); err == nil && mod != os.DevNull && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module foundry")) {
			root := filepath.Dir(mod)
			cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/foundry")
			cmd.Dir = root
			if b, err := cmd.CombinedOutput(); err != nil {
				return "", "", fmt.Errorf("go build ./cmd/foundry in %s: %v\n%s", root, err, b)
			}
			return out, "built with go build ./cmd/foundry from this source tree", nil
		}
	}
	if self, err := os.Executable(); err == nil && strings.HasPrefix(filepath.Base(self), "foundry") && !strings.HasSuffix(self, ".test") {
		return self, "the running foundry binary " + self, nil
	}
	return "", "", errors.New("crash: no foundry source tree (go env GOMOD) and the running program is not foundry; run from the module or with the foundry binary")
}

// freeAddr picks a free loopback port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// childEnv is this process's environment without Foundry's own settings,
// so the child uses exactly the flags given (SQLite in --data).
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOUNDRY_") {
			out = append(out, kv)
		}
	}
	return out
}

// serveProc is a `foundry serve` child this experiment started.
type serveProc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	once sync.Once
}

func startServe(ctx context.Context, bin, data, addr, logPath string, demo bool) (*serveProc, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The writers go as fast as the server answers, past the per-token
	// rate limit a deployment has by default: what is measured here is
	// what survives a kill, so the limits are off for this child.
	args := []string{"serve", "--data", data, "--addr", addr, "--log-level", "warn", "--rate-per-token", "0", "--rate-per-address", "0"}
	if demo {
		args = append(args, "--demo")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	p := &serveProc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); lf.Close(); close(p.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("foundry serve exited at start: %s", tail(logPath))
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.kill()
			return nil, fmt.Errorf("foundry serve on %s not healthy within 60 s: %s", addr, tail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL to this child (and only it) and waits for it to go.
func (p *serveProc) kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill -9 %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return nil
}

// stop asks the child to shut down, and kills it if it does not.
func (p *serveProc) stop() {
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.kill()
		}
	})
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// createToken runs `foundry token create` and returns the secret, the last
// line of its standard output.
func createToken(ctx context.Context, bin, data string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "token", "create", "--data", data, "--scopes", "osfoundry:read,osfoundry:write", "--name", "sim-crash")
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("foundry token create: %v: %s", err, stderr.String())
	}
	var last string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	if last == "" {
		return "", fmt.Errorf("foundry token create printed no token: %s", stderr.String())
	}
	return last, nil
}

// connectBearer connects the go-sdk client to a Foundry /mcp URL.
func connectBearer(ctx context.Context, endpoint, token string) (*mcp.ClientSession, error) {
	cs, err := mcpclient.Dial(ctx, "foundry-sim-crash", endpoint, token, "", nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return cs, nil
}

// welcomeNote finds the demo Note "Welcome" and its version.
func welcomeNote(ctx context.Context, cs *mcp.ClientSession) (string, int64, error) {
	res, err := mcpclient.Call(ctx, cs, "list_notes", map[string]any{"query": "Welcome", "limit": 50})
	if err != nil || res.IsError {
		return "", 0, fmt.Errorf("list_notes: %v %s", err, res.Text)
	}
	for _, n := range res.List("notes") {
		m, _ := n.(map[string]any)
		if m["title"] == "Welcome" {
			id, _ := m["note_id"].(string)
			v, _ := m["version"].(float64)
			return id, int64(v), nil
		}
	}
	return "", 0, errors.New("list_notes: no Note \"Welcome\" (serve --demo makes it on first start)")
}

// noteTabIDs lists a Note's tab IDs and its version.
func noteTabIDs(ctx context.Context, cs *mcp.ClientSession, noteID string) (map[string]bool, int64, error) {
	tabs, version, err := listTabs(ctx, cs, noteID)
	out := map[string]bool{}
	for _, t := range tabs {
		out[t.ID] = true
	}
	return out, version, err
}

// noteSourceIDs pages through a Note's sources.
func noteSourceIDs(ctx context.Context, cs *mcp.ClientSession, noteID string) (map[string]bool, error) {
	out := map[string]bool{}
	err := eachItem(ctx, cs, "list_note_attachments", map[string]any{"note_id": noteID, "kind": "sources"}, "items", func(m map[string]any) {
		id, _ := m["source_id"].(string)
		out[id] = true
	})
	return out, err
}
