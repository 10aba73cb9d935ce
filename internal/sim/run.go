package sim

// The runner: a registry the experiment files add themselves to, an
// in-process Foundry server (or a remote one), and the report: Markdown
// tables on out, CSV and SVG files in the output folder, and the invariants.
//
// Helpers the experiment files share (defined in this package's framework
// files run.go, inject.go, mcpcall.go, report.go, people.go):
//
//   registerNumbered(n, e)  add an experiment with its number in the issue (1–12), from init
//   seedOr, seedsFrom       the run's seed, or the seed's published seeds
//   simNote, simRoom        a fresh Note / Room for an experiment
//   newMeter, progress      progress lines on Env.Progress
//   parallel                share items among workers (e.g. one agent each)
//   newFaultInjector        an http.RoundTripper that loses answers after commit
//   dialAgent               an agent's MCP session, through an injector or not
//   mustTool, eachItem      call a tool that must answer, page through a list (mcpclient.Call)
//   eachItem                page through a list tool
//   itoa, ftoa, commas, pct table cells; barChartSVG, a small bar chart by hand
//   Person                  the people's side over *service.Service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/service"
)

var (
	registryMu sync.Mutex
	registry   []registered
)

type registered struct {
	n int // the experiment's number in the issue; 0 = unnumbered (after the numbered ones)
	e Experiment
}

// registerNumbered adds an experiment with its number in the issue, which
// orders the report and names its files (e.g. 03-source-keys.csv).
func registerNumbered(n int, e Experiment) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.e.Name == e.Name {
			panic("sim: experiment " + e.Name + " registered twice")
		}
	}
	registry = append(registry, registered{n, e})
}

// knownOrder numbers experiments that register without a number, by the
// names the experiments 8–11 are likely to use.
var knownOrder = map[string]int{
	"proposals": 8, "waiting": 9, "polling": 9, "long-poll": 9, "linearizability": 10, "crash": 11,
}

// Experiments lists the registered experiments in report order, with their
// numbers.
func Experiments() []NumberedExperiment {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]NumberedExperiment, 0, len(registry))
	for _, r := range registry {
		n := r.n
		if n == 0 {
			n = knownOrder[r.e.Name]
		}
		out = append(out, NumberedExperiment{N: n, Experiment: r.e})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].N, out[j].N
		if a == 0 {
			a = 1 << 20
		}
		if b == 0 {
			b = 1 << 20
		}
		if a != b {
			return a < b
		}
		return out[i].Name < out[j].Name
	})
	for i := range out {
		if out[i].N == 0 {
			out[i].N = 100 + i
		}
	}
	return out
}

// NumberedExperiment is an experiment with its place in the report.
type NumberedExperiment struct {
	N int
	Experiment
}

// Config is one run of `foundry sim`.
type Config struct {
	// Seed: 0 runs every experiment with the seeds the articles published
	// (7 for tab handles, 1–3, 1–5, …); any other value replaces them.
	Seed  int64
	Quick bool
	// OutDir receives one CSV per experiment, SVG charts and report.md;
	// "" writes no files.
	OutDir string
	// URL and Token drive a running server (its /mcp URL) instead of an
	// in-process one; people's acts are then unavailable. NoteID and RoomID
	// name what to work on there (default: the first approved Note / Room).
	URL, Token     string
	NoteID, RoomID string
	// Database is a postgres:// URL for the in-process server; "" opens
	// SQLite in DataDir (default: a temporary folder, removed afterwards).
	Database string
	DataDir  string
	// Sync is SQLite's synchronous mode for the in-process server
	// (default "normal": the simulations measure behaviour, not fsyncs).
	Sync string
	// Progress receives progress lines (nil: none).
	Progress io.Writer
	// NewRoom makes a cloud Room for Env.Fresh; nil uses Service.CreateRoom.
	NewRoom func(ctx context.Context, svc *service.Service, o service.Owner) (string, error)
}

// NewRoomHook, when set (e.g. by an experiment file's init), is used when
// Config.NewRoom is nil.
var NewRoomHook func(ctx context.Context, svc *service.Service, o service.Owner) (string, error)

// Select resolves command-line names ("tab-handles", "3", or none for all).
func Select(names []string) ([]NumberedExperiment, error) {
	all := Experiments()
	if len(names) == 0 {
		return all, nil
	}
	var out []NumberedExperiment
	for _, name := range names {
		found := false
		for _, e := range all {
			if e.Name == name || strconv.Itoa(e.N) == name {
				if !slices.ContainsFunc(out, func(x NumberedExperiment) bool { return x.Name == e.Name }) {
					out = append(out, e)
				}
				found = true
			}
		}
		if !found {
			var list []string
			for _, e := range all {
				list = append(list, fmt.Sprintf("%d %s", e.N, e.Name))
			}
			return nil, fmt.Errorf("no experiment %q; choose from: %s", name, strings.Join(list, ", "))
		}
	}
	return out, nil
}

