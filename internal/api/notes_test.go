package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/server/servertest"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// notesEnv is a real server on 127.0.0.1 with the owner signed in.
type notesEnv struct {
	*servertest.Env
	owner browser
}

func startNotes(t *testing.T, st store.Store) *notesEnv {
	t.Helper()
	e := servertest.Start(t, servertest.Options{Store: st})
	return &notesEnv{Env: e, owner: signIn(t, e.Server.Store, e.Owner.User)}
}

// stores runs fn on SQLite and, when FOUNDRY_TEST_POSTGRES_URL is set, on
// PostgreSQL.
func stores(t *testing.T, fn func(t *testing.T, e *notesEnv)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, startNotes(t, nil)) })
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		st, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		fn(t, startNotes(t, st))
	})
}

// req is one request: by default as the signed-in owner, with the CSRF
// header on mutating calls.
type req struct {
	method, path string
	body         any // a string is sent as it is; anything else as JSON
	header       map[string]string
	bearer       string // use this token instead of the session
	noCSRF       bool
}

type resp struct {
	status int
	body   map[string]any
	header http.Header
	raw    []byte
}

func (e *notesEnv) do(t *testing.T, q req) resp {
	t.Helper()
	var body io.Reader
	switch b := q.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	r, err := http.NewRequest(q.method, e.URL+q.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if q.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+q.bearer)
	} else {
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: e.owner.secret})
		if !q.noCSRF && q.method != "GET" {
			r.Header.Set(auth.CSRFHeader, e.owner.csrf)
		}
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		t.Fatal(err)
	}
	out := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		ct := res.Header.Get("Content-Type")
		if res.StatusCode >= 400 && ct != api.ProblemContentType {
			t.Fatalf("%s %s answered %d with Content-Type %q, not %s: %s", q.method, q.path, res.StatusCode, ct, api.ProblemContentType, raw)
		}
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s answered %d with a body that is not a JSON object: %s", q.method, q.path, res.StatusCode, raw)
		}
	}
	return out
}

// want fails unless r has the status and, for an error, the problem code.
func (r resp) want(t *testing.T, what string, status int, code string) {
	t.Helper()
	if r.status != status || (code != "" && r.body["code"] != code) {
		t.Fatalf("%s: %d %s; want %d %s", what, r.status, r.raw, status, code)
	}
}

func (r resp) num(k string) int64 { f, _ := r.body[k].(float64); return int64(f) }

func ifMatch(v int64) map[string]string { return map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v)} }

// create makes a Note and answers its ID and version.
func (e *notesEnv) create(t *testing.T, title string, approved bool) (string, int64) {
	t.Helper()
	r := e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": title, "approved": approved}})
	r.want(t, "create", http.StatusCreated, "")
	return r.body["id"].(string), r.num("version")
}

// markdownTab is the ID of the Note's markdown tab.
func (e *notesEnv) markdownTab(t *testing.T, id string) string {
	t.Helper()
	r := e.do(t, req{method: "GET", path: "/api/notes/" + id})
	r.want(t, "GET note", http.StatusOK, "")
	for _, x := range r.body["tabs"].([]any) {
		tab := x.(map[string]any)
		if tab["type"] == "markdown" {
			return tab["tab_id"].(string)
		}
	}
	t.Fatalf("no markdown tab in %s", r.raw)
	return ""
}

