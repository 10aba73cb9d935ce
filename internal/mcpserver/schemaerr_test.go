package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaProblemsNameTheArgument: refusals name the argument path a model
// sent (not the schema path) and the rule, in plain numbers.
func TestSchemaProblemsNameTheArgument(t *testing.T) {
	tools := map[string]*Tool{}
	for _, tl := range Tools(nil) {
		tools[tl.Def.Name] = tl
	}
	for _, c := range []struct {
		tool, args, field, rule string
	}{
		{"list_note_attachments", `{"note_id":"n","kind":"sources","limit":100}`, "limit", "maximum: 100 is greater than 50"},
		{"edit_note_tab", `{"note_id":"n","tab_id":"t","expected_version":1,"idempotency_key":"12345678","operation":"slides_add_outline","slides":[{"title":"a"},{"title":"b","bullets":["x"]}]}`, "slides[1].bullets", "unexpected property"},
		{"edit_note_tab", `{"note_id":"n","tab_id":"t","expected_version":1,"idempotency_key":"12345678","operation":"sheet_set_range","start_row":0,"start_col":0,"values":[[1,2],[3,{"x":1}]]}`, "values[1][1]", "type"},
		{"propose_room_snippet_app", `{"room_id":"r","name":"x","files":{"src/App.tsx":"","a":1},"idempotency_key":"12345678"}`, "files.a", "type"},
		{"create_note_tab", `{"note_id":"n","expected_version":1,"idempotency_key":"12345678"}`, "tab_type", "required"},
	} {
		tl := tools[c.tool]
		var inst any
		json.Unmarshal([]byte(c.args), &inst)
		err := tl.schema.Validate(inst)
		if err == nil {
			t.Fatalf("%s %s: valid, want a refusal", c.tool, c.args)
		}
		p := tl.schemaProblem(err, inst)
		if p.Field != c.field || !strings.Contains(p.Message, c.rule) {
			t.Errorf("%s: field %q message %q; want field %q and %q", c.tool, p.Field, p.Message, c.field, c.rule)
		}
	}
}
