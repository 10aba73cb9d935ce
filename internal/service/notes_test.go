package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

func (f *fixture) createTab(t *testing.T, typ string) string {
	t.Helper()
	w, err := f.svc.CreateNoteTab(context.Background(), service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
		IdempotencyKey: "create-" + typ + "-tab", TabType: typ})
	if err != nil {
		t.Fatal(err)
	}
	return w.TabID
}

// The same edit, resent with its data spelled differently (keys in another
// order, 1.0 for 1, other escapes and spacing), replays the first result.
func TestReplaceTabDataFingerprintIsTheMeaning(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		sheet := f.createTab(t, note.TypeSheet)
		deck := f.createTab(t, note.TypeSlides)
		cases := []struct {
			tab     string
			first   string
			resends []string
			differ  string
		}{
			{sheet,
				`{"sheets":[{"name":"Budget","cells":[[1,2.5,"x",true,null]]}]}`,
				[]string{
					`{"sheets":[{"cells":[[1.0,2.50,"x",true,null]],"name":"Budget"}]}`,
					`{"sheets":[{"cells":[[1e0,25e-1,"\u0078",true,null]],"name":"Budg\u0065t"}]}`,
					"{ \"sheets\" : [ { \"cells\" : [ [ 10E-1 , 0.25e1 , \"x\" , true , null ] ] , \"name\" : \"Budget\" } ] }",
				},
				`{"sheets":[{"name":"Budget","cells":[[1,2.6,"x",true,null]]}]}`},
			{deck,
				`{"slides":[{"title":"A","body":"b","notes":"n"}]}`,
				[]string{`{"slides":[{"notes":"n","body":"b","title":"A"}]}`},
				`{"slides":[{"title":"A","body":"c","notes":"n"}]}`},
		}
		for i, c := range cases {
			key := fmt.Sprintf("replace-data-%d", i)
			v := f.version(t)
			first, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: c.tab, ExpectedVersion: v,
				IdempotencyKey: key, Operation: "replace_tab_data", Data: json.RawMessage(c.first)})
			if err != nil {
				t.Fatal(err)
			}
			for _, again := range c.resends {
				w, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: c.tab, ExpectedVersion: v,
					IdempotencyKey: key, Operation: "replace_tab_data", Data: json.RawMessage(again)})
				if err != nil {
					t.Fatalf("resend %s: %v; want the first result replayed", again, err)
				}
				if w.Replayed != true || w.Version != first.Version {
					t.Fatalf("resend %s = %v; want replayed version %v", again, w, first.Version)
				}
			}
			_, err = f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: c.tab, ExpectedVersion: v,
				IdempotencyKey: key, Operation: "replace_tab_data", Data: json.RawMessage(c.differ)})
			wantProblem(t, err, problem.KeyReused, "idempotency_key")
		}
		// sheet_set_range values: 1 and 1.0 are one value.
		v := f.version(t)
		vals := func(x any) [][]any { return [][]any{{x, "y"}} }
		if _, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: sheet, ExpectedVersion: v,
			IdempotencyKey: "set-range-1", Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: vals(1)}); err != nil {
			t.Fatal(err)
		}
		w, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: sheet, ExpectedVersion: v,
			IdempotencyKey: "set-range-1", Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: vals(json.Number("1.0"))})
		if err != nil || w.Replayed != true {
			t.Fatalf("values 1.0 after 1 = %v, %v; want replayed", w, err)
		}
	})
}

