package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
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
	anon         bool // no session, no token
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
	} else if !q.anon {
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
		last := vs[0].(map[string]any) // newest first
		who := last["who"].(map[string]any)
		if who["kind"] != "person" || who["id"] != e.Owner.User.ID || last["kind"] != "tab_edited" || !slices.Contains(toStrings(last["changed"]), md) {
			t.Fatalf("last version = %v; want the owner's text edit", last)
		}

		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 1}, header: ifMatch(3)})
		r.want(t, "restore", http.StatusOK, "")
		if r.num("version") != 4 || r.num("restored_version") != 1 || r.header.Get("ETag") != `"4"` || !slices.Contains(toStrings(r.body["changed_tab_ids"]), md) {
			t.Fatalf("restore = %s (ETag %s); want version 4, restored from 1, the markdown tab changed", r.raw, r.header.Get("ETag"))
		}
		r = e.do(t, req{method: "GET", path: "/api/notes/" + id})
		if r.body["title"] != "Plans ✓" || r.num("version") != 4 {
			t.Fatalf("after restoring version 1 the Note is %s; want the first title at version 4", r.raw)
		}
		r = e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md})
		if r.body["text"] != "" {
			t.Fatalf("after restoring version 1 the text is %q", r.body["text"])
		}
		// Restoring what the Note holds now changes nothing: the same
		// version, no tab changed, no new version in the history.
		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 4}, header: ifMatch(4)})
		r.want(t, "restore the current version", http.StatusOK, "")
		if r.num("version") != 4 || r.num("restored_version") != 4 || r.header.Get("ETag") != `"4"` || len(toStrings(r.body["changed_tab_ids"])) != 0 {
			t.Fatalf("restore of the current version = %s (ETag %s); want version 4 and no tab changed", r.raw, r.header.Get("ETag"))
		}
		// So is a save of the text the tab holds.
		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": ""}, header: ifMatch(4)})
		r.want(t, "save the same text", http.StatusOK, "")
		if r.num("version") != 4 || r.header.Get("ETag") != `"4"` || len(toStrings(r.body["changed_tab_ids"])) != 0 {
			t.Fatalf("a save that changes nothing = %s (ETag %s); want version 4 and no tab changed", r.raw, r.header.Get("ETag"))
		}
		if h := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/history"}); len(h.body["versions"].([]any)) != 4 {
			t.Fatalf("history after two writes that change nothing = %s; want 4 versions", h.raw)
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
		r = e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "x"}, header: ifMatch(5)})
		r.want(t, "save into a deleted Note", http.StatusNotFound, "not_found")
		if r.body["field"] != "note_id" {
			t.Fatalf("a save into a deleted Note names %v, want note_id: %s", r.body["field"], r.raw)
		}
		r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 1}, header: ifMatch(5)})
		r.want(t, "restore into a deleted Note", http.StatusNotFound, "not_found")
		if r.body["field"] != "note_id" {
			t.Fatalf("a restore into a deleted Note names %v, want note_id: %s", r.body["field"], r.raw)
		}
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
		// No other door brings it back within an agent's reach: the CLI's
		// approve (the operator, writing on the current version) finds no
		// Note, and its list does not show it.
		ctx := context.Background()
		on := true
		op := service.Operator(e.Owner)
		_, err := e.Server.Service.UpdateNote(ctx, op, service.UpdateNoteArgs{NoteID: id, Approved: &on})
		if pr := (*problem.Problem)(nil); !errors.As(err, &pr) || pr.Code != problem.NotFound || pr.Field != "note_id" {
			t.Fatalf("the CLI's approve of a deleted Note: %v; want not_found naming note_id", err)
		}
		if slices.Contains(listed(t, cs), id) {
			t.Fatalf("list_notes lists the deleted Note %s after an approve", id)
		}
		all, err := e.Server.Service.ListNotes(ctx, op, service.ListNotesArgs{Page: service.Page{Limit: service.MaxPage}})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range all.Notes {
			if n.NoteID == id {
				t.Fatalf("the CLI's list shows the deleted Note %s", id)
			}
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
		changes, _ := r.body["changes"].([]any)
		if len(changes) != 1 {
			t.Fatalf("412 lists changes %v; want the agent's one version", r.body["changes"])
		}
		ch := changes[0].(map[string]any)
		if who := ch["who"].(map[string]any); ch["version"] != float64(agentV) || who["kind"] != "token" || !slices.Equal(toStrings(ch["changed"]), []string{md}) {
			t.Fatalf("412 change = %v; want version %d by the agent's token, changing %s", ch, agentV, md)
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
		// A script's token is an agent whatever the door: over REST its key
		// lives in the Note's scope too, so the same write with the same key
		// is the agent's first answer replayed, and another write is a reuse.
		script := req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "the agent's"},
			header: map[string]string{"If-Match": `"3"`, api.HeaderKey: "save-text-000001"}, bearer: e.WriteToken(t)}
		r = e.do(t, script)
		r.want(t, "a script resending the agent's write", http.StatusOK, "")
		if r.num("version") != 4 || r.header.Get(api.HeaderReplayed) != "true" {
			t.Fatalf("a script's resend of the agent's write = %s (%v); want version 4, replayed", r.raw, r.header)
		}
		script.body = map[string]any{"text": "the script's"}
		e.do(t, script).want(t, "a script's other write with the agent's key", http.StatusUnprocessableEntity, "idempotency_key_reused")

		bad := create
		bad.header = map[string]string{api.HeaderKey: "tiny"}
		if r := e.do(t, bad); r.status != http.StatusBadRequest || r.body["field"] != api.HeaderKey {
			t.Errorf("a create with a 4-character key: %d %s; want 400 naming %s", r.status, r.raw, api.HeaderKey)
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

func TestNotesAuth(t *testing.T) {
	e := startNotes(t, nil)
	id, _ := e.create(t, "Shared", true)
	hidden, _ := e.create(t, "Not granted", true)
	md := e.markdownTab(t, id)
	textPath := "/api/notes/" + id + "/tabs/" + md + "/text"

	// A session without the CSRF header cannot write.
	r := e.do(t, req{method: "PUT", path: textPath, body: map[string]any{"text": "x"}, header: ifMatch(1), noCSRF: true})
	r.want(t, "a session write without CSRF", http.StatusForbidden, "csrf_missing")
	if r.body["field"] != auth.CSRFHeader {
		t.Fatalf("csrf problem names %v", r.body["field"])
	}
	// Nor from another origin.
	r = e.do(t, req{method: "PUT", path: textPath, body: map[string]any{"text": "x"}, header: map[string]string{"If-Match": `"1"`, "Origin": "https://evil.example.com", "Sec-Fetch-Site": "cross-site"}})
	r.want(t, "a cross-origin write", http.StatusForbidden, "cross_origin")

	read := e.Token(t, []string{id}, auth.ScopeRead)
	writeTok := e.Token(t, []string{id}, auth.ScopeRead, auth.ScopeWrite)

	// A read token reads, without CSRF, only what its grant holds.
	r = e.do(t, req{method: "GET", path: "/api/notes/" + id, bearer: read})
	r.want(t, "a read token's GET", http.StatusOK, "")
	e.do(t, req{method: "GET", path: "/api/notes/" + hidden, bearer: read}).want(t, "a Note outside the grant", http.StatusNotFound, "not_found")
	e.do(t, req{method: "GET", path: "/api/notes/" + hidden + "/history", bearer: writeTok}).want(t, "history outside the grant", http.StatusNotFound, "not_found")
	r = e.do(t, req{method: "GET", path: "/api/notes", bearer: read})
	if ids := noteIDs(r); !slices.Equal(ids, []string{id}) {
		t.Fatalf("a token granted one Note lists %v", ids)
	}
	// A read token cannot write.
	r = e.do(t, req{method: "PUT", path: textPath, body: map[string]any{"text": "x"}, header: ifMatch(1), bearer: read})
	r.want(t, "a read token's write", http.StatusForbidden, "insufficient_scope")
	if r.body["required_scope"] != auth.ScopeWrite || !strings.Contains(r.header.Get("WWW-Authenticate"), "insufficient_scope") {
		t.Fatalf("scope problem = %s (%s)", r.raw, r.header.Get("WWW-Authenticate"))
	}
	// A write token writes with no CSRF header, and history names it.
	r = e.do(t, req{method: "PUT", path: textPath, body: map[string]any{"text": "from a script"}, header: ifMatch(1), bearer: writeTok})
	r.want(t, "a write token's save", http.StatusOK, "")
	e.do(t, req{method: "PUT", path: "/api/notes/" + hidden + "/tabs/" + md + "/text", body: map[string]any{"text": "x"}, header: ifMatch(1), bearer: writeTok}).
		want(t, "a write outside the grant", http.StatusNotFound, "not_found")
	h := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/history", bearer: writeTok})
	vs := h.body["versions"].([]any)
	if who := vs[0].(map[string]any)["who"].(map[string]any); who["kind"] != "token" || who["name"] != "test" {
		t.Fatalf("the script's version is by %v; want the token", who)
	}
	// People's acts stay people's.
	e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"approved": false}, header: ifMatch(2), bearer: writeTok}).
		want(t, "a token switching access", http.StatusForbidden, "person_only")
	e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(2), bearer: writeTok}).want(t, "a token deleting", http.StatusForbidden, "person_only")
	e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "t"}, bearer: writeTok}).want(t, "a token creating", http.StatusForbidden, "person_only")
	e.do(t, req{method: "GET", path: "/api/me", bearer: writeTok}).want(t, "a token on /api/me", http.StatusForbidden, "person_only")
	// A bad token, or a bad header, is 401.
	r = e.do(t, req{method: "GET", path: "/api/notes", bearer: "fdy_not-a-token"})
	r.want(t, "an unknown token", http.StatusUnauthorized, "unauthenticated")
	if !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("401 without WWW-Authenticate invalid_token: %v", r.header)
	}
	e.do(t, req{method: "GET", path: "/api/notes", header: map[string]string{"Authorization": "Basic abc"}}).want(t, "Basic auth", http.StatusUnauthorized, "unauthenticated")
	// An unapproved Note is out of every token's reach, and in the person's.
	e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"approved": false}, header: ifMatch(2)}).want(t, "switch access off", http.StatusOK, "")
	e.do(t, req{method: "GET", path: "/api/notes/" + id, bearer: read}).want(t, "an unapproved Note by token", http.StatusNotFound, "not_found")
	e.do(t, req{method: "GET", path: "/api/notes/" + id}).want(t, "an unapproved Note by session", http.StatusOK, "")
	// Nobody signed in.
	r = e.do(t, req{method: "GET", path: "/api/notes", anon: true})
	r.want(t, "nobody signed in", http.StatusUnauthorized, "unauthenticated")
	if r.body["message"] != "Sign in at /signin" {
		t.Fatalf("401 = %s", r.raw)
	}
}

