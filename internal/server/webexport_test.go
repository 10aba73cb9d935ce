package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/service"
)

// TestBrowserNoteExport: a person opens the Note menu, finds Download as a
// link to the export route, and what it downloads is a zip of the Note:
// its note.json, its markdown and its files' bytes.
func TestBrowserNoteExport(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	text := "# Exported ✓\n\nGrüße aus Köln: this Note, as a zip."
	tabs, err := e.Server.Service.ListNoteTabs(context.Background(), asOwner(e), e.NoteID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Server.Service.EditNoteTab(context.Background(), asOwner(e), service.EditTabArgs{NoteID: e.NoteID, TabID: "markdown", Operation: "replace_text", Text: &text, ExpectedVersion: tabs.Version}); err != nil {
		t.Fatal(err)
	}
	filesXUpload(t, e, e.NoteID, "brief é.txt", []byte("the file's bytes\n"))
	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes/"+e.NoteID), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the Note", chromedp.WaitVisible(chromedp.ID("note-actions-button")),
		browsertest.Click(chromedp.ID("note-actions-button")),
		chromedp.WaitVisible(chromedp.CSS(`#note-actions-menu a[data-item=download]`)))
	if focused := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement === document.querySelector("#note-actions-menu [role=menuitem]") ? "first" : (document.activeElement?.dataset.item ?? "")`)); focused != "first" {
		t.Errorf("the open menu focuses %q, want its first item", focused)
	}
	accessible(t, ctx, "note-menu")
	noOverflow(t, ctx, "note-menu")
	browsertest.Screenshot(t, ctx, "note-menu")

	got := run(t, ctx, "download", chromedp.Evaluate[[]string](`(async () => {
		const a = document.querySelector("#note-actions-menu a[data-item=download]");
		const r = await fetch(a.href, {credentials: "same-origin"});
		const b = new Uint8Array(await r.arrayBuffer());
		let s = ""; for (const x of b) s += String.fromCharCode(x);
		return [String(r.status), r.headers.get("Content-Type") ?? "", r.headers.get("Content-Disposition") ?? "", a.hasAttribute("download") ? "download" : "", new URL(a.href).pathname, btoa(s)];
	})()`, chromedp.EvalAwaitPromise))
	if got[0] != "200" || got[1] != "application/zip" || !strings.HasPrefix(got[2], "attachment;") || got[3] != "download" || got[4] != "/api/notes/"+e.NoteID+"/export" {
		t.Fatalf("the download: %q", got[:5])
	}
	raw, err := base64.StdEncoding.DecodeString(got[5])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("the download is not a zip: %v", err)
	}
	entries := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		entries[f.Name[strings.Index(f.Name, "/")+1:]] = string(b)
	}
	if !strings.Contains(entries["note.json"], `"note_id": "`+e.NoteID+`"`) || entries["01-note.md"] != text || entries["02-files/001-brief é.txt"] != "the file's bytes\n" {
		t.Fatalf("the zip holds %d entries: %v", len(entries), keysOf(entries))
	}
	// With history, the link asks for it.
	if href := run(t, ctx, "history link", chromedp.Evaluate[string](`document.querySelector("#note-actions-menu a[data-item=download-history]").getAttribute("href")`)); href != "/api/notes/"+e.NoteID+"/export?history=true" {
		t.Errorf("Download with history links to %q", href)
	}
	// Escape closes the menu and gives focus back to its button.
	do(t, ctx, "escape", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.ID("note-actions-menu")))
	if focused := run(t, ctx, "focus back", chromedp.Evaluate[string](`document.activeElement?.id ?? ""`)); focused != "note-actions-button" {
		t.Errorf("after Escape the focus is on %q", focused)
	}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
