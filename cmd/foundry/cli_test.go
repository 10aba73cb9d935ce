package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/server"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
)

// built is the foundry command the CLI tests run, built once per test
// binary into a folder TestMain removes.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// foundryBin builds the command once for the CLI tests.
func foundryBin(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "foundry-cli-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "foundry")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func runCLI(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("foundry %s: %v\n%s%s", strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// TestFirstRunAsTheREADMESays follows the README on a fresh data folder:
// serve --demo, token create, connect a client, then the people's CLI.
func TestFirstRunAsTheREADMESays(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	data := filepath.Join(t.TempDir(), "foundry-data")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--demo", "--data", data, "--addr", addr)
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); srv.Wait() }()
	var printed strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Foundry is serving") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	for _, want := range []string{"Next steps", "foundry token create", "/mcp"} {
		if !strings.Contains(printed.String(), want) {
			t.Fatalf("first start does not print %q:\n%s", want, printed.String())
		}
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}

	out, _ := runCLI(t, bin, "token", "create", "--data", data, "--scopes", "osfoundry:read,osfoundry:write")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if !strings.HasPrefix(token, "fdy_") || strings.Contains(token, " ") {
		t.Fatalf("the last line of token create is %q, want the token alone", token)
	}
	cs := servertest.Connect(t, "http://"+addr+"/mcp", token, "", nil)
	notes := servertest.MustCall(t, cs, "list_notes", map[string]any{})
	if !strings.Contains(notes.Text, "Welcome") {
		t.Fatalf("demo Note missing: %s", notes.Text)
	}
	rooms := servertest.MustCall(t, cs, "list_rooms", map[string]any{})
	if !strings.Contains(rooms.Text, "room_") {
		t.Fatalf("demo Room missing: %s", rooms.Text)
	}
	repos := servertest.MustCall(t, cs, "list_repositories", map[string]any{})
	if !strings.Contains(repos.Text, "ver_") {
		t.Fatalf("demo repository missing: %s", repos.Text)
	}

	out, _ = runCLI(t, bin, "token", "list", "--data", data)
	if !strings.Contains(out, "active") {
		t.Fatalf("token list: %s", out)
	}

	// Propose over MCP, approve from the CLI, see it in the launcher.
	roomID := rooms.Data["rooms"].([]any)[0].(map[string]any)["room_id"].(string)
	p := servertest.MustCall(t, cs, "propose_room_snippet_app", map[string]any{"room_id": roomID, "name": "Timer",
		"files": map[string]any{"src/App.tsx": "export default () => null"}, "idempotency_key": "snip-cli-test-0001"})
	out, _ = runCLI(t, bin, "proposals", "list", "--data", data)
	if !strings.Contains(out, p.Str("proposal_id")) {
		t.Fatalf("proposals list lacks %s:\n%s", p.Str("proposal_id"), out)
	}
	out, _ = runCLI(t, bin, "proposals", "show", p.Str("proposal_id"), "--data", data)
	if !strings.Contains(out, "export default () => null") || !strings.Contains(out, "Review all proposed files (1)") || !strings.Contains(out, "Compile: ok") {
		t.Fatalf("proposals show:\n%s", out)
	}
	// A long poll already waiting in the server hears the approval made by
	// another process (the CLI) on the same data.
	polled := make(chan mcpclient.Result, 1)
	go func() {
		c := servertest.Connect(t, "http://"+addr+"/mcp", token, "", nil)
		r, _ := mcpclient.Call(context.Background(), c, "poll_resource_events", map[string]any{"resource_type": "room", "resource_id": roomID, "cursor": p.Str("cursor"), "wait_seconds": 20})
		polled <- r
	}()
	time.Sleep(300 * time.Millisecond)
	approved := time.Now()
	runCLI(t, bin, "proposals", "approve", p.Str("proposal_id"), "--data", data)
	poll := <-polled
	if evs, _ := poll.Data["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["kind"] != "app_approved" {
		t.Fatalf("the waiting poll returned %s, want the approval", poll.Text)
	}
	t.Logf("long poll returned %v after the CLI approval started", time.Since(approved))
	st := servertest.MustCall(t, cs, "read_room_app_status", map[string]any{"room_id": roomID, "instance_id": p.Str("instance_id")})
	if st.Str("state") != "in_launcher" {
		t.Fatalf("after CLI approve: %s", st.Text)
	}

	// A snippet that does not compile is approved only when the person
	// says so, after being told its errors.
	broken := servertest.MustCall(t, cs, "propose_room_snippet_app", map[string]any{"room_id": roomID, "name": "Broken",
		"files": map[string]any{"src/App.tsx": "export default () => <p>{x</p>;\n"}, "idempotency_key": "snip-cli-test-0002"})
	cmd := exec.Command(bin, "proposals", "approve", broken.Str("proposal_id"), "--data", data)
	var bo, be bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bo, &be
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(be.String(), "does not compile") || !strings.Contains(be.String(), "src/App.tsx:1:") || !strings.Contains(be.String(), "--despite-errors") {
		t.Fatalf("approving code that does not compile: %v\n%s%s", err, bo.String(), be.String())
	}
	if st := servertest.MustCall(t, cs, "read_room_app_status", map[string]any{"room_id": roomID, "instance_id": broken.Str("instance_id")}); st.Str("state") == "in_launcher" {
		t.Fatalf("the refused approval approved: %s", st.Text)
	}
	runCLI(t, bin, "proposals", "approve", broken.Str("proposal_id"), "--despite-errors", "--data", data)
	if st := servertest.MustCall(t, cs, "read_room_app_status", map[string]any{"room_id": roomID, "instance_id": broken.Str("instance_id")}); st.Str("state") != "in_launcher" {
		t.Fatalf("after approve --despite-errors: %s", st.Text)
	}

	// repo push pins a folder and prints its version ID.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "App.tsx"), []byte("export default () => 1\n"), 0o644)
	out, _ = runCLI(t, bin, "repo", "push", dir, "--name", "cli-app", "--data", data)
	if !strings.HasPrefix(strings.TrimSpace(out), "ver_") {
		t.Fatalf("repo push printed %q", out)
	}

	// History and restore: a restore is a new version.
	noteID := notes.Data["notes"].([]any)[0].(map[string]any)["note_id"].(string)
	tabs := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
	ed := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown", "expected_version": tabs.Int("version"),
		"idempotency_key": "cli-test-edit-1", "operation": "replace_text", "text": "replaced"})
	out, _ = runCLI(t, bin, "notes", "history", noteID, "--data", data)
	if !strings.Contains(out, "tab_edited") {
		t.Fatalf("history:\n%s", out)
	}
	runCLI(t, bin, "notes", "restore", noteID, "--version", "1", "--data", data)
	after := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
	if after.Int("version") != ed.Int("version")+1 || !strings.Contains(after.Str("text"), "Welcome to Foundry") {
		t.Fatalf("after restore: version %d (want %d), text %q", after.Int("version"), ed.Int("version")+1, after.Str("text"))
	}

	// A token revoked by another process (the CLI) on the same data stops
	// working within 1 s.
	out, _ = runCLI(t, bin, "token", "list", "--data", data)
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	runCLI(t, bin, "token", "revoke", id, "--data", data)
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := mcpclient.Call(context.Background(), cs, "list_notes", map[string]any{}); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a token revoked by the CLI still works 1 s later")
		}
	}
}

