package main

import (
	"context"
	"strings"
	"testing"

	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
)

// onData runs fn on the service over the data folder, as the operator, and
// closes the store again (the CLI opens it after).
func onData(t *testing.T, data string, fn func(ctx context.Context, svc *service.Service, op service.Caller)) {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st)
	o, err := svc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fn(ctx, svc, service.Operator(o))
}

// noteVersion is the Note's current version, read as the operator.
func noteVersion(t *testing.T, data, noteID string) int64 {
	t.Helper()
	var v int64
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		h, err := svc.NoteHistory(ctx, op, service.HistoryArgs{NoteID: noteID})
		if err != nil {
			t.Fatal(err)
		}
		v = h.Version
	})
	return v
}

// TestNotesRestoreCurrentVersionChangesNothing: restoring the version the
// Note holds now says so and makes no version; restoring an older one is a
// new version.
func TestNotesRestoreCurrentVersionChangesNothing(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		text := "the second version"
		if _, err := svc.EditNoteTab(ctx, op, service.EditTabArgs{NoteID: noteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
			t.Fatal(err)
		}
	})
	if v := noteVersion(t, data, noteID); v != 2 {
		t.Fatalf("after one edit the Note is at version %d, want 2", v)
	}

	code, stdout, stderr := runInProcess(t, "notes", "restore", noteID, "--version", "2", "--data", data)
	if code != 0 || stderr != "" {
		t.Fatalf("restoring the current version: exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
	}
	for _, want := range []string{"nothing changed", "still version 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("restoring the current version says %q; want %q in it", stdout, want)
		}
	}
	if strings.Contains(stdout, "restored version") {
		t.Errorf("restoring the current version says %q, as if it made a version", stdout)
	}
	if v := noteVersion(t, data, noteID); v != 2 {
		t.Fatalf("restoring the current version moved the Note to version %d, want it still at 2", v)
	}

	code, stdout, stderr = runInProcess(t, "notes", "restore", noteID, "--version", "1", "--data", data)
	if code != 0 || !strings.Contains(stdout, "restored version 1 of "+noteID+" as version 3") {
		t.Fatalf("restoring version 1: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if v := noteVersion(t, data, noteID); v != 3 {
		t.Fatalf("after restoring version 1 the Note is at version %d, want 3", v)
	}
}

// TestNotesRestoreIntoDeletedNoteRefused: a deleted Note is gone for the
// CLI too: restoring one of its versions is refused as not found and
// writes nothing.
func TestNotesRestoreIntoDeletedNoteRefused(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	var deletedAt int64
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		text := "written before the delete"
		if _, err := svc.EditNoteTab(ctx, op, service.EditTabArgs{NoteID: noteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
			t.Fatal(err)
		}
		w, err := svc.DeleteNote(ctx, op, service.NoteArgs{NoteID: noteID})
		if err != nil {
			t.Fatal(err)
		}
		deletedAt = w.Version
	})

	for _, v := range []string{"1", "2"} {
		code, stdout, stderr := runInProcess(t, "notes", "restore", noteID, "--version", v, "--data", data)
		if code != 1 || stdout != "" {
			t.Errorf("restoring version %s of a deleted Note: exit %d, stdout %q; want 1 and nothing on stdout", v, code, stdout)
		}
		for _, want := range []string{"no Note " + noteID + " in this workspace", "`foundry notes list`"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("restoring version %s of a deleted Note says %q; want %q in it", v, stderr, want)
			}
		}
	}
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		// A deleted Note's history stays in the store.
		vs, err := svc.Store.History(ctx, store.TypeNote, noteID)
		if err != nil {
			t.Fatal(err)
		}
		if last := vs[len(vs)-1].Version; last != deletedAt {
			t.Fatalf("after the refused restores the Note's history ends at version %d, want %d (the delete)", last, deletedAt)
		}
	})
}

// TestNotesHistoryPages: the history lists the newest versions first, a
// page at a time, and says on stderr how to see the older ones.
func TestNotesHistoryPages(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		for i := range 4 {
			text := strings.Repeat("x", i+1)
			if _, err := svc.EditNoteTab(ctx, op, service.EditTabArgs{NoteID: noteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
				t.Fatal(err)
			}
		}
	})
	versions := func(stdout string) []string {
		var vs []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			vs = append(vs, strings.Fields(line)[0])
		}
		return vs
	}
	code, stdout, stderr := runInProcess(t, "notes", "history", noteID, "--limit", "3", "--data", data)
	if code != 0 || strings.Join(versions(stdout), ",") != "5,4,3" {
		t.Fatalf("the first page of 3: exit %d, stdout %q, stderr %q; want versions 5, 4, 3", code, stdout, stderr)
	}
	_, next, ok := strings.Cut(strings.TrimSpace(stderr), "--cursor ")
	if !ok || !strings.Contains(stderr, "notes history "+noteID) {
		t.Fatalf("the first page says %q on stderr; want the command for the older versions", stderr)
	}
	code, stdout, stderr = runInProcess(t, "notes", "history", noteID, "--limit", "3", "--cursor", next, "--data", data)
	if code != 0 || strings.Join(versions(stdout), ",") != "2,1" || stderr != "" {
		t.Fatalf("the older page: exit %d, stdout %q, stderr %q; want versions 2, 1 and no further cursor", code, stdout, stderr)
	}
}
