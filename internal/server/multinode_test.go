package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
	"foundry/internal/room"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/urlnorm"
)

// These tests run two Foundry nodes — two servers, each with its own
// postgres.Store — on one fresh PostgreSQL schema, as two stateless nodes
// behind a load balancer do (SPEC §6), and check that the write contract
// (SPEC §2) and the event feed hold across them.

// startTwoNodes starts node A (which creates the workspace and the demo Note
// and Room) and node B (which creates nothing) on two stores opened on one
// fresh schema. wrapA, if not nil, wraps A's store.
func startTwoNodes(t *testing.T, wrapA func(store.Store) store.Store) (a, b *servertest.Env) {
	t.Helper()
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	open := func() store.Store {
		st, err := postgres.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() }) // idempotent; the node closes it first
		return st
	}
	stA, stB := open(), open()
	var sa store.Store = stA
	if wrapA != nil {
		sa = wrapA(stA)
	}
	a = servertest.Start(t, servertest.Options{Store: sa})
	b = servertest.StartNode(t, stB, server.Config{})
	if b.Owner.Workspace.ID != a.Owner.Workspace.ID || b.Owner.User.ID != a.Owner.User.ID {
		t.Fatalf("node B sees workspace %s/%s, node A created %s/%s", b.Owner.Workspace.ID, b.Owner.User.ID, a.Owner.Workspace.ID, a.Owner.User.ID)
	}
	return a, b
}

// conflictVersion returns details.current_version of a version_conflict.
func conflictVersion(r mcpclient.Result) int64 {
	d := r.Data
	f, _ := d["current_version"].(float64)
	return int64(f)
}

// tabLabels lists a Note's tabs as tab ID → label, and their types.
func tabLabels(t *testing.T, cs *mcp.ClientSession, noteID string) (labels, types map[string]string) {
	t.Helper()
	r := servertest.MustCall(t, cs, "list_note_tabs", map[string]any{"note_id": noteID})
	if r.IsError {
		t.Fatalf("list_note_tabs: %s", r.Text)
	}
	labels, types = map[string]string{}, map[string]string{}
	for _, x := range r.Data["tabs"].([]any) {
		m := x.(map[string]any)
		id := m["tab_id"].(string)
		labels[id], _ = m["label"].(string)
		types[id], _ = m["type"].(string)
	}
	return labels, types
}