// Run runs the named experiments (all when names is empty) and writes the
// report to out. The last line is "N invariants held, M failed". An
// experiment that fails to run counts as one failed invariant; err is only
// for a run that could not start.
func Run(ctx context.Context, names []string, cfg Config, out io.Writer) (held, failed int, err error) {
	exps, err := Select(names)
	if err != nil {
		return 0, 0, err
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return 0, 0, err
		}
	}
	var report strings.Builder
	w := io.MultiWriter(out, &report)

	tgt, err := startTarget(ctx, cfg)
	if err != nil {
		return 0, 0, err
	}
	defer tgt.close()

	mode := "quick"
	if !cfg.Quick {
		mode = "full size"
	}
	seed := "the published seeds"
	if cfg.Seed != 0 {
		seed = fmt.Sprintf("seed %d", cfg.Seed)
	}
	fmt.Fprintf(w, "# Foundry simulations\n\n%s, %s, against %s; %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), mode, tgt.describe, seed)
	fmt.Fprintf(w, "Each experiment says which figures are **measured** (counted from what the server answered over MCP, or read back from it) and which are **modelled** "+
		"(an in-memory model or a virtual clock, some calibrated to a seed, as noted there); the seeds' published figures stand beside them.\n\n")

	start := time.Now()
	for _, e := range exps {
		env, err := tgt.env(ctx, cfg)
		if err != nil {
			return held, failed, fmt.Errorf("%s: %w", e.Name, err)
		}
		if e.Seed != "" {
			fmt.Fprintf(w, "## %d. %s (seed %s)\n\n", e.N, e.Title, e.Seed)
		} else {
			fmt.Fprintf(w, "## %d. %s\n\n", e.N, e.Title)
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "sim: %d. %s …\n", e.N, e.Name)
		}
		t0 := time.Now()
		rep, err := runOne(ctx, e.Experiment, env)
		took := time.Since(t0)
		if err != nil {
			failed++
			fmt.Fprintf(w, "**The experiment failed to run:** %v\n\n", err)
			fmt.Fprintf(w, "- ✗ %s ran to completion — %v\n\n", e.Name, err)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "sim: %d. %s failed after %s: %v\n", e.N, e.Name, took.Round(time.Millisecond), err)
			}
			continue
		}
		writeMarkdownTable(w, rep.Table)
		fmt.Fprintln(w)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "%s\n\n", n)
		}
		base := fmt.Sprintf("%02d-%s", e.N, e.Name)
		var files []string
		if cfg.OutDir != "" {
			if len(rep.CSV) > 0 {
				if err := writeCSV(filepath.Join(cfg.OutDir, base+".csv"), rep.CSV); err != nil {
					return held, failed, err
				}
				files = append(files, base+".csv")
			}
			if len(rep.SVG) > 0 {
				if err := os.WriteFile(filepath.Join(cfg.OutDir, base+".svg"), rep.SVG, 0o644); err != nil {
					return held, failed, err
				}
				files = append(files, base+".svg")
			}
		}
		if len(rep.Invariants) > 0 {
			fmt.Fprintln(w, "Invariants:")
			fmt.Fprintln(w)
			for _, inv := range rep.Invariants {
				mark := "✓"
				if inv.Held {
					held++
				} else {
					failed++
					mark = "✗ FAILED:"
				}
				fmt.Fprintf(w, "- %s %s — %s\n", mark, inv.Name, inv.Got)
			}
			fmt.Fprintln(w)
		}
		line := fmt.Sprintf("Took %s.", took.Round(10*time.Millisecond))
		if len(files) > 0 {
			line += " Files: " + strings.Join(files, ", ") + "."
		}
		fmt.Fprintf(w, "%s\n\n", line)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "sim: %d. %s done in %s\n", e.N, e.Name, took.Round(10*time.Millisecond))
		}
	}
	fmt.Fprintf(w, "All experiments took %s.\n\n", time.Since(start).Round(100*time.Millisecond))
	fmt.Fprintf(w, "%d invariants held, %d failed\n", held, failed)
	if cfg.OutDir != "" {
		if err := os.WriteFile(filepath.Join(cfg.OutDir, "report.md"), []byte(report.String()), 0o644); err != nil {
			return held, failed, err
		}
	}
	return held, failed, nil
}