func TestNoteLifecycle(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		r := e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "  Plans ✓  ", "approved": true}})
		r.want(t, "create", http.StatusCreated, "")
		id := r.body["id"].(string)
		if r.body["title"] != "Plans ✓" || r.body["approved"] != true || r.num("version") != 1 ||
			r.header.Get("Location") != "/api/notes/"+id || r.header.Get("ETag") != `"1"` {
			t.Fatalf("create answered %s with Location %q ETag %q", r.raw, r.header.Get("Location"), r.header.Get("ETag"))
		}

		r = e.do(t, req{method: "GET", path: "/api/notes?query=plans"})
		r.want(t, "list", http.StatusOK, "")
		notes := r.body["notes"].([]any)
		if len(notes) != 1 || notes[0].(map[string]any)["id"] != id || r.body["next_cursor"] != nil {
			t.Fatalf("list ?query=plans = %s; want only the new Note and no next cursor", r.raw)
		}

		md := e.markdownTab(t, id)
		r = e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "Plans 2"}, header: ifMatch(1)})
		r.want(t, "rename", http.StatusOK, "")
		if r.num("version") != 2 || r.body["title"] != "Plans 2" || r.header.Get("ETag") != `"2"` {
			t.Fatalf("rename = %s", r.raw)
		}

		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "# Hello\n", "expected_version": 2}})
		r.want(t, "save text", http.StatusOK, "")
		if r.num("version") != 3 || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{md}) {
			t.Fatalf("save text = %s; want version 3 and the markdown tab changed", r.raw)
		}
		r = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md})
		r.want(t, "read tab", http.StatusOK, "")
		if r.body["text"] != "# Hello\n" || r.header.Get("ETag") != `"3"` || r.body["tab_id"] != md {
			t.Fatalf("read tab = %s ETag %s", r.raw, r.header.Get("ETag"))
		}

		r = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/history"})
		r.want(t, "history", http.StatusOK, "")
		vs := r.body["versions"].([]any)
		if len(vs) != 3 {
			t.Fatalf("history = %s; want 3 versions", r.raw)
		}
		last := vs[2].(map[string]any)
		who := last["who"].(map[string]any)
		if who["kind"] != "person" || who["id"] != e.Owner.User.ID || last["kind"] != "tab_edited" || !slices.Contains(toStrings(last["changed"]), md) {
			t.Fatalf("last version = %v; want the owner's text edit", last)
		}

		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 1}, header: ifMatch(3)})
		r.want(t, "restore", http.StatusOK, "")
		if r.num("version") != 4 || r.body["title"] != "Plans ✓" {
			t.Fatalf("restore = %s; want version 4 with the first title", r.raw)
		}
		r = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md})
		if r.body["text"] != "" {
			t.Fatalf("after restoring version 1 the text is %q", r.body["text"])
		}

		// An agent reaches the approved Note until it is deleted.
		cs := e.Client(t, e.WriteToken(t), "")
		if !slices.Contains(listed(t, cs), id) {
			t.Fatalf("list_notes does not list the approved Note %s", id)
		}
		r = e.do(t, req{method: "DELETE", path: "/api/notes/" + id})
		r.want(t, "delete without a precondition", http.StatusPreconditionRequired, "precondition_required")
		r = e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(4)})
		if r.status != http.StatusNoContent || len(r.raw) != 0 {
			t.Fatalf("delete: %d %s; want 204", r.status, r.raw)
		}
		e.do(t, req{method: "GET", path: "/api/notes/" + id}).want(t, "GET a deleted Note", http.StatusNotFound, "not_found")
		e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "x"}, header: ifMatch(5)}).
			want(t, "save into a deleted Note", http.StatusNotFound, "not_found")
		r = e.do(t, req{method: "GET", path: "/api/notes?query=plans"})
		if n := len(r.body["notes"].([]any)); n != 0 {
			t.Fatalf("the list still shows the deleted Note: %s", r.raw)
		}
		if slices.Contains(listed(t, cs), id) {
			t.Fatalf("list_notes still lists the deleted Note %s", id)
		}
		if res := servertest.MustCall(t, cs, "list_note_tabs", map[string]any{"note_id": id}); res.Code() != "not_found" {
			t.Fatalf("list_note_tabs of a deleted Note: %v; want not_found", res.Data)
		}
	})
}

// listed is every Note ID list_notes shows the agent (one page suffices).
func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res := servertest.MustCall(t, cs, "list_notes", map[string]any{"limit": 50})
	if res.IsError {
		t.Fatalf("list_notes: %v", res.Data)
	}
	var ids []string
	for _, x := range res.List("notes") {
		ids = append(ids, x.(map[string]any)["note_id"].(string))
	}
	return ids
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