func noteIDs(r resp) []string {
	var ids []string
	for _, x := range r.body["notes"].([]any) {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	return ids
}

func TestNotesHostileInput(t *testing.T) {
	e := startNotes(t, nil)
	id, _ := e.create(t, "Target", false)
	md := e.markdownTab(t, id)
	for _, c := range []struct {
		what  string
		q     req
		want  int
		field string
	}{
		{"a NUL in the ID", req{method: "GET", path: "/api/notes/note%00x"}, 400, "note_id"},
		{"a bidi control in the ID", req{method: "GET", path: "/api/notes/note%E2%80%AEx"}, 400, "note_id"},
		{"invalid UTF-8 in the ID", req{method: "GET", path: "/api/notes/note%FFx"}, 400, "note_id"},
		{"an ID too long", req{method: "GET", path: "/api/notes/" + strings.Repeat("n", 300)}, 400, "note_id"},
		{"a tab ID with a control", req{method: "GET", path: "/api/notes/" + id + "/tabs/md%07"}, 400, "tab_id"},
		{"an unknown Note", req{method: "GET", path: "/api/notes/note_nope"}, 404, "note_id"},
		{"an unknown tab", req{method: "GET", path: "/api/notes/" + id + "/tabs/sheet_99"}, 404, "tab_id"},
		{"a forged cursor", req{method: "GET", path: "/api/notes?cursor=bm90LWEtY3Vyc29y"}, 400, "cursor"},
		{"a cursor of another list", req{method: "GET", path: "/api/notes?cursor=ZTo5"}, 400, "cursor"},
		{"a cursor with padding", req{method: "GET", path: "/api/notes?cursor=bjpub3RlXzE%3D"}, 400, "cursor"},
		{"limit 0", req{method: "GET", path: "/api/notes?limit=0"}, 400, "limit"},
		{"limit 51", req{method: "GET", path: "/api/notes?limit=51"}, 400, "limit"},
		{"limit not a number", req{method: "GET", path: "/api/notes?limit=ten"}, 400, "limit"},
		{"an unknown parameter", req{method: "GET", path: "/api/notes?q=x"}, 400, "q"},
		{"a query too long", req{method: "GET", path: "/api/notes?query=" + strings.Repeat("q", 300)}, 413, "query"},
		{"malformed JSON", req{method: "POST", path: "/api/notes", body: `{"title":`}, 400, "body"},
		{"not an object", req{method: "POST", path: "/api/notes", body: `["title"]`}, 400, "body"},
		{"two values", req{method: "POST", path: "/api/notes", body: `{"title":"a"}{"title":"b"}`}, 400, "body"},
		{"a wrong type", req{method: "POST", path: "/api/notes", body: `{"title":7}`}, 400, "title"},
		{"an unknown member", req{method: "POST", path: "/api/notes", body: `{"title":"a","owner":"x"}`}, 400, "owner"},
		{"a missing title", req{method: "POST", path: "/api/notes", body: `{}`}, 400, "title"},
		{"an empty title", req{method: "POST", path: "/api/notes", body: `{"title":"   "}`}, 400, "title"},
		{"not JSON", req{method: "POST", path: "/api/notes", body: `title=x`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "Content-Type"},
		{"a text that is not a string", req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: `{"text":{"a":1}}`, header: ifMatch(1)}, 400, "text"},
		{"text into a non-markdown tab", req{method: "PUT", path: "/api/notes/" + id + "/tabs/sources/text", body: `{"text":"x"}`, header: ifMatch(1)}, 422, "tab_id"},
		{"a restore of no version", req{method: "POST", path: "/api/notes/" + id + "/restore", body: `{}`, header: ifMatch(1)}, 400, "version"},
		{"a restore of a version to come", req{method: "POST", path: "/api/notes/" + id + "/restore", body: `{"version":9}`, header: ifMatch(1)}, 400, "version"},
		{"a PATCH of nothing", req{method: "PATCH", path: "/api/notes/" + id, body: `{}`, header: ifMatch(1)}, 400, "title"},
		{"a wrong method", req{method: "POST", path: "/api/notes/" + id}, 405, "method"},
		{"no such path", req{method: "GET", path: "/api/notes/" + id + "/nope"}, 404, "path"},
	} {
		r := e.do(t, c.q)
		if r.status != c.want || (c.field != "" && r.body["field"] != c.field) {
			t.Errorf("%s: %d %s; want %d naming %q", c.what, r.status, r.raw, c.want, c.field)
			continue
		}
		for _, k := range []string{"type", "title", "status", "detail", "code"} {
			if r.body[k] == nil || r.body[k] == "" {
				t.Errorf("%s: the problem has no %s: %s", c.what, k, r.raw)
			}
		}
		if r.num("status") != int64(r.status) || r.body["type"] != api.ProblemType+r.body["code"].(string) {
			t.Errorf("%s: status or type disagree with the answer: %s", c.what, r.raw)
		}
	}
	// A body too large is cut off and answered 413.
	big := `{"title":"` + strings.Repeat("x", 10<<20) + `"}`
	e.do(t, req{method: "POST", path: "/api/notes", body: big}).want(t, "a 10 MiB create", http.StatusRequestEntityTooLarge, "limit_exceeded")
	text := `{"text":"` + strings.Repeat("x", api.MaxTextBody) + `"}`
	e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: text, header: ifMatch(1)}).
		want(t, "a text body over the limit", http.StatusRequestEntityTooLarge, "limit_exceeded")
	// Nothing above wrote: the Note is at version 1.
	r := e.do(t, req{method: "GET", path: "/api/notes/" + id})
	if r.num("version") != 1 {
		t.Fatalf("hostile requests wrote the Note: %s", r.raw)
	}
}
