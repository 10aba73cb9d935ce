package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"foundry/internal/api"
	"foundry/internal/auth"
)

var methods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

// openAPIDoc is the served document, checked for the OpenAPI 3.1 shape.
func openAPIDoc(t *testing.T, e *notesEnv) map[string]any {
	t.Helper()
	r := e.do(t, req{method: "GET", path: "/api/openapi.json", anon: true})
	r.want(t, "GET /api/openapi.json without signing in", http.StatusOK, "")
	doc := r.body
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi = %v, want 3.1.x", doc["openapi"])
	}
	if _, ok := doc["paths"].(map[string]any); !ok {
		t.Fatal("the document has no paths")
	}
	comp, _ := doc["components"].(map[string]any)
	if _, ok := comp["schemas"].(map[string]any); !ok {
		t.Fatal("the document has no components.schemas")
	}
	if info, _ := doc["info"].(map[string]any); info["title"] == nil || info["version"] == nil {
		t.Fatal("the document has no info.title or info.version")
	}
	return doc
}

func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	e := startNotes(t, nil)
	doc := openAPIDoc(t, e)
	var inDoc, served []string
	for path, item := range doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if slices.Contains(methods, m) {
				inDoc = append(inDoc, strings.ToUpper(m)+" "+path)
			}
		}
	}
	for _, r := range api.Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	sort.Strings(inDoc)
	sort.Strings(served)
	if !slices.Equal(inDoc, served) {
		t.Fatalf("the document and the handler disagree:\n document: %v\n served:   %v", inDoc, served)
	}
	// Every route is really served: no call to it answers "not an API path"
	// or a wrong method.
	for _, r := range api.Routes() {
		if r.Path == "/api/proposals/events" {
			continue // a stream that stays open; TestPendingCountStreamsLive reads it
		}
		path := strings.NewReplacer("{note_id}", "note_x", "{id}", "conn_x", "{tab_id}", "markdown").Replace(r.Path)
		res := e.do(t, req{method: r.Method, path: path})
		if res.status == http.StatusMethodNotAllowed || res.body["field"] == "path" {
			t.Errorf("%s %s (as %s) is in the document but not served: %d %s", r.Method, r.Path, path, res.status, res.raw)
		}
	}
	// And a method the document does not list is refused.
	if res := e.do(t, req{method: "PUT", path: "/api/notes"}); res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT /api/notes: %d Allow %q; want 405 with Allow: GET, POST", res.status, res.header.Get("Allow"))
	}
}

// validator validates sample answers against the document's schemas.
type validator struct {
	t       *testing.T
	doc     map[string]any
	defs    json.RawMessage
	checked map[string]bool // "METHOD path status"
}

func newValidator(t *testing.T, doc map[string]any) *validator {
	raw, err := json.Marshal(doc["components"].(map[string]any)["schemas"])
	if err != nil {
		t.Fatal(err)
	}
	return &validator{t: t, doc: doc, defs: raw, checked: map[string]bool{}}
}

// check validates r, the answer to method on the path template tmpl,
// against the schema the document gives for its status.
func (v *validator) check(method, tmpl string, r resp) {
	v.t.Helper()
	item, _ := v.doc["paths"].(map[string]any)[tmpl].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		v.t.Fatalf("%s %s is not in the document", method, tmpl)
	}
	status := fmt.Sprint(r.status)
	res, _ := op["responses"].(map[string]any)[status].(map[string]any)
	if res == nil {
		v.t.Fatalf("%s %s answered %s, which the document does not list: %s", method, tmpl, status, r.raw)
	}
	if ref, ok := res["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/components/responses/")
		res, _ = v.doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
		if !found || res == nil {
			v.t.Fatalf("%s %s %s refers to %s, which the document does not hold", method, tmpl, status, ref)
		}
	}
	v.checked[method+" "+tmpl+" "+status] = true
	content, _ := res["content"].(map[string]any)
	if content == nil {
		if len(r.raw) != 0 {
			v.t.Fatalf("%s %s %s: the document says no body, the answer has %s", method, tmpl, status, r.raw)
		}
		return
	}
	ct := strings.TrimSuffix(r.header.Get("Content-Type"), "; charset=utf-8")
	media, _ := content[ct].(map[string]any)
	if media == nil {
		v.t.Fatalf("%s %s %s: Content-Type %q is not in the document", method, tmpl, status, ct)
	}
	schemaJSON, err := json.Marshal(media["schema"])
	if err != nil {
		v.t.Fatal(err)
	}
	root := fmt.Sprintf(`{"$defs":%s,"allOf":[%s]}`, v.defs, schemaJSON)
	root = strings.ReplaceAll(root, "#/components/schemas/", "#/$defs/")
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(root), &s); err != nil {
		v.t.Fatalf("schema of %s %s %s: %v", method, tmpl, status, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		v.t.Fatalf("schema of %s %s %s does not resolve: %v", method, tmpl, status, err)
	}
	var inst any
	if err := json.Unmarshal(r.raw, &inst); err != nil {
		v.t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		v.t.Errorf("%s %s %s answered %s, which its schema refuses: %v", method, tmpl, status, r.raw, err)
	}
}

