package service_test

import (
	"context"
	"fmt"
	"testing"

	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// BenchmarkStreamEvents: a stream that resumes one event back (the newest
// of a Note with 200 and 2,000 versions) joins the Note's feed and reads
// that event, on a durable SQLite store. It reads only the versions its
// events name, so the cost does not grow with the history.
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
		var before string        // the cursor of the write before the newest
		for i := 1; i < n; i++ { // bounded: n versions in all
			title := fmt.Sprintf("Long-lived %d", i)
			r, err := svc.UpdateNote(ctx, c, service.UpdateNoteArgs{NoteID: id, Title: &title, Guard: service.Guard{ExpectedVersion: v}})
			if err != nil {
				b.Fatal(err)
			}
			v = r.Version
			if i == n-2 {
				before = r.Cursor
			}
		}
		from, err := service.ResumeAfter(before)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) {
			for b.Loop() {
				sub := svc.Subscribe()
				items, err := sub.WatchNote(ctx, c, id, service.WatchOptions{After: from})
				sub.Close()
				if err != nil || len(items) != 1 || items[0].Event.Version != v || items[0].Event.Actor.ID == "" {
					b.Fatalf("WatchNote = %+v, %v; want the one newest event, version %d, with its actor", items, err, v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/read")
		})
		st.Close()
	}
}
