package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// cliOut runs a command of the CLI in this process and answers what it
// printed, failing the test on an error.
func cliOut(t *testing.T, flags []string, args ...string) string {
	t.Helper()
	c, rest, _ := lookup(args)
	if c == nil {
		t.Fatalf("no command %v", args)
	}
	fs := flag.NewFlagSet(c.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	do := c.flags(fs)
	pos, err := parse(fs, append(append([]string{}, flags...), rest...))
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	err = do(pos)
	os.Stdout = stdout
	w.Close()
	out := <-done
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// TestNotesTrashCLI: rename, duplicate, delete, trash and untrash are the
// service's acts, on the server's data.
func TestNotesTrashCLI(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := startParity(t, st, []string{"--data", dir})
	noteID, _ := p.fresh()
	flags := []string{"--data", dir}
	if out := cliOut(t, flags, "notes", "rename", noteID, "Quarterly review"); !strings.Contains(out, `"Quarterly review"`) {
		t.Fatalf("rename printed %q", out)
	}
	copyID := strings.TrimSpace(cliOut(t, flags, "notes", "duplicate", noteID))
	tabs, err := p.env.Server.Service.ListNoteTabs(context.Background(), p.op, copyID)
	if err != nil || tabs.Title != "Copy of Quarterly review" || tabs.Version != 1 {
		t.Fatalf("the copy %q: %+v, %v", copyID, tabs, err)
	}
	if out := cliOut(t, flags, "notes", "delete", noteID); !strings.Contains(out, "trash") || !strings.Contains(out, "notes untrash "+noteID) {
		t.Fatalf("delete printed %q", out)
	}
	if out := cliOut(t, flags, "notes", "list"); strings.Contains(out, noteID) || !strings.Contains(out, copyID) {
		t.Fatalf("list after the delete:\n%s", out)
	}
	out := cliOut(t, flags, "notes", "trash")
	if !strings.Contains(out, noteID) || !strings.Contains(out, "Quarterly review") || !strings.Contains(out, "REMOVED FOR GOOD") {
		t.Fatalf("trash:\n%s", out)
	}
	if out := cliOut(t, flags, "notes", "untrash", noteID); !strings.Contains(out, "restored "+noteID) {
		t.Fatalf("untrash printed %q", out)
	}
	if out := cliOut(t, flags, "notes", "trash"); strings.Contains(out, noteID) {
		t.Fatalf("trash after the untrash:\n%s", out)
	}
	l, err := p.env.Server.Service.ListNotes(context.Background(), p.op, service.ListNotesArgs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range l.Notes {
		if n.NoteID == noteID && !n.Approved {
			t.Fatal("the restored Note lost its connected access")
		}
	}
}
