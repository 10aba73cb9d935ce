package main

import (
	"strings"
	"testing"
)

// The Rooms a person manages from the command line: created, renamed and
// deleted through the service's acts; a command given wrongly (no ROOM_ID,
// a blank name) exits 2, a refusal (an unknown Room, a name past the
// limit) 1.
func TestRoomsCreateRenameDelete(t *testing.T) {
	data, _, granted := grantWorkspace(t)
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runInProcess(t, append(args, "--data", data)...)
		if code != want {
			t.Fatalf("%q: exit %d, want %d; stdout %q, stderr %q", args, code, want, out, errOut)
		}
		return out, errOut
	}
	_, e := run(2, "rooms", "create")
	if !strings.Contains(e, "--name") {
		t.Fatalf("create without --name: %q", e)
	}
	_, e = run(1, "rooms", "create", "--name", strings.Repeat("x", 500))
	if !strings.Contains(e, "--name") || !strings.Contains(e, "a Room name may be at most 200 characters") {
		t.Fatalf("create with a long name: %q", e)
	}
	out, _ := run(0, "rooms", "create", "--name", "Launch")
	id := strings.TrimSpace(out)
	if !strings.HasPrefix(id, "room") {
		t.Fatalf("create printed %q", out)
	}
	run(2, "rooms", "rename", id)
	run(2, "rooms", "rename", "--name", "x")
	run(2, "rooms", "delete")
	_, e = run(1, "rooms", "rename", "room_nope", "--name", "Plan")
	if !strings.Contains(e, "no Room room_nope") {
		t.Fatalf("rename an unknown Room: %q", e)
	}
	run(0, "rooms", "rename", id, "--name", "Launch plan")
	out, _ = run(0, "rooms", "list")
	if !strings.Contains(out, "Launch plan") || !strings.Contains(out, granted) {
		t.Fatalf("list after rename: %q", out)
	}
	run(0, "rooms", "delete", id)
	_, e = run(1, "rooms", "delete", id)
	if !strings.Contains(e, "no Room "+id) {
		t.Fatalf("delete again: %q", e)
	}
	out, _ = run(0, "rooms", "list")
	if strings.Contains(out, id) || !strings.Contains(out, granted) {
		t.Fatalf("list after delete: %q", out)
	}
	// No token is granted a deleted Room.
	_, e = run(1, "token", "create", "--name", "late", "--rooms", id)
	if !strings.Contains(e, "--rooms") || !strings.Contains(e, "no Room "+id) {
		t.Fatalf("a token for the deleted Room: %q", e)
	}
}
