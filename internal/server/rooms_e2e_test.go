package server_test

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/room"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

func propose(t *testing.T, cs *mcp.ClientSession, roomID, name string, files map[string]string, key string) mcpclient.Result {
	t.Helper()
	return servertest.MustCall(t, cs, "propose_room_snippet_app", map[string]any{"room_id": roomID, "name": name, "files": files, "idempotency_key": key})
}

func TestUnsafeSnippetPathsAreRefused(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	for _, p := range []string{"a/b/../../../x.ts", "src/./../../x", "C:/Windows/x.ts", "c:x.ts", "src//x.ts", "src/x.ts/", "src/\x00.ts", "/abs.ts", "..", "src\\..\\x"} {
		r := propose(t, cs, e.RoomID, "x", map[string]string{"src/App.tsx": "", p: ""}, "unsafe-path-check")
		want := "unsafe path"
		if strings.ContainsRune(p, 0) {
			want = "NUL character" // refused as text, like a NUL anywhere, before it is read as a path
		}
		if !r.IsError || !strings.Contains(r.Text, want) {
			t.Errorf("path %q: %s", p, r.Text)
		}
	}
	if ps, _ := e.Server.Service.ListProposals(context.Background(), asOwner(e), service.ListProposalsArgs{RoomID: e.RoomID, Status: "pending"}); len(ps) != 0 {
		t.Fatalf("%d proposals recorded from refused calls", len(ps))
	}
}

