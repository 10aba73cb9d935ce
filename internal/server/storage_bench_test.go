package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/benchtest"
	"foundry/internal/mcpclient"
	"foundry/internal/note"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// The storage benchmarks: what one write or read costs as the Note it
// touches grows, measured end to end (real HTTP on 127.0.0.1, the go-sdk
// client, Foundry's server and its SQLite store in a fresh data folder).
// Each benchmark measures the small and the big case in the same run,
// interleaved, and reports both and their ratio, so the ratio does not
// depend on how busy the machine was between two runs. docs/benchmarks/
// storage.md lists them with their targets and the command to run them.
//
// Sizes default to the and can be made smaller for a quick run:
//
//	FOUNDRY_BENCH_BIG_CELLS    cells of the big sheet tab (1,000,000: 1000 × 1000)
//	FOUNDRY_BENCH_SMALL_CELLS  cells of the small sheet tab (10,000: 100 × 100)
//	FOUNDRY_BENCH_BIG_TEXT     bytes of the big markdown tab (1 MiB)
//	FOUNDRY_BENCH_SMALL_TEXT   bytes of the small markdown tab (1 KB)
//	FOUNDRY_BENCH_VERSIONS     versions of the Note restored from (10,000)
//	FOUNDRY_BENCH_NOTES        Notes listed by list_notes (10,000)
//	FOUNDRY_BENCH_CALLS        calls per kind and round in BenchmarkMCPCallRatios (400)
//	FOUNDRY_BENCH_PHASE        length of each phase of BenchmarkSmallWritersBesideBigNote (5s)
//	FOUNDRY_BENCH_BUILD_TIMEOUT bound on building one big Note (15m)
//
// Bytes written: the write_bytes counter of /proc/self/io, read before and
// after each call. The server (and its SQLite store) runs in this process,
// so the delta is what the call made the kernel write to storage for this
// process: WAL frames, the checkpoints a commit triggers (SQLite runs them
// inside the committing COMMIT, before the call is answered) and anything
// else the server writes. It is not wchar, which would count the HTTP
// traffic between the client and the server too (both are in this process);
// nor the growth of the WAL file, which SQLite rewrites in place after each
// checkpoint, so its size says little about what a write wrote. Every write
// is fsynced (synchronous=FULL), so pages are clean again before the next
// call and a page written twice is counted twice.
//
// Bytes stored: (page_count − freelist_count) × page_size of the database,
// read through a second connection after a checkpoint, before and after N
// writes: the growth of the live database, with pages freed and reused by
// the rewrite of the current row not counted, whatever the WAL holds.

const (
	blockSide   = note.MaxRangeRows // sheet_set_range / read_sheet_range: at most 100 × 100
	callTimeout = 5 * time.Minute   // one call, however slow the code under test is
)

// envInt is the positive integer in the environment variable name, or def.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envDuration is the duration in the environment variable name, or def.
func envDuration(tb testing.TB, name string, def time.Duration) time.Duration {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		tb.Fatalf("%s=%q: want a positive duration such as 30s", name, v)
	}
	return d
}

// procField reads one numeric field of a /proc/self file (benchtest.ProcField).
func procField(tb testing.TB, file, field string) int64 { return benchtest.ProcField(tb, file, field) }

// bytesWritten is this process's write_bytes so far.
func bytesWritten(tb testing.TB) int64 { return procField(tb, "io", "write_bytes") }

// sizeTransport counts the bytes of every POST body sent and received.
type sizeTransport struct {
	base      *http.Transport
	sent, got atomic.Int64
}

func newSizeTransport() *sizeTransport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 64, 64
	return &sizeTransport{base: t}
}

func (t *sizeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost {
		return t.base.RoundTrip(r)
	}
	if r.ContentLength >= 0 {
		t.sent.Add(r.ContentLength)
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, n: &t.got}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// storageEnv is a Foundry server on its own data folder, one client, and a
// second connection to the folder's database for checkpoints and sizes.
type storageEnv struct {
	*servertest.Env
	dir   string
	token string
	rt    *sizeTransport
	cs    *mcp.ClientSession
	db    *sql.DB
}

// prepare opens a store on dir with synchronous=NORMAL, bootstraps the
// workspace servertest.Start will find, and runs fill against the service:
// a fast way to build many Notes or versions before the measured server
// starts on the same folder (with Foundry's default, synchronous=FULL).
func prepare(b *testing.B, dir string, fill func(svc *service.Service, o service.Owner)) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "Test", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	fill(svc, o)
}

// startStorage starts the server on dir (b.TempDir() when ""), with
// Foundry's default store options, and connects one client.
func startStorage(b *testing.B, dir string) *storageEnv {
	b.Helper()
	if dir == "" {
		dir = b.TempDir()
	}
	st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := servertest.Start(b, servertest.Options{Store: st})
	s := &storageEnv{Env: e, dir: dir, token: e.WriteToken(b), rt: newSizeTransport()}
	s.cs = s.connect(b)
	b.Cleanup(s.rt.base.CloseIdleConnections)
	s.db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	s.db.SetMaxOpenConns(1)
	b.Cleanup(func() { s.db.Close() })
	return s
}

