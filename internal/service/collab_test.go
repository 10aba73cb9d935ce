package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"foundry/internal/changeset"
	"foundry/internal/note"
	"foundry/internal/service"
)

// peer is an editor following the collab protocol as @codemirror/collab
// does: its own change sets wait unconfirmed until a push is accepted, and
// the updates of others are applied with the unconfirmed ones rebased
// over them.
type peer struct {
	svc         *service.Service
	c           service.Caller
	noteID, id  string
	doc         string
	rev         int64
	unconfirmed []changeset.ChangeSet
	pushes      int
	refused     int
	typed       map[string]int
}

func (p *peer) edit(t *testing.T, ch changeset.Change) {
	t.Helper()
	set, err := changeset.Of([]changeset.Change{ch}, changeset.Len16(p.doc))
	if err != nil {
		t.Fatal(err)
	}
	if p.doc, err = set.Apply(p.doc); err != nil {
		t.Fatal(err)
	}
	p.unconfirmed = append(p.unconfirmed, set)
}

// sync pushes until the unconfirmed change sets are accepted.
func (p *peer) sync(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for tries := 0; len(p.unconfirmed) > 0; tries++ {
		if tries > 200 {
			t.Fatalf("%s: no push accepted in 200 tries", p.id)
		}
		ups := make([]json.RawMessage, len(p.unconfirmed))
		for i, u := range p.unconfirmed {
			ups[i], _ = u.MarshalJSON()
		}
		p.pushes++
		res, err := p.svc.PushText(ctx, p.c, service.PushTextArgs{NoteID: p.noteID, Rev: p.rev, ClientID: p.id, Updates: ups})
		if err != nil {
			t.Fatalf("%s push: %v", p.id, err)
		}
		if res.Accepted {
			p.rev, p.unconfirmed = res.Rev, nil
			return
		}
		p.refused++
		p.pull(t)
	}
}

func (p *peer) pull(t *testing.T) {
	t.Helper()
	got, err := p.svc.TextUpdatesAfter(context.Background(), p.c, p.noteID, p.rev)
	if err != nil {
		t.Fatalf("%s pull: %v", p.id, err)
	}
	if got.Resync {
		t.Fatalf("%s: a resync after %d", p.id, p.rev)
	}
	for _, u := range got.Updates {
		if u.Rev != p.rev+1 {
			t.Fatalf("%s: update %d after %d", p.id, u.Rev, p.rev)
		}
		remote := u.Changes
		if u.ClientID == p.id {
			t.Fatalf("%s: its own update %d came back unconfirmed", p.id, u.Rev)
		}
		for i, local := range p.unconfirmed {
			l2, err := local.Map(remote, false)
			if err != nil {
				t.Fatal(err)
			}
			if remote, err = remote.Map(local, true); err != nil {
				t.Fatal(err)
			}
			p.unconfirmed[i] = l2
		}
		var err error
		if p.doc, err = remote.Apply(p.doc); err != nil {
			t.Fatalf("%s: update %d does not fit: %v", p.id, u.Rev, err)
		}
		p.rev = u.Rev
	}
}

// TestLiveTextConverges: three people type at once into one markdown
// text, each pushing small change sets and rebasing when refused; every
// character each typed is in the text once, every editor ends on the
// server's text, and the log holds every revision in order.
func TestLiveTextConverges(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr("start 🙂\n"), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		tab, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown})
		if err != nil {
			t.Fatal(err)
		}
		letters := []string{"bgh", "xyz", "ÄÖÜ"}
		const rounds = 25
		peers := make([]*peer, len(letters))
		for i := range peers {
			peers[i] = &peer{svc: f.svc, c: f.person, noteID: f.noteID, id: fmt.Sprintf("p%d", i), doc: *tab.Text, rev: *tab.TextRev, typed: map[string]int{}}
		}
		var wg sync.WaitGroup
		for i, p := range peers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(i), 7))
				for range rounds {
					for range 1 + rnd.IntN(3) {
						pos := rnd.IntN(changeset.Len16(p.doc) + 1)
						if pos > 0 && pos < changeset.Len16(p.doc) && isLowSurrogateAt(p.doc, pos) {
							pos-- // never between the halves of 🙂
						}
						l := letters[i]
						r := []rune(l)[rnd.IntN(3)]
						p.edit(t, changeset.Change{From: pos, To: pos, Insert: string(r)})
						p.typed[string(r)]++
					}
					p.sync(t)
				}
			}()
		}
		wg.Wait()
		final, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown})
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, p := range peers {
			p.pull(t)
			if p.doc != *final.Text || p.rev != *final.TextRev {
				t.Fatalf("%s ended at rev %d with %q; the server has rev %d %q", p.id, p.rev, p.doc, *final.TextRev, *final.Text)
			}
			refused += p.refused
		}
		typed := 0
		for _, p := range peers {
			for r, n := range p.typed {
				typed += n
				if got := strings.Count(*final.Text, r); got != n {
					t.Errorf("%s typed %q %d times; the text has it %d times", p.id, r, n, got)
				}
			}
		}
		if !strings.Contains(*final.Text, "🙂") {
			t.Errorf("the emoji was split: %q", *final.Text)
		}
		all, err := f.svc.TextUpdatesAfter(ctx, f.person, f.noteID, 0)
		if err != nil || all.Resync || int64(len(all.Updates)) != *final.TextRev {
			t.Fatalf("the whole log: %d updates (resync %v, %v); want %d", len(all.Updates), all.Resync, err, *final.TextRev)
		}
		t.Logf("%d characters, rev %d, %d pushes refused and rebased", typed, *final.TextRev, refused)
	})
}

