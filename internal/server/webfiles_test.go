package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/browsertest"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// A Note's files: people upload, download and delete them in the web
// app; agents see their metadata, never their bytes nor where the bytes
// are.

// filesXCanary is file content no answer could hold by chance: a marker
// and random bytes.
func filesXCanary(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 3000)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return append([]byte("FOUNDRY-FILE-CANARY-"+hex.EncodeToString(b[:8])+"\n"), b...)
}

// filesXUpload adds data to Note id as the owner, through the service
// the REST door calls.
func filesXUpload(t *testing.T, e *servertest.Env, id, name string, data []byte) service.FileAdded {
	t.Helper()
	c := asOwner(e)
	ctx := context.Background()
	tab, err := e.Server.Service.ReadNoteTab(ctx, c, service.TabArgs{NoteID: id, TabID: "files"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Server.Service.UploadFile(ctx, c, service.UploadArgs{NoteID: id, FileUpload: service.FileUpload{Name: name, ContentType: "application/octet-stream", Body: bytes.NewReader(data), Length: int64(len(data))}, Guard: service.Guard{ExpectedVersion: tab.Version}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// filesXLeaks says what of the file an answer gives away ("" nothing):
// its bytes, their base64 (at each of the three alignments), or a path to
// the download route.
func filesXLeaks(answer string, data []byte, noteID, fileID string) string {
	if bytes.Contains([]byte(answer), data[:28]) || strings.Contains(answer, string(data[40:80])) {
		return "the file's bytes"
	}
	for off := 0; off < 3; off++ {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			if s := enc.EncodeToString(data[off:])[4:40]; strings.Contains(answer, s) {
				return "the file's bytes in base64"
			}
		}
	}
	if strings.Contains(answer, "/files/") || strings.Contains(answer, "/api/notes/"+noteID) || strings.Contains(answer, "blobs/") {
		return "a path to the file's bytes"
	}
	if strings.Contains(answer, hex.EncodeToString(data[:20])) {
		return "the file's bytes in hex"
	}
	return ""
}

// TestFilesNeverReachAgents: after a person uploads a file, no answer an
// agent can get — every read tool of tools/list, the Note as a resource,
// the event feed — holds its bytes or a link to them; the files tab's
// metadata is there.
func TestFilesNeverReachAgents(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	data := filesXCanary(t)
	up := filesXUpload(t, e, e.NoteID, "canary.bin", data)
	fileID := up.File.ID
	ctx := context.Background()
	cs := e.Client(t, e.WriteToken(t), "")

	// The metadata is there for agents.
	tab := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "files"})
	if tab.IsError || !strings.Contains(tab.Text, "canary.bin") || !strings.Contains(tab.Text, fileID) {
		t.Fatalf("read_note_tab of the files tab: %s", tab.Text)
	}

	tabsRes := servertest.MustCall(t, cs, "list_note_tabs", map[string]any{"note_id": e.NoteID})
	var tabIDs, sheetTabs []string
	for _, x := range tabsRes.List("tabs") {
		m, _ := x.(map[string]any)
		id, _ := m["tab_id"].(string)
		tabIDs = append(tabIDs, id)
		if m["tab_type"] == "sheet" || m["type"] == "sheet" {
			sheetTabs = append(sheetTabs, id)
		}
	}
	if len(tabIDs) < 3 {
		t.Fatalf("list_note_tabs: %s", tabsRes.Text)
	}

	// Every read tool, with every argument that names this Note.
	calls := map[string][]map[string]any{
		"list_notes":            {{}, {"query": "Welcome"}},
		"search_notes":          {{"query": "welcome"}, {"query": "txt", "tab_type": "files"}},
		"list_note_tabs":        {{"note_id": e.NoteID}},
		"list_note_attachments": {{"note_id": e.NoteID, "kind": "files"}, {"note_id": e.NoteID, "kind": "sources"}},
		"poll_resource_events":  {{"resource_type": "note", "resource_id": e.NoteID}},
		"list_rooms":            {{}},
		"list_repositories":     {{}},
		"read_room":             {{"room_id": e.RoomID}},
		"list_room_apps":        {{"room_id": e.RoomID}},
		"read_room_app_status":  {{"room_id": e.RoomID, "instance_id": "app_none"}},
	}
	for _, id := range tabIDs {
		calls["read_note_tab"] = append(calls["read_note_tab"], map[string]any{"note_id": e.NoteID, "tab_id": id})
	}
	for _, id := range append(sheetTabs, "files") {
		calls["read_sheet_range"] = append(calls["read_sheet_range"], map[string]any{"note_id": e.NoteID, "tab_id": id, "start_row": 0, "start_col": 0, "rows": 10, "cols": 10})
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Description, "/files/") {
			t.Errorf("tool %s's description names the download route: %s", tool.Name, tool.Description)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			continue
		}
		args, ok := calls[tool.Name]
		if !ok {
			t.Errorf("read tool %s is not checked here: add its arguments to this test", tool.Name)
			continue
		}
		read++
		for _, a := range args {
			r, err := mcpclient.Call(ctx, cs, tool.Name, a)
			if err != nil {
				t.Fatalf("%s: %v", tool.Name, err)
			}
			raw, _ := json.Marshal(r.Data)
			if leak := filesXLeaks(r.Text+string(raw), data, e.NoteID, fileID); leak != "" {
				t.Errorf("%s %v gives away %s: %s", tool.Name, a, leak, r.Text)
			}
		}
	}
	if read < 8 {
		t.Fatalf("only %d read tools were listed: %v", read, tools.Tools)
	}
	// A write tool on the files tab is refused, and says nothing of it.
	w := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "files", "expected_version": up.Version,
		"idempotency_key": "files-edit-0001", "operation": "replace_tab_data", "data": map[string]any{"files": []any{}}})
	if !w.IsError {
		t.Errorf("an agent replaced the files tab: %s", w.Text)
	}
	if leak := filesXLeaks(w.Text, data, e.NoteID, fileID); leak != "" {
		t.Errorf("edit_note_tab's refusal gives away %s: %s", leak, w.Text)
	}
	// The Note as an MCP resource (on a connection that opted in to them).
	sub := servertest.Connect(t, e.URL+"/mcp?subscriptions=true", e.WriteToken(t), "", nil)
	rr, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: "foundry://notes/" + e.NoteID})
	if err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	if len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, `"tabs"`) {
		t.Fatalf("resources/read of the Note: %+v", rr.Contents)
	}
	for _, c := range rr.Contents {
		if leak := filesXLeaks(c.Text+string(c.Blob), data, e.NoteID, fileID); leak != "" {
			t.Errorf("the Note's resource gives away %s", leak)
		}
	}
}

