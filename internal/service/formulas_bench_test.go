package service_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"foundry/internal/formula"
	"foundry/internal/note"
	"foundry/internal/service"
)

// Formulas at scale, on a durable SQLite store (Foundry's default), through
// the service as every door writes:
//
//	go test ./internal/service/ -run '^$' -bench 'BenchmarkRecalc|BenchmarkBigSheet|BenchmarkImportXLSX' -benchtime=20x -count=1
//
// BenchmarkRecalcDependents: one input that 10,000 formulas read
// (B1:B10000 = $A$1*2+ROW()), and a write of that input: each write
// recomputes and stores all 10,000.
func BenchmarkRecalcDependents(b *testing.B) {
	ctx := context.Background()
	svc, o := benchService(b)
	var tab string
	n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Bench", Approved: true}, func(d *note.Doc) error {
		t, err := note.CreateTab(d, note.TypeSheet, "", nil, svc.Now())
		if err != nil {
			return err
		}
		tab = t.ID
		if _, err := note.SheetSetRange(d, tab, "", 0, 0, [][]any{{1.0}}); err != nil {
			return err
		}
		for r := 0; r < 10_000; r += 100 {
			rows := make([][]any, 100)
			for i := range rows {
				rows[i] = []any{"=$A$1*2+ROW()"}
			}
			if _, err := note.SheetSetRange(d, tab, "", r, 1, rows); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	v := n.Version
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		res, err := svc.EditNoteTab(ctx, service.Operator(o), service.EditTabArgs{NoteID: n.NoteID, TabID: tab, ExpectedVersion: v, Operation: "sheet_set_range",
			StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{float64(i + 2)}}})
		if err != nil {
			b.Fatal(err)
		}
		v = res.Version
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/write")
	b.StopTimer()
	got, err := svc.ReadSheetRange(ctx, service.Operator(o), service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: n.NoteID, TabID: tab}, StartRow: 9999, StartCol: 1, Rows: 1, Cols: 1})
	if err != nil || got.Values[0][0] != float64(b.N+1)*2+10_000 {
		b.Fatalf("B10000 = %v, %v; want %v", got.Values, err, float64(b.N+1)*2+10_000)
	}
}

// BenchmarkBigSheet: a 1000 × 1000 sheet with 100,000 formulas (in each
// group of ten columns, the tenth is =SUM of the row's first five, so
// columns F–I of each group are read by nothing), and the same sheet with
// values only (the baseline: a sheet as it was before sheets computed).
//   - load: a service with nothing in memory reads the Note and writes one
//     cell (the formula graph is built from the stored cells once);
//   - edit: a one-cell write read by nothing (the graph is in memory);
//   - edit_dependent: a one-cell write one formula reads;
//   - read: a 100 × 100 read, values and formulas.
func BenchmarkBigSheet(b *testing.B) {
	for _, formulas := range []bool{true, false} {
		name := "formulas"
		if !formulas {
			name = "values_only"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			svc, o := benchService(b)
			var tab string
			n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Big", Approved: true}, func(d *note.Doc) error {
				t, err := note.CreateTab(d, note.TypeSheet, "", nil, svc.Now())
				if err != nil {
					return err
				}
				tab = t.ID
				for r := 0; r < 1000; r += 100 {
					for c := 0; c < 1000; c += 100 {
						vals := make([][]any, 100)
						for i := range vals {
							vals[i] = make([]any, 100)
							for j := range vals[i] {
								row, col := r+i, c+j
								if formulas && col%10 == 9 {
									vals[i][j] = fmt.Sprintf("=SUM(%s:%s)", formula.CellName(row, col-9), formula.CellName(row, col-5))
								} else {
									vals[i][j] = float64(row*1000 + col)
								}
							}
						}
						if _, err := note.SheetSetRange(d, tab, "", r, c, vals); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			v := n.Version
			write := func(s *service.Service, r, c int, val float64) {
				res, err := s.EditNoteTab(ctx, service.Operator(o), service.EditTabArgs{NoteID: n.NoteID, TabID: tab, ExpectedVersion: v, Operation: "sheet_set_range",
					StartRow: ptr(r), StartCol: ptr(c), Values: [][]any{{val}}})
				if err != nil {
					b.Fatal(err)
				}
				v = res.Version
			}
			timed := func(name string, fn func(i int)) {
				b.Run(name, func(b *testing.B) {
					start := time.Now()
					for i := range b.N {
						fn(i)
					}
					b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/op")
				})
			}
			timed("load", func(i int) {
				write(service.New(svc.Store), 500, 505, float64(i))
			})
			timed("edit", func(i int) { write(svc, (i*37)%1000, 505+(i%4), float64(i)) })
			timed("edit_dependent", func(i int) { write(svc, (i*37)%1000, 502, float64(i)) })
			timed("read", func(i int) {
				got, err := svc.ReadSheetRange(ctx, service.Operator(o), service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: n.NoteID, TabID: tab},
					StartRow: (i * 100) % 900, StartCol: 0, Rows: 100, Cols: 100})
				if err != nil || len(got.Values) != 100 || (formulas && len(got.Formulas) != 1000) {
					b.Fatalf("read: %d rows, %d formulas, %v", len(got.Values), len(got.Formulas), err)
				}
			})
		})
	}
}

// BenchmarkImportXLSX: a 50,000-row .xlsx (a text, three numbers and a
// formula per row, as a spreadsheet program writes it) imported as a new
// sheet tab, its 50,000 formulas computed.
func BenchmarkImportXLSX(b *testing.B) {
	ctx := context.Background()
	x := excelize.NewFile()
	sw, err := x.NewStreamWriter("Sheet1")
	if err != nil {
		b.Fatal(err)
	}
	for r := 1; r <= 50_000; r++ {
		if err := sw.SetRow(fmt.Sprintf("A%d", r), []any{fmt.Sprintf("item %d", r), r, float64(r) / 4, r % 7,
			excelize.Cell{Formula: fmt.Sprintf("B%d*C%d+D%d", r, r, r)}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := x.Write(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ReportMetric(float64(len(data))/1024, "file_KiB")
	start := time.Now()
	for range b.N {
		svc, o := benchService(b)
		n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Import", Approved: true})
		if err != nil {
			b.Fatal(err)
		}
		res, err := svc.ImportSheet(ctx, service.Operator(o), service.ImportSheetArgs{NoteID: n.NoteID, Name: "big.xlsx", Data: data, Guard: service.Guard{ExpectedVersion: n.Version}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Formulas != 50_000 {
			b.Fatalf("imported %d formulas", res.Formulas)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/import")
}
