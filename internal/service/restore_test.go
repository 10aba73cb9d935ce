package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
)

// editAtRandom edits the fixture's Note at random (tabs added, moved,
// renamed and deleted, sheets added and deleted, text grown past many
// chunks and typed into, cells, slides, decks replaced, sources, the title)
// and answers the Note as a cold read gives it at every version.
func editAtRandom(t *testing.T, f *fixture, steps int, seed int64) map[int64]note.Doc {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	model := map[int64]note.Doc{}
	snap := func() {
		t.Helper()
		res, d, err := service.New(f.svc.Store).LoadNote(ctx, f.noteID)
		if err != nil {
			t.Fatal(err)
		}
		model[res.Version] = *d
	}
	snap()
	var tabs []string
	agent := service.Agent(f.write)
	for step := 0; step < steps; step++ {
		v := f.version(t)
		key := fmt.Sprintf("walk-key-%d-%d", seed, step)
		g := service.Guard{ExpectedVersion: v}
		var err error
		switch op := r.Intn(11); {
		case op == 0 || len(tabs) == 0:
			typ := []string{note.TypeSheet, note.TypeSlides}[r.Intn(2)]
			var res service.TabCreated
			res, err = f.svc.CreateNoteTab(ctx, agent, service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: key, TabType: typ})
			tabs = append(tabs, res.TabID)
		case op == 1:
			text := strings.Repeat(fmt.Sprintf("line %d é日😀\n", step), r.Intn(2500))
			_, err = f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, ExpectedVersion: v, IdempotencyKey: key, Operation: "replace_text", Text: &text})
		case op == 2:
			var d *note.Doc
			if _, d, err = f.svc.LoadNote(ctx, f.noteID); err == nil {
				at := r.Intn(len(d.Markdown) + 1)
				for at < len(d.Markdown) && (d.Markdown[at]&0xC0) == 0x80 {
					at++
				}
				text := d.Markdown[:at] + "✎" + d.Markdown[at:]
				_, err = f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, ExpectedVersion: v, Operation: "replace_text", Text: &text})
			}
		case op == 3 || op == 4:
			tab := tabs[r.Intn(len(tabs))]
			if strings.HasPrefix(tab, note.TypeSheet) {
				_, err = f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: tab, ExpectedVersion: v, IdempotencyKey: key,
					Operation: "sheet_set_range", StartRow: ptr(r.Intn(70)), StartCol: ptr(r.Intn(70)), Values: [][]any{{float64(step), "x"}, {true, nil}}})
			} else {
				_, err = f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: tab, ExpectedVersion: v, IdempotencyKey: key,
					Operation: "slide_add", Title: ptr(fmt.Sprintf("Slide %d", step)), Body: ptr("body")})
			}
		case op == 5:
			tab := tabs[r.Intn(len(tabs))]
			data := `{"slides":[{"title":"Only","body":"one"}]}`
			if strings.HasPrefix(tab, note.TypeSheet) {
				data = fmt.Sprintf(`{"sheets":[{"name":"Fresh","cells":[[%d,"y"]]}]}`, step)
			}
			_, err = f.svc.EditNoteTab(ctx, agent, service.EditTabArgs{NoteID: f.noteID, TabID: tab, ExpectedVersion: v, IdempotencyKey: key, Operation: "replace_tab_data", Data: json.RawMessage(data)})
		case op == 6:
			_, err = f.svc.AddNoteSource(ctx, agent, service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: v, IdempotencyKey: key, Title: "Page", URL: fmt.Sprintf("https://example.com/p%d", r.Intn(10))})
		case op == 7:
			_, err = f.svc.UpdateTab(ctx, f.person, service.UpdateTabArgs{NoteID: f.noteID, TabID: tabs[r.Intn(len(tabs))], Position: ptr(r.Intn(3 + len(tabs))), Label: ptr(fmt.Sprintf("Tab %d", step)), Guard: g})
		case op == 8:
			i := r.Intn(len(tabs))
			_, err = f.svc.DeleteTab(ctx, f.person, service.TabWriteArgs{NoteID: f.noteID, TabID: tabs[i], Guard: g})
			tabs = slices.Delete(tabs, i, i+1)
		case op == 9:
			tab := tabs[r.Intn(len(tabs))]
			if !strings.HasPrefix(tab, note.TypeSheet) {
				_, err = f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: f.noteID, Title: ptr(fmt.Sprintf("Research %d", step)), Guard: g})
				break
			}
			var c service.TabContent
			if c, err = f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: tab}); err == nil {
				if len(c.Sheets) > 1 && r.Intn(2) == 0 {
					_, err = f.svc.DeleteSheet(ctx, f.person, service.SheetArgs{NoteID: f.noteID, TabID: tab, SheetID: c.Sheets[0].ID, Guard: g})
				} else {
					_, err = f.svc.AddSheet(ctx, f.person, service.AddSheetArgs{NoteID: f.noteID, TabID: tab, Name: fmt.Sprintf("S%d", step), Guard: g})
				}
			}
		default:
			_, err = f.svc.UpdateNote(ctx, f.person, service.UpdateNoteArgs{NoteID: f.noteID, Title: ptr(fmt.Sprintf("Research %d", step)), Guard: g})
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		snap()
	}
	return model
}

