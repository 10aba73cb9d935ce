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

// agentText replaces the markdown through MCP, as an agent does.
func agentText(t *testing.T, cs *mcp.ClientSession, id, tab string, version int64, key, text string) int64 {
	t.Helper()
	res := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": tab, "expected_version": version,
		"idempotency_key": key, "operation": "replace_text", "text": text})
	if res.IsError {
		t.Fatalf("edit_note_tab: %v", res.Data)
	}
	return res.Int("version")
}

func TestPreconditions(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Guarded", true)
		md := e.markdownTab(t, id)
		path := "/api/notes/" + id + "/tabs/" + md + "/text"

		r := e.do(t, req{method: "PUT", path: path, body: map[string]any{"text": "mine"}})
		r.want(t, "a save without a precondition", http.StatusPreconditionRequired, "precondition_required")
		if r.body["type"] != api.ProblemType+"precondition_required" || r.body["field"] != "If-Match" || r.num("status") != 428 {
			t.Fatalf("428 problem = %s", r.raw)
		}

		// An agent writes in between: the person's save, based on v, is 412.
		cs := e.Client(t, e.WriteToken(t), "")
		agentV := agentText(t, cs, id, md, v, "agent-edit-0001", "theirs")
		r = e.do(t, req{method: "PUT", path: path, body: map[string]any{"text": "mine"}, header: ifMatch(v)})
		r.want(t, "a stale save", http.StatusPreconditionFailed, "version_conflict")
		if r.num("current_version") != agentV || !slices.Equal(toStrings(r.body["changed_tab_ids"]), []string{md}) ||
			r.body["type"] != api.ProblemType+"version_conflict" || r.body["title"] == "" || r.body["detail"] == "" || r.num("status") != 412 {
			t.Fatalf("412 problem = %s; want current_version %d and changed_tab_ids [%s]", r.raw, agentV, md)
		}
		tab := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md})
		if tab.body["text"] != "theirs" {
			t.Fatalf("the stale save clobbered the agent's text: %s", tab.raw)
		}

		// Both spellings of the precondition, different: 400 naming both.
		r = e.do(t, req{method: "PUT", path: path, body: map[string]any{"text": "mine", "expected_version": agentV}, header: ifMatch(v)})
		r.want(t, "If-Match and expected_version disagreeing", http.StatusBadRequest, "invalid_argument")
		if !strings.Contains(r.body["detail"].(string), "If-Match") || !strings.Contains(r.body["detail"].(string), "expected_version") {
			t.Fatalf("the refusal does not name both: %s", r.raw)
		}
		// Both, the same: fine.
		r = e.do(t, req{method: "PUT", path: path, body: map[string]any{"text": "mine", "expected_version": agentV}, header: ifMatch(agentV)})
		r.want(t, "a save with both preconditions equal", http.StatusOK, "")
		if r.num("version") != agentV+1 || r.header.Get("ETag") != fmt.Sprintf(`"%d"`, agentV+1) {
			t.Fatalf("save = %s ETag %s", r.raw, r.header.Get("ETag"))
		}
		// The agent's next write, from its old version, is the one refused now.
		res := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": md, "expected_version": agentV,
			"idempotency_key": "agent-edit-0002", "operation": "replace_text", "text": "theirs again"})
		if !res.Conflict() {
			t.Fatalf("the agent's stale write after the person's save: %v; want version_conflict", res.Data)
		}

		for _, bad := range []string{`3`, `"abc"`, `W/"3"`, `*`, `"0"`, `"1", "2"`, `"01"`, `"99999999999999999999"`} {
			r = e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "x"}, header: map[string]string{"If-Match": bad}})
			if r.status != http.StatusBadRequest || r.body["field"] != "If-Match" {
				t.Errorf("If-Match %s: %d %s; want 400 naming If-Match", bad, r.status, r.raw)
			}
		}
		r = e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "x", "expected_version": 0}})
		if r.status != http.StatusBadRequest || r.body["field"] != "expected_version" {
			t.Errorf("expected_version 0: %d %s; want 400 naming expected_version", r.status, r.raw)
		}
		// A version ahead of the Note's is a conflict too, never a write.
		e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "x"}, header: ifMatch(agentV + 50)}).
			want(t, "a version ahead", http.StatusPreconditionFailed, "version_conflict")
	})
}

