package note

import (
	"encoding/json"
	"strings"
	"testing"

	"foundry/internal/problem"
)

// Labels, sheet names and titles count characters, refuse control and bidi
// characters, and keep emoji (which need the zero-width joiner).
func TestNamesCountCharactersAndRefuseHiddenOnes(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "")
	for _, bad := range []string{"a\u202eb", "a\u202ab", "a\u2066b", "a\u2069b", "a\u200eb", "a\u200fb", "a\u061cb",
		"a\x00b", "a\nb", "a\x1bb", "a\u0085b", "a\u200bb", "a\ufeffb", "a\u2028b"} {
		wantProblem(t, RenameTab(&d, deck.ID, bad), problem.Invalid, "label", "control or bidi")
		_, err := CreateTab(&d, "sheet", bad, nil, t0)
		wantProblem(t, err, problem.Invalid, "label", "control or bidi")
		wantProblem(t, ReplaceTabData(&d, mustCreate(t, &d, "sheet", "").ID, json.RawMessage(`{"sheets":[{"name":`+mustQuote(bad)+`,"cells":[]}]}`)),
			problem.Invalid, "sheets[0].name", "control or bidi")
		_, _, err = AddSource(&d, bad, "https://example.org", t0)
		wantProblem(t, err, problem.Invalid, "title", "control or bidi")
		_, err = CheckTitle(bad)
		wantProblem(t, err, problem.Invalid, "title", "control or bidi")
	}
	for _, good := range []string{"👨‍👩‍👧 Family", "שלום", "Budget 2026", strings.Repeat("😀", MaxLabelRunes)} {
		if err := RenameTab(&d, deck.ID, good); err != nil {
			t.Errorf("RenameTab(%q) = %v; want accepted", good, err)
		}
	}
	wantProblem(t, RenameTab(&d, deck.ID, strings.Repeat("ü", MaxLabelRunes+1)), problem.Limit, "label", "101 characters", "at most 100 characters")
	_, err := CheckTitle(strings.Repeat("ü", MaxTitleRunes+1))
	wantProblem(t, err, problem.Limit, "title", "201 characters")
	if got, err := CheckTitle("  Research  "); err != nil || got != "Research" {
		t.Errorf("CheckTitle = %q, %v", got, err)
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A string cell holds at most 32 KiB, by sheet_set_range or replace_tab_data.
func TestCellByteLimit(t *testing.T) {
	d := New("x")
	sheet := mustCreate(t, &d, "sheet", "")
	ok := strings.Repeat("é", MaxCellBytes/2)
	if _, err := SheetSetRange(&d, sheet.ID, "", 0, 0, [][]any{{ok}}); err != nil {
		t.Fatalf("a cell of exactly %d bytes was refused: %v", MaxCellBytes, err)
	}
	_, err := SheetSetRange(&d, sheet.ID, "", 0, 0, [][]any{{"a", "b"}, {"c", "d", ok + "x"}})
	wantProblem(t, err, problem.Limit, "values[1][2]", "32769 bytes", "32768")
	err = ReplaceTabData(&d, sheet.ID, json.RawMessage(`{"sheets":[{"name":"s","cells":[[1],[2,"`+ok+`x"]]}]}`))
	wantProblem(t, err, problem.Limit, "sheets[0].cells[1][1]", "32768")
}

func TestTabsPerNoteAreBounded(t *testing.T) {
	d := New("x")
	for len(d.Tabs) < MaxTabsPerNote {
		mustCreate(t, &d, "sheet", "")
	}
	before := snapshot(t, &d)
	_, err := CreateTab(&d, "slides", "", nil, t0)
	wantProblem(t, err, problem.Limit, "note_id", "at most 100 tabs")
	if snapshot(t, &d) != before {
		t.Error("refused call changed the Note")
	}
}

func TestCheckSizeRefusesGrowthPastTheNoteLimit(t *testing.T) {
	if err := CheckSize(MaxNoteBytes, 10, "text"); err != nil {
		t.Errorf("exactly the limit: %v", err)
	}
	wantProblem(t, CheckSize(MaxNoteBytes+1, 10, "values"), problem.Limit, "values", "16777216")
	if err := CheckSize(MaxNoteBytes+5, MaxNoteBytes+9, "text"); err != nil {
		t.Errorf("an edit that shrinks an oversized Note was refused: %v", err)
	}
}

// Whether an operation can apply to a tab is known from the tab ID alone,
// in every version.
func TestTypeOfIDAndCheckOperation(t *testing.T) {
	d := New("x")
	deck := mustCreate(t, &d, "slides", "")
	sheet := mustCreate(t, &d, "sheet", "")
	for id, want := range map[string]string{"markdown": "markdown", "files": "files", "sources": "sources", deck.ID: "slides", sheet.ID: "sheet"} {
		if got, ok := TypeOfID(id); !ok || got != want {
			t.Errorf("TypeOfID(%q) = %q, %v; want %q", id, got, ok, want)
		}
	}
	for _, id := range []string{"slides", "sheet", "Slides-1-x", "deck", "", "slides-"} {
		if got, ok := TypeOfID(id); ok {
			t.Errorf("TypeOfID(%q) = %q; want unknown", id, got)
		}
	}
	for _, c := range []struct{ typ, op, field string }{
		{"sources", "replace_tab_data", "tab_id"}, {"files", "replace_tab_data", "tab_id"}, {"sources", "replace_text", "tab_id"},
		{"files", "slide_add", "tab_id"}, {"sources", "sheet_set_range", "tab_id"}, {"markdown", "slide_add", "operation"},
		{"slides", "replace_text", "operation"}, {"sheet", "slides_add_outline", "operation"}, {"markdown", "replace_tab_data", "operation"},
	} {
		wantProblem(t, CheckOperation("t", c.typ, c.op), CodeWrongTabType, c.field)
	}
	for _, c := range []struct{ typ, op string }{{"markdown", "replace_text"}, {"slides", "replace_tab_data"}, {"sheet", "replace_tab_data"}, {"sheet", "sheet_set_range"}} {
		if err := CheckOperation("t", c.typ, c.op); err != nil {
			t.Errorf("CheckOperation(%s, %s) = %v", c.typ, c.op, err)
		}
	}
}

// A refusal never echoes a large value back, and never the JSON decoder's
// own text.
func TestRefusalsQuoteOnlyAnExcerpt(t *testing.T) {
	d := New("x")
	sheet := mustCreate(t, &d, "sheet", "")
	huge := strings.Repeat("A", 1<<20)
	msgs := map[string]error{}
	_, msgs["FindTab"] = FindTab(&d, huge)
	_, msgs["findSheet"] = SheetSetRange(&d, sheet.ID, huge, 0, 0, [][]any{{1}})
	msgs["DeleteSource"] = DeleteSource(&d, huge)
	_, msgs["CreateTab"] = CreateTab(&d, huge, "", nil, t0)
	_, msgs["cell number"] = SheetSetRange(&d, sheet.ID, "", 0, 0, [][]any{{json.Number("1e" + strings.Repeat("9", 1<<16))}})
	msgs["unknown field"] = ReplaceTabData(&d, sheet.ID, json.RawMessage(`{"`+huge+`":1}`))
	msgs["duplicate sheet"] = ReplaceTabData(&d, sheet.ID, json.RawMessage(`{"sheets":[{"sheet_id":"`+huge+`","name":"a"},{"sheet_id":"`+huge+`","name":"b"}]}`))
	msgs["wrong type"] = ReplaceTabData(&d, sheet.ID, json.RawMessage(`{"sheets":[{"name":7,"cells":[]}]}`))
	msgs["syntax"] = ReplaceTabData(&d, sheet.ID, json.RawMessage(`{"sheets":[`+huge))
	for name, err := range msgs {
		var p *problem.Problem
		if !asProblem(err, &p) {
			t.Errorf("%s: %v; want a problem", name, err)
			continue
		}
		if len(p.Message) > 1000 {
			t.Errorf("%s: message is %d bytes", name, len(p.Message))
		}
		for _, leak := range []string{"json:", "Go struct", "main.", "note.", "[]note", "*[]"} {
			if strings.Contains(p.Message, leak) {
				t.Errorf("%s: message leaks decoder text %q: %s", name, leak, p.Message)
			}
		}
	}
}

func asProblem(err error, p **problem.Problem) bool {
	q, ok := err.(*problem.Problem)
	*p = q
	return ok
}
