package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
)

func fillSheet(t *testing.T, f *fixture, tabID string, rows, cols int) {
	t.Helper()
	ctx := context.Background()
	for r := 0; r < rows; r += 100 {
		for c := 0; c < cols; c += 100 {
			vals := make([][]any, min(100, rows-r))
			for i := range vals {
				vals[i] = make([]any, min(100, cols-c))
				for j := range vals[i] {
					vals[i][j] = float64((r+i)*cols + c + j)
				}
			}
			if _, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tabID, ExpectedVersion: f.version(t),
				IdempotencyKey: fmt.Sprintf("fill-%d-%d", r, c), Operation: "sheet_set_range", StartRow: ptr(r), StartCol: ptr(c), Values: vals}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func partsByKey(t *testing.T, s store.Store, id string, after int64) map[string]string {
	t.Helper()
	_, ps, err := s.Parts(context.Background(), store.TypeNote, id, after)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		out[p.Key] = string(p.Data)
	}
	return out
}

// A one-cell write stores one block: every other part keeps its bytes and
// its version, and history grows by less than a kilobyte.
func TestOneCellWriteLeavesOtherBlocksUntouched(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		tab, err := f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "tab-sheet-1", TabType: note.TypeSheet})
		if err != nil {
			t.Fatal(err)
		}
		fillSheet(t, f, tab.TabID, 200, 200)
		before := partsByKey(t, f.svc.Store, f.noteID, 0)
		v := f.version(t)
		if _, err := f.svc.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: v,
			IdempotencyKey: "one-cell-1", Operation: "sheet_set_range", StartRow: ptr(150), StartCol: ptr(70), Values: [][]any{{"changed"}}}); err != nil {
			t.Fatal(err)
		}
		after := partsByKey(t, f.svc.Store, f.noteID, 0)
		var differ []string
		for k, b := range after {
			if before[k] != b {
				differ = append(differ, k)
			}
		}
		if len(after) != len(before) || len(differ) != 1 || !strings.HasSuffix(differ[0], fmt.Sprintf("/%d.%d", 150/note.BlockRows, 70/note.BlockCols)) {
			t.Fatalf("a one-cell write changed parts %v (of %d; %d before)", differ, len(after), len(before))
		}
		if since := partsByKey(t, f.svc.Store, f.noteID, v); len(since) != 1 {
			t.Fatalf("parts written at the new version: %v, want the one block", since)
		}
		h, err := f.svc.Store.History(ctx, store.TypeNote, f.noteID)
		if err != nil {
			t.Fatal(err)
		}
		if last := h[len(h)-1]; last.Bytes <= 0 || last.Bytes > 200 {
			t.Fatalf("history of the one-cell edit stores %d bytes", last.Bytes)
		}
		got, err := f.svc.ReadSheetRange(ctx, service.Agent(f.read), service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: f.noteID, TabID: tab.TabID}, StartRow: 149, StartCol: 69, Rows: 2, Cols: 2})
		if err != nil {
			t.Fatal(err)
		}
		if want := [][]any{{float64(149*200 + 69), float64(149*200 + 70)}, {float64(150*200 + 69), "changed"}}; fmt.Sprint(got.Values) != fmt.Sprint(want) {
			t.Fatalf("read back %v, want %v", got.Values, want)
		}
	})
}

func noteJSON(t *testing.T, d note.Doc) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every version of a Note edited at random, by agents and people, is read
// back exactly from history, on both stores and by a node with nothing
// cached; restoring version 1 brings its content back as a new version.
func TestEveryVersionRebuildsExactly(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		cold := func() *service.Service { return service.New(f.svc.Store) }
		model := map[int64]string{}
		for v, d := range editAtRandom(t, f, 60, 7) {
			model[v] = noteJSON(t, d)
		}
		for v, want := range model {
			d, err := cold().NoteAt(ctx, f.noteID, v)
			if err != nil {
				t.Fatal(err)
			}
			if got := noteJSON(t, d); got != want {
				t.Fatalf("version %d rebuilt from history differs:\n got %.400s\nwant %.400s", v, got, want)
			}
		}
		nv, err := f.svc.RestoreVersion(ctx, f.op, service.RestoreArgs{NoteID: f.noteID, Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, d, err := cold().LoadNote(ctx, f.noteID)
		if err != nil {
			t.Fatal(err)
		}
		var want, got note.Doc
		if err := json.Unmarshal([]byte(model[1]), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(noteJSON(t, *d)), &got); err != nil {
			t.Fatal(err)
		}
		want.NextTabN, want.NextItem = got.NextTabN, got.NextItem
		if noteJSON(t, got) != noteJSON(t, want) || nv.Version != f.version(t) {
			t.Fatalf("restoring version 1 gave\n %.300s\nwant\n %.300s", noteJSON(t, got), noteJSON(t, want))
		}
	})
}

// A node that cached a Note reads another node's writes: the cached older
// version plus the parts written since give exactly what a cold read gives.
func TestCachedNoteFollowsAnotherNodesWrites(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		other := service.New(f.svc.Store) // a second node: its own cache
		tab, err := f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "follow-tab-1", TabType: note.TypeSheet})
		if err != nil {
			t.Fatal(err)
		}
		fillSheet(t, f, tab.TabID, 100, 100)
		for step := 0; step < 12; step++ {
			if _, _, err := f.svc.LoadNote(ctx, f.noteID); err != nil { // this node caches the current version
				t.Fatal(err)
			}
			v := f.version(t)
			key := fmt.Sprintf("follow-key-%d", step)
			switch step % 4 {
			case 0:
				_, err = other.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: v, IdempotencyKey: key,
					Operation: "sheet_set_range", StartRow: ptr(step * 7), StartCol: ptr(step * 5), Values: [][]any{{"from the other node"}}})
			case 1:
				data := json.RawMessage(fmt.Sprintf(`{"sheets":[{"name":"Shrunk","cells":[[%d]]}]}`, step))
				_, err = other.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: v, IdempotencyKey: key, Operation: "replace_tab_data", Data: data})
			case 2:
				text := strings.Repeat("grown again ", 1000*step)
				_, err = other.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, ExpectedVersion: v, IdempotencyKey: key, Operation: "replace_text", Text: &text})
			default:
				_, err = other.EditNoteTab(ctx, service.Agent(f.write), service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: v, IdempotencyKey: key,
					Operation: "sheet_set_range", StartRow: ptr(90), StartCol: ptr(90), Values: [][]any{{1.0, 2.0}, {3.0}}})
			}
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			_, warm, err := f.svc.LoadNote(ctx, f.noteID)
			if err != nil {
				t.Fatal(err)
			}
			_, cold, err := service.New(f.svc.Store).LoadNote(ctx, f.noteID)
			if err != nil {
				t.Fatal(err)
			}
			if noteJSON(t, *warm) != noteJSON(t, *cold) {
				t.Fatalf("step %d: the node that cached version %d reads otherwise than a cold read", step, v)
			}
		}
	})
}
