package mcpserver

// What the tools tell an agent must be true and sufficient: the next step a
// proposal names, what a snippet needs, what a version_conflict says, the
// cursors a poll returns, and schemas every major client accepts.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
)

func TestProposalNextStepNamesWhatThisBuildOffers(t *testing.T) {
	e := sqliteEnv(t)
	files := map[string]string{"src/App.tsx": "export default function App(){return null}\n"}
	args, _ := json.Marshal(map[string]any{"room_id": e.roomID, "name": "Timer", "files": files, "idempotency_key": room.SnippetKey(e.roomID, "Timer", files)})
	// A server that does not know its public address names the review
	// page without its address, and the CLI as the fallback.
	for _, round := range []string{"first", "replay"} {
		res, data := e.call(t, "propose_room_snippet_app", string(args))
		if res.IsError {
			t.Fatalf("%s: %s", round, resultText(res))
		}
		id, _ := data["proposal_id"].(string)
		step, _ := data["next_step"].(string)
		for _, want := range []string{"Connected → Needs your approval", "foundry proposals show " + id, "foundry proposals approve " + id, "read_room_app_status", "poll_resource_events"} {
			if id == "" || !strings.Contains(step, want) {
				t.Errorf("%s: next_step lacks %q: %q", round, want, step)
			}
		}
		if strings.Contains(step, "http") {
			t.Errorf("%s: next_step names an address the server does not know: %q", round, step)
		}
	}
	// A server that knows its address names the page there, also when the
	// proposal made under the other wording is replayed.
	const page = "http://127.0.0.1:8080/approvals"
	for _, tl := range ToolsFor(e.svc, page) {
		e.tools[tl.Def.Name] = tl
	}
	files2 := map[string]string{"src/App.tsx": files["src/App.tsx"], "src/x.ts": "export const x = 1\n"}
	args2, _ := json.Marshal(map[string]any{"room_id": e.roomID, "name": "Timer 2", "files": files2, "idempotency_key": room.SnippetKey(e.roomID, "Timer 2", files2)})
	for _, a := range [][]byte{args2, args} {
		_, data := e.call(t, "propose_room_snippet_app", string(a))
		if data["next_step"] != ReviewStep(page, fmt.Sprint(data["proposal_id"])) || !strings.Contains(fmt.Sprint(data["next_step"]), "("+page+")") {
			t.Errorf("next_step with a review page: %v", data["next_step"])
		}
	}
}

// The refusals of the domain (internal/note, internal/room) name no tool;
// through a tool, the MCP door adds the one to call next, keeping code and
// field.
func TestDomainRefusalsNameTheToolToCallNext(t *testing.T) {
	e := sqliteEnv(t)
	v, _ := e.tabs(t)
	_, repos := e.call(t, "list_repositories", `{}`)
	repoList, _ := repos["repositories"].([]any)
	if len(repoList) == 0 {
		t.Fatalf("the demo has no repository: %v", repos)
	}
	repoID := repoList[0].(map[string]any)["repository_id"]
	big := strings.Repeat("x", room.MaxFileBytes+1024)
	snippet, _ := json.Marshal(map[string]any{"room_id": e.roomID, "name": "Big", "files": map[string]string{room.EntryPoint: big}, "idempotency_key": "big-snippet-1"})
	for _, c := range []struct{ tool, args, code, field, hint string }{
		{"read_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":"slides"}`, e.noteID), note.CodeUnknownTab, "tab_id", "list_note_tabs shows them with the Note's version"},
		{"edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":"sources","expected_version":%d,"idempotency_key":"sources-text-1","operation":"replace_text","text":"x"}`, e.noteID, v),
			note.CodeWrongTabType, "tab_id", "add_note_source adds a citation"},
		{"read_sheet_range", fmt.Sprintf(`{"note_id":%q,"tab_id":"markdown","start_row":0,"start_col":0,"rows":1,"cols":1}`, e.noteID), note.CodeWrongTabType, "tab_id", "read_note_tab reads it"},
		{"read_room_app_status", fmt.Sprintf(`{"room_id":%q,"instance_id":"app-99"}`, e.roomID), problem.NotFound, "instance_id", "list_room_apps shows the launcher"},
		{"propose_room_repo_app", fmt.Sprintf(`{"room_id":%q,"name":"x","repository_id":%q,"version_id":"ver_missing","idempotency_key":"12345678"}`, e.roomID, repoID),
			problem.NotFound, "version_id", "list_repositories shows the repositories and their pinned versions"},
		{"propose_room_snippet_app", string(snippet), problem.Limit, `files["` + room.EntryPoint + `"]`, "(`foundry repo push`, then propose_room_repo_app with a pinned version from list_repositories)"},
	} {
		res, data := e.call(t, c.tool, c.args)
		if !res.IsError || data["error"] != c.code || data["field"] != c.field || !strings.Contains(fmt.Sprint(data["message"]), c.hint) {
			t.Errorf("%s: %s; want %s on %s saying %q", c.tool, resultText(res), c.code, c.field, c.hint)
		}
	}
}

