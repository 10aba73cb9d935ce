package service_test

import (
	"context"
	"fmt"
	"testing"

	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/sqlite"
)

// wholeHistory is a store that can only read a history whole: the way the
// people's event stream read each batch before it read just the versions
// its events name.
type wholeHistory struct{ store.Store }

// BenchmarkPeopleEvents: one read of a stream's next event (the newest of
// a Note with 200 and 2,000 versions), on a durable SQLite store, reading
// only the events' versions ("range") and the whole history ("whole").
func BenchmarkPeopleEvents(b *testing.B) {
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
		c := service.PersonCaller(o.Workspace.ID, o.User.ID)
		res, err := svc.PeopleCreateNote(ctx, c, "Long-lived", true, "")
		if err != nil {
			b.Fatal(err)
		}
		id, v := res.ID, res.Version
		for i := 1; i < n; i++ { // bounded: n versions in all
			title := fmt.Sprintf("Long-lived %d", i)
			r, err := svc.PeopleUpdateNote(ctx, c, id, &title, nil, service.PeopleWrite{Expected: v})
			if err != nil {
				b.Fatal(err)
			}
			v = r.Version
		}
		last, err := st.LastCursor(ctx, o.Workspace.ID, store.TypeNote, id)
		if err != nil {
			b.Fatal(err)
		}
		for _, how := range []string{"range", "whole"} {
			s := svc
			if how == "whole" {
				s = service.New(wholeHistory{st})
			}
			b.Run(fmt.Sprintf("versions=%d/%s", n, how), func(b *testing.B) {
				for b.Loop() {
					evs, _, err := s.PeopleEvents(ctx, c, id, last-1, 100)
					if err != nil || len(evs) != 1 || evs[0].Version != v || evs[0].Actor == "" {
						b.Fatalf("PeopleEvents = %+v, %v; want the one newest event, version %d, with its actor", evs, err, v)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/read")
			})
		}
		st.Close()
	}
}
