package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the WAL position of the benchmark's PostgreSQL

	"foundry/internal/note"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// BenchmarkSmallWriteCost: the fixed cost of a small MCP write, on a small
// and on a big Note, alternately, on each store: server CPU and bytes
// written per write. Two small writes, each on a Note of each size:
//
//   - edit_note_text: one character of the markdown tab (a 26-byte excerpt
//     replaced), on Notes of FOUNDRY_BENCH_SMALL_TEXT (1,000) and
//     FOUNDRY_BENCH_BIG_TEXT (1 MiB) bytes of markdown;
//   - sheet_set_range: one cell, on sheets of FOUNDRY_BENCH_SMALL_CELLS
//     (10,000) and FOUNDRY_BENCH_BIG_CELLS (1,000,000) cells.
//
// Every write is a real MCP tools/call over HTTP on 127.0.0.1: the go-sdk
// client opens the session and makes one call, whose request is recorded;
// each measured write sends that request again with its own arguments
// (a fresh idempotency key, the current version) as plain HTTP, and reads
// the whole answer, so the client's own CPU is small beside the server's.
// The Notes are built by one person's write each (no MCP), before.
//
// Reported per write, for small and big: cpu-µs (getrusage of this
// process, user + system: the server, its store, and the plain HTTP client
// that sends the request), ms, and on SQLite written-B (write_bytes of
// /proc/self/io: WAL frames, checkpoints, any temporary file), on
// PostgreSQL wal-B (pg_current_wal_lsn before and after: the server's WAL,
// which counts any other client of the same server too; run it alone).
//
//	go test ./internal/server/ -run '^$' -bench BenchmarkSmallWriteCost -benchtime=200x -count=1
//
// (FOUNDRY_TEST_POSTGRES_URL set for the postgres sub-benchmarks.)
func BenchmarkSmallWriteCost(b *testing.B) {
	benchGC(b)
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			var s *storageEnv
			var wal func() int64
			if db == "sqlite" {
				s = startStorage(b, "")
			} else {
				u, _ := pgtest.Schema(b)
				st, err := postgres.Open(context.Background(), u)
				if err != nil {
					b.Fatal(err)
				}
				e := servertest.Start(b, servertest.Options{Store: st})
				s = &storageEnv{Env: e, token: e.WriteToken(b), rt: newSizeTransport()}
				s.cs = s.connect(b)
				b.Cleanup(s.rt.base.CloseIdleConnections)
				wal = walPosition(b)
			}
			raw := recordCall(b, s)
			for _, kind := range []string{"edit_note_text", "sheet_set_range"} {
				b.Run(kind, func(b *testing.B) {
					notes := [2]*costNote{
						newCostNote(b, s, kind, false),
						newCostNote(b, s, kind, true),
					}
					var cpu, took [2]time.Duration
					var wrote [2]int64
					for i := range b.N {
						for k, n := range notes {
							tool, args := n.next(i)
							w0, c0, t0 := bytesWritten(b), processCPU(), time.Now()
							if wal != nil {
								w0 = wal()
							}
							v := raw.call(b, tool, args)
							took[k] += time.Since(t0)
							cpu[k] += processCPU() - c0
							if wal != nil {
								wrote[k] += wal() - w0
							} else {
								wrote[k] += bytesWritten(b) - w0
							}
							if v != n.version+1 {
								b.Fatalf("%s: version %d after %d", n.name, v, n.version)
							}
							n.version = v
						}
					}
					N := float64(b.N)
					reportPair(b, pair{float64(cpu[0].Microseconds()) / N, float64(cpu[1].Microseconds()) / N}, "cpu-µs/write", "cpu-ratio")
					reportPair(b, pair{ms(took[0]) / N, ms(took[1]) / N}, "ms/write", "time-ratio")
					unit := "written-B/write"
					if wal != nil {
						unit = "wal-B/write"
					}
					reportPair(b, pair{float64(wrote[0]) / N, float64(wrote[1]) / N}, unit, "bytes-ratio")
				})
			}
		})
	}
}