// TestBrowserNoteFiles: a person opens a Note's Files tab, uploads a file
// (the progress bar fills, the list shows it), downloads it byte for byte,
// sees a file another page added appear, drops a file on the tab, is
// told before sending that a
// file is too large, and deletes a file after confirming.
func TestBrowserNoteFiles(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	do(t, ctx, "open the app", chromedp.Navigate(e.URL+"/notes/"+e.NoteID+"?tab=files"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the Files tab", chromedp.WaitVisible(chromedp.CSS(".files-drop")), waitText(".tabpanel", "No files attached yet"))
	if txt := run(t, ctx, "limits", chromedp.Text(chromedp.ID("files-limits"))); !strings.Contains(txt, "Up to 25 MB per file") || !strings.Contains(txt, "100 files") {
		t.Errorf("the tab tells the limits as %q", txt)
	}
	accessible(t, ctx, "note-files-empty")

	dir := t.TempDir()
	data := filesXCanary(t)
	data = append(data, bytes.Repeat([]byte("a report's body\n"), 200000)...) // ~3 MB: the bar has something to show
	path := filepath.Join(dir, "Quarterly report é.pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "upload", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=files-input]`), []string{path}),
		chromedp.WaitVisible(chromedp.CSS(".files-upload progress")),
		waitText(".files-uploads", "Uploaded"),
		waitText(".files-list", "Quarterly report é.pdf"))
	if done := run(t, ctx, "the bar", chromedp.Evaluate[bool](`(() => { const p = document.querySelector(".files-upload.done progress"); return !!p && p.value === p.max && p.max > 0 })()`)); !done {
		t.Errorf("after the upload the progress bar is not full")
	}
	tab, err := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: e.NoteID, TabID: "files"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if len(tab.Files) != 1 || tab.Files[0].SHA256 != hex.EncodeToString(sum[:]) || tab.Files[0].Name != "Quarterly report é.pdf" || tab.Files[0].SizeBytes != int64(len(data)) {
		t.Fatalf("the server's files tab after the upload: %+v", tab.Files)
	}

	// The download link gives the same bytes, as an attachment.
	got := run(t, ctx, "download", chromedp.Evaluate[[]string](`(async () => {
		const a = document.querySelector(".files-list a.files-name");
		const r = await fetch(a.href, {credentials: "same-origin"});
		const h = await crypto.subtle.digest("SHA-256", await r.arrayBuffer());
		return [String(r.status), [...new Uint8Array(h)].map(b => b.toString(16).padStart(2, "0")).join(""), r.headers.get("Content-Disposition") ?? "", a.getAttribute("download") ?? ""];
	})()`, chromedp.EvalAwaitPromise))
	if got[0] != "200" || got[1] != hex.EncodeToString(sum[:]) || !strings.HasPrefix(got[2], "attachment;") || !strings.Contains(got[2], "filename*=UTF-8''Quarterly%20report%20%C3%A9.pdf") || got[3] != "Quarterly report é.pdf" {
		t.Fatalf("the download: %q", got)
	}

	// Another page adds a file: it appears here.
	filesXUpload(t, e, e.NoteID, "notes-from-elsewhere.txt", []byte("hello from another page\n"))
	do(t, ctx, "the other page's file", waitText(".files-list", "notes-from-elsewhere.txt"))

	// A file dropped on the tab is uploaded too.
	do(t, ctx, "drop a file", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(["dropped bytes\n"], "dropped.txt", {type: "text/plain"}));
		const zone = document.querySelector(".files-drop");
		zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
		zone.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`), waitText(".files-list", "dropped.txt"))

	// Too large: told at once, nothing sent.
	big := filepath.Join(dir, "huge.iso")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, service.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "too large", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=files-input]`), []string{big}), waitText(".files-uploads", "a file may be at most 25 MB"))
	if tab, _ := e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: e.NoteID, TabID: "files"}); len(tab.Files) != 3 {
		t.Fatalf("after a refused file the tab has %d files, want 3", len(tab.Files))
	}
	noOverflow(t, ctx, "note-files")
	accessible(t, ctx, "note-files")
	browsertest.Screenshot(t, ctx, "note-files")
	do(t, ctx, "phone width", browsertest.Phone(), chromedp.WaitVisible(chromedp.CSS(".files-list")))
	noOverflow(t, ctx, "note-files-phone")
	browsertest.Screenshot(t, ctx, "note-files-phone")
	do(t, ctx, "wide again", browsertest.Desktop())

	// Delete, cancelling once.
	del := chromedp.JSPath(`[...document.querySelectorAll(".files-row")].find(li => li.innerText.includes("notes-from-elsewhere.txt"))?.querySelector("button")`)
	do(t, ctx, "delete, then cancel", browsertest.Click(del), chromedp.WaitVisible(chromedp.CSS("dialog[open]")), waitText("dialog[open]", "notes-from-elsewhere.txt"),
		browsertest.Click(chromedp.CSS("dialog[open] button.secondary")), chromedp.WaitNotPresent(chromedp.CSS("dialog[open]")))
	do(t, ctx, "delete", browsertest.Click(del), chromedp.WaitVisible(chromedp.CSS("dialog[open]")))
	accessible(t, ctx, "note-files-delete")
	do(t, ctx, "confirm", browsertest.Click(chromedp.CSS("dialog[open] button.danger")), chromedp.WaitNotPresent(chromedp.CSS("dialog[open]")),
		browsertest.Poll(`!document.querySelector(".files-list").innerText.includes("notes-from-elsewhere.txt")`))
	tab, err = e.Server.Service.ReadNoteTab(context.Background(), asOwner(e), service.TabArgs{NoteID: e.NoteID, TabID: "files"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Files) != 2 || tab.Files[0].Name != "Quarterly report é.pdf" || tab.Files[1].Name != "dropped.txt" {
		t.Fatalf("after the delete the server has %+v", tab.Files)
	}
	if txt := pageText(t, ctx); strings.Contains(txt, "Error") || strings.Contains(txt, "refused") {
		t.Errorf("the page shows an error after the delete:\n%s", txt)
	}
}
