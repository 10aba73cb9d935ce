package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
)

// TestDependsOnTools: a person typing while an agent thinks. With
// depends_on a change of another tab, or of another paragraph, does not
// refuse the agent's write; a change of what it read or replaces does,
// naming the tab.
func TestDependsOnTools(t *testing.T) {
	for _, e := range bothStores(t) {
		t.Run(e.name, func(t *testing.T) {
			person := service.Person(e.owner.Workspace.ID, e.owner.User.ID, service.RoleOwner)
			v, _ := e.tabs(t)
			res, data := e.call(t, "create_note_tab", fmt.Sprintf(`{"note_id":%q,"expected_version":%d,"idempotency_key":"dep-sheet-1","tab_type":"sheet"}`, e.noteID, v))
			if res.IsError {
				t.Fatal(resultText(res))
			}
			sheet := data["tab_id"].(string)
			v = e.setMarkdown(t, "# Plan\n\nIntro.\n\nShip in May.\n")
			typed := "# Plan\n\nIntro, typed live: May.\n\nShip in May.\n"
			e.setMarkdown(t, typed)

			setRange := func(key string, v int64, deps string) (bool, map[string]any) {
				args := fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":%q,"operation":"sheet_set_range","start_row":0,"start_col":0,"values":[[42]]%s}`, e.noteID, sheet, v, key, deps)
				res, data := e.call(t, "edit_note_tab", args)
				return res.IsError, data
			}
			// The Note-level check, as published: refused.
			if isErr, data := setRange("dep-write-1", v, ""); !isErr || data["error"] != "version_conflict" {
				t.Fatalf("without depends_on: %v", data)
			}
			// depends_on the Sheet: the typing in the markdown tab is no conflict.
			isErr, data := setRange("dep-write-1", v, fmt.Sprintf(`,"depends_on":[%q]`, sheet))
			if isErr || data["version"] != float64(v+2) {
				t.Fatalf("depends_on the Sheet, typing elsewhere: %v", data)
			}

			// The person changes the Sheet: refused, naming it.
			v = int64(data["version"].(float64))
			cells := [][]any{{"typed"}}
			if _, err := e.svc.EditNoteTab(context.Background(), person, service.EditTabArgs{NoteID: e.noteID, TabID: sheet, ExpectedVersion: v, Operation: "sheet_set_range", StartRow: new(int), StartCol: new(int), Values: cells}); err != nil {
				t.Fatal(err)
			}
			isErr, data = setRange("dep-write-2", v, fmt.Sprintf(`,"depends_on":[%q]`, sheet))
			if !isErr || data["error"] != "version_conflict" || !slices.Equal(anyStrings(data["changed_tab_ids"]), []string{sheet}) {
				t.Fatalf("the Sheet changed: %v", data)
			}
			// An ID that is no tab of the Note is named.
			isErr, data = setRange("dep-write-3", v+1, `,"depends_on":["sheet-1-nope"]`)
			if !isErr || data["error"] != "invalid_argument" || data["field"] != "depends_on[0]" {
				t.Fatalf("unknown tab: %v", data)
			}

			// edit_note_text: the person typed in another paragraph (even
			// the old_text itself, there): the edit lands where it was made.
			v = e.setMarkdown(t, "# Plan\n\nIntro.\n\nShip in May.\n")
			e.setMarkdown(t, typed)
			edit := func(key string, v int64, old, new string) (bool, map[string]any) {
				var a map[string]any
				_ = json.Unmarshal([]byte(textArgs(e.noteID, v, key, old, new)), &a)
				a["depends_on"] = []string{}
				b, _ := json.Marshal(a)
				res, data := e.call(t, "edit_note_text", string(b))
				return res.IsError, data
			}
			if isErr, data := edit("dep-text-1", v, "Ship in May.", "Ship in June."); isErr {
				t.Fatalf("another paragraph: %v", data)
			}
			if got, want := e.markdown(t), "# Plan\n\nIntro, typed live: May.\n\nShip in June.\n"; got != want {
				t.Fatalf("text = %q, want %q", got, want)
			}
			// The same paragraph: the old_text's own text changed.
			v, _ = e.tabs(t)
			e.setMarkdown(t, "# Plan\n\nIntro, typed live: May.\n\nShip in June!\n")
			isErr, data = edit("dep-text-2", v, "Ship in June.", "Ship in July.")
			if !isErr || data["error"] != "version_conflict" || !slices.Equal(anyStrings(data["changed_tab_ids"]), []string{note.TypeMarkdown}) {
				t.Fatalf("same paragraph: %v", data)
			}
		})
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