// A rule that holds in every version is checked before the version: a stale
// edit that could never succeed says why, not version_conflict.
func TestStaleEditOfAFixedTabIsRefusedForTheRuleNotTheVersion(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		deck := f.createTab(t, note.TypeSlides)
		sheet := f.createTab(t, note.TypeSheet)
		stale := f.version(t) - 1 // the Note has moved on since
		big := strings.Repeat("x", note.MaxMarkdownBytes+1)
		tests := []struct {
			name        string
			a           service.EditTabArgs
			code, field string
		}{
			{"replace_tab_data on sources", service.EditTabArgs{TabID: "sources", Operation: "replace_tab_data", Data: json.RawMessage(`{}`)}, note.CodeWrongTabType, "tab_id"},
			{"replace_tab_data on files", service.EditTabArgs{TabID: "files", Operation: "replace_tab_data", Data: json.RawMessage(`{"slides":[]}`)}, note.CodeWrongTabType, "tab_id"},
			{"replace_text on sources", service.EditTabArgs{TabID: "sources", Operation: "replace_text", Text: ptr("x")}, note.CodeWrongTabType, "tab_id"},
			{"slide_add on files", service.EditTabArgs{TabID: "files", Operation: "slide_add", Title: ptr("t")}, note.CodeWrongTabType, "tab_id"},
			{"replace_tab_data on markdown", service.EditTabArgs{TabID: "markdown", Operation: "replace_tab_data", Data: json.RawMessage(`{"slides":[]}`)}, note.CodeWrongTabType, "operation"},
			{"slide_add on a sheet", service.EditTabArgs{TabID: sheet, Operation: "slide_add", Title: ptr("t")}, note.CodeWrongTabType, "operation"},
			{"sheet_set_range on a deck", service.EditTabArgs{TabID: deck, Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{1}}}, note.CodeWrongTabType, "operation"},
			{"replace_text on a deleted-looking deck ID", service.EditTabArgs{TabID: "slides-99-zzz", Operation: "replace_text", Text: ptr("x")}, note.CodeWrongTabType, "operation"},
			{"text over 1 MiB", service.EditTabArgs{TabID: "markdown", Operation: "replace_text", Text: &big}, problem.Limit, "text"},
			{"slide without title", service.EditTabArgs{TabID: deck, Operation: "slide_add", Title: ptr(" ")}, problem.Invalid, "title"},
			{"101 rows", service.EditTabArgs{TabID: sheet, Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: make([][]any, 101)}, problem.Limit, "values"},
			{"object in a cell", service.EditTabArgs{TabID: sheet, Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{map[string]any{}}}}, problem.Invalid, "values[0][0]"},
			{"data of the wrong shape", service.EditTabArgs{TabID: deck, Operation: "replace_tab_data", Data: json.RawMessage(`{"sheets":[]}`)}, problem.Invalid, "data"},
			{"a type name as tab ID", service.EditTabArgs{TabID: "slides", Operation: "slide_add", Title: ptr("t")}, note.CodeUnknownTab, "tab_id"},
			{"a label as tab ID", service.EditTabArgs{TabID: "Sheet", Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: [][]any{{1}}}, note.CodeUnknownTab, "tab_id"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := tt.a
				a.NoteID, a.ExpectedVersion, a.IdempotencyKey = f.noteID, stale, fmt.Sprintf("stale-edit-%d", i)
				_, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), a)
				wantProblem(t, err, tt.code, tt.field)
			})
		}
		// A stale but possible edit is still a version conflict.
		_, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: "markdown", ExpectedVersion: stale,
			IdempotencyKey: "stale-but-possible", Operation: "replace_text", Text: ptr("x")})
		wantProblem(t, err, problem.Conflict, "expected_version")

		_, err = f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: stale, IdempotencyKey: "stale-create",
			TabType: "sheet", Label: strings.Repeat("l", note.MaxLabelRunes+1)})
		wantProblem(t, err, problem.Limit, "label")
		_, err = f.svc.AddNoteSource(ctx, service.Agent(f.write), service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: stale, IdempotencyKey: "stale-source",
			Title: " ", URL: "https://example.org"})
		wantProblem(t, err, problem.Invalid, "title")
	})
}

// The url refusal is said once: "invalid_argument: url: <rule>", not the
// code and field twice.
func TestAddNoteSourceURLRefusalIsNotWrappedTwice(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		for _, u := range []string{"javascript:alert(1)", "https://alice:pw@example.org/a", "https://exa\u202emple.org/"} {
			_, err := f.svc.AddNoteSource(context.Background(), service.Agent(f.write), service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
				IdempotencyKey: "source-bad-url", Title: "t", URL: u})
			p := wantProblem(t, err, problem.Invalid, "url")
			if strings.Contains(p.Message, "invalid_argument") || strings.Count(err.Error(), "url:") != 1 {
				t.Errorf("%s: message %q repeats the code or field", u, err.Error())
			}
		}
	})
}

