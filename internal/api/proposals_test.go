package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/room"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// rmEnv is a server with a member signed in beside the owner, a Room the
// member owns, and an agent (a real token) that proposes apps.
type rmEnv struct {
	*notesEnv
	member     browser
	memberRoom string
	agent      service.Caller // a real token's principal, as MCP's tools act for it
}

func rmStart(t *testing.T, e *notesEnv) *rmEnv {
	t.Helper()
	ctx := context.Background()
	st := e.Server.Store
	ws := e.Owner.Workspace.ID
	u := store.User{ID: store.NewID("usr"), Workspace: ws, Email: "ana-" + ws + "@example.com", Name: "Ana", Role: "member", CreatedAt: time.Now().UTC()}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	x := &rmEnv{notesEnv: e, member: signIn(t, st, u)}
	rm, err := e.Server.Service.CreateRoom(ctx, service.Person(ws, u.ID, u.Role), "Ana's room")
	if err != nil {
		t.Fatal(err)
	}
	x.memberRoom = rm.RoomID
	secret := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
	p, err := auth.Verify(ctx, st, secret)
	if err != nil {
		t.Fatal(err)
	}
	x.agent = service.Agent(p)
	return x
}

// as sends q as b (the owner when b is nil), with b's CSRF token on
// mutating calls unless q.noCSRF.
func (x *rmEnv) as(t *testing.T, b *browser, q req) resp {
	t.Helper()
	if b == nil {
		return x.do(t, q)
	}
	q.anon = true
	if q.header == nil {
		q.header = map[string]string{}
	}
	q.header["Cookie"] = auth.SessionCookie + "=" + b.secret
	if q.method != "GET" && !q.noCSRF {
		q.header[auth.CSRFHeader] = b.csrf
	}
	return x.do(t, q)
}

func rmFiles(label string) map[string]string {
	return map[string]string{
		"src/App.tsx":   "import { Title } from \"./Title\";\nimport \"./app.css\";\nexport default function App() {\n  return <main id=\"app\"><Title text={" + fmt.Sprintf("%q", label) + "} /></main>;\n}\n",
		"src/Title.tsx": "export function Title(props: { text: string }) {\n  return <h1 className=\"title\">{props.text}</h1>;\n}\n",
		"src/app.css":   ".title { color: teal; }\n",
	}
}

