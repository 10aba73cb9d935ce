package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"foundry/internal/note"
	"foundry/internal/service"
)

// After the pruner took a Note's old events, a poll from a cursor before
// them answers cursor_expired (re-read, then poll without a cursor); a poll
// from a cursor after them, or without one, answers as before.
func TestPollAfterPruneAnswersCursorExpired(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var cursors []string
		for i := range 3 {
			w, err := f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
				IdempotencyKey: fmt.Sprintf("retention-tab-%d", i), TabType: note.TypeSheet})
			if err != nil {
				t.Fatal(err)
			}
			cursors = append(cursors, w.Cursor)
		}
		poll := func(cursor, typ, id string) (service.EventPage, error) {
			return f.svc.PollEvents(ctx, service.Agent(f.read), service.PollArgs{ResourceType: typ, ResourceID: id, Page: service.Page{Cursor: cursor}})
		}
		// Before any prune, every cursor answers, the oldest one included.
		if page, err := poll(b64("e:0"), "note", f.noteID); err != nil || len(page.Events) < 3 {
			t.Fatalf("poll from the start before a prune: %+v, %v", page, err)
		}
		// A month and a day later: every event of the Note but its newest goes.
		if _, err := f.svc.Store.Prune(ctx, time.Now().Add(31*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]string{"first tab's write": cursors[0], "from the start": b64("e:0")} {
			_, err := poll(c, "note", f.noteID)
			wantProblem(t, err, service.CursorExpired, "cursor", "Read the Note again", "poll without a cursor")
			t.Logf("%s: %v", name, err)
		}
		// The second write's event was pruned too, but nothing after it:
		// its cursor still sees the third write.
		page, err := poll(cursors[1], "note", f.noteID)
		if err != nil || len(page.Events) != 1 || page.Events[0].Cursor != cursors[2] {
			t.Fatalf("poll after the newest pruned event: %+v, %v; want the third write's event", page, err)
		}
		for name, c := range map[string]string{"newest": cursors[2], "none": ""} {
			if page, err := poll(c, "note", f.noteID); err != nil || len(page.Events) != 0 {
				t.Fatalf("poll with cursor %s after the prune: %+v, %v; want an empty page", name, page, err)
			}
		}
		// The Room lost nothing (its one event is its newest): any cursor answers.
		if _, err := poll(b64("e:0"), "room", f.roomID); err != nil {
			t.Fatalf("poll of an unpruned Room: %v", err)
		}
	})
}