// runInProcess runs the foundry command in this process and returns its exit
// code and what it printed.
func runInProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	o, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = o, e
	code = run(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	o.Close()
	e.Close()
	ob, _ := os.ReadFile(o.Name())
	eb, _ := os.ReadFile(e.Name())
	return code, string(ob), string(eb)
}

// grantWorkspace makes a data folder with a workspace, one Note and one Room.
func grantWorkspace(t *testing.T) (data, noteID, roomID string) {
	t.Helper()
	ctx := context.Background()
	data = filepath.Join(t.TempDir(), "foundry-data")
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "Grants", "owner@localhost")
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Granted", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.CreateRoom(ctx, service.Operator(o), "Granted room")
	if err != nil {
		t.Fatal(err)
	}
	return data, n.NoteID, r.RoomID
}

// storedTokens reads the tokens back from the data folder.
func storedTokens(t *testing.T, data string) (toks []store.Token) {
	t.Helper()
	onData(t, data, func(ctx context.Context, svc *service.Service, op service.Caller) {
		var err error
		if toks, err = svc.Store.Tokens(ctx, op.Workspace); err != nil {
			t.Fatal(err)
		}
	})
	return toks
}

// TestTokenCreateGrantsOnlyWhatItSays: an empty --notes or --rooms (an unset
// shell variable) grants nothing, never everything; "all" is said as all; a
// grant naming a Note or Room that does not exist is refused; token list
// shows both grants.
func TestTokenCreateGrantsOnlyWhatItSays(t *testing.T) {
	data, noteID, roomID := grantWorkspace(t)
	type want struct {
		ok           bool
		notes, rooms []string // nil: all
		refusal      string   // in stderr when refused
	}
	cases := []struct {
		name string
		args []string
		want want
	}{
		{"omitted", nil, want{ok: true}},
		{"all", []string{"--notes", "all", "--rooms", "ALL"}, want{ok: true}},
		{"notes empty", []string{"--notes", ""}, want{ok: true, notes: []string{}}},
		{"notes blank", []string{"--notes", " "}, want{ok: true, notes: []string{}}},
		{"notes comma", []string{"--notes", ","}, want{ok: true, notes: []string{}}},
		{"notes commas and spaces", []string{"--notes=, ,\t,"}, want{ok: true, notes: []string{}}},
		{"notes none", []string{"--notes", "none"}, want{ok: true, notes: []string{}}},
		{"rooms empty", []string{"--rooms="}, want{ok: true, rooms: []string{}}},
		{"rooms blank", []string{"--rooms", " "}, want{ok: true, rooms: []string{}}},
		{"rooms comma", []string{"--rooms", ","}, want{ok: true, rooms: []string{}}},
		{"both empty", []string{"--notes", "", "--rooms", ""}, want{ok: true, notes: []string{}, rooms: []string{}}},
		{"explicit IDs", []string{"--notes", " " + noteID + " ,," + noteID, "--rooms", roomID + ","}, want{ok: true, notes: []string{noteID}, rooms: []string{roomID}}},
		{"unknown note", []string{"--notes", noteID + ",note_doesnotexist"}, want{refusal: "note_doesnotexist"}},
		{"unknown room", []string{"--rooms", "room_doesnotexist"}, want{refusal: "room_doesnotexist"}},
		{"a room ID as a note", []string{"--notes", roomID}, want{refusal: roomID}},
		{"a note ID as a room", []string{"--rooms", noteID}, want{refusal: noteID}},
		{"all mixed with an ID", []string{"--notes", "all," + noteID}, want{refusal: "notes"}},
		{"control character", []string{"--notes", "note_\x00x"}, want{refusal: "notes[0]"}},
		{"empty scopes", []string{"--scopes", ""}, want{refusal: "scopes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(storedTokens(t, data))
			name := strings.ReplaceAll(c.name, " ", "-")
			args := append([]string{"token", "create", "--data", data, "--name", name}, c.args...)
			code, stdout, stderr := runInProcess(t, args...)
			toks := storedTokens(t, data)
			if !c.want.ok {
				if code == 0 || len(toks) != before || strings.Contains(stdout, "fdy_") {
					t.Fatalf("%q: exit %d, %d tokens (was %d), stdout %q: want a refusal and no token", c.args, code, len(toks), before, stdout)
				}
				if !strings.Contains(stderr, c.want.refusal) {
					t.Fatalf("%q: refusal %q does not name %q", c.args, stderr, c.want.refusal)
				}
				return
			}
			if code != 0 || len(toks) != before+1 {
				t.Fatalf("%q: exit %d, %d tokens (was %d): %s", c.args, code, len(toks), before, stderr)
			}
			var tok store.Token
			for _, tk := range toks {
				if tk.Name == name {
					tok = tk
				}
			}
			for _, g := range []struct {
				what      string
				got, want []string
			}{{"notes", tok.Notes, c.want.notes}, {"rooms", tok.Rooms, c.want.rooms}} {
				if (g.got == nil) != (g.want == nil) || !slices.Equal(g.got, g.want) {
					t.Errorf("%q: stored %s grant %#v, want %#v", c.args, g.what, g.got, g.want)
				}
			}
			// The token itself, as the server sees it.
			secret := strings.TrimSpace(stdout)
			st, err := server.OpenStore(context.Background(), server.Config{DataDir: data})
			if err != nil {
				t.Fatal(err)
			}
			p, err := auth.Verify(context.Background(), st, secret)
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			if p.CanNote(noteID) != (c.want.notes == nil || slices.Contains(c.want.notes, noteID)) ||
				p.CanRoom(roomID) != (c.want.rooms == nil || slices.Contains(c.want.rooms, roomID)) ||
				(c.want.notes != nil && p.CanNote("note_created_later")) || (c.want.rooms != nil && p.CanRoom("room_created_later")) {
				t.Errorf("%q: principal notes %#v rooms %#v", c.args, p.Notes, p.Rooms)
			}
		})
	}

	code, out, stderr := runInProcess(t, "token", "list", "--data", data)
	if code != 0 {
		t.Fatalf("token list: %d %s", code, stderr)
	}
	header := strings.Fields(strings.Split(out, "\n")[0])
	if !slices.Contains(header, "NOTES") || !slices.Contains(header, "ROOMS") {
		t.Fatalf("token list header %q lacks NOTES or ROOMS", header)
	}
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		switch f[1] {
		case "omitted":
			if f[3] != "all" || f[4] != "all" {
				t.Errorf("token list shows %q for an all token", line)
			}
		case "both-empty":
			if f[3] != "none" || f[4] != "none" {
				t.Errorf("token list shows %q for a token that grants nothing", line)
			}
		}
	}
	if !strings.Contains(out, roomID) {
		t.Errorf("token list does not show the Room grant %s:\n%s", roomID, out)
	}
}

