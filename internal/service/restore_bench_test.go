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
// (untimed) one-cell edit, so that every restore changes the Note. A
// restore should cost what it changes, not what the Note holds: "ratio" is
// the 1,000,000-cell Note's ms/restore over the 100-cell Note's, in the same
// run.
func BenchmarkRestoreOldVersion(b *testing.B) {
	per := map[int]float64{}
	for _, side := range []int{10, 1000} {
		b.Run(fmt.Sprintf("cells=%d", side*side), func(b *testing.B) {
			ctx := context.Background()
			svc, o, id, tabID, v := sheetNote(b, side)
			person := service.Person(o.Workspace.ID, o.User.ID, o.User.Role)
			edit := func(i int) {
				res, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: tabID, ExpectedVersion: v,
					Operation: "sheet_set_range", StartRow: ptr((i * 13) % side), StartCol: ptr((i * 7) % side), Values: [][]any{{fmt.Sprintf("edit %d", i)}}})
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
			per[side] = float64(took.Nanoseconds()) / float64(b.N)
			b.ReportMetric(per[side]/1e6, "ms/restore")
			b.ReportMetric(0, "ns/op")
			if per[10] > 0 && side == 1000 {
				b.ReportMetric(per[1000]/per[10], "ratio")
			}
		})
	}
}
