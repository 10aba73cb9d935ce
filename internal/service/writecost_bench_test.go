package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/benchtest"
	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// BenchmarkSmallWriteInProcess: an agent's small write through the service
// on a durable SQLite store (Foundry's default options), without HTTP or
// MCP: what a write costs the server beside the protocol. Two writes, each
// on its own Note: replace_text of a short markdown text, and one cell of a
// 100 × 100 sheet, each with the search index kept (index) and without it
// (noindex: what the index costs a write). Reports, per write, the CPU of
// this process (getrusage, user + system), the bytes it made the kernel
// write (write_bytes of /proc/self/io: WAL frames, checkpoints, temporary
// files) and the time.
//
//	go test ./internal/service/ -run '^$' -bench BenchmarkSmallWriteInProcess -benchtime=2000x -count=1
func BenchmarkSmallWriteInProcess(b *testing.B) {
	for _, kind := range []string{"replace_text/index", "replace_text/noindex", "sheet_set_range/index", "sheet_set_range/noindex"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			svc, o := benchService(b)
			kind, index, _ := strings.Cut(kind, "/")
			service.SetSearchOff(svc, index == "noindex")
			tab := note.TypeMarkdown
			n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Bench", Approved: true}, func(d *note.Doc) error {
				if kind == "replace_text" {
					return note.ReplaceText(d, note.TypeMarkdown, "# Bench\n")
				}
				t, err := note.CreateTab(d, note.TypeSheet, "", nil, svc.Now())
				if err != nil {
					return err
				}
				tab = t.ID
				vals := make([][]any, 100)
				for i := range vals {
					vals[i] = make([]any, 100)
					for j := range vals[i] {
						vals[i][j] = float64(i*100 + j)
					}
				}
				_, err = note.SheetSetRange(d, tab, "", 0, 0, vals)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			agent := service.Agent(auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
			v := int64(1)
			write := func(i int) {
				a := service.EditTabArgs{NoteID: n.NoteID, TabID: tab, ExpectedVersion: v, IdempotencyKey: fmt.Sprintf("bench-write-%d", i), Operation: kind}
				if kind == "replace_text" {
					a.Text = ptr(fmt.Sprintf("# Bench\n\nEdit %d.\n", i))
				} else {
					a.StartRow, a.StartCol, a.Values = ptr(i%100), ptr((i*7)%100), [][]any{{fmt.Sprintf("edit %d", i)}}
				}
				res, err := svc.EditNoteTab(ctx, agent, a)
				if err != nil {
					b.Fatal(err)
				}
				v = res.Version
			}
			for i := range 100 { // warm: caches, prepared statements, the WAL
				write(1_000_000 + i)
			}
			w0, c0 := benchtest.ProcField(b, "io", "write_bytes"), benchtest.ProcessCPU()
			b.ResetTimer()
			for i := range b.N {
				write(i)
			}
			b.StopTimer()
			N := float64(b.N)
			b.ReportMetric(float64((benchtest.ProcessCPU()-c0).Microseconds())/N, "cpu-µs/write")
			b.ReportMetric(float64(benchtest.ProcField(b, "io", "write_bytes")-w0)/N, "written-B/write")
		})
	}
}

// BenchmarkNoteRead: an agent reads a Note's markdown tab again and again
// (read_note_tab through the service, no HTTP), on SQLite and on
// PostgreSQL (FOUNDRY_TEST_POSTGRES_URL): with the head and the document
// cached, a read asks the database nothing. Reports CPU per read
// (getrusage) beside ns/op.
//
//	go test ./internal/service/ -run '^$' -bench BenchmarkNoteRead -benchtime=20000x -count=1
func BenchmarkNoteRead(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			ctx := context.Background()
			var svc *service.Service
			var o service.Owner
			if db == "sqlite" {
				svc, o = benchService(b)
			} else {
				u, _ := pgtest.Schema(b)
				st, err := postgres.Open(ctx, u)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				svc = service.New(st)
				if o, _, err = svc.Bootstrap(ctx, "bench", "owner@example.org"); err != nil {
					b.Fatal(err)
				}
			}
			n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Read", Approved: true})
			if err != nil {
				b.Fatal(err)
			}
			agent := service.Agent(auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead}})
			read := func() {
				if _, err := svc.ReadNoteTab(ctx, agent, service.TabArgs{NoteID: n.NoteID, TabID: note.TypeMarkdown}); err != nil {
					b.Fatal(err)
				}
			}
			read()
			c0 := benchtest.ProcessCPU()
			b.ResetTimer()
			for range b.N {
				read()
			}
			b.StopTimer()
			b.ReportMetric(float64((benchtest.ProcessCPU()-c0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/read")
		})
	}
}