// runOne runs an experiment, turning a panic into an error so one broken
// experiment doesn't hide the others' results.
func runOne(ctx context.Context, e Experiment, env *Env) (rep *Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	rep, err = e.Run(ctx, env)
	if err == nil && rep == nil {
		err = errors.New("no report")
	}
	return rep, err
}

// target is the server the experiments drive.
type target struct {
	describe string
	url      string // /mcp URL
	token    string
	noteID   string // remote: the Note to use
	roomID   string
	progress io.Writer

	// in-process only
	srv     *server.Server
	owner   service.Owner
	person  *Person
	newRoom func(ctx context.Context, svc *service.Service, o service.Owner) (string, error)
	closers []func()
}

func (t *target) close() {
	for i := len(t.closers) - 1; i >= 0; i-- {
		t.closers[i]()
	}
}

func startTarget(ctx context.Context, cfg Config) (*target, error) {
	if cfg.URL != "" {
		return remoteTarget(ctx, cfg)
	}
	t := &target{progress: cfg.Progress, newRoom: cfg.NewRoom}
	if t.newRoom == nil {
		t.newRoom = NewRoomHook
	}
	if t.newRoom == nil {
		t.newRoom = func(ctx context.Context, svc *service.Service, o service.Owner) (string, error) {
			r, err := svc.CreateRoom(ctx, service.Operator(o), "Simulation room")
			return r.RoomID, err
		}
	}
	sc := server.Config{Database: cfg.Database, DataDir: cfg.DataDir, Sync: cfg.Sync, Version: "sim",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if sc.Sync == "" {
		sc.Sync = "normal"
	}
	where := "PostgreSQL"
	if sc.Database == "" {
		where = "SQLite"
		if sc.DataDir == "" {
			dir, err := os.MkdirTemp("", "foundry-sim-")
			if err != nil {
				return nil, err
			}
			t.closers = append(t.closers, func() { os.RemoveAll(dir) })
			sc.DataDir = dir
		}
	}
	st, err := server.OpenStore(ctx, sc)
	if err != nil {
		t.close()
		return nil, err
	}
	t.closers = append(t.closers, func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.close()
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	sc.PublicURL = base
	t.srv = server.New(st, sc)
	hs := &http.Server{Handler: t.srv.Handler, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.closers = append(t.closers, func() { hs.Close() }) // every experiment is done: no request is left to finish
	t.owner, _, err = t.srv.Service.Bootstrap(ctx, "Simulations", "sim@localhost")
	if err != nil {
		t.close()
		return nil, fmt.Errorf("workspace: %w", err)
	}
	t.token, _, err = auth.CreateToken(ctx, st, auth.NewTokenSpec{Workspace: t.owner.Workspace.ID, User: t.owner.User.ID, Name: "sim",
		Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	if err != nil {
		t.close()
		return nil, err
	}
	t.url = base + "/mcp"
	t.person = NewPerson(t.srv.Service, t.owner)
	t.describe = fmt.Sprintf("an in-process Foundry server (%s) at %s, over MCP HTTP", where, t.url)
	return t, nil
}

func remoteTarget(ctx context.Context, cfg Config) (*target, error) {
	url := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(url, "/mcp") {
		url += "/mcp"
	}
	t := &target{url: url, token: cfg.Token, noteID: cfg.NoteID, roomID: cfg.RoomID, progress: cfg.Progress,
		describe: "the Foundry server at " + url + " (no people's side)"}
	if t.noteID != "" && t.roomID != "" {
		return t, nil
	}
	cs, err := t.connect(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	defer cs.Close()
	if t.noteID == "" {
		r, err := mustTool(ctx, cs, "list_notes", map[string]any{"limit": 1})
		if err != nil {
			return nil, err
		}
		notes := r.List("notes")
		if len(notes) == 0 {
			return nil, errors.New("the server has no approved Note this token can reach; approve one or pass --note")
		}
		t.noteID, _ = notes[0].(map[string]any)["note_id"].(string)
	}
	if t.roomID == "" {
		// The Room experiments need one; without any they say so themselves.
		if r, err := mustTool(ctx, cs, "list_rooms", map[string]any{"limit": 1}); err == nil {
			if rooms := r.List("rooms"); len(rooms) > 0 {
				t.roomID, _ = rooms[0].(map[string]any)["room_id"].(string)
			}
		}
	}
	return t, nil
}

// connect opens a go-sdk client session to the target through rt.
func (t *target) connect(ctx context.Context, rt http.RoundTripper) (*mcp.ClientSession, error) {
	return mcpclient.Dial(ctx, "foundry-sim", t.url, t.token, "", rt)
}

// env builds an experiment's Env: in-process, a fresh approved Note (and
// Room) per experiment.
func (t *target) env(ctx context.Context, cfg Config) (*Env, error) {
	e := &Env{URL: t.url, Token: t.token, NoteID: t.noteID, RoomID: t.roomID, Seed: cfg.Seed, Quick: cfg.Quick, Progress: cfg.Progress,
		Client: t.connect}
	if e.Progress == nil {
		e.Progress = io.Discard
	}
	if t.srv == nil {
		return e, nil
	}
	e.People = t.person
	e.Fresh = func(ctx context.Context) (string, string, error) {
		n, err := t.srv.Service.CreateNote(ctx, service.Operator(t.owner), service.CreateNoteArgs{Title: "Simulation", Approved: true})
		noteID := n.NoteID
		if err != nil {
			return "", "", err
		}
		roomID, err := t.newRoom(ctx, t.srv.Service, t.owner)
		if err != nil {
			return "", "", fmt.Errorf("room: %w", err)
		}
		return noteID, roomID, nil
	}
	var err error
	e.NoteID, e.RoomID, err = e.Fresh(ctx)
	return e, err
}

// seedOr is the run's seed, or the published one when the run gave none.
func seedOr(env *Env, published int64) int64 {
	if env.Seed != 0 {
		return env.Seed
	}
	return published
}

// seedsFrom is n seeds starting at the published first one (or the run's).
func seedsFrom(env *Env, first int64, n int) []int64 {
	s := seedOr(env, first)
	out := make([]int64, n)
	for i := range out {
		out[i] = s + int64(i)
	}
	return out
}

// simRoom is a cloud Room for an experiment: a fresh one when the runner can
// make it, else the run's Room. No Room is an error, never a silent pass.
func simRoom(ctx context.Context, env *Env) (string, error) {
	if env.Fresh != nil {
		_, roomID, err := env.Fresh(ctx)
		if err != nil {
			return "", fmt.Errorf("fresh Room: %w", err)
		}
		if roomID != "" {
			return roomID, nil
		}
	}
	if env.RoomID == "" {
		return "", errors.New("this experiment needs a cloud Room: Env.RoomID is empty and Env.Fresh gave none (does the server have Rooms? pass --room ROOM_ID with --url)")
	}
	return env.RoomID, nil
}

// simNote is an approved Note for an experiment: a fresh one when the runner
// can make it, else the run's Note.
func simNote(ctx context.Context, env *Env) (string, error) {
	if env.Fresh != nil {
		noteID, _, err := env.Fresh(ctx)
		if err != nil {
			return "", fmt.Errorf("fresh Note: %w", err)
		}
		if noteID != "" {
			return noteID, nil
		}
	}
	if env.NoteID == "" {
		return "", errors.New("this experiment needs an approved Note: Env.NoteID is empty and Env.Fresh gave none")
	}
	return env.NoteID, nil
}

// progress prints one indented progress line on Env.Progress.
func progress(env *Env, format string, args ...any) {
	if env.Progress != nil {
		fmt.Fprintf(env.Progress, "  "+format+"\n", args...)
	}
}

// meter prints a progress line about every 10% of a long loop; workers
// may share one.
type meter struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
	next  int
	start time.Time
}

func newMeter(env *Env, label string, total int) *meter {
	return &meter{w: env.Progress, label: label, total: total, next: 1, start: time.Now()}
}

// step reports that done of total are done.
func (m *meter) step(done int) {
	if m == nil || m.w == nil || m.total < 20 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.next <= 10 && done*10 >= m.next*m.total {
		fmt.Fprintf(m.w, "  %s: %d%% (%d/%d, %s)\n", m.label, m.next*10, done, m.total, time.Since(m.start).Round(100*time.Millisecond))
		m.next++
	}
}

// parallel shares the items 0…n-1 among workers goroutines. Each runs work
// once, which ranges over the items it takes (until they run out or ctx is
// done); m steps after each item whose loop body finished. A worker stops
// at its first error; the first worker's error (in worker order) is returned.
func parallel(ctx context.Context, n, workers int, m *meter, work func(items iter.Seq[int]) error) error {
	var next, done atomic.Int64
	items := func(yield func(int) bool) {
		for {
			i := int(next.Add(1)) - 1
			if i >= n || ctx.Err() != nil || !yield(i) {
				return
			}
			m.step(int(done.Add(1)))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() { errs[w] = work(items) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
