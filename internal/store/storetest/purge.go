package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"foundry/internal/store"
)

// testDropObjects: a guarded write deletes the objects it names, in its
// transaction, and only in its own workspace.
func testDropObjects(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	id := Create(t, s, ws)
	mark := AppendLine(ws, id, "", 1, "mark")
	mark.Apply = func(cur *store.Resource) (*store.Change, error) {
		return &store.Change{Kind: "marked", Result: json.RawMessage(`{}`),
			Objects: []store.Object{{Workspace: ws, Kind: "mark", ID: id, Parent: id, Doc: json.RawMessage(`{}`)}}}, nil
	}
	if _, err := s.Guarded(ctx, mark); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetObject(ctx, "mark", id); err != nil {
		t.Fatalf("the mark was not written: %v", err)
	}
	drop := AppendLine(ws, id, "", 2, "unmark")
	drop.Apply = func(cur *store.Resource) (*store.Change, error) {
		return &store.Change{Kind: "unmarked", Result: json.RawMessage(`{}`), DropObjects: []store.ObjectKey{{Kind: "mark", ID: id}}}, nil
	}
	out, err := s.Guarded(ctx, drop)
	if err != nil || out.Version != 3 {
		t.Fatalf("drop: %+v, %v", out, err)
	}
	if _, err := s.GetObject(ctx, "mark", id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the dropped mark is still there: %v", err)
	}
	rows, err := s.List(ctx, store.ListQuery{Workspace: ws, Type: store.TypeNote, Unmarked: "mark", Limit: 10})
	if err != nil || len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("a list leaving marked resources out, after the mark is dropped: %+v, %v", rows, err)
	}
}

// testPurge: a purged resource is gone with everything of it; the blobs
// only it named (its history included) become unreferenced and are
// collected, a blob another resource names in its history stays.
func testPurge(t *testing.T, s store.Store, ws string) {
	ctx := context.Background()
	only := putBytes(t, s, ws, blobBytes(500, 7))
	shared := putBytes(t, s, ws, blobBytes(600, 8))
	gone, kept := Create(t, s, ws), Create(t, s, ws)
	// gone names only in its history (added, then removed), shared now;
	// kept named shared once and no longer does.
	for _, w := range []store.Mutation{
		referenceWrite(ws, gone, only, true, true),
		referenceWrite(ws, gone, shared, true, true),
		referenceWrite(ws, kept, shared, true, true),
		AppendLine(ws, kept, "", 0, "later"),
	} {
		if _, err := s.Guarded(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	withObject := AppendLine(ws, gone, "", 0, "object")
	withObject.Apply = func(cur *store.Resource) (*store.Change, error) {
		return &store.Change{Kind: "marked", Result: json.RawMessage(`{}`),
			Objects: []store.Object{{Workspace: ws, Kind: "mark", ID: gone, Parent: gone, Doc: json.RawMessage(`{}`)}}}, nil
	}
	if _, err := s.Guarded(ctx, withObject); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Purge(ctx, "ws_other", store.TypeNote, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("purge from another workspace: %v, want not found", err)
	}
	rep, err := s.Purge(ctx, ws, store.TypeNote, gone)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Versions != 4 || !slices.Equal(rep.Unreferenced, []string{only}) {
		t.Fatalf("purge report %+v; want 4 versions and %s unreferenced", rep, only)
	}
	if _, err := s.Get(ctx, store.TypeNote, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get a purged resource: %v", err)
	}
	if h, err := s.History(ctx, store.TypeNote, gone); err != nil || len(h) != 0 {
		t.Fatalf("a purged resource's history: %+v, %v", h, err)
	}
	if ev, err := s.Events(ctx, ws, store.TypeNote, gone, 0, 100); err != nil || len(ev) != 0 {
		t.Fatalf("a purged resource's events: %+v, %v", ev, err)
	}
	if _, err := s.GetObject(ctx, "mark", gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a purged resource's object: %v", err)
	}
	if _, err := s.Purge(ctx, ws, store.TypeNote, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("purge twice: %v, want not found", err)
	}
	if rows, err := s.List(ctx, store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: "T", Limit: 10}); err != nil || len(rows) != 1 || rows[0].ID != kept {
		t.Fatalf("list after a purge: %+v, %v", rows, err)
	}
	collect(t, s, time.Now().Add(2*time.Hour), store.BlobCollect{Grace: time.Hour})
	if has(t, s, ws, only) {
		t.Fatal("the blob only the purged resource named was not collected")
	}
	if !has(t, s, ws, shared) {
		t.Fatal("a blob another resource's history names was collected")
	}
	// The same ID can be used again.
	if _, err := s.Guarded(ctx, CreateMutation(ws, gone)); err != nil {
		t.Fatalf("create again after a purge: %v", err)
	}
}
