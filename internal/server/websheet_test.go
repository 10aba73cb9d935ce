package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The sheet tab of the web app: edit a cell, paste a range from a
// spreadsheet, add and rename sheets, see an agent's cells land, and open
// a 1000 × 1000 sheet (virtualized: a bounded number of cells in the DOM).

// sheetxCaller is the owner as the people's door sees them.
func sheetxCaller(e *servertest.Env) service.Caller {
	return asOwner(e)
}

// sheetxNote makes a Note with one sheet tab; it answers their IDs.
func sheetxNote(t *testing.T, e *servertest.Env, title string) (string, string) {
	t.Helper()
	ctx := context.Background()
	n, err := e.Server.Service.CreateNote(ctx, sheetxCaller(e), service.CreateNoteArgs{Title: title, Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := e.Server.Service.CreateNoteTab(ctx, sheetxCaller(e), service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: n.Version, TabType: "sheet", Label: "Numbers"})
	if err != nil {
		t.Fatal(err)
	}
	return n.NoteID, tab.TabID
}

// sheetxCells is a rectangle of the tab's sheet as the service reads it.
func sheetxCells(t *testing.T, e *servertest.Env, id, tab, sheet string, row, col, rows, cols int) [][]any {
	t.Helper()
	r, err := e.Server.Service.ReadSheetRange(context.Background(), sheetxCaller(e), service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: id, TabID: tab}, SheetID: sheet, StartRow: row, StartCol: col, Rows: rows, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	return r.Values
}

// sheetxSheets is the tab's sheets as "id=name".
func sheetxSheets(t *testing.T, e *servertest.Env, id, tab string) []string {
	t.Helper()
	c, err := e.Server.Service.ReadNoteTab(context.Background(), sheetxCaller(e), service.TabArgs{NoteID: id, TabID: tab})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range c.Sheets {
		out = append(out, s.ID+"="+s.Name)
	}
	return out
}

// sheetxDOMCell is the JS of the text of the grid's DOM cell at (row,
// col), null when that cell is not in the DOM.
func sheetxDOMCell(row, col int) string {
	return fmt.Sprintf(`(document.querySelector('.sheet-grid revogr-data[col-type=rgCol][type=rgRow] .rgCell[data-rgrow="%d"][data-rgcol="%d"]')?.innerText ?? null)`, row, col)
}

// sheetxClickCell clicks the grid's cell at (row, col), which must be in view.
func sheetxClickCell(row, col int) chromedp.Action[chromedp.Void] {
	return browsertest.Click(chromedp.CSS(fmt.Sprintf(`.sheet-grid revogr-data[col-type=rgCol][type=rgRow] .rgCell[data-rgrow="%d"][data-rgcol="%d"]`, row, col)))
}

// sheetxType opens the editor of cell (row, col) with Enter, types text
// and closes it with Enter (which saves), as a person does.
func sheetxType(row, col int, text string) chromedp.Action[chromedp.Void] {
	editor := `document.querySelector(".sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea")`
	return chromedp.Steps(
		browsertest.Poll(`!`+editor),
		sheetxClickCell(row, col),
		chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(`!!document.activeElement?.matches(".sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea")`),
		insertText(text),
		chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(`!`+editor),
	)
}

// sheetxNoOverflow is noOverflow for a page with a grid: the grid's box
// must fit the window; the cells inside it scroll within it (it clips
// them), so they are not checked.
func sheetxNoOverflow(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	clips := run(t, ctx, "grid clip", chromedp.Evaluate[bool](`(() => { const g = document.querySelector(".sheet-grid"); return !!g && getComputedStyle(g).overflow === "hidden"; })()`))
	if !clips {
		t.Errorf("%s: the grid does not clip its cells", name)
	}
	noOverflow(t, ctx, name)
}

// sheetxWait polls ok (bounded) until it holds.
func sheetxWait(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sheetxPaste dispatches a paste of text/plain tsv on the focused element,
// as a browser does when the person presses Ctrl+V.
func sheetxPaste(tsv string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const dt = new DataTransfer(); dt.setData("text/plain", %q);
		(document.activeElement || document.body).dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true})); })()`, tsv))
}

// sheetxPasteValue is the value pasted at (i, j) of the 50 × 20 range: a
// number, a string, a boolean or an empty cell, by column.
func sheetxPasteValue(i, j int) (text string, want any) {
	switch j % 4 {
	case 0:
		return fmt.Sprint(i*100 + j), float64(i*100 + j)
	case 1:
		return fmt.Sprintf("r%d c%d", i, j), fmt.Sprintf("r%d c%d", i, j)
	case 2:
		if i%2 == 0 {
			return "TRUE", true
		}
		return "false", false
	}
	if i%3 == 0 {
		return "", nil
	}
	return fmt.Sprintf("%d.5", i), float64(i) + 0.5
}

func TestBrowserNoteSheet(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)
	id, tab := sheetxNote(t, e, "Sheet test")
	first := strings.SplitN(sheetxSheets(t, e, id, tab)[0], "=", 2)[0]
	do(t, ctx, "open the sheet tab", chromedp.Navigate(e.URL+"/notes/"+id+"?tab="+tab),
		browsertest.Poll(sheetxDOMCell(0, 0)+` !== null`))

	// Edit a cell: a number typed is a number.
	do(t, ctx, "type into A1", sheetxClickCell(0, 0), chromedp.KeyEvent("4"), browsertest.Poll(`!!document.activeElement?.matches(".sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea")`),
		insertText("2"), chromedp.KeyEvent(kb.Enter))
	sheetxWait(t, "A1 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 0, 0, 1, 1)[0][0] == float64(42) })
	do(t, ctx, "type text into B1", sheetxType(0, 1, "  Hosting costs"))
	sheetxWait(t, "B1 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 0, 1, 1, 1)[0][0] == "  Hosting costs" })

	// Paste a 50 × 20 range from a spreadsheet at C2.
	var tsv strings.Builder
	for i := range 50 {
		for j := range 20 {
			if j > 0 {
				tsv.WriteByte('\t')
			}
			txt, _ := sheetxPasteValue(i, j)
			tsv.WriteString(txt)
		}
		tsv.WriteString("\r\n")
	}
	do(t, ctx, "paste at C2", sheetxClickCell(1, 2), sheetxPaste(tsv.String()))
	check := func() string {
		got := sheetxCells(t, e, id, tab, first, 1, 2, 50, 20)
		for i := range 50 {
			for j := range 20 {
				if _, want := sheetxPasteValue(i, j); got[i][j] != want {
					return fmt.Sprintf("cell (%d, %d) is %#v, want %#v", 1+i, 2+j, got[i][j], want)
				}
			}
		}
		return ""
	}
	sheetxWait(t, "the pasted range on the server", func() bool { return check() == "" })
	if got := sheetxCells(t, e, id, tab, first, 0, 0, 1, 2)[0]; got[0] != float64(42) || got[1] != "  Hosting costs" {
		t.Fatalf("the paste changed the first row: %v", got)
	}
	// The grid draws the pasted cells on a frame after it wrote them.
	shown, cancel := context.WithTimeout(ctx, stepTimeout)
	if _, err := chromedp.Run(shown, browsertest.Poll(sheetxDOMCell(1, 2)+` === "0"`)); err != nil {
		t.Errorf("C2 shows %q after the paste, want 0 (%v)", run(t, ctx, "C2 shown", chromedp.Evaluate[string](sheetxDOMCell(1, 2))), err)
	}
	cancel()
	do(t, ctx, "saved", waitSaved())
	accessible(t, ctx, "note-sheet")
	browsertest.Screenshot(t, ctx, "note-sheet")

	// An agent writes cells through MCP while the page is open: they show.
	_, v := serverText(t, e, id)
	agent := e.Client(t, e.WriteToken(t), "")
	r := servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": id, "tab_id": tab, "expected_version": v,
		"operation": "sheet_set_range", "start_row": 3, "start_col": 0, "values": [][]any{{"from the agent", 7}}, "idempotency_key": "websheet-agent-1"})
	if r.IsError {
		t.Fatalf("the agent's write: %s", r.Text)
	}
	do(t, ctx, "the agent's cells", browsertest.Poll(sheetxDOMCell(3, 0)+` === "from the agent" && `+sheetxDOMCell(3, 1)+` === "7"`))
	// The person edits after it, on the version before: the write is
	// retried on the new one, and both are kept.
	do(t, ctx, "type into A5", sheetxType(4, 0, "after"))
	sheetxWait(t, "A5 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 4, 0, 1, 1)[0][0] == "after" })
	if got := sheetxCells(t, e, id, tab, first, 3, 0, 1, 2)[0]; got[0] != "from the agent" || got[1] != float64(7) {
		t.Fatalf("the agent's cells after the person's write: %v", got)
	}

	// The agent writes a cell while the person has its editor open: the
	// person's value is saved, and the page says what it replaced.
	editor := `document.activeElement?.matches(".sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea")`
	do(t, ctx, "open A10's editor", sheetxClickCell(9, 0), chromedp.KeyEvent(kb.Enter), browsertest.Poll(`!!`+editor))
	_, v = serverText(t, e, id)
	r = servertest.MustCall(t, agent, "edit_note_tab", map[string]any{"note_id": id, "tab_id": tab, "expected_version": v,
		"operation": "sheet_set_range", "start_row": 9, "start_col": 0, "values": [][]any{{"agent value"}}, "idempotency_key": "websheet-agent-2"})
	if r.IsError {
		t.Fatalf("the agent's second write: %s", r.Text)
	}
	// The page has learned of it (a new version) while the editor stays open.
	do(t, ctx, "the agent's write is seen", browsertest.Poll(fmt.Sprintf(`document.body.innerText.includes("Version %d")`, v+1)), browsertest.Poll(`!!`+editor),
		insertText("mine"), chromedp.KeyEvent(kb.Enter), waitText(".sheet-notice", "A10: “agent value” was replaced by your “mine”"))
	sheetxWait(t, "A10 on the server", func() bool { return sheetxCells(t, e, id, tab, first, 9, 0, 1, 1)[0][0] == "mine" })

	// Add a sheet, then rename it (trimmed).
	do(t, ctx, "add a sheet", browsertest.Click(chromedp.JSPath(`[...document.querySelectorAll(".sheet-actions button")].find(b => b.innerText.trim() === "Add sheet")`)),
		browsertest.Poll(`document.querySelectorAll(".sheet-tabs [role=tab]").length === 2 && document.querySelector(".sheet-tabs [aria-selected=true]")?.innerText.trim() === "Sheet2"`))
	sheets := sheetxSheets(t, e, id, tab)
	if len(sheets) != 2 || !strings.HasSuffix(sheets[1], "=Sheet2") {
		t.Fatalf("after Add sheet the server has %v", sheets)
	}
	do(t, ctx, "rename it", browsertest.Click(chromedp.JSPath(`[...document.querySelectorAll(".sheet-actions button")].find(b => b.innerText.trim() === "Rename sheet")`)),
		chromedp.WaitVisible(chromedp.CSS(`.sheet-rename input`)), selectAll(".sheet-rename input"), insertText("  Costs  "), chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(`!document.querySelector(".sheet-rename") && document.querySelector(".sheet-tabs [aria-selected=true]")?.innerText.trim() === "Costs"`))
	if sheets := sheetxSheets(t, e, id, tab); len(sheets) != 2 || !strings.HasSuffix(sheets[1], "=Costs") {
		t.Fatalf("after the rename the server has %v", sheets)
	}
	second := strings.SplitN(sheets[1], "=", 2)[0]
	do(t, ctx, "type into the new sheet", browsertest.Poll(sheetxDOMCell(0, 0)+` !== null`), sheetxType(0, 0, "true"))
	sheetxWait(t, "the new sheet's A1", func() bool { return sheetxCells(t, e, id, tab, second, 0, 0, 1, 1)[0][0] == true })
	// A paste larger than 100 × 100 (150 × 120 at B3) is saved in several
	// writes of at most 100 × 100; the grid grows to hold it.
	var big strings.Builder
	for i := range 150 {
		for j := range 120 {
			if j > 0 {
				big.WriteByte('\t')
			}
			fmt.Fprint(&big, i*1000+j)
		}
		big.WriteByte('\n')
	}
	do(t, ctx, "paste 150 × 120 at B3", sheetxClickCell(2, 1), sheetxPaste(big.String()))
	bigCheck := func() string {
		for _, q := range [][4]int{{2, 1, 100, 100}, {102, 1, 50, 100}, {2, 101, 100, 20}, {102, 101, 50, 20}} {
			got := sheetxCells(t, e, id, tab, second, q[0], q[1], q[2], q[3])
			for i := range q[2] {
				for j := range q[3] {
					if want := float64((q[0]-2+i)*1000 + q[1] - 1 + j); got[i][j] != want {
						return fmt.Sprintf("cell (%d, %d) is %#v, want %v", q[0]+i, q[1]+j, got[i][j], want)
					}
				}
			}
		}
		return ""
	}
	sheetxWait(t, "the 150 × 120 paste on the server", func() bool { return bigCheck() == "" })
	if got := sheetxCells(t, e, id, tab, second, 0, 0, 1, 1)[0][0]; got != true {
		t.Errorf("the large paste changed A1 of the new sheet: %#v", got)
	}
	do(t, ctx, "saved", waitSaved())
	do(t, ctx, "back to Sheet1", browsertest.Click(chromedp.CSS(`.sheet-tabs [role=tab]`)), browsertest.Poll(sheetxDOMCell(3, 0)+` === "from the agent" && `+sheetxDOMCell(4, 0)+` === "after"`))

	// A phone.
	do(t, ctx, "phone", browsertest.Phone(), chromedp.Reload(), browsertest.Poll(sheetxDOMCell(0, 0)+` === "42"`))
	sheetxNoOverflow(t, ctx, "the sheet tab on a phone")
	browsertest.Screenshot(t, ctx, "note-sheet-phone")
	do(t, ctx, "desktop", browsertest.Desktop())
}

// TestBrowserSheetLarge opens a 1000 × 1000 sheet (filled in 100 × 100
// writes) and scrolls to its last cell; it logs the time to the first
// cells and the number of cells in the DOM (virtualized: bounded).
func TestBrowserSheetLarge(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	signInToNotes(t, ctx, e)
	id, tab := sheetxNote(t, e, "A large sheet")
	c := sheetxCaller(e)
	v := int64(2)
	t0 := time.Now()
	for r0 := 0; r0 < 1000; r0 += 100 {
		for c0 := 0; c0 < 1000; c0 += 100 {
			vals := make([][]any, 100)
			for i := range vals {
				vals[i] = make([]any, 100)
				for j := range vals[i] {
					vals[i][j] = float64((r0+i)*1000 + c0 + j)
				}
			}
			res, err := e.Server.Service.EditNoteTab(context.Background(), c, service.EditTabArgs{NoteID: id, TabID: tab, ExpectedVersion: v,
				Operation: "sheet_set_range", StartRow: &r0, StartCol: &c0, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			v = res.Version
		}
	}
	t.Logf("1000 × 1000 sheet filled in 100 writes of 100 × 100 in %v", time.Since(t0).Round(time.Millisecond))

	start := time.Now()
	do(t, ctx, "open the large sheet", chromedp.Navigate(e.URL+"/notes/"+id+"?tab="+tab), browsertest.Poll(sheetxDOMCell(0, 0)+` === "0"`, chromedp.WithPollingTimeout(60*time.Second)))
	firstCells := time.Since(start)
	count := `document.querySelectorAll(".sheet-grid revogr-data[col-type=rgCol] .rgCell").length`
	n0 := run(t, ctx, "cells in the DOM", chromedp.Evaluate[int](count))
	// What the page read to get there: the tab (as the Note page reads it)
	// and the cell blocks.
	t.Log(run(t, ctx, "reads", chromedp.Evaluate[string](`performance.getEntriesByType("resource").filter(e => e.name.includes("/api/notes/")).map(e => new URL(e.name).pathname.split("/").slice(-1)[0] + " " + Math.round(e.duration) + " ms " + Math.round(e.encodedBodySize / 1024) + " KB").join("; ")`)))
	// The tab is read without its cells (a few hundred bytes, not the
	// whole sheet's megabytes): the grid reads the blocks in view.
	if size := run(t, ctx, "the tab's read", chromedp.Evaluate[int](`Math.max(-1, ...performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname.endsWith("/tabs/`+tab+`")).map(e => e.encodedBodySize))`)); size < 0 || size > 64<<10 {
		t.Errorf("the Note page read the sheet tab in %d bytes; want it read without its cells (under 64 KiB)", size)
	}
	start = time.Now()
	do(t, ctx, "scroll to the last cell", chromedp.Evaluate[chromedp.Void](`(async () => { const g = document.querySelector(".sheet-grid revo-grid"); await g.scrollToRow(999); await g.scrollToColumnIndex(999); })()`, chromedp.EvalAwaitPromise),
		browsertest.Poll(sheetxDOMCell(999, 999)+` === "999999"`, chromedp.WithPollingTimeout(30*time.Second)))
	lastCell := time.Since(start)
	n1 := run(t, ctx, "cells in the DOM", chromedp.Evaluate[int](count))
	t.Logf("1000 × 1000 sheet: first cells after %v (%d DOM cells); last cell after scrolling %v (%d DOM cells)", firstCells.Round(time.Millisecond), n0, lastCell.Round(time.Millisecond), n1)
	if n0 == 0 || n1 == 0 || n0 > 5000 || n1 > 5000 {
		t.Errorf("the grid has %d and %d cells in the DOM; a virtualized grid has a bounded number (at most a few thousand), not a million", n0, n1)
	}
}