// sameNote fails unless got is want, but for the counters that only grow
// (a restore keeps the newer ones so that no ID is given twice).
func sameNote(t *testing.T, what string, got, want note.Doc) {
	t.Helper()
	if got.NextTabN < want.NextTabN || got.NextItem < want.NextItem {
		t.Fatalf("%s: counters went back: %d, %d; the version had %d, %d", what, got.NextTabN, got.NextItem, want.NextTabN, want.NextItem)
	}
	want.NextTabN, want.NextItem = got.NextTabN, got.NextItem
	if g, w := noteJSON(t, got), noteJSON(t, want); g != w {
		t.Fatalf("%s:\n got %.600s\nwant %.600s", what, g, w)
	}
}

// Restoring any version, in any order, gives back exactly that version,
// as a new version, read back cold and from the node's cache alike; the
// title comes back with it; restoring the current version makes none.
func TestRestoreAnyVersionGivesItBack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		model := editAtRandom(t, f, 70, 11)
		versions := make([]int64, 0, len(model))
		for v := range model {
			versions = append(versions, v)
		}
		rand.New(rand.NewSource(3)).Shuffle(len(versions), func(i, j int) { versions[i], versions[j] = versions[j], versions[i] })
		for _, v := range versions[:30] {
			before := f.version(t)
			res, err := f.svc.RestoreVersion(ctx, f.op, service.RestoreArgs{NoteID: f.noteID, Version: v})
			if err != nil {
				t.Fatalf("restore %d: %v", v, err)
			}
			r, cold, err := service.New(f.svc.Store).LoadNote(ctx, f.noteID)
			if err != nil {
				t.Fatal(err)
			}
			_, warm, err := f.svc.LoadNote(ctx, f.noteID)
			if err != nil {
				t.Fatal(err)
			}
			sameNote(t, fmt.Sprintf("version %d restored, read cold", v), *cold, model[v])
			sameNote(t, fmt.Sprintf("version %d restored, read from the cache", v), *warm, model[v])
			if r.Title != model[v].Title {
				t.Fatalf("restoring version %d: the Note is titled %q, want %q", v, r.Title, model[v].Title)
			}
			if res.Version != r.Version || (res.Version != before+1 && res.Version != before) {
				t.Fatalf("restoring version %d at %d answered version %d; the Note is at %d", v, before, res.Version, r.Version)
			}
			model[r.Version] = *cold
		}
		// The current version: nothing changes, no version is made.
		cur := f.version(t)
		res, err := f.svc.RestoreVersion(ctx, f.op, service.RestoreArgs{NoteID: f.noteID, Version: cur})
		if err != nil || res.Version != cur || len(res.ChangedTabIDs) != 0 || f.version(t) != cur {
			t.Fatalf("restoring the current version %d: %+v, %v; the Note is at %d", cur, res, err, f.version(t))
		}
	})
}

// A restore writes only the parts that differ between the Note now and the
// version restored: on a sheet of many blocks, the blocks edited since,
// and no head when the tab strip is the same.
func TestRestoreWritesOnlyWhatDiffers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		tab, err := f.svc.CreateNoteTab(ctx, service.Agent(f.write), service.CreateTabArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "restore-grid", TabType: note.TypeSheet})
		if err != nil {
			t.Fatal(err)
		}
		vals := make([][]any, 100)
		for i := range vals {
			vals[i] = make([]any, 100)
			for j := range vals[i] {
				vals[i][j] = float64(i*100 + j)
			}
		}
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: f.version(t), Operation: "sheet_set_range", StartRow: ptr(0), StartCol: ptr(0), Values: vals}); err != nil {
			t.Fatal(err)
		}
		base := f.version(t)
		for i, at := range [][2]int{{0, 0}, {40, 70}, {99, 99}} {
			if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: tab.TabID, ExpectedVersion: f.version(t), Operation: "sheet_set_range", StartRow: ptr(at[0]), StartCol: ptr(at[1]), Values: [][]any{{fmt.Sprint("edit ", i)}}}); err != nil {
				t.Fatal(err)
			}
		}
		edited, err := f.svc.Store.PartKeys(ctx, store.TypeNote, f.noteID, base+1, f.version(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(edited) != 3 {
			t.Fatalf("three one-cell edits in three blocks wrote %v", edited)
		}
		res, err := f.svc.RestoreVersion(ctx, f.person, service.RestoreArgs{NoteID: f.noteID, Version: base, Guard: service.Guard{ExpectedVersion: f.version(t)}})
		if err != nil {
			t.Fatal(err)
		}
		wrote, err := f.svc.Store.PartKeys(ctx, store.TypeNote, f.noteID, res.Version, res.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(wrote, edited) {
			t.Fatalf("the restore wrote the parts %v; want only the blocks edited since, %v", wrote, edited)
		}
		h, err := f.svc.Store.VersionRange(ctx, store.TypeNote, f.noteID, res.Version, res.Version)
		if err != nil || len(h) != 1 {
			t.Fatal(h, err)
		}
		// Three blocks of at most 32 × 32 short numbers, and no head.
		if h[0].Bytes > 3*32*32*8 {
			t.Fatalf("the restore stored %d bytes of history; want what three blocks hold", h[0].Bytes)
		}
		c, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: tab.TabID})
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range [][2]int{{0, 0}, {40, 70}, {99, 99}} {
			if got := c.Sheets[0].Cells[at[0]][at[1]]; got != float64(at[0]*100+at[1]) {
				t.Fatalf("cell %v after the restore = %v, want %v", at, got, at[0]*100+at[1])
			}
		}
	})
}