// TestProposalLifecycle: pending apps are invisible to agents and carry no
// code back; approval wakes a waiting long poll and puts the app in the
// launcher; a declined one never appears; no tool can approve.
func TestProposalLifecycle(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	ctx := context.Background()
	secret := "const SECRET_MARKER = 'do-not-echo-42'"
	files := map[string]string{"src/App.tsx": "export default function App(){return null}\n" + secret, "src/styles.css": "body{}"}
	key := room.SnippetKey(e.RoomID, "Standup timer", files)
	first := propose(t, cs, e.RoomID, "Standup timer", files, key)
	if first.IsError || first.Str("status") != "pending_review" || !strings.Contains(first.Str("next_step"), "foundry proposals approve "+first.Str("proposal_id")) {
		t.Fatalf("propose: %s", first.Text)
	}
	// The server names its review page, at its public address, first.
	if step := first.Str("next_step"); !strings.Contains(step, "Connected → Needs your approval ("+e.URL+"/approvals)") || !strings.Contains(step, first.Str("proposal_id")) ||
		strings.Index(step, "Needs your approval") > strings.Index(step, "foundry proposals show") {
		t.Errorf("next_step does not send the user to the inbox first: %q", step)
	}
	again := propose(t, cs, e.RoomID, "Standup timer", files, key)
	if again.Data["replayed"] != true || again.Str("proposal_id") != first.Str("proposal_id") {
		t.Fatalf("resend: %s", again.Text)
	}
	if ps, _ := e.Server.Service.ListProposals(ctx, asOwner(e), service.ListProposalsArgs{RoomID: e.RoomID, Status: "pending"}); len(ps) != 1 {
		t.Fatalf("%d pending proposals after a resend, want 1", len(ps))
	}
	inst := first.Str("instance_id")
	reads := map[string]map[string]any{
		"read_room":            {"room_id": e.RoomID},
		"list_room_apps":       {"room_id": e.RoomID, "limit": 50},
		"read_room_app_status": {"room_id": e.RoomID, "instance_id": inst},
		"list_rooms":           {},
		"poll_resource_events": {"resource_type": "room", "resource_id": e.RoomID},
	}
	for tool, args := range reads {
		r := servertest.MustCall(t, cs, tool, args)
		if r.IsError || strings.Contains(r.Text, "do-not-echo-42") {
			t.Fatalf("%s: %s", tool, r.Text)
		}
		if tool != "read_room_app_status" && tool != "poll_resource_events" && strings.Contains(r.Text, inst) {
			t.Fatalf("%s shows the pending app %s: %s", tool, inst, r.Text)
		}
	}
	if st := servertest.MustCall(t, cs, "read_room_app_status", reads["read_room_app_status"]); st.Str("state") != "pending_review" {
		t.Fatalf("status: %s", st.Text)
	}

	// A long poll waiting on the Room is woken by the approval.
	type polled struct {
		r   mcpclient.Result
		err error
		at  time.Time
	}
	done := make(chan polled, 1)
	go func() {
		c := e.Client(t, e.WriteToken(t), "")
		r, err := mcpclient.Call(ctx, c, "poll_resource_events", map[string]any{"resource_type": "room", "resource_id": e.RoomID, "cursor": first.Str("cursor"), "wait_seconds": 20})
		done <- polled{r, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // let the poll start waiting
	approvedAt := time.Now()
	if _, err := e.Server.Service.DecideProposal(ctx, asOwner(e), first.Str("proposal_id"), true); err != nil {
		t.Fatal(err)
	}
	p := <-done
	if p.err != nil || p.r.IsError {
		t.Fatalf("poll: %v %s", p.err, p.r.Text)
	}
	evs := p.r.Data["events"].([]any)
	if len(evs) != 1 || evs[0].(map[string]any)["kind"] != "app_approved" {
		t.Fatalf("poll woke with %v, want the approval (a wait of 20 s that returned early)", evs)
	}
	t.Logf("long poll returned %v after the approval", p.at.Sub(approvedAt))
	if st := servertest.MustCall(t, cs, "read_room_app_status", reads["read_room_app_status"]); st.Str("state") != "in_launcher" {
		t.Fatalf("status after approval: %s", st.Text)
	}
	if apps := servertest.MustCall(t, cs, "list_room_apps", reads["list_room_apps"]); !strings.Contains(apps.Text, inst) {
		t.Fatalf("approved app not listed: %s", apps.Text)
	}

	// Declined: never in the launcher.
	other := map[string]string{"src/App.tsx": "export default function App(){return 1}"}
	d := propose(t, cs, e.RoomID, "Declined app", other, room.SnippetKey(e.RoomID, "Declined app", other))
	if _, err := e.Server.Service.DecideProposal(ctx, asOwner(e), d.Str("proposal_id"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Server.Service.DecideProposal(ctx, asOwner(e), d.Str("proposal_id"), true); err == nil {
		t.Fatal("a declined proposal was approved afterwards")
	}
	if room := servertest.MustCall(t, cs, "read_room", reads["read_room"]); strings.Contains(room.Text, d.Str("instance_id")) {
		t.Fatalf("declined app in the launcher: %s", room.Text)
	}
	if st := servertest.MustCall(t, cs, "read_room_app_status", map[string]any{"room_id": e.RoomID, "instance_id": d.Str("instance_id")}); st.Str("state") != "declined" {
		t.Fatalf("declined status: %s", st.Text)
	}

	// No tool approves, declines or reads proposal code back.
	for _, tool := range e.Server.MCP.Tools() {
		n := tool.Def.Name
		if strings.Contains(n, "approve") || strings.Contains(n, "decline") || strings.Contains(n, "proposal") {
			t.Fatalf("tool %s acts on proposals", n)
		}
	}
	if _, err := mcpclient.Call(ctx, cs, "approve_proposal", map[string]any{"proposal_id": d.Str("proposal_id")}); err == nil {
		t.Fatal("approve_proposal answered")
	}
}

func TestPollWithoutEventsKeepsTheCursor(t *testing.T) {
	t.Parallel()
	e := servertest.Start(t, servertest.Options{})
	cs := e.Client(t, e.WriteToken(t), "")
	all := servertest.MustCall(t, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID, "limit": 50})
	cur := all.Str("next_cursor")
	r := servertest.MustCall(t, cs, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID, "cursor": cur, "wait_seconds": 1})
	if r.IsError || len(r.Data["events"].([]any)) != 0 || r.Str("next_cursor") != cur {
		t.Fatalf("empty poll: %s (cursor was %s)", r.Text, cur)
	}
	// Without a cursor a poll waits for what happens next, not for history.
	next := make(chan mcpclient.Result, 1)
	go func() {
		c := e.Client(t, e.WriteToken(t), "")
		next <- servertest.MustCall(t, c, "poll_resource_events", map[string]any{"resource_type": "note", "resource_id": e.NoteID, "wait_seconds": 20})
	}()
	time.Sleep(300 * time.Millisecond)
	md := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown"})
	w := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": e.NoteID, "tab_id": "markdown", "expected_version": md.Int("version"),
		"idempotency_key": "poll-next-write-1", "operation": "replace_text", "text": "next"})
	got := <-next
	evs, _ := got.Data["events"].([]any)
	if w.IsError || len(evs) != 1 || int64(evs[0].(map[string]any)["version"].(float64)) != w.Int("version") {
		t.Fatalf("poll without a cursor returned %s; want only the next write (version %d)", got.Text, w.Int("version"))
	}
	bad := servertest.MustCall(t, cs, "poll_resource_events", map[string]any{"resource_type": "room", "resource_id": e.RoomID, "wait_seconds": 26})
	if !bad.IsError || !strings.Contains(bad.Text, "wait_seconds") {
		t.Fatalf("wait 26: %s", bad.Text)
	}
}

