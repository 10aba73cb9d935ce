package service_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// TestTrash: a deleted Note leaves every list and read but is in the
// trash; restored, it is exactly as it was; after TrashDays it is purged.
func TestTrash(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		ed, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: f.version(t), Operation: "replace_text", Text: ptr("Findings so far")})
		if err != nil {
			t.Fatal(err)
		}
		up, err := f.svc.UploadFile(ctx, f.person, service.UploadArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: ed.Version},
			FileUpload: service.FileUpload{Name: "data.csv", ContentType: "text/csv", Body: strings.NewReader("a,b\n1,2\n"), Length: 8}})
		if err != nil {
			t.Fatal(err)
		}
		before, err := f.svc.ListNoteTabs(ctx, f.person, f.noteID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.DeleteNote(ctx, agent, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: up.Version}}); err == nil {
			t.Fatal("an agent deleted a Note")
		}
		del, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: up.Version}})
		if err != nil {
			t.Fatal(err)
		}

		// Gone from the lists and reads of every caller.
		for _, c := range []service.Caller{f.person, f.op, agent} {
			l, err := f.svc.ListNotes(ctx, c, service.ListNotesArgs{})
			if err != nil || len(l.Notes) != 0 {
				t.Fatalf("list after the delete: %+v, %v", l, err)
			}
		}
		p := wantProblem(t, func() error { _, err := f.svc.ListNoteTabs(ctx, f.person, f.noteID); return err }(), problem.NotFound, "note_id", "in the trash", "restore it before")
		if p.Details["in_trash"] != true {
			t.Errorf("the refusal's details %v do not say in_trash", p.Details)
		}
		p = wantProblem(t, func() error { _, err := f.svc.ListNoteTabs(ctx, agent, f.noteID); return err }(), problem.NotFound, "note_id")
		if strings.Contains(p.Message, "trash") {
			t.Errorf("an agent is told about a Note out of its reach: %s", p.Message)
		}
		wantProblem(t, func() error {
			_, err := f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: f.noteID, Title: ptr("x"), Guard: service.Guard{ExpectedVersion: del.Version}})
			return err
		}(), problem.NotFound, "note_id", "in the trash")

		// In the trash, with who deleted it and when it goes.
		if _, err := f.svc.TrashedNotes(ctx, agent, service.Page{}); err == nil {
			t.Fatal("an agent looked in the trash")
		}
		tr, err := f.svc.TrashedNotes(ctx, f.person, service.Page{})
		if err != nil || len(tr.Notes) != 1 {
			t.Fatalf("trash: %+v, %v", tr, err)
		}
		got := tr.Notes[0]
		if got.NoteID != f.noteID || got.Title != "Research" || got.Version != del.Version || got.DeletedBy.Kind != "person" ||
			got.PurgeAt.Sub(got.DeletedAt) != service.TrashKeep || time.Since(got.DeletedAt) > time.Minute {
			t.Fatalf("trashed note %+v", got)
		}

		// Restored exactly as it was, connected access included.
		if _, err := f.svc.UntrashNote(ctx, agent, service.NoteArgs{NoteID: f.noteID}); err == nil {
			t.Fatal("an agent restored a Note from the trash")
		}
		res, err := f.svc.UntrashNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: got.Version}})
		if err != nil || res.Version != del.Version+1 || !res.Approved || res.Title != "Research" {
			t.Fatalf("untrash: %+v, %v", res, err)
		}
		wantProblem(t, func() error {
			_, err := f.svc.UntrashNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID})
			return err
		}(), problem.Invalid, "note_id", "not in the trash")
		after, err := f.svc.ListNoteTabs(ctx, agent, f.noteID)
		if err != nil || len(after.Tabs) != len(before.Tabs) {
			t.Fatalf("tabs after the restore: %+v, %v (before %+v)", after, err, before)
		}
		text, err := f.svc.ReadNoteTab(ctx, agent, service.TabArgs{NoteID: f.noteID, TabID: "markdown"})
		if err != nil || text.Text == nil || *text.Text != "Findings so far" {
			t.Fatalf("text after the restore: %+v, %v", text, err)
		}
		readFile(t, f, f.person, f.noteID, up.File.ID, "a,b\n1,2\n")
		h, err := f.svc.NoteHistory(ctx, f.person, service.HistoryArgs{NoteID: f.noteID})
		if err != nil || h.Versions[0].Kind != service.KindNoteUntrashed || h.Versions[1].Kind != service.KindNoteDeleted || int64(len(h.Versions)) != res.Version {
			t.Fatalf("history after the restore: %+v, %v", h, err)
		}
		if tr, err := f.svc.TrashedNotes(ctx, f.person, service.Page{}); err != nil || len(tr.Notes) != 0 {
			t.Fatalf("trash after the restore: %+v, %v", tr, err)
		}

		// Deleted again, it stays until TrashDays have passed, then goes
		// with its file's bytes.
		if _, err := f.svc.DeleteNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: res.Version}}); err != nil {
			t.Fatal(err)
		}
		if n, more, err := f.svc.PurgeTrash(ctx, time.Now().Add(service.TrashKeep-time.Hour)); err != nil || n != 0 || more {
			t.Fatalf("purge before the 30 days: %d, %v, %v", n, more, err)
		}
		if n, more, err := f.svc.PurgeTrash(ctx, time.Now().Add(service.TrashKeep+time.Hour)); err != nil || n != 1 || more {
			t.Fatalf("purge after the 30 days: %d, %v, %v", n, more, err)
		}
		if _, err := f.svc.Store.Head(ctx, store.TypeNote, f.noteID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the purged Note is still stored: %v", err)
		}
		wantProblem(t, func() error { _, err := f.svc.ListNoteTabs(ctx, f.person, f.noteID); return err }(), problem.NotFound, "note_id")
		if tr, err := f.svc.TrashedNotes(ctx, f.person, service.Page{}); err != nil || len(tr.Notes) != 0 {
			t.Fatalf("trash after the purge: %+v, %v", tr, err)
		}
		if _, err := f.svc.Store.Blobs().Collect(ctx, time.Now().Add(2*time.Hour), store.BlobCollect{Grace: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if ok, err := f.svc.Store.Blobs().Has(ctx, f.ws, up.File.SHA256); err != nil || ok {
			t.Fatalf("the purged Note's file bytes are still stored (%v)", err)
		}
	})
}

