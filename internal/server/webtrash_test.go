package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/service"
)

// TestBrowserTrash: New Note opens the new Note with its title field
// focused, and typing names it; the Note menu renames it, duplicates it and
// moves it to the trash, which lists it with its purge date; Restore brings
// it back with its content; Undo on the list brings back a Note just moved
// to the trash. Every change is checked in the service.
func TestBrowserTrash(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	me := asOwner(e)
	signInToNotes(t, ctx, e)

	// New Note: the Note opens, its title field focused and empty, so the
	// keys typed name it.
	do(t, ctx, "New Note",
		browsertest.Click(chromedp.ID("new-note")),
		chromedp.WaitVisible(chromedp.ID("note-title-input")),
		browsertest.Poll(`document.activeElement?.id === "note-title-input"`),
	)
	u := location(t, ctx)
	if !strings.HasPrefix(u.Path, "/notes/") {
		t.Fatalf("New Note went to %s, want the new Note's page", u)
	}
	noteID := strings.TrimPrefix(u.Path, "/notes/")
	noOverflow(t, ctx, "note-new-focused")
	accessible(t, ctx, "note-new-focused")
	browsertest.Screenshot(t, ctx, "note-new-focused")
	do(t, ctx, "type the title", chromedp.KeyEvent("Launch plan\r"), chromedp.WaitNotPresent(chromedp.ID("note-title-input")), waitText("#note-title", "Launch plan"))
	if n, ok := notesOf(t, e)["Launch plan"]; !ok || n.NoteID != noteID {
		t.Fatalf("after typing the title the service lists %v", notesOf(t, e))
	}
	if q := location(t, ctx).Query(); q.Has("title") {
		t.Errorf("the title field closed but the address still says %v", q)
	}
	tabs, err := e.Server.Service.ListNoteTabs(bg, me, noteID)
	if err != nil {
		t.Fatal(err)
	}
	text := "Launch checklist: book the room"
	if _, err := e.Server.Service.EditNoteTab(bg, me, service.EditTabArgs{NoteID: noteID, TabID: "markdown", ExpectedVersion: tabs.Version, Operation: "replace_text", Text: &text}); err != nil {
		t.Fatal(err)
	}

	// The Note menu: Rename Note.
	do(t, ctx, "open the Note menu", browsertest.Click(chromedp.ID("note-actions-button")), chromedp.WaitVisible(chromedp.CSS(`#note-actions-menu [data-item=trash]`)))
	items := run(t, ctx, "menu items", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#note-actions-menu .menu-item")].map(i => i.innerText.trim())`))
	if strings.Join(items, "|") != "Rename Note|Duplicate|Download (.zip)|Download with history (.zip)|Move to trash" {
		t.Errorf("the Note menu holds %q", items)
	}
	noOverflow(t, ctx, "note-menu")
	browsertest.Screenshot(t, ctx, "note-menu")
	do(t, ctx, "Rename Note",
		browsertest.Click(chromedp.CSS(`#note-actions-menu [data-item=rename]`)),
		chromedp.WaitVisible(chromedp.ID("note-title-input")),
		browsertest.Poll(`document.activeElement?.id === "note-title-input" && document.activeElement.value === "Launch plan"`),
		selectAll("#note-title-input"),
		chromedp.KeyEvent("Launch plan v2\r"),
		chromedp.WaitNotPresent(chromedp.ID("note-title-input")),
		waitText("#note-title", "Launch plan v2"),
	)
	if n, ok := notesOf(t, e)["Launch plan v2"]; !ok || n.NoteID != noteID {
		t.Fatalf("after the rename the service lists %v", notesOf(t, e))
	}
	do(t, ctx, "Rename, then Escape",
		browsertest.Click(chromedp.ID("note-actions-button")),
		browsertest.Click(chromedp.CSS(`#note-actions-menu [data-item=rename]`)),
		chromedp.WaitVisible(chromedp.ID("note-title-input")),
		chromedp.KeyEvent("nothing"),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(chromedp.ID("note-title-input")),
		waitText("#note-title", "Launch plan v2"),
	)

	// Duplicate opens the copy.
	do(t, ctx, "Duplicate",
		browsertest.Click(chromedp.ID("note-actions-button")),
		browsertest.Click(chromedp.CSS(`#note-actions-menu [data-item=duplicate]`)),
		waitText("#note-title", "Copy of Launch plan v2"),
	)
	cp, ok := notesOf(t, e)["Copy of Launch plan v2"]
	if !ok || location(t, ctx).Path != "/notes/"+cp.NoteID {
		t.Fatalf("after Duplicate: at %s, the service lists %v", location(t, ctx), notesOf(t, e))
	}
	if c, err := e.Server.Service.ReadNoteTab(bg, me, service.TabArgs{NoteID: cp.NoteID, TabID: "markdown"}); err != nil || *c.Text != text {
		t.Fatalf("the copy's text: %+v, %v", c, err)
	}

	// Move to trash: confirmed, then gone from the list, with Undo.
	do(t, ctx, "back to the Note", chromedp.Navigate(e.URL+"/notes/"+noteID), waitText("#note-title", "Launch plan v2"))
	do(t, ctx, "Move to trash",
		browsertest.Click(chromedp.ID("note-actions-button")),
		browsertest.Click(chromedp.CSS(`#note-actions-menu [data-item=trash]`)),
		chromedp.WaitVisible(chromedp.ID("trash-note-confirm")),
	)
	if d := run(t, ctx, "the confirmation", chromedp.Text(chromedp.CSS(`dialog[open]`))); !strings.Contains(d, "30 days") || !strings.Contains(d, "“Launch plan v2”") {
		t.Errorf("the confirmation says:\n%s", d)
	}
	do(t, ctx, "confirm",
		browsertest.Click(chromedp.ID("trash-note-confirm")),
		chromedp.WaitVisible(chromedp.ID("notes-title")),
		waitText(".notice.undo", "Moved “Launch plan v2” to the trash"),
		chromedp.WaitVisible(row("Copy of Launch plan v2", "")),
	)
	if _, ok := notesOf(t, e)["Launch plan v2"]; ok {
		t.Fatal("the Note moved to the trash is still listed by the service")
	}
	if titles := listed(t, ctx); slices.Contains(titles, "Launch plan v2") {
		t.Fatalf("the list still shows the Note: %q", titles)
	}

	// The trash lists it with when it goes; Restore brings it back.
	do(t, ctx, "open the trash",
		browsertest.Click(chromedp.CSS(`a[href="/trash"]`)),
		chromedp.WaitVisible(chromedp.ID("trash-title")),
		waitText(".notes.trash", "Launch plan v2"),
	)
	if meta := run(t, ctx, "trash entry", chromedp.Text(chromedp.CSS(`.notes.trash .note-meta`))); !strings.Contains(meta, "removed for good on") || !strings.Contains(meta, "Deleted") {
		t.Errorf("the trash entry says %q", meta)
	}
	noOverflow(t, ctx, "notes-trash")
	accessible(t, ctx, "notes-trash")
	browsertest.Screenshot(t, ctx, "notes-trash")
	do(t, ctx, "Restore",
		browsertest.Click(chromedp.CSS(`button[aria-label="Restore Launch plan v2"]`)),
		waitText(".notice", "Restored “Launch plan v2”"),
		waitText(".empty", "The trash is empty"),
	)
	back, ok := notesOf(t, e)["Launch plan v2"]
	if !ok || back.NoteID != noteID {
		t.Fatalf("after Restore the service lists %v", notesOf(t, e))
	}
	if c, err := e.Server.Service.ReadNoteTab(bg, me, service.TabArgs{NoteID: noteID, TabID: "markdown"}); err != nil || *c.Text != text {
		t.Fatalf("the restored Note's text: %+v, %v", c, err)
	}
	accessible(t, ctx, "notes-trash-empty")
	do(t, ctx, "open it", browsertest.Click(chromedp.CSS(`.notice button.secondary`)), waitText("#note-title", "Launch plan v2"))

	// On the list: Move to trash, then Undo.
	do(t, ctx, "the list", chromedp.Navigate(e.URL+"/notes"), chromedp.WaitVisible(row("Copy of Launch plan v2", "")))
	do(t, ctx, "Move to trash from the list",
		browsertest.Click(chromedp.CSS(`button[aria-label="Move to trash: Copy of Launch plan v2"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		waitText(".notice.undo", "Moved “Copy of Launch plan v2” to the trash"),
	)
	if _, ok := notesOf(t, e)["Copy of Launch plan v2"]; ok {
		t.Fatal("the copy moved to the trash is still listed by the service")
	}
	do(t, ctx, "Undo",
		browsertest.Click(chromedp.CSS(`.notice.undo button.secondary`)),
		chromedp.WaitVisible(row("Copy of Launch plan v2", "")),
	)
	if _, ok := notesOf(t, e)["Copy of Launch plan v2"]; !ok {
		t.Fatal("Undo did not bring the copy back")
	}
}

// newNote makes a Note as a person does: New Note opens it with its title
// field focused, the title typed and Enter name it, and ← Notes goes back
// to the list, which shows it.
func newNote(title string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Click(chromedp.ID("new-note")),
		browsertest.Poll(`document.activeElement?.id === "note-title-input"`),
		insertText(title), chromedp.KeyEvent("\r"),
		chromedp.WaitNotPresent(chromedp.ID("note-title-input")),
		waitText("#note-title", title),
		browsertest.Click(chromedp.CSS(".note-head .back")),
		chromedp.WaitVisible(row(title, "")),
	)
}