func TestTwoNodesShareEverything(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t, nil)
	ctx := context.Background()

	// A token made on node A's store works on node B.
	tok := a.WriteToken(t)
	csA := a.Client(t, tok, "")
	csB := b.Client(t, tok, "")

	// The demo Note created through A is listed by B, once.
	list := servertest.MustCall(t, csB, "list_notes", map[string]any{"limit": 50})
	if list.IsError {
		t.Fatalf("list_notes on B: %s", list.Text)
	}
	found, welcomes := false, 0
	for _, x := range list.Data["notes"].([]any) {
		m := x.(map[string]any)
		if m["note_id"] == a.NoteID {
			found = true
		}
		if m["title"] == "Welcome" {
			welcomes++
		}
	}
	if !found || welcomes != 1 {
		t.Fatalf("node B lists %s: found=%v, %d Notes titled Welcome (want the demo Note once): %s", a.NoteID, found, welcomes, list.Text)
	}
	vA, beforeA := tabs(t, csA, a.NoteID)
	vB, beforeB := tabs(t, csB, a.NoteID)
	if vA != vB || fmt.Sprint(beforeA) != fmt.Sprint(beforeB) {
		t.Fatalf("the nodes disagree: A v%d %v, B v%d %v", vA, beforeA, vB, beforeB)
	}

	// create_note_tab on A; the resend after a lost response goes to B
	// (another node behind the balancer) with the old version: a replay.
	// Each node sees exactly one new tab.
	_, first := createThenResend(t, csA, csB, csB, a.NoteID, "two-nodes-deck-1")
	if vA2, afterA := tabs(t, csA, a.NoteID); len(afterA["slides"]) != len(beforeA["slides"])+1 || vA2 != vA+1 {
		t.Fatalf("node A: slides tabs %d → %d, version %d → %d; want exactly one new tab", len(beforeA["slides"]), len(afterA["slides"]), vA, vA2)
	}

	// A stale version on B is a version_conflict naming the current version
	// and the tab that changed, and writes nothing.
	stale := servertest.MustCall(t, csB, "edit_note_tab", map[string]any{"note_id": a.NoteID, "tab_id": "markdown", "expected_version": vA,
		"idempotency_key": "two-nodes-stale-1", "operation": "replace_text", "text": "overwrite from B"})
	if !stale.IsError || stale.Str("error") != "version_conflict" || conflictVersion(stale) != vA+1 {
		t.Fatalf("stale write on B: %s, want version_conflict with current_version %d", stale.Text, vA+1)
	}
	if d := stale.Data; !strings.Contains(fmt.Sprint(d["changed_tab_ids"]), first.Str("tab_id")) {
		t.Fatalf("conflict on B does not name the tab created on A (%s): %v", first.Str("tab_id"), d)
	}
	md := servertest.MustCall(t, csA, "read_note_tab", map[string]any{"note_id": a.NoteID, "tab_id": "markdown"})
	if strings.Contains(md.Str("text"), "overwrite from B") || md.Int("version") != vA+1 {
		t.Fatalf("the conflicting write landed: %s", md.Text)
	}

	// A token revoked through A is refused by A at once and by B (which
	// has it cached: it served the calls above) within 1 s.
	toks, err := a.Server.Store.Tokens(ctx, a.Owner.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if err := a.Server.Store.RevokeToken(ctx, a.Owner.Workspace.ID, tk.ID); err != nil {
			t.Fatal(err)
		}
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notes","arguments":{}}}`
	if resp := post(t, a.URL+"/mcp", tok, call); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token revoked on A, used on A: HTTP %d, want 401", resp.StatusCode)
	}
	deadline := time.Now().Add(time.Second)
	for {
		resp := post(t, b.URL+"/mcp", tok, call)
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("token revoked on A, used on B 1 s later: HTTP %d, want 401", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSameKeyOnBothNodesAppliesOnce(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t, nil)
	tok := a.WriteToken(t)
	cs := b.Client(t, tok, "")
	v, before := tabs(t, cs, a.NoteID)

	const each = 8
	nodes := []*servertest.Env{a, b}
	clients := make([]*mcp.ClientSession, 2*each)
	for i := range clients {
		clients[i] = nodes[i%2].Client(t, tok, "")
	}
	args := map[string]any{"note_id": a.NoteID, "expected_version": v, "idempotency_key": "both-nodes-same-key", "tab_type": "sheet", "label": "Once"}
	results := make([]mcpclient.Result, len(clients))
	errs := make([]error, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = mcpclient.Call(context.Background(), clients[i], "create_note_tab", args)
		}()
	}
	close(start)
	wg.Wait()

	applied, replayed := 0, 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("call %d (node %c): %v", i, "AB"[i%2], errs[i])
		}
		if r.IsError || r.Str("tab_id") != results[0].Str("tab_id") || r.Int("version") != v+1 {
			t.Fatalf("call %d (node %c): %s, differs from %s", i, "AB"[i%2], r.Text, results[0].Text)
		}
		switch r.Data["replayed"] {
		case false:
			applied++
		case true:
			replayed++
		}
	}
	v2, after := tabs(t, cs, a.NoteID)
	if applied != 1 || replayed != len(clients)-1 || len(after["sheet"]) != len(before["sheet"])+1 || v2 != v+1 {
		t.Fatalf("applied %d, replayed %d of %d; sheet tabs %d → %d; version %d → %d; want one applied, one new tab",
			applied, replayed, len(clients), len(before["sheet"]), len(after["sheet"]), v, v2)
	}
	t.Logf("%d concurrent calls with one key on two nodes: 1 applied, %d replayed tab %s", len(clients), replayed, results[0].Str("tab_id"))
}

// pollSpy is node A's store, reporting each read of the event feed of one
// resource, so the test knows when a long poll has read (and found nothing)
// and is waiting.
type pollSpy struct {
	store.Store
	mu    sync.Mutex
	typ   string
	id    string
	reads chan int // the number of events each watched read returned
}

func (s *pollSpy) watch(typ, id string) {
	s.mu.Lock()
	s.typ, s.id = typ, id
	s.mu.Unlock()
}