// propose makes a pending snippet proposal in roomID and answers it.
func (x *rmEnv) propose(t *testing.T, roomID, name string, files map[string]string) service.Proposed {
	t.Helper()
	w, err := x.Server.Service.ProposeSnippet(context.Background(), x.agent, service.ProposeSnippetArgs{
		RoomID: roomID, Name: name, Files: files, IdempotencyKey: room.SnippetKey(roomID, name, files)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func rmIDs(r resp, key, field string) []string {
	var out []string
	for _, v := range r.body[key].([]any) {
		out = append(out, v.(map[string]any)[field].(string))
	}
	return out
}

func rmHas(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestProposalsVisibleOnlyToWhoDecides(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		own := x.propose(t, x.RoomID, "Owner's app", rmFiles("one"))
		ana := x.propose(t, x.memberRoom, "Ana's app", rmFiles("two"))

		// The workspace owner sees both; Ana, the member, only her Room's.
		r := x.do(t, req{method: "GET", path: "/api/proposals"})
		r.want(t, "owner's inbox", http.StatusOK, "")
		if ids := rmIDs(r, "proposals", "proposal_id"); len(ids) != 2 || !rmHas(ids, own.ProposalID) || !rmHas(ids, ana.ProposalID) {
			t.Fatalf("owner's inbox = %s", r.raw)
		}
		r = x.as(t, &x.member, req{method: "GET", path: "/api/proposals?status=pending"})
		r.want(t, "member's inbox", http.StatusOK, "")
		if ids := rmIDs(r, "proposals", "proposal_id"); len(ids) != 1 || ids[0] != ana.ProposalID {
			t.Fatalf("member's inbox = %s; want only the proposal of her Room", r.raw)
		}
		p := r.body["proposals"].([]any)[0].(map[string]any)
		by := p["proposed_by"].(map[string]any)
		if p["room_name"] != "Ana's room" || p["file_count"] != 3.0 || p["kind"] != "snippet" || p["status"] != "pending" ||
			by["kind"] != "token" || by["name"] != "test" || p["compile"].(map[string]any)["ok"] != true {
			t.Fatalf("proposal entry = %v", p)
		}
		if r := x.as(t, &x.member, req{method: "GET", path: "/api/proposals/count"}); r.num("pending") != 1 {
			t.Fatalf("member's count = %s", r.raw)
		}
		if r := x.do(t, req{method: "GET", path: "/api/proposals/count"}); r.num("pending") != 2 {
			t.Fatalf("owner's count = %s", r.raw)
		}

		// Every call on the owner's proposal is 403 for Ana.
		for _, q := range []req{
			{method: "GET", path: "/api/proposals/" + own.ProposalID},
			{method: "POST", path: "/api/proposals/" + own.ProposalID + "/approve"},
			{method: "POST", path: "/api/proposals/" + own.ProposalID + "/decline"},
		} {
			x.as(t, &x.member, q).want(t, "member "+q.method+" "+q.path, http.StatusForbidden, service.NotReviewer)
		}
		// The Rooms list says who may manage what.
		r = x.as(t, &x.member, req{method: "GET", path: "/api/rooms"})
		r.want(t, "member's rooms", http.StatusOK, "")
		for _, v := range r.body["rooms"].([]any) {
			rm := v.(map[string]any)
			mine := rm["room_id"] == x.memberRoom
			if rm["can_manage"] != mine || (mine && rm["pending"] != 1.0) || (!mine && rm["pending"] != 0.0) {
				t.Errorf("member's room entry %v", rm)
			}
		}
		// A token, or a browser without CSRF, is refused.
		x.do(t, req{method: "GET", path: "/api/proposals", bearer: e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)}).want(t, "token", http.StatusForbidden, service.PersonOnly)
		x.do(t, req{method: "POST", path: "/api/proposals/" + ana.ProposalID + "/approve", noCSRF: true}).want(t, "no CSRF", http.StatusForbidden, "csrf_missing")
		// Hostile input.
		x.do(t, req{method: "GET", path: "/api/proposals?status=everything"}).want(t, "bad status", http.StatusBadRequest, "invalid_argument")
		x.do(t, req{method: "GET", path: "/api/proposals?status=pending&status=approved"}).want(t, "status twice", http.StatusBadRequest, "invalid_argument")
		x.do(t, req{method: "GET", path: "/api/proposals/prop_nope"}).want(t, "unknown proposal", http.StatusNotFound, "not_found")
		x.do(t, req{method: "GET", path: "/api/proposals/%E2%80%AEprop"}).want(t, "bidi proposal ID", http.StatusBadRequest, "")
		x.do(t, req{method: "POST", path: "/api/proposals/" + ana.ProposalID + "/approve", body: strings.Repeat("x", 2*5000)}).want(t, "a big body", http.StatusRequestEntityTooLarge, "")
	})
}

func TestApproveDeclineAndTheBundle(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		yes := x.propose(t, x.RoomID, "Teal title", rmFiles("approve me"))
		no := x.propose(t, x.RoomID, "Never runs", rmFiles("decline me"))
		bundle := func(inst string) string { return "/api/rooms/" + x.RoomID + "/apps/" + inst + "/bundle" }

		// Pending: every file in full, the compile result, and no bundle.
		r := x.do(t, req{method: "GET", path: "/api/proposals/" + yes.ProposalID})
		r.want(t, "detail", http.StatusOK, "")
		files := r.body["files"].([]any)
		if len(files) != 3 || files[0].(map[string]any)["path"] != "src/App.tsx" || files[0].(map[string]any)["text"] != rmFiles("approve me")["src/App.tsx"] {
			t.Fatalf("detail files = %v", files)
		}
		if c := r.body["compile"].(map[string]any); c["ok"] != true || c["state"] != "compiled" || c["proposer_told"] != true || len(c["hash"].(string)) != 64 {
			t.Fatalf("detail compile = %v", c)
		}
		if strings.Contains(string(r.raw), "__foundryApp") {
			t.Fatal("a pending proposal's detail carries compiled code")
		}
		x.do(t, req{method: "GET", path: bundle(yes.InstanceID)}).want(t, "bundle of a pending proposal", http.StatusNotFound, "not_found")

		// Approve: the app is in the launcher and its bundle is served.
		r = x.do(t, req{method: "POST", path: "/api/proposals/" + yes.ProposalID + "/approve"})
		r.want(t, "approve", http.StatusOK, "")
		if r.body["status"] != "approved" || r.body["instance_id"] != yes.InstanceID || r.body["room_id"] != x.RoomID || r.num("version") < 2 {
			t.Fatalf("approve = %s", r.raw)
		}
		r = x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID})
		r.want(t, "room", http.StatusOK, "")
		if ids := rmIDs(r, "apps", "instance_id"); !rmHas(ids, yes.InstanceID) || rmHas(ids, no.InstanceID) {
			t.Fatalf("launcher after approve = %s", r.raw)
		}
		r = x.do(t, req{method: "GET", path: bundle(yes.InstanceID)})
		r.want(t, "bundle", http.StatusOK, "")
		js, _ := r.body["js"].(string)
		if !strings.Contains(js, "__foundryApp") || !strings.Contains(js, "approve me") || !strings.Contains(r.body["css"].(string), "teal") || r.body["ok"] != true {
			t.Fatalf("bundle = %s", r.raw)
		}
		if cc := r.header.Get("Cache-Control"); cc != "private, no-store" || r.header.Get("ETag") != `"`+r.body["hash"].(string)+`"` {
			t.Fatalf("bundle Cache-Control %q ETag %q", cc, r.header.Get("ETag"))
		}
		// The member runs it too (every person of the workspace does).
		x.as(t, &x.member, req{method: "GET", path: bundle(yes.InstanceID)}).want(t, "member's bundle", http.StatusOK, "")

		// A second decision: 409 naming the first, whoever sends it.
		r = x.do(t, req{method: "POST", path: "/api/proposals/" + yes.ProposalID + "/decline"})
		r.want(t, "decline after approve", http.StatusConflict, service.AlreadyDecided)
		if r.body["decision"] != "approved" || r.body["decided_by"] != e.Owner.User.Name || r.body["detail"] != "This proposal was already approved by "+e.Owner.User.Name+"." {
			t.Fatalf("409 = %s", r.raw)
		}
		x.do(t, req{method: "POST", path: "/api/proposals/" + yes.ProposalID + "/approve"}).want(t, "approve again", http.StatusConflict, service.AlreadyDecided)

		// Decline: no app, no bundle, gone from the pending inbox.
		x.do(t, req{method: "POST", path: "/api/proposals/" + no.ProposalID + "/decline"}).want(t, "decline", http.StatusOK, "")
		x.do(t, req{method: "GET", path: bundle(no.InstanceID)}).want(t, "bundle of a declined proposal", http.StatusNotFound, "not_found")
		r = x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID})
		if rmHas(rmIDs(r, "apps", "instance_id"), no.InstanceID) {
			t.Fatalf("a declined app is in the launcher: %s", r.raw)
		}
		r = x.do(t, req{method: "GET", path: "/api/proposals"})
		if ids := rmIDs(r, "proposals", "proposal_id"); len(ids) != 0 {
			t.Fatalf("pending after deciding both = %v", ids)
		}
		r = x.do(t, req{method: "GET", path: "/api/proposals?status=declined"})
		if ids := rmIDs(r, "proposals", "proposal_id"); len(ids) != 1 || ids[0] != no.ProposalID {
			t.Fatalf("declined = %s", r.raw)
		}
		if d := r.body["proposals"].([]any)[0].(map[string]any)["decided"].(map[string]any)["by"].(map[string]any); d["kind"] != "person" || d["name"] != e.Owner.User.Name {
			t.Fatalf("decided by = %v", d)
		}

		// The demo Room's repository... and an unknown instance: no bundle.
		x.do(t, req{method: "GET", path: bundle("app-999")}).want(t, "unknown instance", http.StatusNotFound, "not_found")
		x.do(t, req{method: "GET", path: "/api/rooms/room_nope/apps/app-1/bundle"}).want(t, "unknown room", http.StatusNotFound, "not_found")
	})
}

