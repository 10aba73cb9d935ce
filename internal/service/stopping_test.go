package service_test

import (
	"context"
	"testing"
	"time"

	"foundry/internal/service"
)

// TestStopWaitingAnswersLongPolls: a shutdown's StopWaiting answers every
// waiting long poll with its page so far (no events, a cursor to poll
// again from), and a long poll that comes after it does not wait. The
// polls wait 25 s; each is awaited 10 s at most, so an answer proves it
// did not wait its wait out.
func TestStopWaitingAnswersLongPolls(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		type answer struct {
			page service.EventPage
			err  error
		}
		poll := func() <-chan answer {
			out := make(chan answer, 1)
			go func() {
				p, err := f.svc.PollEvents(ctx, service.Agent(f.read), service.PollArgs{ResourceType: "note", ResourceID: f.noteID, WaitSeconds: 25})
				out <- answer{p, err}
			}()
			return out
		}
		check := func(what string, c <-chan answer) {
			t.Helper()
			select {
			case a := <-c:
				if a.err != nil || len(a.page.Events) != 0 || a.page.NextCursor == "" {
					t.Errorf("%s answered %+v, %v; want no events and a cursor", what, a.page, a.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s still waits after StopWaiting", what)
			}
		}
		const n = 3
		waiting := make([]<-chan answer, n)
		for i := range waiting {
			waiting[i] = poll()
		}
		for k := 0; k < 400 && f.svc.Waiting() < n; k++ {
			time.Sleep(10 * time.Millisecond)
		}
		if got := f.svc.Waiting(); got != n {
			t.Fatalf("%d long polls wait, want %d", got, n)
		}
		select {
		case <-f.svc.Stopping():
			t.Fatal("Stopping is closed before StopWaiting")
		default:
		}
		f.svc.StopWaiting()
		f.svc.StopWaiting() // idempotent
		for i, c := range waiting {
			check("long poll "+string(rune('A'+i)), c)
		}
		check("a long poll after StopWaiting", poll())
		if got := f.svc.Waiting(); got != 0 {
			t.Errorf("%d long polls still hold their place", got)
		}
	})
}
