package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// setMarkdown makes the demo Note's markdown tab hold text, as a person's
// save, and returns the new version.
func (e *callEnv) setMarkdown(t *testing.T, text string) int64 {
	t.Helper()
	v, _ := e.tabs(t)
	res, err := e.svc.EditNoteTab(context.Background(), service.Person(e.owner.Workspace.ID, e.owner.User.ID, service.RoleOwner),
		service.EditTabArgs{NoteID: e.noteID, TabID: note.TypeMarkdown, ExpectedVersion: v, Operation: "replace_text", Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

func (e *callEnv) markdown(t *testing.T) string {
	t.Helper()
	res, data := e.call(t, "read_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":"markdown"}`, e.noteID))
	if res.IsError {
		t.Fatal(resultText(res))
	}
	return data["text"].(string)
}

func textArgs(noteID string, v int64, key string, edits ...string) string {
	var es []map[string]string
	for i := 0; i+1 < len(edits); i += 2 {
		es = append(es, map[string]string{"old_text": edits[i], "new_text": edits[i+1]})
	}
	b, _ := json.Marshal(map[string]any{"note_id": noteID, "expected_version": v, "idempotency_key": key, "edits": es})
	return string(b)
}

func TestEditNoteTextTool(t *testing.T) {
	e := sqliteEnv(t)
	v := e.setMarkdown(t, "# Plan\n\nShip in May.\nOwner: Ana\n")
	res, data := e.call(t, "edit_note_text", textArgs(e.noteID, v, "tool-text-1", "May", "June", "Ana", "Bo"))
	if res.IsError || data["version"] != float64(v+1) || data["tab_id"] != "markdown" || data["edits_applied"] != 2.0 || data["replayed"] != false {
		t.Fatalf("edit_note_text: %s", resultText(res))
	}
	if got := e.markdown(t); got != "# Plan\n\nShip in June.\nOwner: Bo\n" {
		t.Fatalf("text = %q", got)
	}
	v++

	// The schema says what the server holds to: tab_id is "markdown" if
	// given, 1–20 edits, each with a non-empty old_text and a new_text.
	for _, c := range []struct{ args, field string }{
		{fmt.Sprintf(`{"note_id":%q,"tab_id":"slides","expected_version":%d,"idempotency_key":"tool-text-2","edits":[{"old_text":"a","new_text":"b"}]}`, e.noteID, v), "tab_id"},
		{fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"tool-text-2","edits":[]}`, e.noteID, v), "edits"},
		{fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"tool-text-2","edits":[{"old_text":"","new_text":"b"}]}`, e.noteID, v), "edits[0].old_text"},
		{fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"tool-text-2","edits":[{"old_text":"a"}]}`, e.noteID, v), "edits[0].new_text"},
		{fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"tool-text-2","edits":[%s]}`, e.noteID, v, strings.TrimSuffix(strings.Repeat(`{"old_text":"a","new_text":"b"},`, 21), ",")), "edits"},
	} {
		res, data := e.call(t, "edit_note_text", c.args)
		if !res.IsError || data["error"] != "invalid_argument" || data["field"] != c.field {
			t.Errorf("%s: %s; want invalid_argument on %s", clipArgs(c.args), resultText(res), c.field)
		}
	}
	if res, data := e.call(t, "edit_note_text", strings.Replace(textArgs(e.noteID, v, "tool-text-3", "June", "July"), `"note_id"`, `"tab_id":"markdown","note_id"`, 1)); res.IsError || data["version"] != float64(v+1) {
		t.Fatalf("tab_id markdown: %s", resultText(res))
	}
	v++

	// A refused match says where to look, and that nothing was written.
	res, data = e.call(t, "edit_note_text", textArgs(e.noteID, v, "tool-text-4", "Ship in Jul.", "x"))
	msg, _ := data["message"].(string)
	if data["error"] != note.CodeTextNotFound || data["field"] != "edits[0].old_text" || !strings.Contains(msg, "read_note_tab shows the current text") || data["closest"] == nil {
		t.Errorf("not found: %s", resultText(res))
	}

	// A read-only token is refused before anything runs.
	ro := e.all
	ro.Scopes = []string{auth.ScopeRead}
	res, data = e.callAs(t, ro, "edit_note_text", textArgs(e.noteID, v, "tool-text-5", "July", "Aug"))
	if !res.IsError || data["error"] != "insufficient_scope" || data["required_scope"] != auth.ScopeWrite {
		t.Errorf("read-only token: %s", resultText(res))
	}
}

// After a version_conflict the answer says whether the same edits apply
// to the current text, and the next step follows from it.
func TestEditNoteTextConflictNamesTheNextStep(t *testing.T) {
	e := sqliteEnv(t)
	v := e.setMarkdown(t, "# Plan\n\nShip in May.\n")
	now := e.setMarkdown(t, "# Plan (draft)\n\nShip in May.\n")
	res, data := e.call(t, "edit_note_text", textArgs(e.noteID, v, "tool-conflict-1", "May", "June"))
	msg, _ := data["message"].(string)
	if data["error"] != "version_conflict" || data["edits_apply"] != true || data["current_version"] != float64(now) {
		t.Fatalf("conflict: %s", resultText(res))
	}
	for _, want := range []string{"still found exactly once", "Nothing was written", fmt.Sprintf("send them with expected_version %d and a NEW idempotency_key", now), "overwrites nothing the other edit wrote"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	// Resent as the answer says, the edit applies and keeps the other one.
	if res, _ := e.call(t, "edit_note_text", textArgs(e.noteID, now, "tool-conflict-2", "May", "June")); res.IsError {
		t.Fatal(resultText(res))
	}
	if got := e.markdown(t); got != "# Plan (draft)\n\nShip in June.\n" {
		t.Errorf("text = %q", got)
	}

	now = e.setMarkdown(t, "# Plan\n\nShip in spring.\n")
	res, data = e.call(t, "edit_note_text", textArgs(e.noteID, now-1, "tool-conflict-3", "June", "July"))
	msg, _ = data["message"].(string)
	if data["error"] != "version_conflict" || data["edits_apply"] != false {
		t.Fatalf("conflict: %s", resultText(res))
	}
	for _, want := range []string{"edits[0].old_text is not found", "Read the tab again (read_note_tab)", "NEW idempotency_key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "overwrites nothing") {
		t.Errorf("message says the edits can be resent, which is not true here: %s", msg)
	}
}

// countingTransport counts the bytes of the request bodies sent through it.
type countingTransport struct{ sent atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body.Close()
		c.sent.Add(int64(len(b)))
		r.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Over real HTTP with the go-sdk client: a one-character change to a
// 1 MiB markdown tab is a request of well under 1 KB.
func TestEditNoteTextOverHTTPSendsOnlyTheChange(t *testing.T) {
	e := sqliteEnv(t)
	text := strings.Repeat("Lorem ipsum dolor sit amet.\n", (note.MaxMarkdownBytes-64)/28) + "The end is near.\n"
	v := e.setMarkdown(t, text)
	url, secret := e.serve(t, slog.Default(), []string{auth.ScopeRead, auth.ScopeWrite})
	ct := &countingTransport{}
	cs, err := mcpclient.Dial(context.Background(), "text-test", url, secret, "", ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	before := ct.sent.Load()
	r, err := mcpclient.Call(context.Background(), cs, "edit_note_text", map[string]any{"note_id": e.noteID, "expected_version": v,
		"idempotency_key": "http-text-1", "edits": []map[string]string{{"old_text": "end is near", "new_text": "end is dear"}}})
	if err != nil {
		t.Fatal(err)
	}
	sent := ct.sent.Load() - before
	if r.IsError || r.Int("version") != v+1 || r.Int("bytes") != int64(len(text)) {
		t.Fatalf("edit_note_text over HTTP: %s", r.Text)
	}
	if sent > 1024 {
		t.Errorf("the request was %d bytes; a one-character change should take under 1 KB", sent)
	}
	t.Logf("request: %d bytes for a one-character change to a %d-byte text", sent, len(text))
	if got := e.markdown(t); got != strings.Replace(text, "end is near", "end is dear", 1) {
		t.Errorf("the text did not change as asked")
	}
}

// When the answer could not say whether the edits apply (the Note moved on
// again while it was made), the next step claims nothing about them.
func TestEditNoteTextConflictWithoutMatchesClaimsNothing(t *testing.T) {
	p := problem.New(problem.Conflict, "expected_version", "the note changed since version 1; it is at version 3 now").With("current_version", int64(3))
	h := textHint(p)
	if !strings.Contains(h, "Read the tab again (read_note_tab)") || !strings.Contains(h, "NEW idempotency_key") || strings.Contains(h, "overwrites nothing") {
		t.Errorf("hint = %q", h)
	}
}