func TestCompileErrorShownAndApprovable(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		files := map[string]string{
			"src/App.tsx": "import fs from \"fs\";\nexport default function App() {\n  return <p>{String(fs)}</p>;\n}\n",
			"src/Bad.tsx": "export const x = ;\n",
		}
		w := x.propose(t, x.RoomID, "Broken", files)
		r := x.do(t, req{method: "GET", path: "/api/proposals"})
		p := r.body["proposals"].([]any)[0].(map[string]any)
		c := p["compile"].(map[string]any)
		errs := c["errors"].([]any)
		if c["ok"] != false || c["state"] != "failed" || len(errs) == 0 || c["proposer_told"] != true {
			t.Fatalf("compile = %v", c)
		}
		first := errs[0].(map[string]any)
		if first["file"] != "src/App.tsx" || first["line"] != 1.0 || !strings.Contains(first["text"].(string), `"fs"`) || first["line_text"] != `import fs from "fs";` {
			t.Fatalf("first error = %v", first)
		}
		// Approvable: the launcher shows its errors instead of running it.
		x.do(t, req{method: "POST", path: "/api/proposals/" + w.ProposalID + "/approve"}).want(t, "approve a broken snippet", http.StatusOK, "")
		r = x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID + "/apps/" + w.InstanceID + "/bundle"})
		r.want(t, "bundle of a broken snippet", http.StatusOK, "")
		if r.body["ok"] != false || r.body["js"] != "" || len(r.body["errors"].([]any)) == 0 {
			t.Fatalf("bundle = %s", r.raw)
		}
	})
}