// walPosition answers a func that reads the PostgreSQL server's WAL
// position, in bytes.
func walPosition(b *testing.B) func() int64 {
	db, err := sql.Open("pgx", pgtest.BaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	return func() int64 {
		var n int64
		if err := db.QueryRow(`SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
}

// costNote is one Note a small write goes to, and how the next one reads.
type costNote struct {
	name    string
	id, tab string
	version int64
	side    int    // sheets: rows and columns
	text    string // markdown: the text now
	line    int    // markdown: the line whose ninth character each edit toggles
}

// newCostNote creates an approved Note of kind's small or big size in one
// person's write.
func newCostNote(b *testing.B, s *storageEnv, kind string, big bool) *costNote {
	b.Helper()
	size := "small"
	if big {
		size = "big"
	}
	n := &costNote{name: size + " " + kind, version: 1}
	build := func(d *note.Doc) error {
		if kind == "sheet_set_range" {
			cells := envInt(b, "FOUNDRY_BENCH_SMALL_CELLS", 10_000)
			if big {
				cells = envInt(b, "FOUNDRY_BENCH_BIG_CELLS", 1_000_000)
			}
			n.side = sheetSide(cells)
			var err error
			n.tab, err = bigSheetDoc(d, n.side)
			return err
		}
		bytes := envInt(b, "FOUNDRY_BENCH_SMALL_TEXT", 1000)
		if big {
			bytes = envInt(b, "FOUNDRY_BENCH_BIG_TEXT", note.MaxMarkdownBytes)
		}
		var lines int
		n.text, lines = markdownText(bytes)
		n.line, n.tab = lines/2, note.TypeMarkdown
		return note.ReplaceText(d, note.TypeMarkdown, n.text)
	}
	created, err := s.Server.Service.CreateNoteFrom(context.Background(), asOwner(s.Env), service.CreateNoteArgs{Title: n.name, Approved: true}, build)
	if err != nil {
		b.Fatal(err)
	}
	n.id = created.NoteID
	return n
}

// next is the i-th small write to n: its tool and arguments.
func (n *costNote) next(i int) (string, map[string]any) {
	args := map[string]any{"note_id": n.id, "tab_id": n.tab, "expected_version": n.version,
		"idempotency_key": fmt.Sprintf("cost-%s-%d", n.id, n.version)}
	if n.side > 0 {
		args["operation"], args["start_row"], args["start_col"] = "sheet_set_range", (i*37)%n.side, (i*91)%n.side
		args["values"] = [][]any{{fmt.Sprintf("edit %d", i)}}
		return "edit_note_tab", args
	}
	// "Line 000123: Foundry keeps" ↔ "Line 000123; Foundry keeps"
	start := strings.Index(n.text, fmt.Sprintf("Line %06d", n.line))
	old := n.text[start : start+26]
	repl := []byte(old)
	repl[11] = map[byte]byte{':': ';', ';': ':'}[repl[11]]
	n.text = n.text[:start] + string(repl) + n.text[start+26:]
	args["edits"] = []map[string]any{{"old_text": old, "new_text": string(repl)}}
	return "edit_note_text", args
}

// rawCaller sends MCP tools/call requests as plain HTTP, with the headers
// of one the go-sdk client sent.
type rawCaller struct {
	base *http.Transport
	req  *http.Request
	body map[string]any // the recorded JSON-RPC request
	id   atomic.Int64
}

// recordCall makes one tools/call through s's go-sdk client (a read) and
// keeps its request.
func recordCall(b *testing.B, s *storageEnv) *rawCaller {
	b.Helper()
	rec := &recorder{base: s.rt.base}
	cs := servertest.Connect(b, s.URL+"/mcp", s.token, "", rec)
	id, err := s.Server.Service.Demo(context.Background(), s.Owner)
	if err != nil {
		b.Fatal(err)
	}
	call(b, cs, "list_note_tabs", map[string]any{"note_id": id})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.last == nil {
		b.Fatal("no tools/call request was recorded")
	}
	r := &rawCaller{base: s.rt.base, req: rec.last}
	if err := json.Unmarshal(rec.body, &r.body); err != nil {
		b.Fatal(err)
	}
	return r
}

// recorder keeps the last tools/call request sent through it.
type recorder struct {
	base *http.Transport
	mu   sync.Mutex
	last *http.Request
	body []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			r.mu.Lock()
			r.last, r.body = req.Clone(context.Background()), body
			r.mu.Unlock()
		}
	}
	return r.base.RoundTrip(req)
}

// call sends tools/call of tool with args and answers the version its
// result says; a refusal or a protocol error fails b.
func (r *rawCaller) call(b *testing.B, tool string, args map[string]any) int64 {
	b.Helper()
	// The recorded request, its _meta included, with this call's tool and
	// arguments.
	params := maps.Clone(r.body["params"].(map[string]any))
	params["name"], params["arguments"] = tool, args
	msg := maps.Clone(r.body)
	msg["id"], msg["params"] = r.id.Add(1), params
	body, err := json.Marshal(msg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := r.req.Clone(ctx)
	if req.Header.Get("Mcp-Name") != "" {
		req.Header.Set("Mcp-Name", tool) // revisions that name the tool in a header too
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: status %d, %v: %s", tool, resp.StatusCode, err, answer)
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Version int64 `json:"version"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(rpcResult(answer), &res); err != nil || res.IsError {
		b.Fatalf("%s: %v: %s", tool, err, answer)
	}
	return res.StructuredContent.Version
}