func TestOpenAPISamplesValidate(t *testing.T) {
	e := startNotes(t, nil)
	v := newValidator(t, openAPIDoc(t, e))
	tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)

	v.check("GET", "/api/me", e.do(t, req{method: "GET", path: "/api/me"}))
	v.check("GET", "/api/me", e.do(t, req{method: "GET", path: "/api/me", anon: true}))
	v.check("GET", "/api/connections", e.do(t, req{method: "GET", path: "/api/connections"}))
	v.check("DELETE", "/api/connections/{id}", e.do(t, req{method: "DELETE", path: "/api/connections/tok_nope"}))
	revoked, err := auth.Verify(context.Background(), e.Server.Store, e.Token(t, nil, auth.ScopeRead))
	if err != nil {
		t.Fatal(err)
	}
	v.check("DELETE", "/api/connections/{id}", e.do(t, req{method: "DELETE", path: "/api/connections/" + revoked.TokenID}))
	v.check("DELETE", "/api/connections/{id}", e.do(t, req{method: "DELETE", path: "/api/connections/" + revoked.TokenID}))

	created := e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "Sample", "approved": true}, header: map[string]string{api.HeaderKey: "sample-create-1"}})
	v.check("POST", "/api/notes", created)
	v.check("POST", "/api/notes", e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "Other"}, header: map[string]string{api.HeaderKey: "sample-create-1"}}))
	v.check("POST", "/api/notes", e.do(t, req{method: "POST", path: "/api/notes", body: `{"title":1}`}))
	id := created.body["id"].(string)
	v.check("GET", "/api/notes", e.do(t, req{method: "GET", path: "/api/notes?limit=1"}))
	v.check("GET", "/api/notes", e.do(t, req{method: "GET", path: "/api/notes?cursor=x"}))
	// The demo Note: a title hit, a slide, a cell; then a page cursor and refusals.
	for _, q := range []string{"welcome", "welcome&limit=1", "welcome&tab_type=slides", "nothingmatchesthis", "%22%22", "x&tab_type=grid", "x&limit=0", "x&cursor=nope"} {
		v.check("GET", "/api/search", e.do(t, req{method: "GET", path: "/api/search?query=" + q}))
	}
	v.check("GET", "/api/search", e.do(t, req{method: "GET", path: "/api/search"}))
	v.check("GET", "/api/search", e.do(t, req{method: "GET", path: "/api/search?query=welcome", bearer: tok}))
	v.check("GET", "/api/notes/{note_id}", e.do(t, req{method: "GET", path: "/api/notes/" + id}))
	v.check("GET", "/api/notes/{note_id}", e.do(t, req{method: "GET", path: "/api/notes/note_nope", bearer: tok}))
	md := e.markdownTab(t, id)
	v.check("PUT", "/api/notes/{note_id}/tabs/{tab_id}/text", e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "# Sample"}, header: ifMatch(1)}))
	v.check("PUT", "/api/notes/{note_id}/tabs/{tab_id}/text", e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "late"}, header: ifMatch(1)}))
	v.check("PUT", "/api/notes/{note_id}/tabs/{tab_id}/text", e.do(t, req{method: "PUT", path: "/api/notes/" + id + "/tabs/" + md + "/text", body: map[string]any{"text": "none"}}))
	v.check("PATCH", "/api/notes/{note_id}", e.do(t, req{method: "PATCH", path: "/api/notes/" + id, body: map[string]any{"title": "Sample 2"}, header: ifMatch(2), bearer: tok}))
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/" + md, bearer: tok}))
	// Every tab type, as the demo Note has them.
	demo := e.do(t, req{method: "GET", path: "/api/notes/" + e.NoteID})
	for _, x := range demo.body["tabs"].([]any) {
		tab := x.(map[string]any)["tab_id"].(string)
		v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "GET", path: "/api/notes/" + e.NoteID + "/tabs/" + tab}))
	}
	v.check("GET", "/api/notes/{note_id}/history", e.do(t, req{method: "GET", path: "/api/notes/" + id + "/history"}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}/diff", e.do(t, req{method: "GET", path: "/api/notes/" + id + "/versions/2/diff"}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}/diff", e.do(t, req{method: "GET", path: "/api/notes/" + id + "/versions/3/diff?since=1"}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}/diff", e.do(t, req{method: "GET", path: "/api/notes/" + id + "/versions/3/diff?since=3"}))
	v.check("POST", "/api/notes/{note_id}/restore", e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": 1}, header: ifMatch(3)}))
	v.check("DELETE", "/api/notes/{note_id}", e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(4), noCSRF: true}))
	v.check("DELETE", "/api/notes/{note_id}", e.do(t, req{method: "DELETE", path: "/api/notes/" + id, header: ifMatch(4)}))
	v.check("GET", "/api/notes/{note_id}", e.do(t, req{method: "GET", path: "/api/notes/" + id}))
	v.check("GET", "/api/trash", e.do(t, req{method: "GET", path: "/api/trash"}))
	v.check("GET", "/api/trash", e.do(t, req{method: "GET", path: "/api/trash", bearer: tok}))
	v.check("POST", "/api/notes/{note_id}/untrash", e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash", header: ifMatch(4)}))
	v.check("POST", "/api/notes/{note_id}/untrash", e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash", header: ifMatch(5)}))
	v.check("POST", "/api/notes/{note_id}/untrash", e.do(t, req{method: "POST", path: "/api/notes/" + id + "/untrash"}))
	v.check("POST", "/api/notes/{note_id}/duplicate", e.do(t, req{method: "POST", path: "/api/notes/" + id + "/duplicate"}))
	v.check("POST", "/api/notes/{note_id}/duplicate", e.do(t, req{method: "POST", path: "/api/notes/note_nope/duplicate"}))
	v.check("GET", "/api/openapi.json", e.do(t, req{method: "GET", path: "/api/openapi.json"}))

	// The tab strip, sources, slides and cells, on a Note of their own.
	n := e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "Tabs sample"}})
	nid := n.body["id"].(string)
	tabs := "/api/notes/" + nid + "/tabs"
	deck := e.do(t, req{method: "POST", path: tabs, body: map[string]any{"type": "slides"}, header: ifMatch(1)})
	v.check("POST", "/api/notes/{note_id}/tabs", deck)
	v.check("POST", "/api/notes/{note_id}/tabs", e.do(t, req{method: "POST", path: tabs, body: map[string]any{"type": "files"}, header: ifMatch(2)}))
	deckID := deck.body["tab_id"].(string)
	slide := e.do(t, req{method: "POST", path: tabs + "/" + deckID + "/slides", body: map[string]any{"title": "One"}, header: ifMatch(2)})
	v.check("POST", "/api/notes/{note_id}/tabs/{tab_id}/slides", slide)
	slidePath := tabs + "/" + deckID + "/slides/" + slide.body["slide_id"].(string)
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", e.do(t, req{method: "PATCH", path: slidePath, body: map[string]any{"body": "b"}, header: ifMatch(3)}))
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", e.do(t, req{method: "PATCH", path: slidePath, body: map[string]any{"body": "c"}, header: ifMatch(99)}))
	v.check("DELETE", "/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", e.do(t, req{method: "DELETE", path: slidePath, header: ifMatch(4)}))
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "PATCH", path: tabs + "/" + deckID, body: map[string]any{"label": "Deck", "position": 0}, header: ifMatch(5)}))
	v.check("DELETE", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "DELETE", path: tabs + "/markdown", header: ifMatch(6)}))
	v.check("DELETE", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "DELETE", path: tabs + "/" + deckID, header: ifMatch(6)}))
	grid := e.do(t, req{method: "POST", path: tabs, body: map[string]any{"type": "sheet"}, header: ifMatch(7)})
	cells := tabs + "/" + grid.body["tab_id"].(string) + "/cells"
	v.check("PUT", "/api/notes/{note_id}/tabs/{tab_id}/cells", e.do(t, req{method: "PUT", path: cells, body: map[string]any{"start_row": 0, "start_col": 0, "values": [][]any{{"a", 1, true, nil}}}, header: ifMatch(8)}))
	v.check("PUT", "/api/notes/{note_id}/tabs/{tab_id}/cells", e.do(t, req{method: "PUT", path: cells, body: map[string]any{"start_row": 0, "start_col": 0, "values": [][]any{{"a"}}}}))
	gridTab := tabs + "/" + grid.body["tab_id"].(string)
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "GET", path: gridTab}))
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "GET", path: gridTab + "?cells=none"}))
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}", e.do(t, req{method: "GET", path: gridTab + "?cells=some"}))
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}/cells", e.do(t, req{method: "GET", path: cells + "?rows=2&cols=5"}))
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}/cells", e.do(t, req{method: "GET", path: cells + "?rows=0"}))
	src := e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/sources", body: map[string]any{"title": "Example", "url": "https://example.com/"}, header: ifMatch(9)})
	v.check("POST", "/api/notes/{note_id}/sources", src)
	v.check("POST", "/api/notes/{note_id}/sources", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/sources", body: map[string]any{"title": "Again", "url": "https://EXAMPLE.com"}, header: ifMatch(10)}))
	v.check("DELETE", "/api/notes/{note_id}/sources/{source_id}", e.do(t, req{method: "DELETE", path: "/api/notes/" + nid + "/sources/" + src.body["source_id"].(string), header: ifMatch(10)}))
	sheets := tabs + "/" + grid.body["tab_id"].(string) + "/sheets"
	sheet := e.do(t, req{method: "POST", path: sheets, body: map[string]any{"name": "Sheet2"}, header: ifMatch(11)})
	v.check("POST", "/api/notes/{note_id}/tabs/{tab_id}/sheets", sheet)
	v.check("POST", "/api/notes/{note_id}/tabs/{tab_id}/sheets", e.do(t, req{method: "POST", path: sheets, body: map[string]any{"name": " "}, header: ifMatch(12)}))
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}", e.do(t, req{method: "PATCH", path: sheets + "/" + sheet.body["sheet_id"].(string), body: map[string]any{"name": "Costs"}, header: ifMatch(12)}))
	v.check("DELETE", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}", e.do(t, req{method: "DELETE", path: sheets + "/" + sheet.body["sheet_id"].(string), header: ifMatch(13)}))

	// Files: the upload and the delete answer JSON or nothing; a download
	// is the file's bytes, which the document gives as any media type.
	up := e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/files?name=s.json", body: `{"a":1}`, header: ifMatch(14)})
	v.check("POST", "/api/notes/{note_id}/files", up)
	filePath := "/api/notes/" + nid + "/files/" + up.body["file"].(map[string]any)["file_id"].(string)
	v.check("GET", "/api/notes/{note_id}/files/{file_id}", e.do(t, req{method: "GET", path: filePath, bearer: tok}))
	if res, raw := e.filesDo(t, filesRaw{method: "GET", path: filePath}); res.StatusCode != http.StatusOK || string(raw) != `{"a":1}` {
		t.Fatalf("download: %d %s", res.StatusCode, raw)
	}
	if _, ok := v.doc["paths"].(map[string]any)["/api/notes/{note_id}/files/{file_id}"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["*/*"]; !ok {
		t.Fatal("the document does not give a download's 200 as */*")
	}
	v.checked["GET /api/notes/{note_id}/files/{file_id} 200"] = true
	// An export is a zip, as the document says; a token's is refused.
	if res, raw := e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + nid + "/export"}); res.StatusCode != http.StatusOK || !bytes.HasPrefix(raw, []byte("PK")) {
		t.Fatalf("export: %d %.100q", res.StatusCode, raw)
	}
	if _, ok := v.doc["paths"].(map[string]any)["/api/notes/{note_id}/export"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/zip"]; !ok {
		t.Fatal("the document does not give an export's 200 as application/zip")
	}
	v.checked["GET /api/notes/{note_id}/export 200"] = true
	v.check("GET", "/api/notes/{note_id}/export", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/export", bearer: tok}))
	v.check("DELETE", "/api/notes/{note_id}/files/{file_id}", e.do(t, req{method: "DELETE", path: filePath, header: ifMatch(15)}))

	// The event streams answer text/event-stream, as the document says.
	for route, path := range map[string]string{
		"/api/events": "/api/events?note_id=" + nid,
		"/api/live":   "/api/live?topic=note:" + nid + "&topic=proposals",
	} {
		es := e.openStream(t, path, "", "")
		if es.res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, es.res.StatusCode)
		}
		op := v.doc["paths"].(map[string]any)[route].(map[string]any)["get"].(map[string]any)
		if _, ok := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["text/event-stream"]; !ok {
			t.Fatalf("the document does not give GET %s's 200 as text/event-stream", route)
		}
		v.checked["GET "+route+" 200"] = true
		es.close()
	}
	v.check("GET", "/api/events", e.do(t, req{method: "GET", path: "/api/events"}))
	v.check("GET", "/api/events", e.do(t, req{method: "GET", path: "/api/events?note_id=note_nope"}))
	v.check("GET", "/api/live", e.do(t, req{method: "GET", path: "/api/live"}))
	v.check("GET", "/api/live", e.do(t, req{method: "GET", path: "/api/live?topic=room:x"}))
	v.check("GET", "/api/live", e.do(t, req{method: "GET", path: "/api/live?topic=proposals", bearer: tok}))

	// One version of a Note, and a tab of it.
	v.check("GET", "/api/notes/{note_id}/versions/{version}", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/versions/2"}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/versions/999"}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}/tabs/{tab_id}", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/versions/2/tabs/" + deckID}))
	v.check("GET", "/api/notes/{note_id}/versions/{version}/tabs/{tab_id}", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/versions/1/tabs/" + deckID}))

	// The live text: a pull, a push accepted and one not, presence.
	v.check("GET", "/api/notes/{note_id}/text", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/text?after=0"}))
	v.check("GET", "/api/notes/{note_id}/text", e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/text"}))
	mdTab := e.do(t, req{method: "GET", path: "/api/notes/" + nid + "/tabs/markdown"})
	rev, mdLen := mdTab.num("text_rev"), len([]rune(mdTab.body["text"].(string)))
	v.check("POST", "/api/notes/{note_id}/text", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/text", body: map[string]any{"rev": rev, "client_id": "c-1", "updates": []any{[]any{mdLen, []any{0, "!"}}}}}))
	v.check("POST", "/api/notes/{note_id}/text", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/text", body: map[string]any{"rev": rev, "client_id": "c-1", "updates": []any{[]any{mdLen, []any{0, "!"}}}}}))
	v.check("POST", "/api/notes/{note_id}/text", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/text", body: map[string]any{"rev": rev, "client_id": "c 1", "updates": []any{}}}))
	v.check("POST", "/api/notes/{note_id}/presence", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/presence", body: map[string]any{"client_id": "c-1", "tab_id": "markdown", "selection": map[string]any{"anchor": 1, "head": 2}}}))
	v.check("POST", "/api/notes/{note_id}/presence", e.do(t, req{method: "POST", path: "/api/notes/" + nid + "/presence", body: map[string]any{"client_id": "c-1", "tab_id": "markdown", "cell": map[string]any{"sheet_id": "x", "row": -1}}}))

	// Sheets: a layout change, an import and an export.
	cur := func() map[string]string {
		return ifMatch(int64(e.do(t, req{method: "GET", path: "/api/notes/" + nid}).num("version")))
	}
	gridSheets := e.do(t, req{method: "GET", path: gridTab}).body["sheets"].([]any)
	layout := gridTab + "/sheets/" + gridSheets[0].(map[string]any)["sheet_id"].(string) + "/layout"
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}/layout", e.do(t, req{method: "PATCH", path: layout, body: map[string]any{"widths": map[string]any{"0": 140}, "format": map[string]any{"range": "B2:B9", "format": "currency"}}, header: cur()}))
	v.check("PATCH", "/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}/layout", e.do(t, req{method: "PATCH", path: layout, body: map[string]any{"format": map[string]any{"range": "B2:", "format": "currency"}}, header: cur()}))
	v.check("POST", "/api/notes/{note_id}/tabs/import", e.do(t, req{method: "POST", path: tabs + "/import?name=costs.csv", body: "item,cost\nrent,1200\ntotal,=SUM(B2)\n", header: cur()}))
	v.check("POST", "/api/notes/{note_id}/tabs/import", e.do(t, req{method: "POST", path: tabs + "/import?name=costs.txt", body: "x", header: cur()}))
	if res, raw := e.filesDo(t, filesRaw{method: "GET", path: gridTab + "/export?format=csv"}); res.StatusCode != http.StatusOK || !strings.HasPrefix(string(raw), "a") {
		t.Fatalf("csv export: %d %.100q", res.StatusCode, raw)
	}
	v.checked["GET /api/notes/{note_id}/tabs/{tab_id}/export 200"] = true
	v.check("GET", "/api/notes/{note_id}/tabs/{tab_id}/export", e.do(t, req{method: "GET", path: gridTab + "/export?format=md"}))

	rmSamples(t, e, v)       // the Rooms and proposals routes (rooms_test.go)
	settingsSamples(t, e, v) // the people, workspace and tokens routes (settings_test.go)

	// Every route's success was sampled.
	for _, r := range api.Routes() {
		ok := false
		for k := range v.checked {
			if strings.HasPrefix(k, r.Method+" "+r.Path+" 2") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no sample answer of %s %s was validated", r.Method, r.Path)
		}
	}
}

// TestOpenAPIDocumentIsCurrent: the committed openapi.json (the file the
// handler serves and clients are generated from) is what the routes'
// types generate now.
func TestOpenAPIDocumentIsCurrent(t *testing.T) {
	want, err := api.Document()
	if err != nil {
		t.Fatalf("generating the document: %v", err)
	}
	got, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !bytes.Equal(api.OpenAPI, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		var g, w string
		if line < len(gl) {
			g = gl[line]
		}
		if line < len(wl) {
			w = wl[line]
		}
		t.Fatalf("internal/api/openapi.json is not what the routes generate (line %d is %q, the routes give %q): run go generate ./internal/api and commit it", line+1, g, w)
	}
}

// TestOpenAPIDocumentShape: the document reads well and generates good
// clients: schemas are named by their type alone, an answer's members that
// are always there are required and null only where they can be, and every
// refusal refers to the one Problem response.
func TestOpenAPIDocumentShape(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	comp := doc["components"].(map[string]any)
	schemas := comp["schemas"].(map[string]any)
	for name := range schemas {
		if strings.HasPrefix(name, "Api") {
			t.Errorf("schema %s carries the package's name", name)
		}
	}
	for short, long := range map[string]string{"TabContent": "ServiceTabContent", "TabRef": "NoteTabRef", "File": "NoteFile", "CompileMessage": "RoomCompileMessage", "NoteWrite": "ApiNoteWrite"} {
		if schemas[short] == nil || schemas[long] != nil {
			t.Errorf("schemas %s: %v, %s: %v; want the type's name alone", short, schemas[short] != nil, long, schemas[long] != nil)
		}
	}
	problem, _ := comp["responses"].(map[string]any)["Problem"].(map[string]any)
	if problem == nil || problem["content"].(map[string]any)[api.ProblemContentType] == nil {
		t.Fatalf("components.responses.Problem = %v; want the problem+json response", problem)
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			for status, res := range op.(map[string]any)["responses"].(map[string]any) {
				if status[0] != '4' && status[0] != '5' {
					continue
				}
				if ref := res.(map[string]any)["$ref"]; ref != "#/components/responses/Problem" || len(res.(map[string]any)) != 1 {
					t.Errorf("%s %s %s = %v; want a reference to the Problem response", method, path, status, res)
				}
			}
		}
	}
	required := func(name string) []string {
		var out []string
		for _, x := range schemas[name].(map[string]any)["required"].([]any) {
			out = append(out, x.(string))
		}
		sort.Strings(out)
		return out
	}
	for name, want := range map[string][]string{
		"NoteWrite":  {"changed_tab_ids", "id", "version"},
		"NoteAnswer": {"approved", "changed_tab_ids", "id", "title", "version"},
		"NoteList":   {"next_cursor", "notes"},
		"Problem":    {"code", "detail", "error", "message", "status", "title", "type"},
		"TabView":    {"label", "note_id", "tab_id", "type", "version"},
	} {
		if got := required(name); !slices.Equal(got, want) {
			t.Errorf("%s requires %v, want %v", name, got, want)
		}
	}
	prop := func(schema, name string) map[string]any {
		return schemas[schema].(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
	}
	if ty := prop("NoteWrite", "changed_tab_ids")["type"]; ty != "array" {
		t.Errorf("changed_tab_ids is %v; it is never null", ty)
	}
	if ty := fmt.Sprint(prop("NoteList", "next_cursor")["type"]); ty != "[null string]" {
		t.Errorf("next_cursor is %v; it is null on the last page", ty)
	}
	if alts := fmt.Sprint(prop("ProposalView", "compile")["anyOf"]); alts != "[map[type:null] map[$ref:#/components/schemas/CompileView]]" {
		t.Errorf("a proposal's compile is %v; want null or a CompileView", prop("ProposalView", "compile"))
	}
	if ty := prop("TabView", "text")["type"]; ty != "string" {
		t.Errorf("a tab's text is %v; it is a string or absent, never null", ty)
	}
}