// Bytes, not only counts: cells, slide fields, labels and the whole Note
// have byte limits, and tabs per Note are bounded.
func TestByteLimitsThroughTheService(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		sheet := f.createTab(t, note.TypeSheet)
		deck := f.createTab(t, note.TypeSlides)
		edit := func(key string, a service.EditTabArgs) error {
			a.NoteID, a.ExpectedVersion, a.IdempotencyKey = f.noteID, f.version(t), key
			_, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), a)
			return err
		}
		cell := strings.Repeat("c", note.MaxCellBytes+1)
		err := edit("big-cell-1", service.EditTabArgs{TabID: sheet, Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0),
			Values: [][]any{{"a", "b"}, {"c", "d", "e", cell}}})
		wantProblem(t, err, problem.Limit, "values[1][3]", "32768")
		err = edit("big-cell-2", service.EditTabArgs{TabID: sheet, Operation: "replace_tab_data",
			Data: json.RawMessage(`{"sheets":[{"name":"s","cells":[["` + cell + `"]]}]}`)})
		wantProblem(t, err, problem.Limit, "sheets[0].cells[0][0]", "32768")
		err = edit("big-slide", service.EditTabArgs{TabID: deck, Operation: "slide_add", Title: ptr("t"), Body: ptr(strings.Repeat("😀", 17000))})
		wantProblem(t, err, problem.Limit, "body", "65536")
		err = edit("long-slide", service.EditTabArgs{TabID: deck, Operation: "slide_add", Title: ptr("t"), Notes: ptr(strings.Repeat("ü", note.MaxSlideTextRunes+1))})
		wantProblem(t, err, problem.Limit, "notes", "20001 characters")

		_, err = f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "label-bytes",
			TabType: "sheet", Label: strings.Repeat("ü", 101)})
		wantProblem(t, err, problem.Limit, "label", "101 characters", "at most 100 characters")
		if _, err = f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "label-100-chars",
			TabType: "sheet", Label: strings.Repeat("😀", 100)}); err != nil {
			t.Fatalf("a 100-character label of 400 bytes was refused: %v", err)
		}

		// Tabs per Note.
		var tabErr error
		for i := range note.MaxTabsPerNote + 1 {
			if _, tabErr = f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
				IdempotencyKey: fmt.Sprintf("many-tabs-%d", i), TabType: "slides"}); tabErr != nil {
				break
			}
		}
		wantProblem(t, tabErr, problem.Limit, "note_id", "at most 100 tabs")
		tabs, err := f.svc.ListNoteTabs(ctx, service.Agent(f.read), f.noteID)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tabs.Tabs); n != note.MaxTabsPerNote {
			t.Fatalf("%d tabs; want exactly the limit %d", n, note.MaxTabsPerNote)
		}
		// The whole Note: cells just under the cell limit, until the Note
		// would pass 16 MiB. Bounded: 16 MiB / (100 × 32 KiB) < 6 writes.
		row := make([]any, 100)
		for i := range row {
			row[i] = strings.Repeat("z", note.MaxCellBytes)
		}
		var last error
		for i := range 10 {
			if last = edit(fmt.Sprintf("fill-row-%d", i), service.EditTabArgs{TabID: sheet, Operation: "sheet_set_range",
				StartRow: ptr(i), StartCol: ptr(0), Values: [][]any{row}}); last != nil {
				break
			}
		}
		wantProblem(t, last, problem.Limit, "values", "at most 16777216 bytes")
		res, err := f.svc.ReadNoteTab(ctx, service.Agent(f.read), service.TabArgs{NoteID: f.noteID, TabID: sheet})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); len(b) > note.MaxNoteBytes {
			t.Fatalf("the sheet tab reads %d bytes; over the Note limit", len(b))
		}

	})
}

// One page in any spelling is one source; credentials and hidden characters
// are refused with one clear message.
func TestAddNoteSourceSpellingsOfOnePage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		add := func(key, u string) (service.SourceAdded, error) {
			return f.svc.AddNoteSource(ctx, service.Agent(f.write), service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
				IdempotencyKey: key, Title: "Bücher", URL: u})
		}
		first, err := add("source-idn-0", "https://bücher.example/~alice/a")
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range []string{
			"https://xn--bcher-kva.example/~alice/a",
			"https://BÜCHER.example/%7Ealice/a",
			"https://www.bücher.example/%7ealice/./a/",
			"https://bücher．example./~alice/x/../a",
		} {
			w, err := add(fmt.Sprintf("source-idn-%d", i+1), u)
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			if w.AlreadyAttached != true || w.SourceID != first.SourceID {
				t.Errorf("%s = %v; want the first source, already attached", u, w)
			}
		}
		for i, u := range []string{"https://alice:pw@example.org/a", "https://alice@example.org/a", "https://exa\u202emple.org/", "https://example.org/\u2066x", "https://exa%E2%80%AEmple.org/"} {
			_, err := add(fmt.Sprintf("source-bad-%d", i), u)
			p := wantProblem(t, err, problem.Invalid, "url")
			if strings.Contains(p.Message, "pw") || strings.Contains(p.Message, "invalid_argument") {
				t.Errorf("%s: %q", u, p.Message)
			}
		}
	})
}