func isLowSurrogateAt(s string, pos int) bool {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			if n+1 == pos {
				return true
			}
			n += 2
		} else {
			n++
		}
		if n > pos {
			return false
		}
	}
	return false
}

// TestLiveTextLogIsBounded: past TextLogKeep updates the oldest go, and a
// pull from before them gets the whole text instead; a restore of an old
// version never takes the revision back.
func TestLiveTextLogIsBounded(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		p := &peer{svc: f.svc, c: f.person, noteID: f.noteID, id: "solo"}
		for i := range service.TextLogKeep + 3 {
			p.edit(t, changeset.Change{From: changeset.Len16(p.doc), To: changeset.Len16(p.doc), Insert: string(rune('a' + i%26))})
			p.sync(t)
		}
		got, err := f.svc.TextUpdatesAfter(ctx, f.person, f.noteID, 1)
		if err != nil || !got.Resync || got.Text != p.doc || got.Rev != p.rev {
			t.Fatalf("a pull from rev 1 of %d: resync %v rev %d (%v)", p.rev, got.Resync, got.Rev, err)
		}
		got, err = f.svc.TextUpdatesAfter(ctx, f.person, f.noteID, p.rev-service.TextLogKeep)
		if err != nil || got.Resync || len(got.Updates) != service.TextLogKeep {
			t.Fatalf("a pull from the oldest kept: resync %v, %d updates (%v)", got.Resync, len(got.Updates), err)
		}
		if _, err := f.svc.RestoreVersion(ctx, f.person, service.RestoreArgs{NoteID: f.noteID, Version: 2, Guard: service.Guard{ExpectedVersion: f.version(t)}}); err != nil {
			t.Fatal(err)
		}
		tab, err := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown})
		if err != nil || *tab.TextRev != p.rev+1 || *tab.Text != "a" {
			t.Fatalf("after restoring version 2: rev %d text %.20q (%v); want rev %d", *tab.TextRev, *tab.Text, err, p.rev+1)
		}
		p.pull(t)
		if p.doc != "a" {
			t.Fatalf("the editor after the restore has %.20q", p.doc)
		}
	})
}

// TestLivePushThatEndsWhereItStarted: a push whose change sets undo each
// other (a letter typed, then deleted) still counts one revision each, as
// the editor that sent them counts them.
func TestLivePushThatEndsWhereItStarted(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		res, err := f.svc.PushText(ctx, f.person, service.PushTextArgs{NoteID: f.noteID, Rev: 0, ClientID: "c1", Updates: []json.RawMessage{json.RawMessage(`[[0,"a"]]`), json.RawMessage(`[[1]]`)}})
		if err != nil || !res.Accepted || res.Rev != 2 {
			t.Fatalf("push: %+v %v", res, err)
		}
		got, err := f.svc.TextUpdatesAfter(ctx, f.person, f.noteID, 0)
		if err != nil || len(got.Updates) != 2 || got.Rev != 2 || got.Resync {
			t.Fatalf("pull: %+v %v", got, err)
		}
	})
}

// TestAgentEditsAreLoggedAsTheirReplacements: an agent's edit_note_text
// with two edits is one update of two replacements, not one change from
// the first to the last, so a person's unsent typing between them keeps
// its place when rebased over it.
func TestAgentEditsAreLoggedAsTheirReplacements(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		if _, err := f.svc.EditNoteTab(ctx, f.person, service.EditTabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown, Operation: "replace_text", Text: ptr("alpha one\nbeta two\ngamma three\n"), ExpectedVersion: f.version(t)}); err != nil {
			t.Fatal(err)
		}
		ada := &peer{svc: f.svc, c: f.person, noteID: f.noteID, id: "ada", doc: "alpha one\nbeta two\ngamma three\n", rev: 1}
		// Ada types in the middle line, not yet pushed.
		ada.edit(t, changeset.Change{From: 14, To: 14, Insert: "!"})
		if _, err := f.svc.EditNoteText(ctx, service.Agent(f.write), service.EditTextArgs{NoteID: f.noteID, ExpectedVersion: f.version(t), IdempotencyKey: "agent-edits-1",
			Edits: []note.TextEdit{{OldText: "alpha", NewText: "ALPHA"}, {OldText: "three", NewText: "3"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.TextUpdatesAfter(ctx, f.person, f.noteID, 1)
		if err != nil || len(got.Updates) != 1 {
			t.Fatalf("pull: %+v %v", got, err)
		}
		if n := len(got.Updates[0].Changes.Changes()); n != 2 {
			t.Fatalf("the agent's update is %v: %d replacements, want 2", got.Updates[0].Changes, n)
		}
		ada.pull(t)
		ada.sync(t)
		final, _ := f.svc.ReadNoteTab(ctx, f.person, service.TabArgs{NoteID: f.noteID, TabID: note.TypeMarkdown})
		if want := "ALPHA one\nbeta! two\ngamma 3\n"; *final.Text != want || ada.doc != want {
			t.Fatalf("the text is %q, Ada has %q; want %q", *final.Text, ada.doc, want)
		}
	})
}