// The snippet's description says the entry point a snippet must hold and
// the key recipe exactly enough to compute room.SnippetKey from it.
func TestSnippetDescriptionSaysEntryPointAndKeyRecipe(t *testing.T) {
	var desc string
	for _, tl := range Tools(nil) {
		if tl.Def.Name == "propose_room_snippet_app" {
			desc = tl.Def.Description
		}
	}
	for _, want := range []string{room.EntryPoint, `"snip-"`, "first 32 hex", "sha256", "room_id, name, then each path and content in path order", "byte length (uint64 big-endian)"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q: %s", want, desc)
		}
	}
	// The recipe as the description says it, written from the text alone.
	files := map[string]string{"src/App.tsx": "export default () => <p>é</p>", "b.css": "", "a/z.ts": "x"}
	h := sha256.New()
	part := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	part("room_1")
	part("Café timer")
	paths := []string{}
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		part(p)
		part(files[p])
	}
	if got, want := "snip-"+hex.EncodeToString(h.Sum(nil))[:32], room.SnippetKey("room_1", "Café timer", files); got != want {
		t.Errorf("the described recipe gives %s, the server's key is %s", got, want)
	}
}

func TestVersionConflictSaysWhatIsTrue(t *testing.T) {
	e := sqliteEnv(t)
	version, byType := e.tabs(t)
	slides := byType["slides"]
	edit := func(v int64, key string) string {
		return fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":%q,"operation":"slide_add","title":"x"}`, e.noteID, slides, v, key)
	}
	create := func(v int64) string {
		return fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"create-key-1","tab_type":"sheet"}`, e.noteID, v)
	}
	source := func(v int64) string {
		return fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"source-key-1","title":"Go","url":"https://go.dev/"}`, e.noteID, v)
	}
	if res, _ := e.call(t, "edit_note_tab", edit(version, "first-edit")); res.IsError {
		t.Fatal(resultText(res))
	}
	now := version + 1
	for _, c := range []struct {
		name, tool, args string
		want, never      []string
	}{
		{"edit ahead", "edit_note_tab", edit(now+5, "ahead-edit"),
			[]string{fmt.Sprintf("expected_version %d is ahead of the note, which is at version %d", now+5, now), "read_note_tab", "NEW idempotency_key"},
			[]string{"changed since", "overwrites"}},
		{"edit behind", "edit_note_tab", edit(version, "behind-edit"),
			[]string{fmt.Sprintf("changed since version %d; it is at version %d", version, now), "read_note_tab", "overwrites the other edit", fmt.Sprintf("expected_version %d", now)},
			[]string{"ahead"}},
		{"create behind", "create_note_tab", create(version),
			[]string{fmt.Sprintf("changed since version %d", version), "Nothing was written", "same idempotency_key", "list_note_tabs"},
			[]string{"overwrite", "NEW idempotency_key"}},
		{"create ahead", "create_note_tab", create(now + 1),
			[]string{"is ahead of the note", "use the version it returns"},
			[]string{"overwrite", "changed since"}},
		{"source behind", "add_note_source", source(version),
			[]string{fmt.Sprintf("changed since version %d", version), "same idempotency_key"},
			[]string{"overwrite", "NEW idempotency_key"}},
		{"source ahead", "add_note_source", source(now + 9),
			[]string{"is ahead of the note"},
			[]string{"overwrite", "changed since"}},
	} {
		res, data := e.call(t, c.tool, c.args)
		msg, _ := data["message"].(string)
		if !res.IsError || data["error"] != "version_conflict" || data["field"] != "expected_version" || data["current_version"] != float64(now) {
			t.Errorf("%s: %s", c.name, resultText(res))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message lacks %q: %s", c.name, w, msg)
			}
		}
		for _, n := range c.never {
			if strings.Contains(msg, n) {
				t.Errorf("%s: message says %q, which is not true here: %s", c.name, n, msg)
			}
		}
	}
}

