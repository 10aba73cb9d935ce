package service_test

import (
	"context"
	"fmt"
	"testing"

	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// BenchmarkStreamEvents: one read of a stream's next event (the newest of
// a Note with 200 and 2,000 versions), on a durable SQLite store. A stream
// reads only the versions its events name, so the cost does not grow with
// the history.
func BenchmarkStreamEvents(b *testing.B) {
	for _, n := range []int{200, 2000} {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		svc := service.New(st)
		o, _, err := svc.Bootstrap(ctx, "bench", "owner@example.org")
		if err != nil {
			b.Fatal(err)
		}
		c := service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner)
		res, err := svc.CreateNote(ctx, c, service.CreateNoteArgs{Title: "Long-lived", Approved: true})
		if err != nil {
			b.Fatal(err)
		}
		id, v := res.NoteID, res.Version
		for i := 1; i < n; i++ { // bounded: n versions in all
			title := fmt.Sprintf("Long-lived %d", i)
			r, err := svc.UpdateNote(ctx, c, service.UpdateNoteArgs{NoteID: id, Title: &title, Guard: service.Guard{ExpectedVersion: v}})
			if err != nil {
				b.Fatal(err)
			}
			v = r.Version
		}
		last, err := st.LastCursor(ctx, o.Workspace.ID, store.TypeNote, id)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) {
			for b.Loop() {
				evs, _, err := svc.StreamEvents(ctx, c, id, last-1, 100)
				if err != nil || len(evs) != 1 || evs[0].Version != v || evs[0].Actor == "" {
					b.Fatalf("StreamEvents = %+v, %v; want the one newest event, version %d, with its actor", evs, err, v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/read")
		})
		st.Close()
	}
}
