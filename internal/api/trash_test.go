package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
)

// TestTrashREST: DELETE moves a Note to the trash, GET /api/trash lists
// it with its purge date, untrash brings it back as it was, duplicate
// copies it; a token is refused the person's acts.
func TestTrashREST(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Launch plan", true)
		md := e.markdownTab(t, id)
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "# Launch"}, header: ifMatch(v)}).want(t, "put text", http.StatusOK, "")
		e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "Launch plan v2"}, header: ifMatch(v + 1)}).want(t, "rename", http.StatusOK, "")

		dup := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/duplicate"})
		dup.want(t, "duplicate", http.StatusCreated, "")
		if dup.body["title"] != "Copy of Launch plan v2" || dup.num("version") != 1 || dup.body["approved"] != false || !strings.HasSuffix(dup.header.Get("Location"), "/notes/"+dup.body["id"].(string)) {
			t.Fatalf("duplicate answered %s (Location %q)", dup.raw, dup.header.Get("Location"))
		}
		copyText := e.do(t, req{method: "GET", path: "/api/notes/" + dup.body["id"].(string) + "/tabs/" + md})
		if copyText.body["text"] != "# Launch" {
			t.Fatalf("the copy's text: %s", copyText.raw)
		}

		e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(v + 2)}).want(t, "delete", http.StatusNoContent, "")
		gone := e.do(t, req{method: "GET", path: "/api/notes/" + id})
		if gone.status != http.StatusNotFound || gone.body["in_trash"] != true || !strings.Contains(gone.body["message"].(string), "trash") {
			t.Fatalf("GET a Note in the trash: %d %s", gone.status, gone.raw)
		}
		list := e.do(t, req{method: "GET", path: "/api/notes"})
		for _, n := range list.body["notes"].([]any) {
			if n.(map[string]any)["id"] == id {
				t.Fatalf("the Note in the trash is listed: %s", list.raw)
			}
		}

		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		if r := e.do(t, req{method: "GET", path: "/api/trash", bearer: tok}); r.status != http.StatusForbidden {
			t.Fatalf("a token looked in the trash: %d %s", r.status, r.raw)
		}
		tr := e.do(t, req{method: "GET", path: "/api/trash"})
		tr.want(t, "trash", http.StatusOK, "")
		notes := tr.body["notes"].([]any)
		if len(notes) != 1 || tr.num("keep_days") != 30 {
			t.Fatalf("trash: %s", tr.raw)
		}
		n := notes[0].(map[string]any)
		deleted, err1 := time.Parse(time.RFC3339, n["deleted_at"].(string))
		purge, err2 := time.Parse(time.RFC3339, n["purge_at"].(string))
		if n["id"] != id || n["title"] != "Launch plan v2" || err1 != nil || err2 != nil || purge.Sub(deleted) != 30*24*time.Hour ||
			n["deleted_by"].(map[string]any)["kind"] != "person" {
			t.Fatalf("trashed note: %v (%v, %v)", n, err1, err2)
		}

		if r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash", bearer: tok}); r.status != http.StatusForbidden {
			t.Fatalf("a token restored from the trash: %d %s", r.status, r.raw)
		}
		if r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash", header: ifMatch(v + 2)}); r.status != http.StatusPreconditionFailed {
			t.Fatalf("untrash at a stale version: %d %s", r.status, r.raw)
		}
		back := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash", header: ifMatch(int64(n["version"].(float64)))})
		back.want(t, "untrash", http.StatusOK, "")
		if back.body["approved"] != true || back.body["title"] != "Launch plan v2" || back.header.Get("ETag") == "" {
			t.Fatalf("untrash answered %s", back.raw)
		}
		text := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md, bearer: tok})
		if text.status != http.StatusOK || text.body["text"] != "# Launch" {
			t.Fatalf("the restored Note's text, read by an agent: %d %s", text.status, text.raw)
		}
		if r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash"}); r.status != http.StatusBadRequest || r.body["field"] != "note_id" {
			t.Fatalf("untrash of a Note not in the trash: %d %s", r.status, r.raw)
		}
		if tr := e.do(t, req{method: "GET", path: "/api/trash"}); len(tr.body["notes"].([]any)) != 0 {
			t.Fatalf("trash after the restore: %s", tr.raw)
		}
	})
}
