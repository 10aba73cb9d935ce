package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"foundry/internal/browsertest"
	"foundry/internal/note"
	"foundry/internal/server"
)

// pdfPages counts the page objects of a PDF.
func pdfPages(pdf []byte) int { return len(regexp.MustCompile(`/Type\s*/Page\b[^s]`).FindAll(pdf, -1)) }

func atof(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBrowserSlidesPDF: a slides tab's menu downloads the server's PDF
// (a page a slide) and prints the deck with the browser. The browser's
// print, as Chromium makes it, has one landscape page a slide and none of
// the app around them.
func TestBrowserSlidesPDF(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	id, deck := openDeck(t, e, ctx,
		note.SlideInput{Title: "Launch overview", Body: "- Why now\n- What ships\n- Who it is for"},
		note.SlideInput{Title: "The numbers", Body: "Sign-ups doubled\n---\nChurn halved"},
		note.SlideInput{Title: "Thank you", Body: "Questions welcome"})
	// The first slide in the ink theme: the print keeps its colours.
	do(t, ctx, "ink on the first slide", browsertest.Click(chromedp.CSS(`input[name=sl-theme][value=ink]`)), waitSaved())
	slides, _ := slidesDeck(t, e, id, deck)

	do(t, ctx, "the tab menu", browsertest.Click(chromedp.ID("tab-actions-button")),
		chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=pdf]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tab-actions-menu [data-item=print]`)))
	browsertest.Screenshot(t, ctx, "slides-menu-pdf")
	href := run(t, ctx, "pdf link", chromedp.Evaluate[string](`document.querySelector("#tab-actions-menu [data-item=pdf]").getAttribute("href")`))
	if !strings.Contains(href, "/tabs/"+deck+"/export?format=pdf") {
		t.Errorf("Download .pdf links to %q", href)
	}
	// What the link downloads, fetched by the page with its session.
	got := run(t, ctx, "fetch the pdf", chromedp.Evaluate[string](fmt.Sprintf(`(async () => {
		const r = await fetch(%q);
		const text = new TextDecoder("latin1").decode(await r.arrayBuffer());
		return [r.status, r.headers.get("content-type"), text.slice(0, 5), (text.match(/\/Type\s*\/Page\b[^s]/g) ?? []).length].join(" ");
	})()`, href), chromedp.EvalAwaitPromise))
	if want := fmt.Sprintf("200 application/pdf %%PDF- %d", len(slides)); got != want {
		t.Errorf("the downloaded PDF: %q, want %q", got, want)
	}

	// Print or save as PDF asks the browser to print.
	do(t, ctx, "print", chromedp.Evaluate[chromedp.Void](`window.__printed = 0; window.print = () => { window.__printed++; }`),
		browsertest.Click(chromedp.CSS(`#tab-actions-menu [data-item=print]`)),
		browsertest.Poll(`window.__printed === 1`), chromedp.WaitNotPresent(chromedp.ID("tab-actions-menu")))

	// The print itself: Chromium's PDF of the page with its print styles.
	var printed []byte
	do(t, ctx, "print to PDF", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		yes := true
		r, err := cdp.Call(ctx, tg, cdppage.PrintToPDF, cdppage.PrintToPDFParams{PreferCSSPageSize: &yes, PrintBackground: &yes})
		printed = r.Data
		return err
	}))
	if n := pdfPages(printed); n != len(slides) {
		t.Errorf("the browser printed %d pages for %d slides", n, len(slides))
	}
	if m := regexp.MustCompile(`/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]`).FindSubmatch(printed); m == nil {
		t.Errorf("the printed PDF has no page size")
	} else if w, h := atof(t, string(m[1])), atof(t, string(m[2])); w < 1.7*h || w > 1.9*h {
		t.Errorf("the printed pages are %s × %s pt, not the 16:9 landscape of the print style", m[1], m[2])
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("FOUNDRY_TEST_POPPLER") == "required" {
			t.Fatal("FOUNDRY_TEST_POPPLER=required but pdftotext is not on PATH: install Debian's poppler-utils package")
		}
		t.Log("pdftotext is not on PATH (Debian's poppler-utils): the printed pages' text is not read back")
	} else {
		file := filepath.Join(t.TempDir(), "print.pdf")
		if err := os.WriteFile(file, printed, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("pdftotext", file, "-").CombinedOutput()
		if err != nil {
			t.Fatalf("pdftotext: %v %s", err, out)
		}
		pages := strings.Split(string(out), "\f")
		for i, s := range slides {
			if i >= len(pages) || !strings.Contains(pages[i], s.Title) {
				t.Errorf("printed page %d does not show %q", i+1, s.Title)
			}
		}
		if strings.Contains(string(out), "Present") || strings.Contains(string(out), "Welcome") {
			t.Errorf("the print shows the app around the deck:\n%s", out)
		}
	}
	// How the first page prints: the print media in a window the size of
	// the print style's page (297 × 167 mm at 96 px an inch), without the
	// scrollbars a screen adds and paper does not, which the slide fills
	// edge to edge.
	printMedia := func(media string, hidden bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, emulation.SetScrollbarsHidden, emulation.SetScrollbarsHiddenParams{Hidden: hidden}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: media})
			return err
		})
	}
	do(t, ctx, "print media", chromedp.EmulateViewport(1123, 631), printMedia("print", true), browsertest.Poll(`getComputedStyle(document.querySelector(".sl-print")).display === "block"`))
	if fill := run(t, ctx, "the printed slide", chromedp.Evaluate[string](`(() => { const r = document.querySelector(".sl-print-page .sl-slide").getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top), Math.abs(r.width - innerWidth) < 2, Math.abs(r.height - innerHeight) < 2].join(" "); })()`)); fill != "0 0 true true" {
		t.Errorf("on the printed page the slide is at %q, want it filling the page", fill)
	}
	browsertest.WindowScreenshot(t, ctx, "slides-print")
	do(t, ctx, "screen media", printMedia("", false), browsertest.Desktop(), browsertest.Poll(`getComputedStyle(document.querySelector(".sl-print")).display === "none"`), chromedp.KeyEvent(kb.Escape))
}
