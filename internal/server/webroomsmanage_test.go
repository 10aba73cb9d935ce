package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/auth"
	"foundry/internal/browsertest"
	"foundry/internal/room"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/store"
)

// TestBrowserRoomsManage: a person manages Rooms from the web app alone,
// by keyboard: from the empty Rooms page the New Room button opens a
// dialog whose name field has the focus, Escape cancels, a blank name is
// refused on the page, Enter creates the Room and opens it; the Room is
// renamed (Escape keeps the old name) and deleted after a confirmation
// that names it and says its app stops. The service agrees at every step.
func TestBrowserRoomsManage(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	svc, op := e.Server.Service, service.Operator(e.Owner)
	// The demo Room goes first, so the page starts empty.
	demo, err := svc.ReadRoom(bg, op, e.RoomID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteRoom(bg, op, service.RoomArgs{RoomID: e.RoomID, Guard: service.Guard{ExpectedVersion: demo.Version}}); err != nil {
		t.Fatal(err)
	}
	rooms := func() []service.RoomSummary {
		t.Helper()
		l, err := svc.ListRooms(bg, op, service.Page{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Rooms
	}
	focused := func(what string) string {
		t.Helper()
		return run(t, ctx, what, chromedp.Evaluate[string](`document.activeElement?.id || document.activeElement?.textContent || ""`))
	}

	do(t, ctx, "open Rooms", chromedp.Navigate(e.URL+"/rooms"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the empty Rooms page", chromedp.WaitVisible(chromedp.ID("rooms-title")), waitText(".content", "No Rooms yet"))
	text := pageText(t, ctx)
	if !strings.Contains(text, "A Room holds an app your agents build and you approve.") || strings.Contains(text, "/mcp") {
		t.Errorf("the empty Rooms page says:\n%s", text)
	}
	noOverflow(t, ctx, "rooms-empty")
	accessible(t, ctx, "rooms-empty")
	browsertest.Screenshot(t, ctx, "rooms-empty")

	// New Room: the name field has the focus; Escape cancels.
	do(t, ctx, "New Room", browsertest.Click(chromedp.CSS(`.empty button.primary`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #new-room-name`)))
	if f := focused("focus in the dialog"); f != "new-room-name" {
		t.Errorf("the New Room dialog opens with the focus on %q, want the name field", f)
	}
	do(t, ctx, "Escape cancels", chromedp.KeyEvent("Draft"), chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if got := rooms(); len(got) != 0 {
		t.Fatalf("Escape created a Room: %+v", got)
	}
	do(t, ctx, "New Room again", browsertest.Click(chromedp.CSS(`.empty button.primary`)), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #new-room-name`)))
	if v := run(t, ctx, "fresh field", chromedp.Evaluate[string](`document.querySelector("#new-room-name").value`)); v != "" {
		t.Errorf("the dialog opens again with %q in the name field", v)
	}
	do(t, ctx, "a blank name", chromedp.KeyEvent("   \r"), chromedp.WaitVisible(chromedp.ID("new-room-name-error")))
	if msg := run(t, ctx, "blank error", chromedp.Text(chromedp.ID("new-room-name-error"))); !strings.Contains(msg, "name") {
		t.Errorf("a blank name: the dialog says %q", msg)
	}
	do(t, ctx, "type a name", selectAll(`#new-room-name`), chromedp.KeyEvent("Launch plan"))
	noOverflow(t, ctx, "rooms-new")
	accessible(t, ctx, "rooms-new")
	browsertest.Screenshot(t, ctx, "rooms-new")
	do(t, ctx, "Enter creates and opens it", chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("room-title")), waitText("#room-title", "Launch plan"))
	got := rooms()
	if len(got) != 1 || got[0].Name != "Launch plan" || got[0].Owner.ID != e.Owner.User.ID {
		t.Fatalf("after creating, the service lists %+v", got)
	}
	id := got[0].RoomID
	if u := location(t, ctx); u.Path != "/rooms/"+id {
		t.Errorf("after creating, the page is %s, want /rooms/%s", u.Path, id)
	}

	// Rename: Escape keeps the name; Enter saves the new one.
	do(t, ctx, "Rename, then Escape", browsertest.Click(chromedp.ID("room-rename")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #room-name`)),
		chromedp.KeyEvent(" (old)"), chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if r := rooms(); r[0].Name != "Launch plan" {
		t.Fatalf("Escape renamed the Room: %+v", r)
	}
	do(t, ctx, "Rename", browsertest.Click(chromedp.ID("room-rename")), chromedp.WaitVisible(chromedp.CSS(`dialog[open] #room-name`)))
	if f := focused("focus in rename"); f != "room-name" {
		t.Errorf("the rename dialog opens with the focus on %q, want the name field", f)
	}
	do(t, ctx, "Enter renames", selectAll(`#room-name`), chromedp.KeyEvent("  Launch review  \r"),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)), waitText("#room-title", "Launch review"))
	if r := rooms(); r[0].Name != "Launch review" {
		t.Fatalf("after renaming, the service lists %+v", r)
	}

	// An agent's app in its launcher, and a proposal waiting.
	agent := service.Agent(auth.Principal{Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, TokenID: "tok_manage", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	propose := func(name string) service.Proposed {
		files := map[string]string{"src/App.tsx": "export default function App() { return <h1>" + name + "</h1> }\n"}
		w, err := svc.ProposeSnippet(bg, agent, service.ProposeSnippetArgs{RoomID: id, Name: name, Files: files, IdempotencyKey: room.SnippetKey(id, name, files)})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if _, err := svc.DecideProposal(bg, op, propose("Standup board").ProposalID, true); err != nil {
		t.Fatal(err)
	}
	waiting := propose("Retro board")
	do(t, ctx, "the app runs", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[role=tab][aria-selected=true]`)), chromedp.WaitVisible(chromedp.CSS(`iframe.app-frame`)))

	// Delete: the confirmation names the Room and says its app stops;
	// Escape keeps it; Tab, Enter deletes it.
	do(t, ctx, "Delete Room", browsertest.Click(chromedp.ID("room-delete")), chromedp.WaitVisible(chromedp.CSS(`#delete-room-title ~ .dialog-actions button.danger`)))
	confirm := run(t, ctx, "the confirmation", chromedp.Text(chromedp.CSS(`dialog[open]`)))
	for _, want := range []string{"Delete Launch review?", "its app Standup board stops", "declined"} {
		if !strings.Contains(confirm, want) {
			t.Errorf("the confirmation does not say %q:\n%s", want, confirm)
		}
	}
	if f := focused("focus in delete"); f != "Cancel" {
		t.Errorf("the delete dialog opens with the focus on %q, want Cancel", f)
	}
	noOverflow(t, ctx, "room-delete-confirm")
	accessible(t, ctx, "room-delete-confirm")
	browsertest.Screenshot(t, ctx, "room-delete-confirm")
	do(t, ctx, "Escape keeps it", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.CSS(`dialog[open]`)))
	if r := rooms(); len(r) != 1 {
		t.Fatalf("Escape deleted the Room: %+v", r)
	}
	do(t, ctx, "Delete Room again", browsertest.Click(chromedp.ID("room-delete")), chromedp.WaitVisible(chromedp.CSS(`#delete-room-title ~ .dialog-actions button.danger`)))
	do(t, ctx, "Tab, Enter deletes", chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"), waitText(".content", "No Rooms yet"))
	if u := location(t, ctx); u.Path != "/rooms" {
		t.Errorf("after deleting, the page is %s, want /rooms", u.Path)
	}
	do(t, ctx, "the Rooms page says what was deleted", waitText(".content .notice", "is deleted"), waitText(".content .notice", "waiting proposals were declined"))
	do(t, ctx, "a reload does not say it again", chromedp.Reload(), waitText(".content", "No Rooms yet"))
	if n := run(t, ctx, "notices", chromedp.Evaluate[int](`document.querySelectorAll(".content .notice").length`)); n != 0 {
		t.Errorf("after a reload the Rooms page shows %d notices, want none", n)
	}
	if r := rooms(); len(r) != 0 {
		t.Fatalf("after deleting, the service lists %+v", r)
	}
	if _, err := svc.ReadRoom(bg, agent, id); err == nil {
		t.Fatal("an agent still reads the deleted Room")
	}
	o, err := e.Server.Store.GetObject(bg, store.KindProposal, waiting.ProposalID)
	if err != nil || !strings.Contains(string(o.Doc), `"status":"declined"`) {
		t.Fatalf("the waiting proposal after the delete: %s %v", o.Doc, err)
	}
	do(t, ctx, "the deleted Room's page", chromedp.Navigate(e.URL+"/rooms/"+id), waitText("#room-title", "Room not found"))
}