// TestDuplicateNote: a copy holds the Note's tabs, content and files under
// "Copy of TITLE", with a history of its own and connected access off.
func TestDuplicateNote(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		ed, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: f.version(t), Operation: "replace_text", Text: ptr("Findings")})
		if err != nil {
			t.Fatal(err)
		}
		up, err := f.svc.UploadFile(ctx, f.person, service.UploadArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: ed.Version},
			FileUpload: service.FileUpload{Name: "a.txt", Body: strings.NewReader("hello"), Length: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.DuplicateNote(ctx, service.Agent(f.write), service.NoteArgs{NoteID: f.noteID}); err == nil {
			t.Fatal("an agent duplicated a Note")
		}
		cp, err := f.svc.DuplicateNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID})
		if err != nil || cp.Title != "Copy of Research" || cp.Version != 1 || cp.Approved || cp.NoteID == f.noteID {
			t.Fatalf("duplicate: %+v, %v", cp, err)
		}
		orig, _ := f.svc.ListNoteTabs(ctx, f.person, f.noteID)
		dup, err := f.svc.ListNoteTabs(ctx, f.person, cp.NoteID)
		if err != nil || len(dup.Tabs) != len(orig.Tabs) || dup.Title != "Copy of Research" {
			t.Fatalf("the copy's tabs: %+v, %v (the Note's: %+v)", dup, err, orig)
		}
		text, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: cp.NoteID, TabID: "markdown"})
		if err != nil || *text.Text != "Findings" {
			t.Fatalf("the copy's text: %+v, %v", text, err)
		}
		readFile(t, f, f.person, cp.NoteID, up.File.ID, "hello")
		h, err := f.svc.NoteHistory(ctx, f.person, service.HistoryArgs{NoteID: cp.NoteID})
		if err != nil || len(h.Versions) != 1 {
			t.Fatalf("the copy's history: %+v, %v", h, err)
		}
		long := strings.Repeat("é", note.MaxTitleRunes)
		if _, err := f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: f.noteID, Title: &long, Guard: service.Guard{ExpectedVersion: up.Version}}); err != nil {
			t.Fatal(err)
		}
		cp2, err := f.svc.DuplicateNote(ctx, f.person, service.NoteArgs{NoteID: f.noteID})
		if err != nil || !strings.HasPrefix(cp2.Title, "Copy of é") || len([]rune(cp2.Title)) != note.MaxTitleRunes {
			t.Fatalf("duplicate of a Note with the longest title: %q, %v", cp2.Title, err)
		}
	})
}

func readFile(t *testing.T, f *fixture, c service.Caller, noteID, fileID, want string) {
	t.Helper()
	_, b, err := f.svc.OpenFile(context.Background(), c, service.FileArgs{NoteID: noteID, FileID: fileID})
	if err != nil {
		t.Fatalf("open file %s of %s: %v", fileID, noteID, err)
	}
	defer b.Close()
	got, _ := io.ReadAll(b)
	if string(got) != want {
		t.Fatalf("file %s of %s holds %q, want %q", fileID, noteID, got, want)
	}
}