func TestTwoReviewersDecideAtOnce(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		// Ana owns the Room, the owner owns the workspace: both may decide.
		for round := range 6 {
			w := x.propose(t, x.memberRoom, fmt.Sprintf("Race %d", round), rmFiles(fmt.Sprint(round)))
			verbs := [2]string{"approve", "decline"}
			if round%2 == 1 {
				verbs = [2]string{"approve", "approve"}
			}
			var wg sync.WaitGroup
			var res [2]resp
			start := make(chan struct{})
			for i, b := range []*browser{nil, &x.member} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res[i] = x.as(t, b, req{method: "POST", path: "/api/proposals/" + w.ProposalID + "/" + verbs[i]})
				}()
			}
			close(start)
			wg.Wait()
			win, lose := res[0], res[1]
			names := [2]string{e.Owner.User.Name, "Ana"}
			winner := names[0]
			if win.status != http.StatusOK {
				win, lose, winner = res[1], res[0], names[1]
			}
			if win.status != http.StatusOK || lose.status != http.StatusConflict || lose.body["code"] != service.AlreadyDecided {
				t.Fatalf("round %d: %d %s / %d %s; want one 200 and one 409", round, res[0].status, res[0].raw, res[1].status, res[1].raw)
			}
			if lose.body["decision"] != win.body["status"] || lose.body["decided_by"] != winner {
				t.Fatalf("round %d: the 409 says %v by %v; the decision was %v by %s", round, lose.body["decision"], lose.body["decided_by"], win.body["status"], winner)
			}
			// The Room holds the decision once.
			r := x.do(t, req{method: "GET", path: "/api/rooms/" + x.memberRoom})
			n := 0
			for _, id := range rmIDs(r, "apps", "instance_id") {
				if id == w.InstanceID {
					n++
				}
			}
			if want := map[any]int{"approved": 1, "declined": 0}[win.body["status"]]; n != want {
				t.Fatalf("round %d: the app is in the launcher %d times after %v", round, n, win.body["status"])
			}
		}
	})
}

// rmCounts opens GET /api/proposals/events as the owner and answers the
// pending counts it sends, in order.
func rmCounts(t *testing.T, x *rmEnv) (<-chan int, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*streamWait)
	r, err := http.NewRequestWithContext(ctx, "GET", x.URL+"/api/proposals/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: x.owner.secret})
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /api/proposals/events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan int, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "count":
				var c struct{ Pending int }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c) == nil {
					out <- c.Pending
				}
			case line == "":
				event = ""
			}
		}
	}()
	return out, func() { cancel(); res.Body.Close() }
}

