package service_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// headCounter counts the store reads a Note read's head takes.
type headCounter struct {
	store.Store
	heads, objects atomic.Int64
}

func (h *headCounter) Head(ctx context.Context, typ, id string) (store.Resource, error) {
	h.heads.Add(1)
	return h.Store.Head(ctx, typ, id)
}

func (h *headCounter) GetObject(ctx context.Context, kind, id string) (store.Object, error) {
	h.objects.Add(1)
	return h.Store.GetObject(ctx, kind, id)
}

// TestReadsTakeTheHeadFromTheCache: once a Note was read, reading it again
// asks the store nothing (neither its head nor, for a person, whether it
// was deleted); a write of this node makes the next read see the write.
func TestReadsTakeTheHeadFromTheCache(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		hc := &headCounter{Store: f.svc.Store}
		svc := service.New(hc)
		service.SetHeadFresh(svc, time.Hour) // only a doorbell or a write drops a head here
		for _, c := range []struct {
			name string
			who  service.Caller
		}{{"agent", service.Agent(f.read)}, {"person", f.person}} {
			first, err := svc.ReadNoteTab(ctx, c.who, service.TabArgs{NoteID: f.noteID, TabID: "markdown"})
			if err != nil {
				t.Fatal(err)
			}
			h0, o0 := hc.heads.Load(), hc.objects.Load()
			for range 3 {
				again, err := svc.ReadNoteTab(ctx, c.who, service.TabArgs{NoteID: f.noteID, TabID: "markdown"})
				if err != nil {
					t.Fatal(err)
				}
				if again.Version != first.Version {
					t.Fatalf("%s: version %d, then %d with no write", c.name, first.Version, again.Version)
				}
			}
			if dh, do := hc.heads.Load()-h0, hc.objects.Load()-o0; dh != 0 || do != 0 {
				t.Errorf("%s: three reads of a cached Note asked the store for %d heads and %d deletion marks; want none", c.name, dh, do)
			}
		}
		v := f.version(t)
		for i := range 3 {
			w, err := svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: v,
				IdempotencyKey: fmt.Sprintf("head-cache-%d", i), Operation: "replace_text", Text: ptr(fmt.Sprintf("text %d", i))})
			if err != nil {
				t.Fatal(err)
			}
			v = w.Version
			for _, who := range []service.Caller{service.Agent(f.read), f.person} {
				got, err := svc.ReadNoteTab(ctx, who, service.TabArgs{NoteID: f.noteID, TabID: "markdown"})
				if err != nil {
					t.Fatal(err)
				}
				if got.Version != v || got.Text == nil || *got.Text != fmt.Sprintf("text %d", i) {
					t.Fatalf("read after writing version %d: version %d, text %v", v, got.Version, got.Text)
				}
			}
		}
		// Deleting is a write too: the cached head goes, the Note is gone.
		if _, err := svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: v}}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: "markdown"}); err == nil {
			t.Fatal("a person read the Note after deleting it")
		}
	})
}

// TestNoStaleHeadAfterALocalWrite: readers read the Note without pause
// while writes go on; every read that starts after a write returned
// answers that write's version or a later one.
func TestNoStaleHeadAfterALocalWrite(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		service.SetHeadFresh(f.svc, time.Hour)
		var done atomic.Bool
		var written atomic.Int64 // the newest version a write has answered
		written.Store(f.version(t))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for !done.Load() {
					floor := written.Load()
					got, err := f.svc.ListNoteTabs(ctx, service.Agent(f.read), f.noteID)
					if err != nil {
						errs <- err
						return
					}
					if got.Version < floor {
						errs <- fmt.Errorf("a read begun after version %d was written answered version %d", floor, got.Version)
						return
					}
				}
			})
		}
		v := written.Load()
		for i := range 40 {
			w, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: v,
				IdempotencyKey: fmt.Sprintf("local-write-%d", i), Operation: "replace_text", Text: ptr(fmt.Sprint(i))})
			if err != nil {
				t.Fatal(err)
			}
			v = w.Version
			written.Store(v)
		}
		done.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

// headSeenOnOtherNode: node b has read the Note (its head cached, kept for
// an hour if no doorbell rang); node a writes; b answers the new version
// within the doorbell's delay (5 s is far above it).
func headSeenOnOtherNode(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	f := newFixture(t, a)
	nodeB := service.New(b)
	service.SetHeadFresh(nodeB, time.Hour)
	v := f.version(t)
	for _, who := range []service.Caller{service.Agent(f.read), f.person} {
		got, err := nodeB.ListNoteTabs(ctx, who, f.noteID)
		if err != nil || got.Version != v {
			t.Fatalf("node b before the write: version %d, %v; want %d", got.Version, err, v)
		}
	}
	w, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: v,
		IdempotencyKey: "other-node", Operation: "replace_text", Text: ptr("written on node a")})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []service.Caller{service.Agent(f.read), f.person} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, err := nodeB.ReadNoteTab(ctx, who, service.TabArgs{NoteID: f.noteID, TabID: "markdown"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Version == w.Version && got.Text != nil && *got.Text == "written on node a" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node b still answers version %d 5 s after node a wrote version %d", got.Version, w.Version)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestHeadSeenOnOtherNodeSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var nodes [2]store.Store
	for i := range nodes {
		s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes[i] = s
	}
	headSeenOnOtherNode(t, nodes[0], nodes[1])
}

func TestHeadSeenOnOtherNodePostgres(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	var nodes [2]store.Store
	for i := range nodes {
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes[i] = s
	}
	headSeenOnOtherNode(t, nodes[0], nodes[1])
}
