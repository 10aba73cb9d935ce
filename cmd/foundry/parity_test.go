package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// One act, one outcome, whichever door it comes through. Each case below
// is one act, run through every door that offers it — the MCP tools, the
// REST API (as a person signed in, and with a bearer token) and the CLI —
// on a fresh, identical Note each time, on both stores. Every door must
// give the same outcome: the same refusal (code and field, in the
// service's words: each door's own words for a field are mapped back), or
// the same resulting content and version.

// outcome is what an act did, door-independently.
type outcome struct {
	Code, Field string // a refusal
	Version     int64  // the Note's version after the act
	Content     string // what the act left (see each case's read)
}

func (o outcome) String() string {
	if o.Code != "" {
		return fmt.Sprintf("refused %s (field %q)", o.Code, o.Field)
	}
	return fmt.Sprintf("version %d, %s", o.Version, o.Content)
}

// restWords are the REST door's names of the service's fields.
var restWords = map[string]string{"If-Match": "expected_version", "Idempotency-Key": "idempotency_key", "type": "tab_type", "Content-Type": "content_type"}

// parityEnv is one server on one store, and a way through each door.
type parityEnv struct {
	t      *testing.T
	env    *servertest.Env
	st     store.Store
	token  string // read + write, every Note
	cookie string // the owner's session
	csrf   string
	flags  []string // the data flags the CLI opens the same store with
	op     service.Caller
}

func startParity(t *testing.T, st store.Store, cli []string) *parityEnv {
	e := servertest.Start(t, servertest.Options{Store: st})
	p := &parityEnv{t: t, env: e, st: e.Server.Store, flags: cli, op: service.Operator(e.Owner)}
	p.token = e.WriteToken(t)
	p.cookie, p.csrf = store.NewID("secret"), store.NewID("csrf")
	now := time.Now().UTC()
	if err := p.st.CreateSession(context.Background(), store.Session{Hash: auth.HashToken(p.cookie), Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID,
		CSRF: p.csrf, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return p
}

// fresh makes the Note every door of a case starts from: approved, a
// slides tab with one slide, and version 3.
func (p *parityEnv) fresh() (noteID, deckID string) {
	p.t.Helper()
	ctx := context.Background()
	svc := p.env.Server.Service
	n, err := svc.CreateNote(ctx, p.op, service.CreateNoteArgs{Title: "Parity", Approved: true})
	if err != nil {
		p.t.Fatal(err)
	}
	deck, err := svc.CreateNoteTab(ctx, p.op, service.CreateTabArgs{NoteID: n.NoteID, ExpectedVersion: 1, TabType: note.TypeSlides, Label: "Deck"})
	if err != nil {
		p.t.Fatal(err)
	}
	text := "# Parity\n"
	if _, err := svc.EditNoteTab(ctx, p.op, service.EditTabArgs{NoteID: n.NoteID, TabID: note.TypeMarkdown, ExpectedVersion: 2, Operation: "replace_text", Text: &text}); err != nil {
		p.t.Fatal(err)
	}
	return n.NoteID, deck.TabID
}

// read is what a Note holds now: its version and the content a case
// compares (the markdown and the deck's slides, by title and ID).
func (p *parityEnv) read(noteID, deckID string) outcome {
	p.t.Helper()
	ctx := context.Background()
	r, d, err := p.env.Server.Service.LoadNote(ctx, noteID)
	if err != nil {
		p.t.Fatal(err)
	}
	var slides []string
	if t, err := note.FindTab(d, deckID); err == nil {
		for _, s := range t.Slides {
			slides = append(slides, s.ID+"="+s.Title)
		}
	}
	return outcome{Version: r.Version, Content: fmt.Sprintf("text %q, slides %v", d.Markdown, slides)}
}

// refused is the outcome of a refusal in the service's words.
func refused(code, field string) outcome { return outcome{Code: code, Field: field} }

// mcp calls a tool with the raw JSON arguments (so a case can send bytes
// no Go string holds), and answers its refusal, or nil and its result.
func (p *parityEnv) mcp(tool, args string) (*outcome, map[string]any) {
	p.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	req, _ := http.NewRequest("POST", p.env.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an event stream of one message
		raw = raw[i+6:]
	}
	var msg struct {
		Result *struct {
			IsError bool           `json:"isError"`
			Data    map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(raw), &msg); err != nil || (msg.Result == nil && msg.Error == nil) {
		p.t.Fatalf("%s: %d %s", tool, res.StatusCode, raw)
	}
	if msg.Result == nil {
		// Refused as a message, before any tool saw it: no field.
		return &outcome{Code: "jsonrpc: " + msg.Error.Message}, nil
	}
	if !msg.Result.IsError {
		return nil, msg.Result.Data
	}
	o := refused(fmt.Sprint(msg.Result.Data["error"]), fmt.Sprint(msg.Result.Data["field"]))
	if msg.Result.Data["field"] == nil {
		o.Field = ""
	}
	return &o, nil
}

// rest calls the REST API as the owner signed in (bearer false) or with
// the token, and answers its refusal, or nil; ok is the body of a success.
func (p *parityEnv) rest(bearer bool, method, path string, header map[string]string, body string) (refusal *outcome, ok map[string]any) {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, p.env.URL+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if bearer {
		req.Header.Set("Authorization", "Bearer "+p.token)
	} else {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: p.cookie})
		req.Header.Set(auth.CSRFHeader, p.csrf)
		req.Header.Set("Origin", p.env.URL)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &m)
	if res.StatusCode >= 400 {
		field, _ := m["field"].(string)
		if w, ok := restWords[field]; ok {
			field = w
		}
		code, _ := m["code"].(string)
		return &outcome{Code: code, Field: field}, nil
	}
	return nil, m
}

// cli runs a command of the CLI in this process, on the same store, and
// answers its refusal, or nil (what it printed is not compared).
func (p *parityEnv) cli(args ...string) *outcome {
	p.t.Helper()
	c, rest, _ := lookup(args)
	if c == nil {
		p.t.Fatalf("no command %v", args)
	}
	fs := flag.NewFlagSet(c.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	do := c.flags(fs)
	pos, err := parse(fs, append(append([]string{}, p.flags...), rest...))
	if err != nil {
		p.t.Fatalf("%v: %v", args, err)
	}
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err = do(pos)
	os.Stdout = stdout
	devnull.Close()
	var pr *problem.Problem
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pr):
		return &outcome{Code: pr.Code, Field: pr.Field}
	}
	p.t.Fatalf("%v: %v", args, err)
	return nil
}

