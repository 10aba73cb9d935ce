package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Every tool's output schema is derived from its result type, so every
// answer holds to it: each declared field is present with its declared type,
// on a real call of every tool.
func TestResultsHoldToTheirOutputSchemas(t *testing.T) {
	e := sqliteEnv(t)
	cursor := firstWriteCursor(t, e)
	version, byType := e.tabs(t)
	_, repos := e.call(t, "list_repositories", `{}`)
	repo := repos["repositories"].([]any)[0].(map[string]any)
	ver := repo["versions"].([]any)[0].(map[string]any)
	_, rm := e.call(t, "read_room", fmt.Sprintf(`{"room_id":%q}`, e.roomID))
	instance := rm["apps"].([]any)[0].(map[string]any)["instance_id"]
	files := `{"src/App.tsx":"export default () => null"}`
	args := map[string]string{
		"list_notes":               `{}`,
		"search_notes":             `{"query":"welcome"}`,
		"list_note_tabs":           fmt.Sprintf(`{"note_id":%q}`, e.noteID),
		"read_note_tab":            fmt.Sprintf(`{"note_id":%q,"tab_id":%q}`, e.noteID, byType["slides"]),
		"read_sheet_range":         fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"start_row":0,"start_col":0,"rows":2,"cols":2}`, e.noteID, byType["sheet"]),
		"list_note_attachments":    fmt.Sprintf(`{"note_id":%q,"kind":"sources"}`, e.noteID),
		"create_note_tab":          fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"out-create","tab_type":"sheet"}`, e.noteID, version),
		"edit_note_tab":            fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"out-edit","operation":"slide_add","title":"x"}`, e.noteID, byType["slides"], version+1),
		"add_note_source":          fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"out-source","title":"Go","url":"https://go.dev/"}`, e.noteID, version+2),
		"edit_note_text":           fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"out-text","edits":[{"old_text":"Welcome to","new_text":"Hello,"}]}`, e.noteID, version+3),
		"list_rooms":               `{}`,
		"read_room":                fmt.Sprintf(`{"room_id":%q}`, e.roomID),
		"list_room_apps":           fmt.Sprintf(`{"room_id":%q}`, e.roomID),
		"read_room_app_status":     fmt.Sprintf(`{"room_id":%q,"instance_id":%q}`, e.roomID, instance),
		"propose_room_snippet_app": fmt.Sprintf(`{"room_id":%q,"name":"Out","files":%s,"idempotency_key":"out-snippet"}`, e.roomID, files),
		"propose_room_repo_app":    fmt.Sprintf(`{"room_id":%q,"name":"Out repo","repository_id":%q,"version_id":%q,"idempotency_key":"out-repo"}`, e.roomID, repo["repository_id"], ver["version_id"]),
		"list_repositories":        `{}`,
		"poll_resource_events":     fmt.Sprintf(`{"resource_type":"note","resource_id":%q,"cursor":%q}`, e.noteID, cursor),
	}
	order := []string{"list_notes", "search_notes", "list_note_tabs", "read_note_tab", "read_sheet_range", "list_note_attachments", "create_note_tab", "edit_note_tab", "add_note_source",
		"edit_note_text", "list_rooms", "read_room", "list_room_apps", "read_room_app_status", "propose_room_snippet_app", "propose_room_repo_app", "list_repositories", "poll_resource_events"}
	if len(order) != len(e.tools) {
		t.Fatalf("%d tools, %d covered here: add the new tool's call", len(e.tools), len(order))
	}
	for _, name := range order {
		tl := e.tools[name]
		res, data := e.call(t, name, args[name])
		if res.IsError {
			t.Errorf("%s: %s", name, resultText(res))
			continue
		}
		out, ok := tl.Def.OutputSchema.(*jsonschema.Schema)
		if !ok || out.Type != "object" || len(out.Properties) == 0 {
			t.Errorf("%s: output schema %#v; want an object schema naming the result's fields", name, tl.Def.OutputSchema)
			continue
		}
		resolved, err := out.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var inst any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &inst)
		if err := resolved.Validate(inst); err != nil {
			t.Errorf("%s: result does not hold to the output schema: %v", name, err)
		}
		for field := range out.Properties {
			if _, ok := data[field]; !ok {
				t.Errorf("%s: output schema declares %s; the result lacks it: %s", name, field, resultText(res))
			}
		}
	}
}

// firstWriteCursor makes a write and returns its cursor, so a poll from it
// sees the writes that follow.
func firstWriteCursor(t *testing.T, e *callEnv) string {
	t.Helper()
	_, data := e.call(t, "list_note_tabs", fmt.Sprintf(`{"note_id":%q}`, e.noteID))
	version := int64(data["version"].(float64))
	_, w := e.call(t, "create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"out-cursor","tab_type":"sheet"}`, e.noteID, version))
	c, _ := w["cursor"].(string)
	return c
}

// outputSchemaFor names only fields of the result type, and a name that is
// not one is a programming error caught when the tool is made.
func TestOutputSchemaNamesOnlyResultFields(t *testing.T) {
	type res struct {
		A string `json:"a"`
		B []int  `json:"b,omitempty"`
		C *int   `json:"c,omitzero"`
		//lint:ignore U1000 an unexported field, which the derivation must skip
		d int
	}
	got := outputSchemaFor[res](nil)
	want := map[string]string{"a": "string", "b": "array", "c": "integer"}
	have := map[string]string{}
	for k, v := range got.Properties {
		have[k] = v.Type
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("derived %v, want %v", have, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a key that is no field of the result did not panic")
		}
	}()
	outputSchemaFor[res]([]string{"nope"})
}
