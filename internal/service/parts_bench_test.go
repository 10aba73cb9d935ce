package service_test

import (
	"context"
	"fmt"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// BenchmarkOneCellEdit: a one-cell sheet_set_range through the service on
// a durable SQLite store, on a sheet of 10,000 and of 1,000,000 cells; the
// "ratio" of the big sheet to the small one is reported in the same run.
func BenchmarkOneCellEdit(b *testing.B) {
	per := map[int]float64{}
	for _, side := range []int{100, 1000} {
		b.Run(fmt.Sprintf("cells=%d", side*side), func(b *testing.B) {
			ctx := context.Background()
			svc, o, id, tabID, _ := sheetNote(b, side)
			p := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
			v := int64(1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := svc.EditNoteTab(ctx, service.Agent(p), service.EditTabArgs{NoteID: id, TabID: tabID, ExpectedVersion: v, IdempotencyKey: fmt.Sprintf("bench-key-%d", i),
					Operation: "sheet_set_range", StartRow: ptr(i % side), StartCol: ptr((i * 7) % side), Values: [][]any{{float64(i)}}})
				if err != nil {
					b.Fatal(err)
				}
				v = res.Version
			}
			per[side] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per[side]/1e6, "ms/edit")
			if per[100] > 0 && side == 1000 {
				b.ReportMetric(per[1000]/per[100], "ratio-to-10k")
			}
		})
	}
}

// sheetNote is a Note of one sheet of side × side numbers, made by o on a
// durable SQLite store that closes when b ends; it answers the Note, its
// sheet tab and its version.
func sheetNote(b *testing.B, side int) (svc *service.Service, o service.Owner, noteID, tabID string, version int64) {
	ctx := context.Background()
	svc, o = benchService(b)
	n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Big", Approved: true}, func(d *note.Doc) error {
		t, err := note.CreateTab(d, note.TypeSheet, "", nil, svc.Now())
		if err != nil {
			return err
		}
		tabID = t.ID
		step := min(side, 100)
		for r := 0; r < side; r += step {
			for c := 0; c < side; c += step {
				vals := make([][]any, step)
				for i := range vals {
					vals[i] = make([]any, step)
					for j := range vals[i] {
						vals[i][j] = float64((r+i)*side + c + j)
					}
				}
				if _, err := note.SheetSetRange(d, tabID, "", r, c, vals); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return svc, o, n.NoteID, tabID, n.Version
}

// benchService is a Service over a durable SQLite store (Foundry's default
// options) in a fresh folder, closed when b ends, with its workspace.
func benchService(b *testing.B) (*service.Service, service.Owner) {
	b.Helper()
	st, err := sqlite.Open(context.Background(), b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := service.New(st)
	o, _, err := svc.Bootstrap(context.Background(), "bench", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	return svc, o
}