func TestIdempotentRetries(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		create := req{method: "POST", path: "/api/notes", body: map[string]any{"title": "Once"}, header: map[string]string{api.HeaderKey: "create-once-0001"}}
		first := e.do(t, create)
		first.want(t, "create with a key", http.StatusCreated, "")
		if first.header.Get(api.HeaderReplayed) != "" {
			t.Fatalf("the first create says it was replayed")
		}
		again := e.do(t, create)
		again.want(t, "create resent", http.StatusCreated, "")
		if again.body["id"] != first.body["id"] || again.header.Get(api.HeaderReplayed) != "true" || again.header.Get("Location") != first.header.Get("Location") {
			t.Fatalf("resent create = %s (%v); want the first Note %s, replayed", again.raw, again.header, first.body["id"])
		}
		r := e.do(t, req{method: "GET", path: "/api/notes?query=Once"})
		if n := len(r.body["notes"].([]any)); n != 1 {
			t.Fatalf("two creates with one key made %d Notes: %s", n, r.raw)
		}
		other := create
		other.body = map[string]any{"title": "Twice"}
		e.do(t, other).want(t, "the same key for another create", http.StatusUnprocessableEntity, "idempotency_key_reused")

		id := first.body["id"].(string)
		md := e.markdownTab(t, id)
		save := req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "draft ✓"},
			header: map[string]string{"If-Match": `"1"`, api.HeaderKey: "save-text-000001"}}
		s1 := e.do(t, save)
		s1.want(t, "save with a key", http.StatusOK, "")
		s2 := e.do(t, save)
		s2.want(t, "save resent", http.StatusOK, "")
		if s2.num("version") != s1.num("version") || s2.header.Get(api.HeaderReplayed) != "true" || s2.header.Get("ETag") != s1.header.Get("ETag") {
			t.Fatalf("resent save = %s (%v); want the first answer %s, replayed", s2.raw, s2.header, s1.raw)
		}
		h := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/history"})
		if n := len(h.body["versions"].([]any)); n != 2 {
			t.Fatalf("a save sent twice made %d versions, want 2 (create, save): %s", n, h.raw)
		}
		reuse := save
		reuse.body = map[string]any{"text": "something else"}
		r = e.do(t, reuse)
		r.want(t, "the same key for another text", http.StatusUnprocessableEntity, "idempotency_key_reused")
		if r.body["field"] != api.HeaderKey {
			t.Fatalf("key reuse names %v, want %s", r.body["field"], api.HeaderKey)
		}

		// An agent's key of the same spelling lives in another scope: its
		// write is its own, neither a replay nor a reuse.
		cs := e.Client(t, e.WriteToken(t), "")
		if _, err := e.Server.Store.Head(context.Background(), store.TypeNote, id); err != nil {
			t.Fatal(err)
		}
		e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"approved": true}, header: ifMatch(2)}).want(t, "approve", http.StatusOK, "")
		res := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": id, "tab_id": md, "expected_version": 3,
			"idempotency_key": "save-text-000001", "operation": "replace_text", "text": "the agent's"})
		if res.IsError || res.Bool("replayed") || res.Int("version") != 4 {
			t.Fatalf("the agent's write with the person's key string: %v; want its own write (version 4), neither replayed nor refused", res.Data)
		}

		for _, bad := range []string{"short", strings.Repeat("k", 129), "bad\u200dkey-000"} {
			b := save
			b.header = map[string]string{"If-Match": `"4"`, api.HeaderKey: bad}
			r := e.do(t, b)
			if r.status != http.StatusBadRequest || r.body["field"] != api.HeaderKey {
				t.Errorf("Idempotency-Key %q: %d %s; want 400 naming it", bad, r.status, r.raw)
			}
		}
	})
}
