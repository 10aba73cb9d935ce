package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/note"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// protocols: every test that talks MCP runs against both revisions we serve.
var protocols = []string{"2026-07-28", "2025-11-25"}

func tabs(t *testing.T, cs *mcp.ClientSession, noteID string) (version int64, byType map[string][]string) {
	t.Helper()
	r := servertest.MustCall(t, cs, "list_note_tabs", map[string]any{"note_id": noteID})
	if r.IsError {
		t.Fatalf("list_note_tabs: %s", r.Text)
	}
	byType = map[string][]string{}
	for _, x := range r.Data["tabs"].([]any) {
		m := x.(map[string]any)
		byType[m["type"].(string)] = append(byType[m["type"].(string)], m["tab_id"].(string))
	}
	return r.Int("version"), byType
}

// TestSeedPayloads answers every case of the seeds' payload battery as
// expected, over real MCP, in both protocol revisions.
func TestSeedPayloads(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/seed-payloads.json")
	if err != nil {
		t.Fatal(err)
	}
	var battery struct {
		Base  map[string]map[string]any `json:"base"`
		Cases []struct {
			Tool   string         `json:"tool"`
			Args   map[string]any `json:"args"`
			Expect string         `json:"expect"`
			Why    string         `json:"why"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &battery); err != nil {
		t.Fatal(err)
	}
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			e := servertest.Start(t, servertest.Options{})
			cs := e.Client(t, e.WriteToken(t), proto)
			ran := 0
			for i, c := range battery.Cases {
				ran++
				t.Run(fmt.Sprintf("%02d_%s_%s", i, c.Tool, c.Expect), func(t *testing.T) {
					version, byType := tabs(t, cs, e.NoteID)
					args := map[string]any{}
					for k, v := range battery.Base[c.Tool] {
						switch v {
						case "<note>":
							args[k] = e.NoteID
						case "<cloud room>":
							args[k] = e.RoomID
						case "<slides tab>":
							args[k] = byType["slides"][0]
						case "<current>":
							args[k] = version
						case "<fresh 8+ chars>":
							args[k] = fmt.Sprintf("seed-case-%02d-%s", i, proto)
						default:
							args[k] = v
						}
					}
					for k, v := range c.Args {
						if s, ok := v.(string); ok && s == "<201 x 'n'>" {
							v = strings.Repeat("n", 201)
						}
						if s, ok := v.(string); ok && strings.HasPrefix(s, "<21 items") {
							items := make([]any, 21)
							for j := range items {
								items[j] = map[string]any{"title": fmt.Sprint("s", j)}
							}
							v = items
						}
						args[k] = v
					}
					r := servertest.MustCall(t, cs, c.Tool, args)
					if c.Expect == "ok" {
						if r.IsError {
							t.Fatalf("want ok, got error: %s", r.Text)
						}
						return
					}
					if !r.IsError {
						t.Fatalf("want refusal (%s), got ok: %s", c.Why, r.Text)
					}
					field := strings.SplitN(c.Why, ":", 2)[0]
					// Paths in messages are rendered with backslashes escaped.
					if !strings.Contains(strings.ReplaceAll(r.Text, `\\`, `\`), field) {
						t.Fatalf("refusal %q does not name %q (%s)", r.Text, field, c.Why)
					}
					if c.Tool != "propose_room_snippet_app" {
						if v2, _ := tabs(t, cs, e.NoteID); v2 != version {
							t.Fatalf("a refused call changed the version %d → %d", version, v2)
						}
					}
				})
			}
			if ran != len(battery.Cases) {
				t.Fatalf("ran %d of %d cases", ran, len(battery.Cases))
			}
		})
	}
}

func TestCreateTabKeyReplaysAndReuseIsRefused(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			e := servertest.Start(t, servertest.Options{})
			cs := e.Client(t, e.WriteToken(t), proto)
			args, _ := createThenResend(t, cs, cs, cs, e.NoteID, "deck-q3-review")
			// The same key for another request is refused by name.
			args["label"] = "Another deck"
			args["expected_version"] = args["expected_version"].(int64) + 1
			reused := servertest.MustCall(t, cs, "create_note_tab", args)
			if !reused.IsError || reused.Str("error") != "idempotency_key_reused" || !strings.Contains(reused.Text, "deck-q3-review") {
				t.Fatalf("reused key: %s", reused.Text)
			}
		})
	}
}

// createThenResend creates a slides tab through first with key, resends the
// same call through again (the resend after a lost response carries the old
// version) and checks, through check, that it replayed and that exactly one
// tab was created. It returns the call's arguments and the first answer.
func createThenResend(t *testing.T, first, again, check *mcp.ClientSession, noteID, key string) (map[string]any, mcpclient.Result) {
	t.Helper()
	v, before := tabs(t, check, noteID)
	args := map[string]any{"note_id": noteID, "expected_version": v, "idempotency_key": key, "tab_type": "slides", "label": "Deck " + key}
	r1 := servertest.MustCall(t, first, "create_note_tab", args)
	if r1.IsError || r1.Data["replayed"] != false || r1.Int("version") != v+1 {
		t.Fatalf("first create: %s", r1.Text)
	}
	r2 := servertest.MustCall(t, again, "create_note_tab", args)
	if r2.IsError || r2.Str("tab_id") != r1.Str("tab_id") || r2.Data["replayed"] != true {
		t.Fatalf("resend: %s, want tab %s replayed", r2.Text, r1.Str("tab_id"))
	}
	v2, after := tabs(t, check, noteID)
	if len(after["slides"]) != len(before["slides"])+1 || v2 != v+1 {
		t.Fatalf("slides tabs %d → %d, version %d → %d; want exactly one new tab", len(before["slides"]), len(after["slides"]), v, v2)
	}
	return args, r1
}

func TestStaleVersionConflictWritesNothing(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	v, byType := tabs(t, cs, e.NoteID)
	deck := byType["slides"][0]
	ok := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": deck, "expected_version": v,
		"idempotency_key": "person-like-edit-1", "operation": "slide_add", "title": "Added first"})
	if ok.IsError {
		t.Fatal(ok.Text)
	}
	stale := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": v,
		"idempotency_key": "stale-edit-0001", "operation": "replace_text", "text": "overwrite"})
	if !stale.IsError || stale.Str("error") != "version_conflict" {
		t.Fatalf("stale write: %s", stale.Text)
	}
	d := stale.Data
	if int64(d["current_version"].(float64)) != v+1 || fmt.Sprint(d["changed_tab_ids"]) != "["+deck+"]" {
		t.Fatalf("conflict details %v, want current %d and changed [%s]", d, v+1, deck)
	}
	if !strings.Contains(stale.Text, "read the tab again") && !strings.Contains(stale.Text, "Read the tab again") {
		t.Fatalf("conflict does not tell the agent to re-read: %s", stale.Text)
	}
	md := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	if strings.Contains(md.Str("text"), "overwrite") || md.Int("version") != v+1 {
		t.Fatalf("a conflicting write landed: %s", md.Text)
	}
}

func TestTypeNameAsTabIDIsRefusedWithTheRealIDs(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	v, byType := tabs(t, cs, e.NoteID)
	r := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "slides", "expected_version": v,
		"idempotency_key": "edit-by-type-name", "operation": "slide_add", "title": "x"})
	if !r.IsError || r.Str("error") != "unknown_tab" {
		t.Fatalf("tab_id slides: %s", r.Text)
	}
	for _, id := range append(byType["slides"], byType["sheet"]...) {
		if !strings.Contains(r.Text, id) {
			t.Fatalf("refusal does not list %s: %s", id, r.Text)
		}
	}
	if v2, _ := tabs(t, cs, e.NoteID); v2 != v {
		t.Fatalf("version moved %d → %d", v, v2)
	}
}

func TestSourcesDedupeAndSchemes(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	v, _ := tabs(t, cs, e.NoteID)
	a := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": e.NoteID, "expected_version": v, "idempotency_key": "src-spelling-one",
		"title": "Report", "url": "https://www.Example.org/report/?utm_source=feed#intro"})
	if a.IsError || a.Data["already_attached"] != false {
		t.Fatal(a.Text)
	}
	b := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": e.NoteID, "expected_version": a.Int("version"), "idempotency_key": "src-spelling-two",
		"title": "Report again", "url": "http://example.org/report"})
	if b.IsError || b.Data["already_attached"] != true || b.Str("source_id") != a.Str("source_id") {
		t.Fatalf("second spelling: %s", b.Text)
	}
	list := servertest.MustCall(t, cs, "list_note_attachments", map[string]any{"note_id": e.NoteID, "kind": "sources"})
	n := 0
	for _, it := range list.Data["items"].([]any) {
		if strings.Contains(it.(map[string]any)["normalized_url"].(string), "example.org/report") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d sources for one page, want 1: %s", n, list.Text)
	}
	js := servertest.MustCall(t, cs, "add_note_source", map[string]any{"note_id": e.NoteID, "expected_version": b.Int("version"), "idempotency_key": "src-javascript-1",
		"title": "x", "url": "javascript:alert(1)"})
	if !js.IsError || !strings.Contains(js.Text, "url") {
		t.Fatalf("javascript: URL: %s", js.Text)
	}
}

// TestReadOnlyTokenRefusedOnEveryWriteTool: 403 insufficient_scope at HTTP.
func TestReadOnlyTokenRefusedOnEveryWriteTool(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	ro := e.Token(t, nil, auth.ScopeRead)
	writes := 0
	for _, tool := range e.Server.MCP.Tools() {
		if tool.ReadOnly() {
			continue
		}
		writes++
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, tool.Def.Name)
		resp := post(t, e.URL+"/mcp", ro, body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), auth.ScopeWrite) {
			t.Errorf("%s with a read-only token: %d %q", tool.Def.Name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if writes < 3 {
		t.Fatalf("only %d write tools", writes)
	}
}

func TestUnauthenticatedCallsAnd401(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	if resp := post(t, e.URL+"/mcp", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list without a token: %d", resp.StatusCode)
	}
	want := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description=`, e.URL)
	for _, tok := range []string{"", "fdy_not-a-real-token"} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`,
		} {
			resp := post(t, e.URL+"/mcp", tok, body)
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) {
				t.Fatalf("token %q, %s: %d %q", tok, body, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
	// A revoked token is refused like an unknown one.
	secret := e.WriteToken(t)
	toks, _ := e.Server.Store.Tokens(context.Background(), e.Owner.Workspace.ID)
	for _, tk := range toks {
		e.Server.Store.RevokeToken(context.Background(), e.Owner.Workspace.ID, tk.ID)
	}
	if resp := post(t, e.URL+"/mcp", secret, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d", resp.StatusCode)
	}
	resp, err := http.Get(e.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	if meta["resource"] != e.URL+"/mcp" {
		t.Fatalf("RFC 9728 metadata: %v", meta)
	}
}

// TestForeignOriginIsRefused: a browser page of another site, or a DNS
// rebinding (a foreign Host that resolves to this loopback server), gets 403.
func TestForeignOriginIsRefused(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	for _, c := range []struct {
		name, host, origin string
		want               int
	}{
		{"foreign origin", "", "https://evil.example", http.StatusForbidden},
		{"rebinding host", "evil.example", "", http.StatusForbidden},
		{"rebinding host and origin", "evil.example:8080", "http://evil.example:8080", http.StatusForbidden},
		{"loopback origin", "", "http://localhost:3000", http.StatusOK},
		{"no origin", "", "", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

// TestUnreachableNotesAreNotFound: not approved, not in the grant, another
// workspace — all answer not found, never forbidden.
func TestUnreachableNotesAreNotFound(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	h, err := e.Server.Service.CreateNote(ctx, asOwner(e), service.CreateNoteArgs{Title: "Private"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.Server.Service.CreateNote(ctx, asOwner(e), service.CreateNoteArgs{Title: "Granted", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	hidden, granted := h.NoteID, g.NoteID
	narrow := e.Client(t, e.Token(t, []string{granted}, auth.ScopeRead), "")
	wide := e.Client(t, e.WriteToken(t), "")
	for name, c := range map[string]struct {
		cs   *mcp.ClientSession
		note string
	}{"not approved": {wide, hidden}, "not in grant": {narrow, e.NoteID}, "no such note": {wide, "note_doesnotexist"}} {
		r := servertest.MustCall(t, c.cs, "list_note_tabs", map[string]any{"note_id": c.note})
		if !r.IsError || r.Str("error") != "not_found" {
			t.Errorf("%s: %s", name, r.Text)
		}
	}
	list := servertest.MustCall(t, narrow, "list_notes", map[string]any{})
	if got := list.Data["notes"].([]any); len(got) != 1 || got[0].(map[string]any)["note_id"] != granted {
		t.Fatalf("narrow grant lists %v", got)
	}
}

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	resp := send(t, url, token, body)
	resp.Body.Close()
	return resp
}

// send posts one JSON-RPC body with an optional bearer token; the caller
// closes the answer's body.
func send(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestConcurrentSameKeyAppliesOnce over MCP.
func TestConcurrentSameKeyAppliesOnce(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	tok := e.WriteToken(t)
	cs := e.Client(t, tok, "")
	v, before := tabs(t, cs, e.NoteID)
	const n = 12
	var wg sync.WaitGroup
	results := make([]mcpclient.Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.Client(t, tok, protocols[i%2])
			results[i] = servertest.MustCall(t, c, "create_note_tab", map[string]any{"note_id": e.NoteID, "expected_version": v,
				"idempotency_key": "concurrent-create-1", "tab_type": "sheet"})
		}()
	}
	wg.Wait()
	applied := 0
	for _, r := range results {
		if r.IsError || r.Str("tab_id") != results[0].Str("tab_id") {
			t.Fatalf("result %s differs from %s", r.Text, results[0].Text)
		}
		if r.Data["replayed"] == false {
			applied++
		}
	}
	_, after := tabs(t, cs, e.NoteID)
	if applied != 1 || len(after["sheet"]) != len(before["sheet"])+1 {
		t.Fatalf("applied %d, sheet tabs %d → %d", applied, len(before["sheet"]), len(after["sheet"]))
	}
}

// TestTwoWritersLoseNothing: an agent that re-reads and re-applies on
// conflict and a person, each appending 100 unique lines to one markdown tab.
func TestTwoWritersLoseNothing(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	ctx := context.Background()
	const edits = 100
	var wg sync.WaitGroup
	wg.Add(2)
	conflicts := [2]int{}
	go func() { // the agent, over MCP
		defer wg.Done()
		for i := range edits {
			line := fmt.Sprintf("agent-%03d", i)
			for attempt := 0; attempt < 1000; attempt++ {
				cur := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
				r := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
					"idempotency_key": fmt.Sprintf("%s-try-%d", line, attempt), "operation": "replace_text", "text": cur.Str("text") + line + "\n"})
				if !r.IsError {
					break
				}
				if r.Str("error") != "version_conflict" {
					t.Errorf("agent edit: %s", r.Text)
					return
				}
				conflicts[0]++
			}
		}
	}()
	go func() { // the person, through the service as the web editor does
		defer wg.Done()
		for i := range edits {
			line := fmt.Sprintf("person-%03d", i)
			for attempt := 0; attempt < 1000; attempt++ {
				cur, err := e.Server.Service.ReadNoteTab(ctx, asOwner(e), service.TabArgs{NoteID: e.NoteID, TabID: note.TypeMarkdown})
				if err != nil {
					t.Error(err)
					return
				}
				text := *cur.Text + line + "\n"
				_, err = e.Server.Service.EditNoteTab(ctx, asOwner(e), service.EditTabArgs{NoteID: e.NoteID, TabID: note.TypeMarkdown, ExpectedVersion: cur.Version,
					Operation: "replace_text", Text: &text})
				if err == nil {
					break
				}
				if !strings.Contains(err.Error(), "version_conflict") {
					t.Errorf("person edit: %v", err)
					return
				}
				conflicts[1]++
			}
		}
	}()
	wg.Wait()
	final := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	lost := 0
	for i := range edits {
		for _, who := range []string{"agent", "person"} {
			if !strings.Contains(final.Str("text"), fmt.Sprintf("%s-%03d\n", who, i)) {
				lost++
			}
		}
	}
	if lost != 0 {
		t.Fatalf("%d lines lost", lost)
	}
	t.Logf("0 lines lost; conflicts: agent %d, person %d", conflicts[0], conflicts[1])
}

// TestToolsetsAndReadOnlyPerConnection: a client loads only the toolsets it
// asks for, and read-only mode serves no write tool.
func TestToolsetsAndReadOnlyPerConnection(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	list := func(query string) []string {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/mcp"+query, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range out.Result.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	all := list("")
	notes := list("?toolsets=notes")
	ro := list("?readonly=1")
	events := list("?toolsets=events&readonly=1")
	if len(all) != 18 || len(notes) != 10 || fmt.Sprint(events) != "[poll_resource_events]" {
		t.Fatalf("all %d tools, notes %d, events %v", len(all), len(notes), events)
	}
	for _, n := range notes {
		if strings.Contains(n, "room") || strings.Contains(n, "repositor") {
			t.Fatalf("notes toolset lists %s", n)
		}
	}
	for _, n := range ro {
		for _, w := range []string{"create_", "edit_", "add_", "propose_"} {
			if strings.HasPrefix(n, w) {
				t.Fatalf("read-only lists %s", n)
			}
		}
	}
	if len(ro) != 12 {
		t.Fatalf("read-only lists %d tools, want 12: %v", len(ro), ro)
	}
}