// TestEmptyGrantReachesNothingOverMCP: a token minted with --notes "" and
// --rooms "" (unset shell variables) lists no Note and no Room and reads
// neither, while a token minted without the flags reaches both.
func TestEmptyGrantReachesNothingOverMCP(t *testing.T) {
	data, noteID, roomID := grantWorkspace(t)
	mint := func(args ...string) string {
		code, stdout, stderr := runInProcess(t, append([]string{"token", "create", "--data", data}, args...)...)
		if code != 0 {
			t.Fatalf("token create %q: %d %s", args, code, stderr)
		}
		return strings.TrimSpace(stdout)
	}
	empty := mint("--notes", "", "--rooms", "")
	all := mint()

	ctx := context.Background()
	st, err := server.OpenStore(ctx, server.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := server.New(st, server.Config{DataDir: data, PublicURL: base, Version: "test"})
	hs := &http.Server{Handler: srv.Handler, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	for name, c := range map[string]struct {
		token string
		sees  bool
	}{"empty grant": {empty, false}, "flags omitted": {all, true}} {
		cs := servertest.Connect(t, base+"/mcp", c.token, "", nil)
		notes := servertest.MustCall(t, cs, "list_notes", map[string]any{})
		rooms := servertest.MustCall(t, cs, "list_rooms", map[string]any{})
		if strings.Contains(notes.Text, noteID) != c.sees || strings.Contains(rooms.Text, roomID) != c.sees {
			t.Errorf("%s: list_notes %s, list_rooms %s", name, notes.Text, rooms.Text)
		}
		tab, err := mcpclient.Call(ctx, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
		if err != nil {
			t.Fatal(err)
		}
		room, err := mcpclient.Call(ctx, cs, "read_room", map[string]any{"room_id": roomID})
		if err != nil {
			t.Fatal(err)
		}
		if tab.IsError == c.sees || room.IsError == c.sees {
			t.Errorf("%s: read_note_tab error=%v (%s), read_room error=%v (%s)", name, tab.IsError, tab.Text, room.IsError, room.Text)
		}
		cs.Close()
	}
}