// dropper loses the response of a fraction of calls after the server has
// committed them, as a host timeout looks to a client.
type dropper struct {
	mu      sync.Mutex
	rng     *rand.Rand
	p       float64
	dropped int
}

var errDropped = errors.New("response lost (simulated timeout)")

func (d *dropper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	drop := d.rng.Float64() < d.p && strings.Contains(r.Header.Get("Mcp-Method")+r.Header.Get("Mcp-Name"), "propose")
	if drop {
		d.dropped++
	}
	d.mu.Unlock()
	if drop {
		io.Copy(io.Discard, resp.Body) // the server finished: the write committed
		resp.Body.Close()
		return nil, errDropped
	}
	return resp, nil
}

// TestProposalsUnderLostResponses: 1,000 proposals, 5% of responses dropped
// after commit and resent. Content keys give 0 duplicate cards; a fresh
// random key per attempt (what the seed measured: 74) gives duplicates.
func TestProposalsUnderLostResponses(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 200
	}
	for _, policy := range []string{"content", "random"} {
		t.Run(policy, func(t *testing.T) {
			e := servertest.Start(t, servertest.Options{})
			ctx := context.Background()
			rm, err := e.Server.Service.CreateRoom(ctx, asOwner(e), "Load room")
			if err != nil {
				t.Fatal(err)
			}
			roomID := rm.RoomID
			d := &dropper{rng: rand.New(rand.NewPCG(5, 5)), p: 0.05}
			cs := servertest.Connect(t, e.URL+"/mcp", e.WriteToken(t), "", d)
			calls := 0
			for i := range n {
				name := fmt.Sprintf("App %04d", i)
				files := map[string]string{"src/App.tsx": fmt.Sprintf("export default () => %d", i)}
				for attempt := 0; attempt < 20; attempt++ {
					key := room.SnippetKey(roomID, name, files)
					if policy == "random" {
						var b [12]byte
						crand.Read(b[:])
						key = "rnd-" + hex.EncodeToString(b[:])
					}
					calls++
					r, err := mcpclient.Call(ctx, cs, "propose_room_snippet_app", map[string]any{"room_id": roomID, "name": name, "files": files, "idempotency_key": key})
					if err != nil {
						continue // lost: resend
					}
					if r.IsError {
						t.Fatalf("propose: %s", r.Text)
					}
					break
				}
			}
			cards, err := e.Server.Service.ListProposals(ctx, asOwner(e), service.ListProposalsArgs{RoomID: roomID, Status: "pending"})
			if err != nil {
				t.Fatal(err)
			}
			launcher := servertest.MustCall(t, cs, "list_room_apps", map[string]any{"room_id": roomID})
			dups := len(cards) - n
			t.Logf("%s keys: %d calls, %d dropped, %d cards, %d duplicates, %d in launcher before approval", policy, calls, d.dropped, len(cards), dups, len(launcher.Data["apps"].([]any)))
			if len(launcher.Data["apps"].([]any)) != 0 {
				t.Fatal("apps in the launcher before approval")
			}
			if d.dropped == 0 {
				t.Fatal("the injector dropped nothing: the test can't see duplicates")
			}
			switch policy {
			case "content":
				if dups != 0 {
					t.Fatalf("%d duplicate cards with content keys", dups)
				}
			case "random":
				if dups != d.dropped {
					t.Fatalf("%d duplicates, want one per dropped response (%d)", dups, d.dropped)
				}
			}
		})
	}
}
