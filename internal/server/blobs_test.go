package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
)

// TestBlobCollectorRunsInTheBackground: once started, the collector
// removes an unreferenced blob after the grace period by itself, and its
// stop returns once the loop has ended.
func TestBlobCollectorRunsInTheBackground(t *testing.T) {
	e := servertest.Start(t, servertest.Options{Config: server.Config{BlobGrace: 2 * time.Second}})
	ctx := context.Background()
	ws := e.Owner.Workspace.ID
	blobs := e.Server.Store.Blobs()
	sha, _, err := blobs.Put(ctx, ws, strings.NewReader("bytes of a refused upload"), 100)
	if err != nil {
		t.Fatal(err)
	}
	stop := e.Server.Blobs.Start()
	defer stop()
	deadline := time.Now().Add(30 * time.Second) // bounded wait: passes run every second
	for {
		if ok, err := blobs.Has(ctx, ws, sha); err != nil {
			t.Fatal(err)
		} else if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background collector did not remove the unreferenced blob")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	stop() // a second stop is harmless
}

// TestBlobPassPurgesTheTrash: a collector pass removes the Notes the trash
// has kept longer than service.TrashDays, and none younger.
func TestBlobPassPurgesTheTrash(t *testing.T) {
	e := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	svc := e.Server.Service
	me := service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, service.RoleOwner)
	n, err := svc.CreateNote(ctx, me, service.CreateNoteArgs{Title: "Old plans"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteNote(ctx, me, service.NoteArgs{NoteID: n.NoteID, Guard: service.Guard{ExpectedVersion: n.Version}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Server.Blobs.Pass(ctx, time.Now().Add(service.TrashKeep-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if tr, err := svc.TrashedNotes(ctx, me, service.Page{}); err != nil || len(tr.Notes) != 1 {
		t.Fatalf("the trash before its days are over: %+v, %v", tr, err)
	}
	if _, err := e.Server.Blobs.Pass(ctx, time.Now().Add(service.TrashKeep+time.Hour)); err != nil {
		t.Fatal(err)
	}
	if tr, err := svc.TrashedNotes(ctx, me, service.Page{}); err != nil || len(tr.Notes) != 0 {
		t.Fatalf("the trash after its days: %+v, %v", tr, err)
	}
	if _, err := e.Server.Store.Head(ctx, store.TypeNote, n.NoteID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the purged Note is still stored: %v", err)
	}
}