// connect is one more client session through the env's transport.
func (s *storageEnv) connect(b *testing.B) *mcp.ClientSession {
	return servertest.Connect(b, s.URL+"/mcp", s.token, os.Getenv("FOUNDRY_BENCH_PROTOCOL"), s.rt)
}

// storedBytes checkpoints the WAL into the database and returns the bytes
// of its pages in use.
func (s *storageEnv) storedBytes(b testing.TB) int64 {
	b.Helper()
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	var pages, free, size int64
	for q, p := range map[string]*int64{`PRAGMA page_count`: &pages, `PRAGMA freelist_count`: &free, `PRAGMA page_size`: &size} {
		if err := s.db.QueryRow(q).Scan(p); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	return (pages - free) * size
}

// call calls tool on cs and fails b on a protocol error or a refusal.
func call(b testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) mcpclient.Result {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r, err := mcpclient.Call(ctx, cs, tool, args)
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	if r.IsError {
		b.Fatalf("%s: %s", tool, r.Text)
	}
	return r
}

// hasTool reports whether cs's server lists the tool.
func hasTool(b testing.TB, cs *mcp.ClientSession, name string) bool {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range res.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// sheetNote is a Note with one sheet tab of rows × cols cells.
type sheetNote struct {
	name       string
	id, tab    string
	version    int64
	rows, cols int
}

// sheetSide is the side of the square grid of about cells cells.
func sheetSide(cells int) int { return max(1, int(math.Round(math.Sqrt(float64(cells))))) }

// cellValue is the value a benchmark sheet holds at (r, c) when built.
func cellValue(r, c int) any { return float64(r*10_000 + c) }

func block(r0, c0, rows, cols int) [][]any {
	out := make([][]any, rows)
	for i := range out {
		out[i] = make([]any, cols)
		for j := range out[i] {
			out[i][j] = cellValue(r0+i, c0+j)
		}
	}
	return out
}

// buildSheetMCP creates an approved Note and fills a sheet tab of side ×
// side cells over MCP: create_note_tab, then sheet_set_range by 100 × 100
// blocks, logging progress. It fails b if the build takes longer than
// FOUNDRY_BENCH_BUILD_TIMEOUT.
func (s *storageEnv) buildSheetMCP(b *testing.B, name string, cells int) *sheetNote {
	b.Helper()
	side := sheetSide(cells)
	created, err := s.Server.Service.CreateNote(context.Background(), asOwner(s.Env), service.CreateNoteArgs{Title: name, Approved: true})
	if err != nil {
		b.Fatal(err)
	}
	id := created.NoteID
	r := call(b, s.cs, "create_note_tab", map[string]any{"note_id": id, "expected_version": 1,
		"idempotency_key": "bench-tab-" + id, "tab_type": "sheet", "label": name})
	n := &sheetNote{name: name, id: id, tab: r.Str("tab_id"), version: r.Int("version"), rows: side, cols: side}
	budget := envDuration(b, "FOUNDRY_BENCH_BUILD_TIMEOUT", 15*time.Minute)
	t0 := time.Now()
	blocks := ((side + blockSide - 1) / blockSide) * ((side + blockSide - 1) / blockSide)
	done := 0
	for r0 := 0; r0 < side; r0 += blockSide {
		for c0 := 0; c0 < side; c0 += blockSide {
			t1 := time.Now()
			res := call(b, s.cs, "edit_note_tab", map[string]any{"note_id": n.id, "tab_id": n.tab,
				"expected_version": n.version, "idempotency_key": fmt.Sprintf("bench-build-%s-%d-%d", n.id, r0, c0),
				"operation": "sheet_set_range", "start_row": r0, "start_col": c0,
				"values": block(r0, c0, min(blockSide, side-r0), min(blockSide, side-c0))})
			n.version = res.Int("version")
			done++
			if done%10 == 0 || done == blocks {
				b.Logf("%s: %d/%d blocks over MCP after %v (last call %v)", name, done, blocks, time.Since(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
			}
			if time.Since(t0) > budget {
				b.Fatalf("%s: %d/%d blocks took %v, over FOUNDRY_BENCH_BUILD_TIMEOUT=%v", name, done, blocks, time.Since(t0), budget)
			}
		}
	}
	return n
}

// setCell writes one cell of n (a different cell and value for each i).
func (s *storageEnv) setCell(b testing.TB, n *sheetNote, i int) (row, col int) {
	row, col = (i*37)%n.rows, (i*91)%n.cols
	res := call(b, s.cs, "edit_note_tab", map[string]any{"note_id": n.id, "tab_id": n.tab,
		"expected_version": n.version, "idempotency_key": fmt.Sprintf("bench-cell-%s-%d", n.id, n.version),
		"operation": "sheet_set_range", "start_row": row, "start_col": col, "values": [][]any{{fmt.Sprintf("edit %d", i)}}})
	if v := res.Int("version"); v != n.version+1 {
		b.Fatalf("%s: version %d after %d", n.name, v, n.version)
	}
	n.version++
	return row, col
}

// pair holds a measure of the small and the big case.
type pair [2]float64

func reportPair(b *testing.B, p pair, unit, ratio string) {
	b.ReportMetric(p[0], "small-"+unit)
	b.ReportMetric(p[1], "big-"+unit)
	if p[0] > 0 {
		b.ReportMetric(p[1]/p[0], ratio)
	}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// BenchmarkSheetOneCell: a sheet tab of 10,000 cells (100 × 100) and one of
// 1,000,000 cells (1000 × 1000), each in its own Note, both built over MCP
// with sheet_set_range in 100 × 100 blocks. Targets: big ≤ 2× small for
// every ratio, and ≤ 1 KB stored per version.
//
//   - sheet_set_range: a one-cell sheet_set_range on each, alternately
//     (another cell and value each time): ms/op and bytes written/op of
//     each, and big/small. ns/op is one small plus one big call.
//   - read_sheet_range_after_write: one-cell write (not timed), then the
//     first read_sheet_range of the 100 × 100 block holding that cell:
//     ms/op of the read, and big/small.
//   - history_bytes_per_version: b.N one-cell edits on the small Note, then
//     b.N on the big one; the growth of the checkpointed database divided
//     by b.N, for each. It includes each write's idempotency key and event
//     rows, which stay for the retention period. ns/op is one edit of each.
func BenchmarkSheetOneCell(b *testing.B) {
	benchGC(b)
	s := startStorage(b, "")
	small := s.buildSheetMCP(b, "Small sheet", envInt(b, "FOUNDRY_BENCH_SMALL_CELLS", 10_000))
	big := s.buildSheetMCP(b, "Big sheet", envInt(b, "FOUNDRY_BENCH_BIG_CELLS", 1_000_000))
	notes := [2]*sheetNote{small, big}
	b.Logf("sheets: %d × %d and %d × %d cells; database %d bytes", small.rows, small.cols, big.rows, big.cols, s.storedBytes(b))
	i := 0 // edits so far, across sub-benchmark runs: every edit is new

	b.Run("sheet_set_range", func(b *testing.B) {
		var took [2]time.Duration
		var wrote [2]int64
		for range b.N {
			for k, n := range notes {
				w0, t0 := bytesWritten(b), time.Now()
				s.setCell(b, n, i)
				took[k] += time.Since(t0)
				wrote[k] += bytesWritten(b) - w0
			}
			i++
		}
		N := float64(b.N)
		reportPair(b, pair{ms(took[0]) / N, ms(took[1]) / N}, "ms/op", "time-ratio")
		reportPair(b, pair{float64(wrote[0]) / N, float64(wrote[1]) / N}, "written-B/op", "written-ratio")
	})

	b.Run("read_sheet_range_after_write", func(b *testing.B) {
		var took [2]time.Duration
		for range b.N {
			for k, n := range notes {
				row, col := s.setCell(b, n, i)
				r0, c0 := row/blockSide*blockSide, col/blockSide*blockSide
				t0 := time.Now()
				res := call(b, s.cs, "read_sheet_range", map[string]any{"note_id": n.id, "tab_id": n.tab,
					"start_row": r0, "start_col": c0, "rows": min(blockSide, n.rows-r0), "cols": min(blockSide, n.cols-c0)})
				took[k] += time.Since(t0)
				if v := res.Int("version"); v != n.version {
					b.Fatalf("%s: read version %d after writing %d", n.name, v, n.version)
				}
			}
			i++
		}
		N := float64(b.N)
		reportPair(b, pair{ms(took[0]) / N, ms(took[1]) / N}, "ms/op", "time-ratio")
	})

	b.Run("history_bytes_per_version", func(b *testing.B) {
		var per pair
		for k, n := range notes {
			before := s.storedBytes(b)
			for range b.N {
				s.setCell(b, n, i)
				i++
			}
			per[k] = float64(s.storedBytes(b)-before) / float64(b.N)
		}
		reportPair(b, per, "stored-B/version", "stored-ratio")
	})
}

// markdownText is about n bytes of numbered lines (exactly n, padded with
// a last line of dots), and the number of whole lines.
func markdownText(n int) (string, int) {
	var sb strings.Builder
	lines := 0
	for {
		line := fmt.Sprintf("Line %06d: Foundry keeps the change, not the Note; this line fills the text.\n", lines)
		if sb.Len()+len(line) > n {
			break
		}
		sb.WriteString(line)
		lines++
	}
	if pad := n - sb.Len(); pad > 0 {
		sb.WriteString(strings.Repeat(".", pad-1) + "\n")
	}
	return sb.String(), lines
}

// textNote is a Note whose markdown tab is text; line is the line whose
// ninth character (':' or ';') each edit toggles.
type textNote struct {
	name    string
	id      string
	version int64
	text    string
	line    int
}

// BenchmarkMarkdownOneChar: a one-character change in the markdown tab of a
// Note of 1 KB and of one of 1 MiB, alternately, with edit_note_text
// ({old_text, new_text}: a short unique excerpt around the character). If
// the server does not list edit_note_text yet, the sub-benchmark is named
// replace_text_fallback and sends the whole new text with edit_note_tab
// replace_text. Reports request bytes/op, ms/op and bytes written/op of
// each, and big/small. Targets: request ≤ 1 KB; time and bytes written ≤ 2×.
func BenchmarkMarkdownOneChar(b *testing.B) {
	benchGC(b)
	s := startStorage(b, "")
	var notes [2]*textNote
	for k, size := range []int{envInt(b, "FOUNDRY_BENCH_SMALL_TEXT", 1000), envInt(b, "FOUNDRY_BENCH_BIG_TEXT", note.MaxMarkdownBytes)} {
		text, lines := markdownText(size)
		if lines == 0 {
			b.Fatalf("a markdown tab of %d bytes holds no whole line", size)
		}
		n := &textNote{name: fmt.Sprintf("Text of %d bytes", len(text)), text: text, line: lines / 2}
		created, err := s.Server.Service.CreateNote(context.Background(), asOwner(s.Env), service.CreateNoteArgs{Title: n.name, Approved: true})
		if err != nil {
			b.Fatal(err)
		}
		id := created.NoteID
		n.id = id
		// The text is written over MCP, as an agent would.
		n.version = call(b, s.cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": note.TypeMarkdown, "expected_version": 1,
			"idempotency_key": "bench-text-" + id, "operation": "replace_text", "text": text}).Int("version")
		notes[k] = n
	}
	tool := "edit_note_text"
	name := tool
	if !hasTool(b, s.cs, tool) {
		name = "replace_text_fallback"
		b.Logf("the server lists no %s tool: each edit sends the whole text with edit_note_tab replace_text", tool)
	}
	b.Run(name, func(b *testing.B) {
		var took [2]time.Duration
		var wrote, sent [2]int64
		for range b.N {
			for k, n := range notes {
				// "Line 000123: Foundry keeps" ↔ "Line 000123; Foundry keeps"
				start := strings.Index(n.text, fmt.Sprintf("Line %06d", n.line))
				old := n.text[start : start+26]
				repl := []byte(old)
				repl[11] = map[byte]byte{':': ';', ';': ':'}[repl[11]]
				next := n.text[:start] + string(repl) + n.text[start+26:]
				args := map[string]any{"note_id": n.id, "expected_version": n.version,
					"idempotency_key": fmt.Sprintf("bench-char-%s-%d", n.id, n.version)}
				toolName := tool
				if name == tool {
					args["tab_id"] = note.TypeMarkdown
					args["edits"] = []map[string]any{{"old_text": old, "new_text": string(repl)}}
				} else {
					toolName = "edit_note_tab"
					args["tab_id"], args["operation"], args["text"] = note.TypeMarkdown, "replace_text", next
				}
				s0, w0, t0 := s.rt.sent.Load(), bytesWritten(b), time.Now()
				res := call(b, s.cs, toolName, args)
				took[k] += time.Since(t0)
				wrote[k] += bytesWritten(b) - w0
				sent[k] += s.rt.sent.Load() - s0
				if v := res.Int("version"); v != n.version+1 {
					b.Fatalf("%s: version %d after %d", n.name, v, n.version)
				}
				n.version++
				n.text = next
			}
		}
		N := float64(b.N)
		reportPair(b, pair{float64(sent[0]) / N, float64(sent[1]) / N}, "request-B/op", "request-ratio")
		reportPair(b, pair{ms(took[0]) / N, ms(took[1]) / N}, "ms/op", "time-ratio")
		reportPair(b, pair{float64(wrote[0]) / N, float64(wrote[1]) / N}, "written-B/op", "written-ratio")
	})
	// The text each edit left must be the Note's.
	for _, n := range notes {
		r := call(b, s.cs, "read_note_tab", map[string]any{"note_id": n.id, "tab_id": note.TypeMarkdown})
		if r.Str("text") != n.text || r.Int("version") != n.version {
			b.Fatalf("%s: the markdown tab (version %d) is not the text the edits made (version %d)", n.name, r.Int("version"), n.version)
		}
	}
}

// bigSheetDoc fills d with one sheet tab of side × side cells, through the
// same in-memory operation sheet_set_range uses, and returns its tab ID.
func bigSheetDoc(d *note.Doc, side int) (string, error) {
	t, err := note.CreateTab(d, note.TypeSheet, "Data", nil, time.Now())
	if err != nil {
		return "", err
	}
	for r0 := 0; r0 < side; r0 += blockSide {
		for c0 := 0; c0 < side; c0 += blockSide {
			if _, err := note.SheetSetRange(d, t.ID, "", r0, c0, block(r0, c0, min(blockSide, side-r0), min(blockSide, side-c0))); err != nil {
				return "", err
			}
		}
	}
	return t.ID, nil
}

// createBigSheet creates an approved Note with a side × side sheet in one
// person's write (fast: no MCP, no 100 calls).
func createBigSheet(b *testing.B, svc *service.Service, o service.Owner, title string, side int) *sheetNote {
	b.Helper()
	n := &sheetNote{name: title, version: 1, rows: side, cols: side}
	created, err := svc.CreateNoteFrom(context.Background(), service.Operator(o), service.CreateNoteArgs{Title: title, Approved: true}, func(d *note.Doc) error {
		var err error
		n.tab, err = bigSheetDoc(d, side)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	n.id = created.NoteID
	return n
}

// BenchmarkSmallWritersBesideBigNote: 16 clients, each writing its own
// small Note (edit_note_tab replace_text of a short text), for
// FOUNDRY_BENCH_PHASE alone, then for as long again beside one more client
// that writes one cell of the 1,000,000-cell Note after another. Reports
// the small writers' writes/s alone and beside, the big writer's, and
// beside/alone. Target: ≥ 0.8.
func BenchmarkSmallWritersBesideBigNote(b *testing.B) {
	const writers = 16
	benchGC(b)
	dir := b.TempDir()
	side := sheetSide(envInt(b, "FOUNDRY_BENCH_BIG_CELLS", 1_000_000))
	var big *sheetNote
	prepare(b, dir, func(svc *service.Service, o service.Owner) { big = createBigSheet(b, svc, o, "Big sheet", side) })
	s := startStorage(b, dir)
	phase := envDuration(b, "FOUNDRY_BENCH_PHASE", 5*time.Second)

	type small struct {
		cs      *mcp.ClientSession
		id      string
		version int64
	}
	smalls := make([]*small, writers)
	for w := range smalls {
		id, err := s.Server.Service.Demo(context.Background(), s.Owner)
		if err != nil {
			b.Fatal(err)
		}
		smalls[w] = &small{cs: s.connect(b), id: id, version: 1}
	}
	hammer := s.connect(b)

	// run writes until the deadline and returns how many it made.
	run := func(until time.Time, write func() error) (int, error) {
		n := 0
		for time.Now().Before(until) {
			if err := write(); err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	smallWrite := func(sm *small) func() error {
		return func() error {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			r, err := mcpclient.Call(ctx, sm.cs, "edit_note_tab", map[string]any{"note_id": sm.id, "tab_id": note.TypeMarkdown,
				"expected_version": sm.version, "idempotency_key": fmt.Sprintf("bench-small-%s-%d", sm.id, sm.version),
				"operation": "replace_text", "text": fmt.Sprintf("# Small\n\nVersion %d.\n", sm.version+1)})
			if err == nil && r.IsError {
				err = fmt.Errorf("edit_note_tab: %s", r.Text)
			}
			if err == nil {
				sm.version = r.Int("version")
			}
			return err
		}
	}
	i := 0
	bigWrite := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		r, err := mcpclient.Call(ctx, hammer, "edit_note_tab", map[string]any{"note_id": big.id, "tab_id": big.tab,
			"expected_version": big.version, "idempotency_key": fmt.Sprintf("bench-big-%d", big.version),
			"operation": "sheet_set_range", "start_row": (i * 37) % big.rows, "start_col": (i * 91) % big.cols, "values": [][]any{{float64(i)}}})
		i++
		if err == nil && r.IsError {
			err = fmt.Errorf("edit_note_tab on the big Note: %s", r.Text)
		}
		if err == nil {
			big.version = r.Int("version")
		}
		return err
	}
	// phaseRun runs the 16 small writers (and the big one, if beside) for
	// one phase; it answers the small writes made, the big ones, and how long
	// the small writers wrote.
	phaseRun := func(b *testing.B, beside bool) (smallN, bigN int, took time.Duration) {
		until := time.Now().Add(phase)
		var wg sync.WaitGroup
		var total atomic.Int64
		errs := make(chan error, writers+1)
		t0 := time.Now()
		for _, sm := range smalls {
			wg.Go(func() {
				n, err := run(until, smallWrite(sm))
				total.Add(int64(n))
				if err != nil {
					errs <- err
				}
			})
		}
		var bigDone sync.WaitGroup
		if beside {
			bigDone.Go(func() {
				n, err := run(until, bigWrite)
				bigN = n
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		took = time.Since(t0)
		bigDone.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return int(total.Load()), bigN, took
	}

	b.Run("writes", func(b *testing.B) {
		var alone, beside, bigRate float64
		for range b.N {
			n, _, d := phaseRun(b, false)
			alone += float64(n) / d.Seconds() / float64(b.N)
			n, nb, d := phaseRun(b, true)
			beside += float64(n) / d.Seconds() / float64(b.N)
			bigRate += float64(nb) / d.Seconds() / float64(b.N)
		}
		b.ReportMetric(alone, "alone-writes/s")
		b.ReportMetric(beside, "beside-writes/s")
		b.ReportMetric(bigRate, "big-writes/s")
		b.ReportMetric(beside/alone, "beside/alone")
	})
}

// BenchmarkMCPCallRatios: the calls/s of read_note_tab and edit_note_tab
// against a bare go-sdk server's no-op tool, at 1, 4 and 16 clients, in one
// run and at the same GC settings (benchGC). Each round makes
// FOUNDRY_BENCH_CALLS calls of each kind, spread over the clients, in 8
// slices where the kinds take turns: the no-op, read_note_tab (each client its own Note's markdown tab),
// edit_note_tab (replace_text of a short text on the client's own Note).
// Reports calls/s of each and read/noop, edit/noop. Targets: read ≥ 0.9,
// edit ≥ 0.8. BenchmarkMCPCalls measures the same calls per protocol
// revision, with process CPU per call.
func BenchmarkMCPCallRatios(b *testing.B) {
	const maxClients, ratioSlices = 16, 8
	benchGC(b)
	proto := os.Getenv("FOUNDRY_BENCH_PROTOCOL")
	e := servertest.Start(b, servertest.Options{})
	token := e.WriteToken(b)
	foundry := &target{rt: newCountingTransport(maxClients)}
	bareT := &target{rt: newCountingTransport(maxClients)}
	bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	bare.AddTool(&mcp.Tool{Name: "noop", Description: "Does nothing.", InputSchema: json.RawMessage(`{"type":"object"}`)}, noopTool)
	bareURL := bareServer(b, bare)
	notes := make([]string, maxClients)
	versions := make([]int64, maxClients)
	for w := range maxClients {
		id, err := e.Server.Service.Demo(context.Background(), e.Owner)
		if err != nil {
			b.Fatal(err)
		}
		notes[w], versions[w] = id, 1
		foundry.clients = append(foundry.clients, servertest.Connect(b, e.URL+"/mcp", token, proto, foundry.rt))
		bareT.clients = append(bareT.clients, servertest.Connect(b, bareURL, "", proto, bareT.rt))
	}
	b.Cleanup(foundry.rt.base.CloseIdleConnections)
	b.Cleanup(bareT.rt.base.CloseIdleConnections)
	calls := envInt(b, "FOUNDRY_BENCH_CALLS", 400)

	// pool makes n calls over clients goroutines, each with its own
	// timeout, and answers how long they took.
	pool := func(b *testing.B, clients, n int, call func(ctx context.Context, w int) error) time.Duration {
		return benchtest.Spread(b, clients, n, func(w int, _ int64) error {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			return call(ctx, w)
		})
	}
	noop := func(ctx context.Context, w int) error {
		res, err := bareT.clients[w].CallTool(ctx, &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = toolError("noop", res)
		}
		return err
	}
	read := func(ctx context.Context, w int) error {
		res, err := foundry.clients[w].CallTool(ctx, &mcp.CallToolParams{Name: "read_note_tab", Arguments: map[string]any{"note_id": notes[w], "tab_id": note.TypeMarkdown}})
		if err == nil && res.IsError {
			err = toolError("read_note_tab", res)
		}
		return err
	}
	edit := func(ctx context.Context, w int) error {
		r, err := mcpclient.Call(ctx, foundry.clients[w], "edit_note_tab", map[string]any{
			"note_id": notes[w], "tab_id": note.TypeMarkdown, "expected_version": versions[w],
			"idempotency_key": fmt.Sprintf("bench-ratio-%d-%d", w, versions[w]),
			"operation":       "replace_text", "text": fmt.Sprintf("# Bench\n\nVersion %d by client %d.\n", versions[w]+1, w),
		})
		if err == nil && r.IsError {
			err = fmt.Errorf("edit_note_tab: %s", r.Text)
		}
		if err == nil {
			if v := r.Int("version"); v != versions[w]+1 {
				return fmt.Errorf("edit_note_tab: version %d after %d", v, versions[w])
			}
			versions[w]++
		}
		return err
	}
	for _, clients := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			var took [3]time.Duration
			for range b.N {
				// The kinds take turns by slices of a round, so a change in
				// the machine's load falls on all three alike.
				for sl := range ratioSlices {
					part := calls/ratioSlices + min(1, max(0, calls%ratioSlices-sl))
					for k, c := range []func(context.Context, int) error{noop, read, edit} {
						took[k] += pool(b, clients, part, c)
					}
				}
			}
			rate := func(d time.Duration) float64 { return float64(calls*b.N) / d.Seconds() }
			b.ReportMetric(rate(took[0]), "noop-calls/s")
			b.ReportMetric(rate(took[1]), "read-calls/s")
			b.ReportMetric(rate(took[2]), "edit-calls/s")
			b.ReportMetric(rate(took[1])/rate(took[0]), "read/noop")
			b.ReportMetric(rate(took[2])/rate(took[0]), "edit/noop")
		})
	}
}

// BenchmarkListNotesQuery: list_notes at FOUNDRY_BENCH_NOTES approved Notes
// (10,000; one title in 1,000 holds "Zebra"), with the query "zebra" and
// without a query (the first page), alternately. Reports ms/op of each and
// query/no-query. Target: ≤ 2.
func BenchmarkListNotesQuery(b *testing.B) {
	benchGC(b)
	dir := b.TempDir()
	count := envInt(b, "FOUNDRY_BENCH_NOTES", 10_000)
	matches := 0
	for i := range count {
		if i%1000 == 999 {
			matches++
		}
	}
	prepare(b, dir, func(svc *service.Service, o service.Owner) {
		const workers = 16
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= count {
						return
					}
					title := fmt.Sprintf("Note %05d: weekly planning", i)
					if i%1000 == 999 {
						title = fmt.Sprintf("Note %05d: Zebra migration", i)
					}
					if _, err := svc.CreateNoteFrom(context.Background(), service.Operator(o), service.CreateNoteArgs{Title: title, Approved: true}, func(d *note.Doc) error {
						d.Markdown = "# " + title + "\n\nA short Note.\n"
						return nil
					}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	})
	s := startStorage(b, dir)
	b.Run("list_notes", func(b *testing.B) {
		var took [2]time.Duration
		for range b.N {
			for k, args := range []map[string]any{{}, {"query": "zebra"}} {
				t0 := time.Now()
				r := call(b, s.cs, "list_notes", args)
				took[k] += time.Since(t0)
				if k == 1 && len(r.List("notes")) != matches {
					b.Fatalf("list_notes query zebra: %d Notes, want %d", len(r.List("notes")), matches)
				}
			}
		}
		N := float64(b.N)
		b.ReportMetric(ms(took[0])/N, "no-query-ms/op")
		b.ReportMetric(ms(took[1])/N, "query-ms/op")
		b.ReportMetric(float64(took[1])/float64(took[0]), "query/no-query")
	})
}

// BenchmarkRSSThreeBigNotes: three Notes of one 1,000,000-cell sheet tab
// each (built by a person's write, before the measured server starts), read
// fully over MCP with read_sheet_range, 100 × 100 at a time. Reports the
// process's resident memory after the reads (VmRSS), its peak during them
// (VmHWM, reset before the reads where the kernel allows it), and the Go
// heap in use after a collection. The server runs in this process, with
// the client and the benchmark; the build's garbage is collected and
// returned to the system before the reads start. Target: RSS ≤ 300 MB.
func BenchmarkRSSThreeBigNotes(b *testing.B) {
	benchGC(b)
	dir := b.TempDir()
	side := sheetSide(envInt(b, "FOUNDRY_BENCH_BIG_CELLS", 1_000_000))
	var notes []*sheetNote
	prepare(b, dir, func(svc *service.Service, o service.Owner) {
		for k := range 3 {
			notes = append(notes, createBigSheet(b, svc, o, fmt.Sprintf("Big sheet %d", k+1), side))
		}
	})
	s := startStorage(b, dir)
	b.Run("read_fully", func(b *testing.B) {
		var rss, hwm, heap float64
		for range b.N {
			runtime.GC()
			debug.FreeOSMemory()
			// "5" resets VmHWM to the current RSS (Linux ≥ 4.0).
			hwmReset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
			before := procField(b, "status", "VmRSS")
			for _, n := range notes {
				for r0 := 0; r0 < n.rows; r0 += blockSide {
					for c0 := 0; c0 < n.cols; c0 += blockSide {
						r := call(b, s.cs, "read_sheet_range", map[string]any{"note_id": n.id, "tab_id": n.tab,
							"start_row": r0, "start_col": c0, "rows": min(blockSide, n.rows-r0), "cols": min(blockSide, n.cols-c0)})
						if v := r.List("values"); len(v) == 0 || len(v[0].([]any)) == 0 || v[0].([]any)[0] != cellValue(r0, c0) {
							b.Fatalf("%s: block (%d, %d) does not start with %v", n.name, r0, c0, cellValue(r0, c0))
						}
					}
				}
			}
			rss += float64(procField(b, "status", "VmRSS")) / 1024 / float64(b.N)
			if hwmReset {
				hwm += float64(procField(b, "status", "VmHWM")) / 1024 / float64(b.N)
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			heap += float64(m.HeapAlloc) / (1 << 20) / float64(b.N)
			b.Logf("VmRSS %d MB before the reads", before/1024)
		}
		b.ReportMetric(rss, "rss-MB")
		if hwm > 0 {
			b.ReportMetric(hwm, "peak-rss-MB")
		}
		b.ReportMetric(heap, "live-heap-MB")
	})
}

// BenchmarkRestoreVersion: a Note (markdown of about 2 KB and a 20 × 20
// sheet) with FOUNDRY_BENCH_VERSIONS versions (10,000), made by people's
// edits that alternately change one cell and one character of the text,
// built before the measured store opens. Then, at the service level
// (service.RestoreVersion, with Foundry's default store options):
//
//   - restore_v1: restoring version 1, ms/op (each restore is itself a new
//     version). Target: ≤ 50 ms.
//   - restore_middle: restoring the version in the middle of the history.
//
// Also reports the stored bytes per version of those people's edits (no
// idempotency key; one event row each) as stored-B/version.
func BenchmarkRestoreVersion(b *testing.B) {
	benchGC(b)
	dir := b.TempDir()
	versions := envInt(b, "FOUNDRY_BENCH_VERSIONS", 10_000)
	budget := envDuration(b, "FOUNDRY_BENCH_BUILD_TIMEOUT", 15*time.Minute)
	var id string
	var person service.Caller
	var perVersion float64
	prepare(b, dir, func(svc *service.Service, o service.Owner) {
		ctx := context.Background()
		person = service.Person(o.Workspace.ID, o.User.ID, o.User.Role)
		text, _ := markdownText(2000)
		var tab string
		created, err := svc.CreateNoteFrom(ctx, person, service.CreateNoteArgs{Title: "Many versions", Approved: true}, func(d *note.Doc) error {
			d.Markdown = text
			t, err := note.CreateTab(d, note.TypeSheet, "Data", nil, time.Now())
			if err != nil {
				return err
			}
			tab = t.ID
			_, err = note.SheetSetRange(d, tab, "", 0, 0, block(0, 0, 20, 20))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		id = created.NoteID
		st := startStoredBytes(b, dir)
		before := st()
		t0 := time.Now()
		for v := int64(1); v < int64(versions); v++ {
			a := service.EditTabArgs{NoteID: id, ExpectedVersion: v}
			if v%2 == 0 {
				i := int(v*7919) % len(text)
				if text[i] == '\n' {
					i-- // no line is empty
				}
				c := byte('a' + v%26)
				if text[i] == c {
					c = byte('a' + (v+1)%26)
				}
				text = text[:i] + string(c) + text[i+1:]
				a.TabID, a.Operation, a.Text = note.TypeMarkdown, "replace_text", &text
			} else {
				row, col := int(v/2)%20, int(v/40)%20
				a.TabID, a.Operation, a.StartRow, a.StartCol, a.Values = tab, "sheet_set_range", &row, &col, [][]any{{float64(v)}}
			}
			if _, err := svc.EditNoteTab(ctx, person, a); err != nil {
				b.Fatalf("version %d: %v", v+1, err)
			}
			if v%2000 == 0 {
				b.Logf("%d/%d versions after %v", v, versions, time.Since(t0).Round(time.Millisecond))
			}
			if time.Since(t0) > budget {
				b.Fatalf("%d/%d versions took %v, over FOUNDRY_BENCH_BUILD_TIMEOUT=%v", v, versions, time.Since(t0), budget)
			}
		}
		perVersion = float64(st()-before) / float64(versions-1)
	})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := service.New(st)
	current := int64(versions)
	for _, c := range []struct {
		name    string
		version int64
	}{{"restore_v1", 1}, {"restore_middle", int64(versions / 2)}} {
		b.Run(c.name, func(b *testing.B) {
			var took time.Duration
			for i := range b.N {
				t0 := time.Now()
				res, err := svc.RestoreVersion(ctx, person, service.RestoreArgs{NoteID: id, Version: c.version, Guard: service.Guard{ExpectedVersion: current}})
				took += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				// One more edit (not timed), so the next restore changes
				// the Note again instead of finding it already restored.
				md, err := svc.ReadNoteTab(ctx, person, service.TabArgs{NoteID: id, TabID: note.TypeMarkdown})
				if err != nil || md.Version != res.Version {
					b.Fatalf("after the restore to version %d: %v, at version %d", res.Version, err, md.Version)
				}
				text := *md.Text + fmt.Sprintf("Edit %d after a restore.\n", i)
				ed, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: note.TypeMarkdown, ExpectedVersion: res.Version, Operation: "replace_text", Text: &text})
				if err != nil {
					b.Fatal(err)
				}
				current = ed.Version
			}
			b.ReportMetric(ms(took)/float64(b.N), "ms/restore")
			b.ReportMetric(perVersion, "stored-B/version")
		})
	}
}

// startStoredBytes opens a second connection to the database in dir and
// returns storedBytes over it (closed when b ends).
func startStoredBytes(b *testing.B, dir string) func() int64 {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	s := &storageEnv{db: db}
	return func() int64 { return s.storedBytes(b) }
}
