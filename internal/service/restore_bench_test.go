package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"foundry/internal/service"
)

// BenchmarkRestoreOldVersion: restoring the version of ten one-cell edits
// ago through the service, on a durable SQLite store, on a Note whose sheet
// holds 100 and 1,000,000 cells; each restore is followed by one more
// (untimed) one-cell edit, so that every restore changes the Note. The
// edits are the same cells of both Notes (the first 10 × 10), so "ratio",
// the 1,000,000-cell Note's ms/restore over the 100-cell Note's in the same
// run, is what the size of the Note costs a restore (goal: ≤ 2). spread=10
// places the edits of the 1,000,000-cell Note in ten blocks of cells
// instead: what a restore of more changes costs.
func BenchmarkRestoreOldVersion(b *testing.B) {
	per := map[string]float64{}
	for _, c := range []struct {
		name         string
		side, spread int
	}{{"cells=100", 10, 1}, {"cells=1000000", 1000, 1}, {"cells=1000000/spread=10", 1000, 10}} {
		side := c.side
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			svc, o, id, tabID, v := sheetNote(b, side)
			person := service.Person(o.Workspace.ID, o.User.ID, o.User.Role)
			edit := func(i int) {
				res, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: tabID, ExpectedVersion: v,
					Operation: "sheet_set_range", StartRow: ptr((i*3)%10 + (i%c.spread)*97), StartCol: ptr((i * 7) % 10), Values: [][]any{{fmt.Sprintf("edit %d", i)}}})
				if err != nil {
					b.Fatal(err)
				}
				v = res.Version
			}
			for i := range 10 {
				edit(i)
			}
			var took time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res, err := svc.RestoreVersion(ctx, person, service.RestoreArgs{NoteID: id, Version: v - 10, Guard: service.Guard{ExpectedVersion: v}})
				took += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if res.Version != v+1 {
					b.Fatalf("restoring version %d of %d made version %d", v-10, v, res.Version)
				}
				v = res.Version
				edit(10 + i)
			}
			per[c.name] = float64(took.Nanoseconds()) / float64(b.N)
			b.ReportMetric(per[c.name]/1e6, "ms/restore")
			b.ReportMetric(0, "ns/op")
			if small := per["cells=100"]; small > 0 && c.name != "cells=100" {
				b.ReportMetric(per[c.name]/small, "ratio")
			}
		})
	}
}

// BenchmarkDiffVersion: what one one-cell edit changed (service.DiffVersion
// against the version before), on a Note whose sheet holds 100 and
// 1,000,000 cells: the diff reads the block the edit wrote, not the Note
// ("ratio" as in BenchmarkRestoreOldVersion).
func BenchmarkDiffVersion(b *testing.B) {
	per := map[int]float64{}
	for _, side := range []int{10, 1000} {
		b.Run(fmt.Sprintf("cells=%d", side*side), func(b *testing.B) {
			ctx := context.Background()
			svc, o, id, tabID, v := sheetNote(b, side)
			person := service.Person(o.Workspace.ID, o.User.ID, o.User.Role)
			res, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: tabID, ExpectedVersion: v, Operation: "sheet_set_range", StartRow: ptr(3), StartCol: ptr(4), Values: [][]any{{"edited"}}})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, err := svc.DiffVersion(ctx, person, service.DiffArgs{NoteID: id, Version: res.Version})
				if err != nil || d.Changes != 1 {
					b.Fatalf("the diff of a one-cell edit: %d changes, %v", d.Changes, err)
				}
			}
			per[side] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per[side]/1e6, "ms/diff")
			b.ReportMetric(0, "ns/op")
			if per[10] > 0 && side == 1000 {
				b.ReportMetric(per[1000]/per[10], "ratio")
			}
		})
	}
}