func rmNextCount(t *testing.T, ch <-chan int) int {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("the count stream ended")
		}
		return n
	case <-time.After(streamWait):
		t.Fatal("no count came")
	}
	return 0
}

func TestPendingCountStreamsLive(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		ch, stop := rmCounts(t, x)
		defer stop()
		if n := rmNextCount(t, ch); n != 0 {
			t.Fatalf("first count = %d, want 0", n)
		}
		a := x.propose(t, x.RoomID, "Live one", rmFiles("1"))
		if n := rmNextCount(t, ch); n != 1 {
			t.Fatalf("after a proposal: %d, want 1", n)
		}
		x.propose(t, x.memberRoom, "Live two", rmFiles("2"))
		if n := rmNextCount(t, ch); n != 2 {
			t.Fatalf("after a second proposal: %d, want 2", n)
		}
		x.do(t, req{method: "POST", path: "/api/proposals/" + a.ProposalID + "/decline"}).want(t, "decline", http.StatusOK, "")
		if n := rmNextCount(t, ch); n != 1 {
			t.Fatalf("after a decline: %d, want 1", n)
		}
	})
}

// rmCountReachesTheOtherNode opens the count stream on node b and proposes
// through node a: b's stream hears it (the store's change notifications
// cross nodes).
func rmCountReachesTheOtherNode(t *testing.T, a, b store.Store) {
	na := startNotes(t, a)
	nb := startNotes(t, b)
	if na.Owner.Workspace.ID != nb.Owner.Workspace.ID {
		t.Fatal("the two nodes serve different workspaces")
	}
	x := rmStart(t, na)
	onB := &rmEnv{notesEnv: nb, agent: x.agent}
	ch, stop := rmCounts(t, onB)
	defer stop()
	first := rmNextCount(t, ch)
	x.propose(t, x.RoomID, "From node a", rmFiles("a"))
	if n := rmNextCount(t, ch); n != first+1 {
		t.Fatalf("node b's count after a proposal on node a: %d, want %d", n, first+1)
	}
}

func TestPendingCountReachesEveryNode(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		var nodes []store.Store
		for range 2 {
			s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		rmCountReachesTheOtherNode(t, nodes[0], nodes[1])
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		var nodes []store.Store
		for range 2 {
			s, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		rmCountReachesTheOtherNode(t, nodes[0], nodes[1])
	})
}

func TestPendingCountStreamHeartbeatAndLifetime(t *testing.T) {
	defer api.SetStreamTimings(800*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond)()
	e := startNotes(t, nil)
	x := rmStart(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, "GET", x.URL+"/api/proposals/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: x.owner.secret})
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var lines []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "event: count\ndata: {\"pending\":0}") || !strings.Contains(all, ": heartbeat") ||
		!strings.Contains(all, "event: end\ndata: {\"reason\":\"the stream's lifetime is over: reconnect\"}") {
		t.Fatalf("the stream said:\n%s", all)
	}
	// A stray parameter is refused before any stream opens.
	x.do(t, req{method: "GET", path: "/api/proposals/events?room_id=x"}).want(t, "stray parameter", http.StatusBadRequest, "invalid_argument")
	x.do(t, req{method: "GET", path: "/api/proposals/events", anon: true}).want(t, "signed out", http.StatusUnauthorized, "")
}

func TestPendingCountStreamEndsWhenSignedOut(t *testing.T) {
	defer api.SetStreamTimings(time.Minute, time.Minute, 100*time.Millisecond)()
	e := startNotes(t, nil)
	x := rmStart(t, e)
	ch, stop := rmCounts(t, x)
	defer stop()
	rmNextCount(t, ch)
	if err := x.Server.Store.DeleteSession(context.Background(), auth.HashToken(x.owner.secret)); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("a count came after signing out")
		}
	case <-time.After(streamWait):
		t.Fatal("the stream stayed open after signing out")
	}
}
