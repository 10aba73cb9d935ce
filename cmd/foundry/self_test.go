package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/problem"
)

// TestInvokedAs: how Foundry was started decides how its printed commands
// start: go run (both the temporary exe and Go's cached executable) gives
// "go run" of the main package relative to the working folder; any other
// start is typed again as it was.
func TestInvokedAs(t *testing.T) {
	for arg0, want := range map[string]bool{
		"/tmp/go-build2131531806/b001/exe/foundry":                                                               true,
		"/home/me/.cache/go-build/e6/e64475b51672cbcbef57bd76eaa0759304c32ed5ebd673f35ed8d941f299fd6c-d/foundry": true,
		`C:\Users\me\AppData\Local\Temp\go-build123\b001\exe\foundry.exe`:                                        filepath.Separator == '\\',
		"foundry":                     false,
		"./foundry":                   false,
		"/usr/local/bin/foundry":      false,
		"/tmp/go-build-notes/foundry": false,
	} {
		if got := startedByGoRun(arg0); got != want {
			t.Errorf("startedByGoRun(%q) = %v, want %v", arg0, got, want)
		}
	}
	for arg0, want := range map[string]string{
		"foundry":                  "foundry",
		"./bin/foundry":            "./bin/foundry",
		"/opt/foundry/bin/foundry": "/opt/foundry/bin/foundry",
		"/opt/my tools/foundry":    `'/opt/my tools/foundry'`,
	} {
		if got := invokedAs(arg0); got != want {
			t.Errorf("invokedAs(%q) = %q, want %q", arg0, got, want)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for wd, want := range map[string]string{
		root:                                     "go run ./cmd/foundry",
		filepath.Join(root, "cmd", "foundry"):    "go run .",
		filepath.Join(root, "internal", "store"): "go run ../../cmd/foundry",
		os.TempDir():                             "go run ./cmd/foundry", // not in the module: the README's form
	} {
		if got := goRunCommand(wd); got != want {
			t.Errorf("goRunCommand(%q) = %q, want %q", wd, got, want)
		}
	}
}

// TestSayInCLIWords: refusals worded for the MCP door (as the service
// wrote them before it spoke door-neutrally) and door-neutral ones both
// come out in the CLI's words.
func TestSayInCLIWords(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{sent(problem.New(problem.NotFound, "note_id", "note %q was not found; list_notes shows the approved Notes this connection can reach", "note_x"), "note_id", "note_x"),
			"no Note note_x in this workspace; `foundry notes list` shows them"},
		{sent(problem.New(problem.NotFound, "note_id", "Note \"note_x\" does not exist"), "note_id", "note_x"),
			"no Note note_x in this workspace; `foundry notes list` shows them"},
		{sent(problem.New(problem.NotFound, "room_id", "room %q was not found; list_rooms shows the cloud Rooms this connection can reach", "room_x"), "room_id", "room_x"),
			"no Room room_x in this workspace; `foundry rooms list` shows them"},
		{sent(problem.New(problem.NotFound, "notes[1]", "whatever"), "notes[0]", "note_a", "notes[1]", "note_b"),
			"--notes: no Note note_b in this workspace; `foundry notes list` shows them, or give --notes all"},
		{problem.New(problem.Conflict, "expected_version", "the note changed since version 3; it is at version 4 now. Read the tab again and write with expected_version 4 and a NEW idempotency_key.").With("current_version", 4),
			"changed while this command ran (it is at version 4 now); nothing was written: run the command again"},
		{problem.New(problem.Invalid, "title", "a Note needs a title"), "--title: a Note needs a title"},
		{problem.New(problem.Invalid, "name", "name is empty; see list_room_apps for the names in use"), "--name: name is empty"},
		{problem.New(problem.Limit, `files["a.tsx"]`, "is too large"), `DIR (files["a.tsx"]): is too large`},
		{errors.New("plain"), "plain"},
	}
	for _, c := range cases {
		got := say(c.err)
		if !strings.Contains(got, c.want) {
			t.Errorf("say(%v) = %q, want %q in it", c.err, got, c.want)
		}
		if doorWords.MatchString(got) {
			t.Errorf("say(%v) = %q still speaks the MCP door's words", c.err, got)
		}
	}
	old := self
	self = "go run ./cmd/foundry"
	defer func() { self = old }()
	if got := say(errors.New("see `foundry token list`")); got != "see `go run ./cmd/foundry token list`" {
		t.Errorf("commands in messages are not as Foundry was started: %q", got)
	}
}
