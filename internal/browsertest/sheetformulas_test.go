package browsertest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/xuri/excelize/v2"

	"foundry/internal/account"
	"foundry/internal/browsertest"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// The sheet grid as a spreadsheet: numbers and a formula typed, the
// formula's total shown and its formula in the edit bar, numbers
// right-aligned, a formula copied down with the fill handle (its
// references moved), a column resized (kept after a reload), a currency
// format, and a spreadsheet imported and downloaded.

const formulasPassword = "correct horse battery staple"

const stepTimeout = 30 * time.Second

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Steps(steps...)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, what, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func insertText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// cellSel is the CSS of the grid's DOM cell at (row, col).
func cellSel(row, col int) string {
	return fmt.Sprintf(`.sheet-grid revogr-data[col-type=rgCol][type=rgRow] .rgCell[data-rgrow="%d"][data-rgcol="%d"]`, row, col)
}

// cellText is the JS of the text the grid shows at (row, col), null when
// that cell is not in the DOM.
func cellText(row, col int) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? null)`, cellSel(row, col))
}

// headA is the JS of column A's header cell.
const headA = `[...document.querySelectorAll(".sheet-grid revogr-header .rgHeaderCell")].find((h) => h.innerText.trim() === "A")`

const editorSel = `.sheet-grid revogr-edit input, .sheet-grid revogr-edit textarea`

// typeCell opens the editor of (row, col) with Enter, types text and
// closes it with Enter, which saves it.
func typeCell(row, col int, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Poll(fmt.Sprintf(`!document.querySelector(%q)`, editorSel)),
		browsertest.Click(chromedp.CSS(cellSel(row, col))),
		chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(fmt.Sprintf(`!!document.activeElement?.matches(%q)`, editorSel)),
		insertText(text),
		chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(fmt.Sprintf(`!document.querySelector(%q)`, editorSel)),
	)
}

// typeOver types text over what cell (row, col) holds: its first key
// opens the editor with that key alone, as in a spreadsheet.
func typeOver(row, col int, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Poll(fmt.Sprintf(`!document.querySelector(%q)`, editorSel)),
		browsertest.Click(chromedp.CSS(cellSel(row, col))),
		chromedp.KeyEvent(text[:1]),
		browsertest.Poll(fmt.Sprintf(`!!document.activeElement?.matches(%q)`, editorSel)),
		insertText(text[1:]),
		chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(fmt.Sprintf(`!document.querySelector(%q)`, editorSel)),
	)
}

// clearCell empties cell (row, col) with Delete.
func clearCell(row, col int) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		browsertest.Click(chromedp.CSS(cellSel(row, col))),
		chromedp.KeyEvent(kb.Delete),
		browsertest.Poll(cellText(row, col)+` === ""`),
	)
}

// center is the middle of the element sel matches, in the window.
func center(t *testing.T, ctx context.Context, sel string) (float64, float64) {
	t.Helper()
	xy := eval[[]float64](t, ctx, "where "+sel, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, sel))
	return xy[0], xy[1]
}

func held(p *input.DispatchMouseEventParams) {
	p.Button = input.MouseButtonLeft
	p.Buttons = 1
	p.ClickCount = 1
}

// drag presses the mouse at (x0, y0), moves it in steps to (x1, y1) and
// lets go there, as a person drags.
func drag(x0, y0, x1, y1 float64) chromedp.Action[chromedp.Void] {
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(chromedp.MouseMoved, x0, y0),
		chromedp.MouseEvent(chromedp.MousePressed, x0, y0, held),
	}
	for i := 1; i <= 8; i++ {
		f := float64(i) / 8
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f, held))
	}
	steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, x1, y1, held))
	return chromedp.Steps(steps...)
}

func waitSaved() chromedp.Action[chromedp.Void] {
	return browsertest.Poll(`document.getElementById("save-state")?.innerText === "Saved"`)
}

func TestBrowserSheetFormulas(t *testing.T) {
	e := servertest.Start(t, servertest.Options{})
	if err := account.SetPassword(context.Background(), e.Server.Store, e.Owner.User, "password", formulasPassword); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t)
	owner := service.Person(e.Owner.User.Workspace, e.Owner.User.ID, e.Owner.User.Role)
	bg := context.Background()
	n, err := e.Server.Service.CreateNote(bg, owner, service.CreateNoteArgs{Title: "Budget", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := e.Server.Service.CreateNoteTab(bg, owner, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: n.Version, TabType: "sheet", Label: "Costs"})
	if err != nil {
		t.Fatal(err)
	}
	id := n.NoteID
	sheetURL := e.URL + "/notes/" + id + "?tab=" + tab.TabID

	do(t, ctx, "sign in", chromedp.Navigate(e.URL+"/notes"),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("email"), e.Owner.User.Email),
		chromedp.SendKeys(chromedp.ID("password"), formulasPassword),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)))
	// The sign-in navigates: the page is asked again until it is the Notes list.
	for deadline := time.Now().Add(stepTimeout); ; {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		path, err := chromedp.Run(c, chromedp.Evaluate[string](`location.pathname`))
		cancel()
		if err == nil && path == "/notes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signed in, the page is at %q (%v), want /notes", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	do(t, ctx, "open the sheet", chromedp.Navigate(sheetURL), browsertest.Poll(cellText(0, 0)+` !== null`))

	// Labels in A, numbers in B2:B4 and their total in B5.
	for i, label := range []string{"Item", "Hosting", "Domains", "Support", "Total"} {
		do(t, ctx, "type A"+fmt.Sprint(i+1), typeCell(i, 0, label))
	}
	do(t, ctx, "type B1", typeCell(0, 1, "Cost"))
	for i, v := range []string{"1200", "85.5", "340"} {
		do(t, ctx, fmt.Sprintf("type B%d", i+2), typeCell(i+1, 1, v))
	}
	do(t, ctx, "type the total", typeCell(4, 1, "=SUM(B2:B4)"))
	total, cancel := context.WithTimeout(ctx, stepTimeout)
	if _, err := chromedp.Run(total, browsertest.Poll(cellText(4, 1)+` === "1625.5"`)); err != nil {
		t.Fatalf("B5 shows %q, want the computed total 1625.5 (%v)", eval[string](t, ctx, "B5", cellText(4, 1)), err)
	}
	cancel()
	// An agent reads what the person typed over MCP: the computed total,
	// and the formula beside it.
	cs := e.Client(t, e.WriteToken(t), "")
	read := servertest.MustCall(t, cs, "read_sheet_range", map[string]any{"note_id": id, "tab_id": tab.TabID, "start_row": 4, "start_col": 1, "rows": 1, "cols": 1})
	if fs, _ := read.Data["formulas"].([]any); read.IsError || fmt.Sprint(read.Data["values"]) != "[[1625.5]]" || len(fs) != 1 || fs[0].(map[string]any)["formula"] != "=SUM(B2:B4)" {
		t.Fatalf("read_sheet_range of B5 over MCP: %s; want the value 1625.5 and the formula =SUM(B2:B4)", read.Text)
	}

	// The edit bar shows the selected cell's name and its formula.
	do(t, ctx, "select B5", browsertest.Click(chromedp.CSS(cellSel(4, 1))),
		browsertest.Poll(`document.querySelector(".sheet-cellname")?.innerText === "B5"`))
	if got := eval[string](t, ctx, "the edit bar", `document.querySelector(".sheet-barinput").value`); got != "=SUM(B2:B4)" {
		t.Fatalf("the edit bar shows %q for B5, want its formula =SUM(B2:B4)", got)
	}
	// Numbers sit at the right of their cells, computed ones too; text at the left.
	for _, c := range [][2]int{{1, 1}, {4, 1}} {
		if got := eval[string](t, ctx, "alignment", fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).textAlign`, cellSel(c[0], c[1]))); got != "right" {
			t.Errorf("cell (%d, %d) is aligned %q, want right", c[0], c[1], got)
		}
	}
	if got := eval[string](t, ctx, "alignment", fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).textAlign`, cellSel(1, 0))); got == "right" {
		t.Errorf("text in A2 is aligned right, want left")
	}

	// The edit bar edits: a changed B4 changes the total.
	do(t, ctx, "edit B4 in the edit bar", browsertest.Click(chromedp.CSS(cellSel(3, 1))),
		browsertest.Poll(`document.querySelector(".sheet-cellname")?.innerText === "B4"`),
		browsertest.Click(chromedp.CSS(".sheet-barinput")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".sheet-barinput").select()`),
		insertText("350"), chromedp.KeyEvent(kb.Enter),
		browsertest.Poll(cellText(3, 1)+` === "350"`))
	do(t, ctx, "the total follows", browsertest.Poll(cellText(4, 1)+` === "1635.5"`))

	// An error a formula computes to shows as such, in its colour; a
	// formula that does not parse is refused, said why, and the cell kept.
	do(t, ctx, "type D2", typeCell(1, 3, "=B2/0"), browsertest.Poll(cellText(1, 3)+` === "#DIV/0!"`),
		browsertest.Poll(fmt.Sprintf(`document.querySelector(%q).classList.contains("cell-err")`, cellSel(1, 3))))
	do(t, ctx, "type D3", typeCell(2, 3, "kept"), waitSaved())
	do(t, ctx, "a broken formula in D3", typeOver(2, 3, "=SUM(B2:"))
	refused, cancel := context.WithTimeout(ctx, 10*time.Second)
	if _, err := chromedp.Run(refused, chromedp.Steps(browsertest.Poll(`(document.querySelector(".sheet-notice")?.innerText ?? "").includes("Not saved D3: ")`),
		browsertest.Poll(cellText(2, 3)+` === "kept"`))); err != nil {
		t.Fatalf("a broken formula in D3: the notice says %q and D3 shows %q; want the refusal naming D3, and D3 kept", eval[string](t, ctx, "notice", `document.querySelector(".sheet-notice")?.innerText ?? ""`), eval[string](t, ctx, "D3", cellText(2, 3)))
	}
	cancel()
	do(t, ctx, "dismiss", browsertest.Click(chromedp.CSS(".sheet-notice button")), clearCell(1, 3), clearCell(2, 3), waitSaved())

	// A formula copied down with the fill handle: its references move.
	do(t, ctx, "type C2", typeCell(1, 2, "=B2*2"), browsertest.Poll(cellText(1, 2)+` === "2400"`))
	do(t, ctx, "select C2", browsertest.Click(chromedp.CSS(cellSel(1, 2))), browsertest.Poll(fmt.Sprintf(`(() => { const h = document.querySelector(".sheet-grid .autofill-handle")?.getBoundingClientRect(), c = document.querySelector(%q).getBoundingClientRect();
			return !!h && Math.abs(h.right - c.right) < 8 && Math.abs(h.bottom - c.bottom) < 8; })()`, cellSel(1, 2))))
	hx, hy := center(t, ctx, ".sheet-grid .autofill-handle")
	_, ty := center(t, ctx, cellSel(3, 2))
	do(t, ctx, "drag the fill handle to C4", drag(hx, hy, hx, ty))
	do(t, ctx, "C3 and C4 computed", browsertest.Poll(cellText(2, 2)+` === "171" && `+cellText(3, 2)+` === "700"`))
	browsertest.Screenshot(t, ctx, "sheet-fill-handle")
	do(t, ctx, "select C4", browsertest.Click(chromedp.CSS(cellSel(3, 2))),
		browsertest.Poll(`document.querySelector(".sheet-barinput")?.value === "=B4*2"`))

	// A number format on a range: B2:B5 selected by dragging, then Currency.
	do(t, ctx, "select B2", browsertest.Click(chromedp.CSS(cellSel(1, 1))))
	x0, y0 := center(t, ctx, cellSel(1, 1))
	_, y1 := center(t, ctx, cellSel(4, 1))
	do(t, ctx, "select B2:B5", drag(x0, y0, x0, y1),
		browsertest.Click(chromedp.CSS(`.sheet-fmt[data-format=currency]`)),
		browsertest.Poll(cellText(1, 1)+` === "$1,200.00" && `+cellText(4, 1)+` === "$1,635.50" && `+cellText(2, 1)+` === "$85.50"`), waitSaved())
	do(t, ctx, "number format on C2", browsertest.Click(chromedp.CSS(cellSel(1, 2))),
		browsertest.Click(chromedp.CSS(`.sheet-fmt[data-format=number]`)),
		browsertest.Poll(cellText(1, 2)+` === "2,400.00"`), waitSaved())

	// A column resized by its header's border: it and the formats are kept
	// after a reload.
	before := eval[float64](t, ctx, "A's width", headA+`.getBoundingClientRect().width`)
	edge := eval[[]float64](t, ctx, "A's border", `(() => { const r = `+headA+`.querySelector(".resizable-r").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	do(t, ctx, "resize A", drag(edge[0], edge[1], edge[0]+90, edge[1]))
	do(t, ctx, "A wider", browsertest.Poll(fmt.Sprintf(`%s.getBoundingClientRect().width > %f`, headA, before+60)), waitSaved())
	widened := eval[float64](t, ctx, "A's width", headA+`.getBoundingClientRect().width`)
	do(t, ctx, "select B5", browsertest.Click(chromedp.CSS(cellSel(4, 1))),
		browsertest.Poll(`document.querySelector(".sheet-barinput")?.value === "=SUM(B2:B4)"`))
	browsertest.Screenshot(t, ctx, "sheet-formulas")
	do(t, ctx, "reload", chromedp.Reload(), browsertest.Poll(cellText(4, 1)+` !== null && `+cellText(4, 1)+` !== ""`))
	kept, cancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := chromedp.Run(kept, browsertest.Poll(cellText(4, 1)+` === "$1,635.50"`)); err != nil {
		t.Errorf("after a reload B5 shows %q, want its currency format kept: $1,635.50", eval[string](t, ctx, "B5", cellText(4, 1)))
	}
	cancel()
	if got := eval[float64](t, ctx, "A's width", headA+`.getBoundingClientRect().width`); math.Abs(got-widened) > 2 {
		t.Errorf("column A is %.0f px wide after a reload, want %.0f (as resized)", got, widened)
	}
	// The tab's menu: import a spreadsheet, download this one.
	do(t, ctx, "the tab menu", browsertest.Click(chromedp.ID("tab-actions-button")),
		chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=import]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=xlsx]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=csv]`)))
	browsertest.Screenshot(t, ctx, "sheet-menu-import-export")
	do(t, ctx, "close the menu", chromedp.KeyEvent(kb.Escape))

	t.Run("import and export", func(t *testing.T) {
		exportURL := "/api/notes/" + id + "/tabs/" + tab.TabID + "/export?format="
		status := eval[int](t, ctx, "export", fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(r => r.status)`, exportURL+"csv"), chromedp.EvalAwaitPromise)
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			t.Skipf("the server has no import and export of sheets yet (export answered %d)", status)
		}
		if status != http.StatusOK {
			t.Fatalf("export as csv answered %d, want 200", status)
		}

		// A small workbook with a formula, imported from the tab's menu:
		// the new tab opens, its formula computed.
		f := excelize.NewFile()
		for cell, v := range map[string]any{"A1": "Name", "B1": "Hours", "A2": "Ada", "B2": 12, "A3": "Grace", "B3": 7, "A4": "Total"} {
			if err := f.SetCellValue("Sheet1", cell, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SetCellFormula("Sheet1", "B4", "SUM(B2:B3)"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "Team hours.xlsx")
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "import", browsertest.Click(chromedp.ID("tab-actions-button")),
			chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=import]`)),
			chromedp.KeyEvent(kb.Escape),
			chromedp.WaitNotPresent(chromedp.ID("tab-actions-menu")),
			chromedp.SetUploadFiles(chromedp.CSS(`#tab-import-file`), []string{path}),
			browsertest.Poll(fmt.Sprintf(`new URLSearchParams(location.search).get("tab") !== %q`, tab.TabID)),
			browsertest.Poll(cellText(1, 0)+` === "Ada" && `+cellText(3, 1)+` === "19"`))

		// The first tab downloaded: csv its values, xlsx its formulas.
		csv := eval[string](t, ctx, "export csv", fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(r => r.text())`, exportURL+"csv"), chromedp.EvalAwaitPromise)
		if !strings.Contains(csv, "Hosting") || !strings.Contains(csv, "1635.5") {
			t.Errorf("the sheet as csv lacks its values:\n%s", csv)
		}
		b64 := eval[string](t, ctx, "export xlsx", fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(r => r.arrayBuffer()).then(b => { let s = ""; for (const c of new Uint8Array(b)) s += String.fromCharCode(c); return btoa(s); })`, exportURL+"xlsx"), chromedp.EvalAwaitPromise)
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		book, err := excelize.OpenReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("the .xlsx download does not open: %v", err)
		}
		sheet := book.GetSheetName(0)
		if got, err := book.GetCellFormula(sheet, "B5"); err != nil || !strings.EqualFold(strings.TrimPrefix(got, "="), "SUM(B2:B4)") {
			t.Errorf("B5 of the .xlsx download holds the formula %q (%v), want SUM(B2:B4)", got, err)
		}
		// The menu's downloads are links to these.
		do(t, ctx, "the menu's links", browsertest.Click(chromedp.ID("tab-actions-button")),
			chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=xlsx]`)))
		if href := eval[string](t, ctx, "xlsx link", `document.querySelector("#tab-actions-menu [data-item=xlsx]").getAttribute("href")`); !strings.Contains(href, "/export?format=xlsx") {
			t.Errorf("Download .xlsx links to %q", href)
		}
		do(t, ctx, "close the menu", chromedp.KeyEvent(kb.Escape))
	})
}
