package api_test

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestExportSlidesAsPDF: a slides tab downloads as a PDF with a page a
// slide; characters its fonts lack are counted in a header; a slides tab
// asked for another format, and a markdown tab asked for a PDF, are
// refused naming format.
func TestExportSlidesAsPDF(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Launch", true)
		r := e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs", body: map[string]any{"type": "slides", "label": "Deck"}, header: ifMatch(v)})
		r.want(t, "add a deck", http.StatusCreated, "")
		tab := r.body["tab_id"].(string)
		v = r.num("version")
		for _, s := range []map[string]any{
			{"title": "Launch overview", "body": "- Why now\n- What ships"},
			{"title": "Thank you", "layout": "title", "theme": "ink"},
			{"title": "摘要", "body": "Questions"},
		} {
			r = e.do(t, req{method: "POST", path: "/api/notes/" + id + "/tabs/" + tab + "/slides", body: s, header: ifMatch(v)})
			r.want(t, "add a slide", http.StatusCreated, "")
			v = r.num("version")
		}
		res, raw := e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/tabs/" + tab + "/export?format=pdf"})
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(raw, []byte("%PDF-")) {
			t.Fatalf("pdf export: %d %s %.40q", res.StatusCode, res.Header.Get("Content-Type"), raw)
		}
		if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "launch-deck.pdf") {
			t.Errorf("Content-Disposition %q", cd)
		}
		// The deck has 3 slides beside the one a new slides tab starts with.
		if n, want := len(regexp.MustCompile(`/Type /Page\b[^s]`).FindAll(raw, -1)), len(e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + tab}).body["slides"].([]any)); n != want {
			t.Errorf("the PDF has %d pages for %d slides", n, want)
		}
		if m := res.Header.Get("Foundry-Missing-Glyphs"); m != "2" {
			t.Errorf("Foundry-Missing-Glyphs %q, want 2 (摘要)", m)
		}
		for _, q := range []struct{ tab, format string }{{tab, "xlsx"}, {tab, "md"}, {e.markdownTab(t, id), "pdf"}} {
			res, raw := e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/tabs/" + q.tab + "/export?format=" + q.format})
			if body := filesProblem(t, q.format+" of "+q.tab, res, raw, http.StatusBadRequest, "invalid_argument"); body["field"] != "format" {
				t.Errorf("%s of %s: the problem names %v, not format", q.format, q.tab, body["field"])
			}
		}
	})
}