func (s *pollSpy) Events(ctx context.Context, workspace, typ, id string, after int64, limit int) ([]store.Event, error) {
	evs, err := s.Store.Events(ctx, workspace, typ, id, after, limit)
	s.mu.Lock()
	watched := s.typ == typ && s.id == id
	s.mu.Unlock()
	if watched && err == nil {
		select {
		case s.reads <- len(evs):
		default:
		}
	}
	return evs, err
}

func TestLongPollOnOneNodeWakesOnWriteOnOtherNode(t *testing.T) {
	t.Parallel()
	spy := &pollSpy{reads: make(chan int, 64)}
	a, b := startTwoNodes(t, func(st store.Store) store.Store { spy.Store = st; return spy })
	ctx := context.Background()
	tok := a.WriteToken(t)
	csB := b.Client(t, tok, "")
	poller := a.Client(t, tok, "")

	// The proposal is written through B; its cursor starts the poll on A.
	files := map[string]string{"src/App.tsx": "export default function App(){return 'cross-node'}"}
	first := propose(t, csB, a.RoomID, "Cross-node timer", files, room.SnippetKey(a.RoomID, "Cross-node timer", files))
	if first.IsError || first.Str("cursor") == "" {
		t.Fatalf("propose on B: %s", first.Text)
	}

	type polled struct {
		r   mcpclient.Result
		err error
		at  time.Time
	}
	spy.watch(store.TypeRoom, a.RoomID)
	done := make(chan polled, 1)
	go func() {
		r, err := mcpclient.Call(ctx, poller, "poll_resource_events", map[string]any{"resource_type": "room", "resource_id": a.RoomID, "cursor": first.Str("cursor"), "wait_seconds": 20})
		done <- polled{r, err, time.Now()}
	}()
	// The poll has registered its wait and read an empty page: it waits.
	select {
	case n := <-spy.reads:
		if n != 0 {
			t.Fatalf("the poll's first read found %d events after the proposal's cursor, want 0", n)
		}
	case p := <-done:
		t.Fatalf("the poll returned before reading the feed: %v %s", p.err, p.r.Text)
	case <-time.After(15 * time.Second):
		t.Fatal("the poll on A did not read the event feed within 15 s")
	}

	// A person approves on node B.
	approvedAt := time.Now()
	if _, err := b.Server.Service.DecideProposal(ctx, asOwner(b), first.Str("proposal_id"), true); err != nil {
		t.Fatal(err)
	}
	committed := time.Since(approvedAt)
	var p polled
	select {
	case p = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the poll on A did not return within 30 s (its wait is 20 s)")
	}
	if p.err != nil || p.r.IsError {
		t.Fatalf("poll on A: %v %s", p.err, p.r.Text)
	}
	evs, _ := p.r.Data["events"].([]any)
	if len(evs) == 0 {
		t.Fatalf("the poll on A returned empty after its wait: the approval on B never woke it (%s)", p.r.Text)
	}
	approved := false
	for _, e := range evs {
		if m := e.(map[string]any); m["kind"] == "app_approved" {
			approved = true
		}
	}
	if !approved {
		t.Fatalf("poll on A woke with %v, want the approval", evs)
	}
	// Woken, not lucky: the first read was empty, a second one found the approval.
	woken := false
	for range cap(spy.reads) {
		select {
		case n := <-spy.reads:
			woken = woken || n > 0
			continue
		default:
		}
		break
	}
	if !woken {
		t.Fatal("the poll returned events without a second read of the feed")
	}
	t.Logf("long poll on node A (wait 20 s) returned %v after the approval call on node B started (the approval took %v to commit)", p.at.Sub(approvedAt), committed)

	st := servertest.MustCall(t, poller, "read_room_app_status", map[string]any{"room_id": a.RoomID, "instance_id": first.Str("instance_id")})
	if st.Str("state") != "in_launcher" {
		t.Fatalf("status on A after the approval on B: %s", st.Text)
	}
}

// writeDropper loses the response of a fraction of write tool calls after
// the server has answered them (so a write that committed stays committed),
// as a host timeout looks to a client. Reads are never dropped.
type writeDropper struct {
	base    http.RoundTripper
	mu      sync.Mutex
	rng     *rand.Rand
	p       float64
	dropped atomic.Int64
}

var droppedWrites = map[string]bool{"create_note_tab": true, "edit_note_tab": true, "add_note_source": true, "propose_room_snippet_app": true}