// door is one way through to an act: it runs the act on a fresh Note and
// answers what it did.
type door struct {
	name string
	run  func(p *parityEnv, noteID, deckID string, version int64) *outcome
}

// parityCase is one act and the doors that offer it.
type parityCase struct {
	name  string
	prep  func(p *parityEnv, noteID, deckID string) int64 // what happens before the act; the version it is based on
	doors []door
	// want is the outcome every door must give (nil: whatever the first
	// door gives, all the others too).
	want *outcome
}

func ifMatch(v int64) map[string]string { return map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v)} }

func TestEveryDoorGivesTheSameOutcome(t *testing.T) {
	deleteNote := func(p *parityEnv, noteID, _ string) int64 {
		if r, _ := p.rest(false, "DELETE", "/api/notes/"+noteID, ifMatch(3), ""); r != nil {
			p.t.Fatalf("delete: %v", r)
		}
		return 4
	}
	restore := func(version int64) []door {
		return []door{
			{"rest (person)", func(p *parityEnv, id, _ string, v int64) *outcome {
				r, _ := p.rest(false, "POST", "/api/notes/"+id+"/restore", ifMatch(v), fmt.Sprintf(`{"version":%d}`, version))
				return r
			}},
			{"rest (token)", func(p *parityEnv, id, _ string, v int64) *outcome {
				r, _ := p.rest(true, "POST", "/api/notes/"+id+"/restore", ifMatch(v), fmt.Sprintf(`{"version":%d}`, version))
				return r
			}},
			{"cli", func(p *parityEnv, id, _ string, v int64) *outcome {
				return p.cli("notes", "restore", id, "--version", fmt.Sprint(version))
			}},
		}
	}
	// setText is the markdown tab's text replaced, the raw JSON string
	// given as is.
	setText := func(jsonText string) []door {
		return []door{
			{"mcp", func(p *parityEnv, id, _ string, v int64) *outcome {
				r, _ := p.mcp("edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":"markdown","expected_version":%d,"idempotency_key":"parity-text-0001","operation":"replace_text","text":%s}`, id, v, jsonText))
				return r
			}},
			{"rest (person)", func(p *parityEnv, id, _ string, v int64) *outcome {
				r, _ := p.rest(false, "PUT", "/api/notes/"+id+"/tabs/markdown/text", ifMatch(v), `{"text":`+jsonText+`}`)
				return r
			}},
			{"rest (token)", func(p *parityEnv, id, _ string, v int64) *outcome {
				r, _ := p.rest(true, "PUT", "/api/notes/"+id+"/tabs/markdown/text", ifMatch(v), `{"text":`+jsonText+`}`)
				return r
			}},
		}
	}
	addSlide := func(tab string) []door {
		return []door{
			{"mcp", func(p *parityEnv, id, deck string, v int64) *outcome {
				r, res := p.mcp("edit_note_tab", fmt.Sprintf(`{"note_id":%q,"tab_id":%q,"expected_version":%d,"idempotency_key":"parity-slide-0001","operation":"slide_add","title":"Launch"}`, id, cmpTab(tab, deck), v))
				if r == nil {
					ids, _ := res["slide_ids"].([]any)
					if len(ids) != 1 {
						p.t.Fatalf("slide_add answered %v; want one slide ID", res)
					}
					p.mustHoldSlide(id, deck, ids[0])
				}
				return r
			}},
			{"rest (person)", func(p *parityEnv, id, deck string, v int64) *outcome {
				r, body := p.rest(false, "POST", "/api/notes/"+id+"/tabs/"+cmpTab(tab, deck)+"/slides", ifMatch(v), `{"title":"Launch"}`)
				if r == nil {
					p.mustHoldSlide(id, deck, body["slide_id"])
				}
				return r
			}},
			{"rest (token)", func(p *parityEnv, id, deck string, v int64) *outcome {
				r, body := p.rest(true, "POST", "/api/notes/"+id+"/tabs/"+cmpTab(tab, deck)+"/slides", ifMatch(v), `{"title":"Launch"}`)
				if r == nil {
					p.mustHoldSlide(id, deck, body["slide_id"])
				}
				return r
			}},
		}
	}
	cases := []parityCase{
		{name: "restore into a deleted Note", prep: deleteNote, doors: restore(1), want: ptrTo(refused(problem.NotFound, "note_id"))},
		{name: "restore the current version", doors: restore(3)},
		{name: "restore an older version", doors: restore(2)},
		{name: "restore a version the Note never had", doors: restore(9), want: ptrTo(refused(problem.Invalid, "version"))},
		{name: "a text with invalid UTF-8", doors: setText("\"caf\xe9\""), want: ptrTo(refused(problem.Invalid, "text"))},
		{name: "a text with a lone surrogate", doors: setText(`"a\ud800b"`), want: ptrTo(refused(problem.Invalid, "text"))},
		{name: "a text with NUL", doors: setText(`"a\u0000b"`), want: ptrTo(refused(problem.Invalid, "text"))},
		{name: "a text saved", doors: setText(`"# Saved\n"`)},
		{name: "a text saved as it was", doors: setText(`"# Parity\n"`)},
		{name: "a text on a stale version", prep: func(p *parityEnv, _, _ string) int64 { return 2 }, doors: setText(`"late"`), want: ptrTo(refused(problem.Conflict, "expected_version"))},
		{name: "a new slide, its ID returned", doors: addSlide("")},
		{name: "a slide for a tab no Note has", doors: addSlide("slides"), want: ptrTo(refused(note.CodeUnknownTab, "tab_id"))},
		{name: "a slide for the markdown tab", doors: addSlide("markdown"), want: ptrTo(refused(note.CodeWrongTabType, "operation"))},
	}
	stores := map[string]func(t *testing.T) (store.Store, []string){
		"sqlite": func(t *testing.T) (store.Store, []string) {
			dir := t.TempDir()
			s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s, []string{"--data", dir}
		},
		"postgres": func(t *testing.T) (store.Store, []string) {
			u, _ := pgtest.Schema(t)
			s, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			return s, []string{"--database", u}
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			st, cliFlags := stores[name](t)
			p := startParity(t, st, cliFlags)
			for _, c := range cases {
				var first outcome
				for i, d := range c.doors {
					noteID, deckID := p.fresh()
					v := int64(3)
					if c.prep != nil {
						v = c.prep(p, noteID, deckID)
					}
					got := d.run(p, noteID, deckID, v)
					out := p.read(noteID, deckID)
					if got != nil {
						out = *got
					}
					// The slide IDs a Note makes are its own; the same ones,
					// Note after Note.
					switch {
					case c.want != nil && out != *c.want:
						t.Errorf("%s through %s: %v; want %v", c.name, d.name, out, *c.want)
					case i == 0:
						first = out
					case out != first:
						t.Errorf("%s: through %s %v, through %s %v", c.name, c.doors[0].name, first, d.name, out)
					}
				}
			}
		})
	}
}

// mustHoldSlide fails unless the deck holds the slide a write said it made.
func (p *parityEnv) mustHoldSlide(noteID, deckID string, id any) {
	p.t.Helper()
	if !strings.Contains(p.read(noteID, deckID).Content, fmt.Sprint(id)+"=Launch") {
		p.t.Errorf("the write answered slide %v, which the deck does not hold: %s", id, p.read(noteID, deckID).Content)
	}
}

// cmpTab is tab, or the deck when tab is "".
func cmpTab(tab, deck string) string {
	if tab == "" {
		return deck
	}
	return tab
}

func ptrTo[T any](v T) *T { return &v }