// Every cursor a poll answers is the same kind of value: the opaque string
// next_cursor is, so any event's cursor can be passed back.
func TestEventCursorsAreOneKind(t *testing.T) {
	e := sqliteEnv(t)
	version, byType := e.tabs(t)
	var first string
	for i := range 3 {
		res, data := e.call(t, "edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"edit-key-%d","operation":"slide_add","title":"s%d"}`, e.noteID, byType["slides"], version+int64(i), i, i))
		if res.IsError {
			t.Fatal(resultText(res))
		}
		if i == 0 {
			first, _ = data["cursor"].(string)
		}
	}
	res, data := e.call(t, "poll_resource_events", fmt.Sprintf(`{"resource_type":"note","resource_id":%q,"cursor":%q}`, e.noteID, first))
	if res.IsError {
		t.Fatal(resultText(res))
	}
	evs, _ := data["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("events after the first write: %s", resultText(res))
	}
	for i, x := range evs {
		c, ok := x.(map[string]any)["cursor"].(string)
		if !ok || c == "" {
			t.Fatalf("events[%d].cursor = %v (%T); want the opaque string next_cursor is", i, x.(map[string]any)["cursor"], x.(map[string]any)["cursor"])
		}
		// Passed back, an event's cursor answers what followed it.
		_, after := e.call(t, "poll_resource_events", fmt.Sprintf(`{"resource_type":"note","resource_id":%q,"cursor":%q}`, e.noteID, c))
		if n := len(after["events"].([]any)); n != len(evs)-1-i {
			t.Errorf("after events[%d].cursor: %d events, want %d", i, n, len(evs)-1-i)
		}
	}
	if last := evs[len(evs)-1].(map[string]any)["cursor"]; last != data["next_cursor"] {
		t.Errorf("last event's cursor %v != next_cursor %v", last, data["next_cursor"])
	}
}

// No schema uses a type array (["string","number"]), which some clients
// refuse; a cell still takes exactly a string, number, boolean or null.
func TestSchemasUseSingleTypes(t *testing.T) {
	var walk func(tool, at string, v any)
	walk = func(tool, at string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["type"].([]any); ok {
				t.Errorf("%s: %s has a type array %v; use anyOf of single types", tool, at, x["type"])
			}
			for k, e := range x {
				walk(tool, at+"/"+k, e)
			}
		case []any:
			for i, e := range x {
				walk(tool, fmt.Sprintf("%s/%d", at, i), e)
			}
		}
	}
	for _, tl := range Tools(nil) {
		walk(tl.Def.Name, "inputSchema", refSchema(tl.Def.InputSchema))
		b, _ := json.Marshal(tl.Def.InputSchema)
		var raw any
		json.Unmarshal(b, &raw)
		walk(tl.Def.Name, "inputSchema", raw)
	}
	e := sqliteEnv(t)
	version, byType := e.tabs(t)
	set := func(values string) map[string]any {
		_, data := e.call(t, "edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"cells-%d","operation":"sheet_set_range","start_row":0,"start_col":0,"values":%s}`, e.noteID, byType["sheet"], version, len(values), values))
		return data
	}
	if d := set(`[["a",1.5,true,null]]`); d["error"] != nil {
		t.Fatalf("cells of the four types: %v", d)
	}
	for _, bad := range []string{`[[{"x":1}]]`, `[[["nested"]]]`} {
		if d := set(bad); d["error"] != "invalid_argument" || d["field"] != "values[0][0]" {
			t.Errorf("cell %s: %v; want invalid_argument on values[0][0]", bad, d)
		}
	}
}

// The domain's refusals speak no door's language; the MCP door adds the
// tool to call next, keeping code and field.
func TestNotFoundNamesTheToolToCallNext(t *testing.T) {
	e := sqliteEnv(t)
	ctx := context.Background()
	_, err := e.svc.ListNoteTabs(ctx, service.Agent(e.all), "note_missing")
	if err == nil || strings.Contains(err.Error(), "list_") || strings.Contains(err.Error(), "foundry ") {
		t.Errorf("service refusal speaks a door's language: %v", err)
	}
	for _, c := range []struct{ tool, args, field, hint string }{
		{"list_note_tabs", `{"note_id":"note_missing"}`, "note_id", "list_notes shows the approved Notes this connection can reach"},
		{"read_room", `{"room_id":"room_missing"}`, "room_id", "list_rooms shows the cloud Rooms this connection can reach; Local Rooms are unavailable"},
		{"propose_room_repo_app", fmt.Sprintf(`{"room_id":%q,"name":"x","repository_id":"repo_missing","version_id":"v","idempotency_key":"12345678"}`, e.roomID), "repository_id", "list_repositories shows the repositories and their pinned versions"},
	} {
		res, data := e.call(t, c.tool, c.args)
		if !res.IsError || data["error"] != "not_found" || data["field"] != c.field || !strings.Contains(fmt.Sprint(data["message"]), c.hint) {
			t.Errorf("%s: %s; want not_found on %s saying %q", c.tool, resultText(res), c.field, c.hint)
		}
	}
}