func (d *writeDropper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if r.Header.Get("Mcp-Method") != "tools/call" || !droppedWrites[r.Header.Get("Mcp-Name")] {
		return resp, nil
	}
	d.mu.Lock()
	drop := d.rng.Float64() < d.p
	d.mu.Unlock()
	if !drop {
		return resp, nil
	}
	d.dropped.Add(1)
	io.Copy(io.Discard, resp.Body) // the server finished: a write committed
	resp.Body.Close()
	return nil, errDropped
}

// sourceSpellings are formats of one page (%d) in spellings that normalize
// the same.
var sourceSpellings = []string{
	"https://www.Example.org/research/page-%d/?utm_source=agent#top",
	"http://example.org/research/page-%d",
	"example.org/research/page-%d/",
	"HTTPS://EXAMPLE.ORG/research/page-%d?utm_medium=chat&utm_campaign=x",
}

// sourceKey is what tool descriptions tell agents: a hash of the Note ID and
// the normalized URL.
func sourceKey(noteID, rawURL string) (key, norm string, err error) {
	norm, err = urlnorm.Normalize(rawURL)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(noteID + "\n" + norm))
	return "src-" + hex.EncodeToString(sum[:])[:32], norm, nil
}

// lossyAgent is one agent: a go-sdk client on one node, through a
// writeDropper, resending with the same key after a lost response.
type lossyAgent struct {
	n    int
	node int
	cs   *mcp.ClientSession
	drop *writeDropper

	calls, lost, conflicts, replays int
	resendReplays                   int // replays answering a resend after a lost response
}

const maxSends = 60 // a lost response is resent; 60 losses in a row at 30% don't happen

// send calls tool until an answer arrives, resending the same arguments (so
// the same key) after a lost response.
func (ag *lossyAgent) send(ctx context.Context, tool string, args map[string]any) (mcpclient.Result, error) {
	var last error
	for attempt := range maxSends {
		ag.calls++
		r, err := mcpclient.Call(ctx, ag.cs, tool, args)
		if err != nil {
			ag.lost++
			last = err
			continue
		}
		if r.Data["replayed"] == true {
			ag.replays++
			if attempt > 0 {
				ag.resendReplays++
			}
		}
		return r, nil
	}
	return mcpclient.Result{}, fmt.Errorf("agent %d: %s: no answer after %d sends: %v", ag.n, tool, maxSends, last)
}

const maxRetries = 400 // re-read-and-reapply rounds for one change

// version reads the Note's current version.
func (ag *lossyAgent) version(ctx context.Context, noteID string) (int64, error) {
	r, err := ag.send(ctx, "list_note_tabs", map[string]any{"note_id": noteID})
	if err != nil {
		return 0, err
	}
	if r.IsError {
		return 0, fmt.Errorf("agent %d: list_note_tabs: %s", ag.n, r.Text)
	}
	return r.Int("version"), nil
}

// appendLine re-reads the markdown and writes text + line, with a key per
// attempt-after-conflict: kept on a lost response, new after a conflict.
func (ag *lossyAgent) appendLine(ctx context.Context, noteID string, edit int, line string) error {
	for try := range maxRetries {
		cur, err := ag.send(ctx, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
		if err != nil {
			return err
		}
		if cur.IsError {
			return fmt.Errorf("agent %d: read_note_tab: %s", ag.n, cur.Text)
		}
		r, err := ag.send(ctx, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown", "expected_version": cur.Int("version"),
			"idempotency_key": fmt.Sprintf("agent-%d-edit-%03d-try-%03d", ag.n, edit, try), "operation": "replace_text", "text": cur.Str("text") + line + "\n"})
		if err != nil {
			return err
		}
		if !r.IsError {
			return nil
		}
		if r.Str("error") != "version_conflict" {
			return fmt.Errorf("agent %d: edit_note_tab: %s", ag.n, r.Text)
		}
		ag.conflicts++
	}
	return fmt.Errorf("agent %d: edit %d: still conflicting after %d rounds", ag.n, edit, maxRetries)
}

// versioned writes a create-like call whose key names the intent: after a
// conflict (which wrote nothing) it is resent with the new version and the
// same key.
func (ag *lossyAgent) versioned(ctx context.Context, tool, noteID string, args map[string]any) (mcpclient.Result, error) {
	v, err := ag.version(ctx, noteID)
	if err != nil {
		return mcpclient.Result{}, err
	}
	for range maxRetries {
		args["expected_version"] = v
		r, err := ag.send(ctx, tool, args)
		if err != nil {
			return r, err
		}
		if !r.IsError {
			return r, nil
		}
		if r.Str("error") != "version_conflict" || conflictVersion(r) <= v {
			return r, fmt.Errorf("agent %d: %s: %s", ag.n, tool, r.Text)
		}
		ag.conflicts++
		v = conflictVersion(r)
	}
	return mcpclient.Result{}, fmt.Errorf("agent %d: %s: still conflicting after %d rounds", ag.n, tool, maxRetries)
}

func TestEightAgentsAcrossNodesUnderLostResponses(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t, nil)
	ctx := context.Background()
	nodes := []*servertest.Env{a, b}
	owner := asOwner(a) // both nodes serve the same workspace

	const (
		agents        = 8
		dropRate      = 0.30
		createsEach   = 2 // create intents per agent
		pages         = 4 // each agent cites every page, in its own spelling
		apps          = 4 // distinct snippet contents
		proposalsEach = 2 // agent i proposes apps i%apps and (i+1)%apps
	)
	edits := 15
	if testing.Short() {
		edits = 6
	}
	var notes [2]string
	for i := range notes {
		n, err := a.Server.Service.CreateNoteFrom(ctx, owner, service.CreateNoteArgs{Title: fmt.Sprintf("Shared %d", i+1), Approved: true}, func(d *note.Doc) error {
			d.Markdown = fmt.Sprintf("# Shared %d\n", i+1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		notes[i] = n.NoteID
	}
	rm, err := b.Server.Service.CreateRoom(ctx, owner, "Shared room")
	if err != nil {
		t.Fatal(err)
	}
	roomID := rm.RoomID
	tok := a.WriteToken(t)
	checker := b.Client(t, tok, "")
	var startVersion [2]int64
	for i, id := range notes {
		startVersion[i], _ = tabs(t, checker, id)
	}

	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 4 * agents
	ags := make([]*lossyAgent, agents)
	for i := range ags {
		d := &writeDropper{base: base, rng: rand.New(rand.NewPCG(42, uint64(i))), p: dropRate}
		node := i % 2
		ags[i] = &lossyAgent{n: i, node: node, drop: d, cs: servertest.Connect(t, nodes[node].URL+"/mcp", tok, "", d)}
	}

	// What every agent means to do, and what the answers said.
	lineOf := func(ag, edit int) string { return fmt.Sprintf("agent-%d-edit-%03d", ag, edit) }
	noteOfEdit := func(ag, edit int) int { return (ag + edit) % 2 }
	labelOf := func(ag, k int) string { return fmt.Sprintf("Agent %d deck %d", ag, k) }
	noteOfCreate := func(ag, k int) int { return (ag + k) % 2 }
	appName := func(c int) string { return fmt.Sprintf("Shared app %d", c) }
	appFiles := func(c int) map[string]string {
		return map[string]string{"src/App.tsx": fmt.Sprintf("export default function App(){return %d}\n", c)}
	}
	var mu sync.Mutex
	sourceIDs := map[string]map[string]bool{} // normalized URL → source IDs answered
	proposalIDs := map[int]map[string]bool{}  // app → proposal IDs answered
	createdTabs := map[string]map[string]bool{}

	errs := make([]error, agents)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, ag := range ags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = func() error {
				// Interleave: each step an edit, and now and then a create, a
				// source and a proposal.
				var ops []func() error
				for j := range edits {
					ops = append(ops, func() error { return ag.appendLine(ctx, notes[noteOfEdit(i, j)], j, lineOf(i, j)) })
				}
				var extra []func() error
				for k := range createsEach {
					extra = append(extra, func() error {
						r, err := ag.versioned(ctx, "create_note_tab", notes[noteOfCreate(i, k)], map[string]any{"note_id": notes[noteOfCreate(i, k)],
							"idempotency_key": fmt.Sprintf("agent-%d-create-deck-%d", i, k), "tab_type": "slides", "label": labelOf(i, k)})
						if err != nil {
							return err
						}
						mu.Lock()
						if createdTabs[labelOf(i, k)] == nil {
							createdTabs[labelOf(i, k)] = map[string]bool{}
						}
						createdTabs[labelOf(i, k)][r.Str("tab_id")] = true
						mu.Unlock()
						return nil
					})
				}
				for p := range pages {
					extra = append(extra, func() error {
						raw := fmt.Sprintf(sourceSpellings[(i+p)%len(sourceSpellings)], p)
						noteID := notes[p%2]
						key, norm, err := sourceKey(noteID, raw)
						if err != nil {
							return err
						}
						r, err := ag.versioned(ctx, "add_note_source", noteID, map[string]any{"note_id": noteID, "idempotency_key": key,
							"title": fmt.Sprintf("Page %d as agent %d saw it", p, i), "url": raw})
						if err != nil {
							return err
						}
						mu.Lock()
						if sourceIDs[norm] == nil {
							sourceIDs[norm] = map[string]bool{}
						}
						sourceIDs[norm][r.Str("source_id")] = true
						mu.Unlock()
						return nil
					})
				}
				for k := range proposalsEach {
					extra = append(extra, func() error {
						c := (i + k) % apps
						r, err := ag.send(ctx, "propose_room_snippet_app", map[string]any{"room_id": roomID, "name": appName(c), "files": appFiles(c),
							"idempotency_key": room.SnippetKey(roomID, appName(c), appFiles(c))})
						if err != nil {
							return err
						}
						if r.IsError {
							return fmt.Errorf("agent %d: propose: %s", i, r.Text)
						}
						mu.Lock()
						if proposalIDs[c] == nil {
							proposalIDs[c] = map[string]bool{}
						}
						proposalIDs[c][r.Str("proposal_id")] = true
						mu.Unlock()
						return nil
					})
				}
				// Spread the extras over the edits, in an order of the agent's own.
				rng := rand.New(rand.NewPCG(7, uint64(i)))
				rng.Shuffle(len(extra), func(x, y int) { extra[x], extra[y] = extra[y], extra[x] })
				var plan []func() error
				for j, op := range ops {
					plan = append(plan, op)
					for k := j; k < len(extra); k += len(ops) {
						plan = append(plan, extra[k])
					}
				}
				for _, op := range plan {
					if err := op(); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	// 0 lost lines: every agent's every intended line is in its Note exactly once.
	var texts [2]string
	var finalVersion [2]int64
	for i, id := range notes {
		r := servertest.MustCall(t, checker, "read_note_tab", map[string]any{"note_id": id, "tab_id": "markdown"})
		if r.IsError {
			t.Fatal(r.Text)
		}
		texts[i], finalVersion[i] = r.Str("text"), r.Int("version")
	}
	lost, doubled, misplaced := 0, 0, 0
	var wantWrites [2]int64
	for i := range agents {
		for j := range edits {
			n := noteOfEdit(i, j)
			wantWrites[n]++
			switch c := strings.Count(texts[n], "\n"+lineOf(i, j)+"\n"); {
			case c == 0:
				lost++
				t.Errorf("lost: %s", lineOf(i, j))
			case c > 1:
				doubled++
				t.Errorf("%s is in the Note %d times", lineOf(i, j), c)
			}
			if strings.Contains(texts[1-n], lineOf(i, j)+"\n") {
				misplaced++
				t.Errorf("%s landed in the other Note", lineOf(i, j))
			}
		}
	}

	// 0 duplicate tabs: one tab per create intent, on both nodes alike.
	dupTabs := 0
	for n, id := range notes {
		for c, cs := range []*mcp.ClientSession{checker, a.Client(t, tok, "")} { // through B, then A
			labels, types := tabLabels(t, cs, id)
			count := map[string]int{}
			slides := 0
			for tab, l := range labels {
				if types[tab] == "slides" {
					slides++
					count[l]++
				}
			}
			want := 0
			for i := range agents {
				for k := range createsEach {
					if noteOfCreate(i, k) != n {
						continue
					}
					want++
					if count[labelOf(i, k)] != 1 {
						if c == 0 {
							dupTabs += max(count[labelOf(i, k)]-1, 0)
						}
						t.Errorf("Note %d: %d tabs labelled %q, want 1", n, count[labelOf(i, k)], labelOf(i, k))
					}
				}
			}
			if slides != want {
				t.Errorf("Note %d: %d slides tabs, want %d (one per create intent)", n, slides, want)
			}
		}
	}
	for l, ids := range createdTabs {
		if len(ids) != 1 {
			t.Errorf("create intent %q was answered with %d tab IDs: %v", l, len(ids), ids)
		}
	}
	for i := range agents {
		for k := range createsEach {
			wantWrites[noteOfCreate(i, k)]++
		}
	}

	// 0 duplicate sources: one per normalized URL.
	dupSources := 0
	for n, id := range notes {
		r := servertest.MustCall(t, checker, "list_note_attachments", map[string]any{"note_id": id, "kind": "sources", "limit": 50})
		if r.IsError {
			t.Fatal(r.Text)
		}
		count := map[string]int{}
		items, _ := r.Data["items"].([]any)
		for _, it := range items {
			count[it.(map[string]any)["normalized_url"].(string)]++
		}
		want := 0
		for p := range pages {
			if p%2 != n {
				continue
			}
			want++
			norm, _ := urlnorm.Normalize(fmt.Sprintf(sourceSpellings[0], p))
			if count[norm] != 1 {
				dupSources += max(count[norm]-1, 0)
				t.Errorf("Note %d: %d sources for %s, want 1", n, count[norm], norm)
			}
			if len(sourceIDs[norm]) != 1 {
				t.Errorf("%s was answered with %d source IDs: %v", norm, len(sourceIDs[norm]), sourceIDs[norm])
			}
		}
		if len(items) != want {
			t.Errorf("Note %d: %d sources, want %d: %s", n, len(items), want, r.Text)
		}
		wantWrites[n] += int64(want)
	}

	// 0 duplicate proposal cards: one per content.
	cards, err := b.Server.Service.ListProposals(ctx, owner, service.ListProposalsArgs{RoomID: roomID})
	if err != nil {
		t.Fatal(err)
	}
	perName := map[string]int{}
	for _, c := range cards {
		perName[c.Name]++
	}
	dupCards := len(cards) - apps
	for c := range apps {
		if perName[appName(c)] != 1 || len(proposalIDs[c]) != 1 {
			t.Errorf("%s: %d cards, answered with %d proposal IDs; want 1 and 1", appName(c), perName[appName(c)], len(proposalIDs[c]))
		}
	}
	if dupCards != 0 {
		t.Errorf("%d proposal cards for %d contents", len(cards), apps)
	}

	// Every intent applied exactly once: each Note's version grew by exactly
	// the number of writes meant for it.
	for n := range notes {
		if got := finalVersion[n] - startVersion[n]; got != wantWrites[n] {
			t.Errorf("Note %d: version grew by %d, want %d (one per edit, create and source)", n, got, wantWrites[n])
		}
	}

	var calls, drops, conflicts, replays, resendReplays [2]int
	for _, ag := range ags {
		resendReplays[ag.node] += ag.resendReplays
		calls[ag.node] += ag.calls
		drops[ag.node] += int(ag.drop.dropped.Load())
		conflicts[ag.node] += ag.conflicts
		replays[ag.node] += ag.replays
		if int(ag.drop.dropped.Load()) != ag.lost {
			t.Errorf("agent %d: %d responses dropped but %d calls failed", ag.n, ag.drop.dropped.Load(), ag.lost)
		}
	}
	t.Logf("%d agents (4 on each node), %d edits each, in %v", agents, edits, elapsed.Round(time.Millisecond))
	t.Logf("calls: A %d, B %d; dropped responses (%.0f%% of writes): A %d, B %d; version conflicts: A %d, B %d; replays: A %d, B %d (of which answering a resend after a drop: A %d, B %d)",
		calls[0], calls[1], dropRate*100, drops[0], drops[1], conflicts[0], conflicts[1], replays[0], replays[1], resendReplays[0], resendReplays[1])
	t.Logf("lost lines %d, doubled lines %d, misplaced lines %d, duplicate tabs %d, duplicate sources %d, duplicate cards %d",
		lost, doubled, misplaced, dupTabs, dupSources, dupCards)
	if drops[0] == 0 || drops[1] == 0 {
		t.Fatalf("the injector dropped %d/%d responses: the test can't see duplicates", drops[0], drops[1])
	}
	if replays[0]+replays[1] == 0 {
		t.Fatal("no call was replayed: the lost responses were never resent")
	}
}
