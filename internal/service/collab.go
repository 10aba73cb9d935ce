package service

// Live co-editing of the markdown text: the server's side of the protocol
// of @codemirror/collab.
//
// The text has a revision (note.Doc.TextRev), the count of change sets
// applied to it. Every write that changes the text, from any door, goes
// through noteWrite, which logs each change set as one update (an object
// beside the Note, in the same guarded write): a person's editor pushes its
// own change sets (PushText), and any other write (an agent's replacement,
// a whole-tab save, a restore) is logged as the one change set its diff is.
// So every editor that follows the Note sees every change to the text as
// the change set it was, in the server's order, and an agent's edit made
// against an older version can be mapped through the changes since.
//
// A push names the revision it is based on and is accepted only at the
// current one; an editor that is behind pulls the updates after its
// revision (TextUpdatesAfter), rebases its unsent work over them, and
// pushes again.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"foundry/internal/changeset"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// KindTextChange is an update of a Note's markdown text: an object under
// the Note, one per change set.
const KindTextChange = "text_change"

// The text log's bounds.
const (
	// TextLogKeep is how many of the newest updates of a Note's text are
	// kept; an editor further behind reloads the text.
	TextLogKeep = 500
	// MaxPushUpdates bounds the change sets of one push.
	MaxPushUpdates = 100
	// MaxClientIDBytes bounds an editor's client ID.
	MaxClientIDBytes = 64
	textPage         = 200
	// liveTextMax bounds the updates a feed reads for one read of its
	// events, and liveTextBytes what one event carries: past them the
	// events go without, and editors pull.
	liveTextMax   = 1000
	liveTextBytes = 64 << 10
)

// TextUpdate is one change set applied to a Note's markdown text.
type TextUpdate struct {
	Rev      int64               `json:"rev" description:"The text's revision after this update"`
	Version  int64               `json:"version" description:"The Note version whose write made it"`
	ClientID string              `json:"client_id" description:"The editor that pushed it; empty for other writes"`
	Actor    Actor               `json:"actor"`
	Changes  changeset.ChangeSet `json:"changes" description:"The change set, as CodeMirror's ChangeSet.toJSON writes it (positions in UTF-16 code units)"`
}

// textLogged is a TextUpdate as stored: its actor unnamed.
type textLogged struct {
	Rev      int64           `json:"rev"`
	Version  int64           `json:"version"`
	ClientID string          `json:"client_id,omitempty"`
	Actor    string          `json:"actor"`
	Changes  json.RawMessage `json:"changes"`
}

// textChangeID is the object ID of the update that made revision rev:
// IDs of one Note sort by revision.
func textChangeID(noteID string, rev int64) string {
	return fmt.Sprintf("%s~%012d", noteID, rev)
}

// textPush is what a push asks noteWrite to log for the text instead of
// its diff.
type textPush struct {
	clientID string
	sets     []changeset.ChangeSet
	applied  bool // the edit applied them (set by each run of the edit)
}

// logText records what an edit did to the text: the change sets, each one
// revision, as objects of ch, and the oldest ones past TextLogKeep dropped.
// before is the text and rev the revision the edit started from; d is the
// Note after the edit, whose TextRev it sets.
func logText(ws, noteID string, version int64, actor string, before string, rev int64, d *note.Doc, push *textPush, ch *store.Change) error {
	d.Markdown = normalizeBreaks(d.Markdown)
	if push != nil && !push.applied {
		push = nil
	}
	if push != nil && push.clientID == "" && (d.Markdown == before || !fits(push.sets, before, d.Markdown)) {
		push = nil // a server-made change set that does not say the edit: log the diff
	}
	if d.Markdown == before && push == nil {
		d.TextRev = rev // a restore brings back an old text, never an old revision
		return nil
	}
	// A push is logged as sent even when its change sets end on the text
	// they started from (a letter typed, then deleted): each is one
	// revision of the editor's count.
	var sets []changeset.ChangeSet
	var client string
	if push != nil {
		sets, client = push.sets, push.clientID
	} else {
		set, err := changeset.Diff(before, d.Markdown)
		if err != nil {
			return err
		}
		sets = []changeset.ChangeSet{set}
	}
	for _, set := range sets {
		rev++
		raw, err := set.MarshalJSON()
		if err != nil {
			return err
		}
		ch.Objects = append(ch.Objects, store.Object{Workspace: ws, Kind: KindTextChange, ID: textChangeID(noteID, rev), Parent: noteID,
			Doc: mustJSON(textLogged{Rev: rev, Version: version, ClientID: client, Actor: actor, Changes: raw})})
		if old := rev - TextLogKeep; old > 0 {
			ch.DropObjects = append(ch.DropObjects, store.ObjectKey{Kind: KindTextChange, ID: textChangeID(noteID, old)})
		}
	}
	d.TextRev = rev
	return nil
}

// normalizeBreaks stores every line break of the text as "\n", as the
// editor keeps them, so a change set made in the editor fits the stored
// text.
func normalizeBreaks(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// PushTextArgs are a push of an editor's change sets, based on revision
// Rev of the text.
type PushTextArgs struct {
	NoteID   string
	Rev      int64
	ClientID string
	Updates  []json.RawMessage
}

// TextPushed answers a push: Accepted, the Note's new version and the
// text's new revision; not accepted (the text is past Rev), nothing was
// written and Rev is the current revision: pull, rebase, push again.
type TextPushed struct {
	NoteWritten
	Accepted bool  `json:"accepted" description:"False: the text moved on since rev; pull the updates after your revision, rebase, and push again"`
	Rev      int64 `json:"rev" description:"The text's revision now"`
}

// PushText applies an editor's change sets to the markdown text, in one
// guarded write, when they are based on its current revision.
func (s *Service) PushText(ctx context.Context, c Caller, a PushTextArgs) (TextPushed, error) {
	if err := checkClientID(a.ClientID); err != nil {
		return TextPushed{}, err
	}
	if a.Rev < 0 {
		return TextPushed{}, problem.New(problem.Invalid, "rev", "must be ≥ 0: the text_rev your text was read at, or the revision your editor synced to")
	}
	if len(a.Updates) == 0 || len(a.Updates) > MaxPushUpdates {
		return TextPushed{}, problem.New(problem.Invalid, "updates", "give 1–%d change sets (got %d)", MaxPushUpdates, len(a.Updates))
	}
	sets := make([]changeset.ChangeSet, len(a.Updates))
	for i, raw := range a.Updates {
		set, err := changeset.Parse(raw)
		if err != nil {
			return TextPushed{}, problem.New(problem.Invalid, fmt.Sprintf("updates[%d]", i), "is not a change set as ChangeSet.toJSON writes it: %v", err)
		}
		sets[i] = set
	}
	push := &textPush{clientID: a.ClientID, sets: sets}
	op := noteOp{kind: "text_edited", sizeField: "updates", meaning: struct {
		Op   string
		Rev  int64
		From string
	}{"push_text", a.Rev, a.ClientID}, text: push, anyVersion: true}
	return noteWrite(ctx, s, c, a.NoteID, Guard{}, op, func(_ *store.Resource, d *note.Doc, _ *store.Change) (TextPushed, []string, error) {
		push.applied = false
		if d.TextRev != a.Rev {
			return TextPushed{Rev: d.TextRev}, nil, nil
		}
		text := d.Markdown
		for i, set := range sets {
			next, err := set.Apply(text)
			if err != nil {
				return TextPushed{}, nil, problem.New(problem.Invalid, fmt.Sprintf("updates[%d]", i), "does not fit the text at revision %d (%v): pull and rebase", a.Rev+int64(i), err)
			}
			text = next
		}
		if err := note.ReplaceText(d, note.TypeMarkdown, text); err != nil {
			return TextPushed{}, nil, err
		}
		push.applied = true
		return TextPushed{Accepted: true, Rev: a.Rev + int64(len(sets))}, []string{note.TypeMarkdown}, nil
	})
}

func checkClientID(id string) error {
	if id == "" || len(id) > MaxClientIDBytes {
		return problem.New(problem.Invalid, "client_id", "give your editor's ID: 1–%d characters of A–Z, a–z, 0–9, - and _", MaxClientIDBytes)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return problem.New(problem.Invalid, "client_id", "has %q: use only A–Z, a–z, 0–9, - and _", r)
		}
	}
	return nil
}

// TextUpdates answers a pull: the updates after a revision, oldest first,
// or (Resync) the whole text when the log no longer reaches back so far.
type TextUpdates struct {
	NoteID  string       `json:"note_id"`
	Rev     int64        `json:"rev" description:"The text's revision after the last update given (or of text)"`
	Version int64        `json:"version"`
	Updates []TextUpdate `json:"updates" nullable:"false"`
	Resync  bool         `json:"resync" description:"True: the updates after your revision are no longer kept; text is the whole text at rev"`
	Text    string       `json:"text,omitempty"`
}

// TextUpdatesAfter is the pull of an editor at revision after.
func (s *Service) TextUpdatesAfter(ctx context.Context, c Caller, noteID string, after int64) (TextUpdates, error) {
	if after < 0 {
		return TextUpdates{}, problem.New(problem.Invalid, "after", "must be ≥ 0: the revision your editor synced to")
	}
	r, d, err := s.noteFor(ctx, c, noteID)
	if err != nil {
		return TextUpdates{}, err
	}
	out := TextUpdates{NoteID: noteID, Rev: d.TextRev, Version: r.Version, Updates: []TextUpdate{}}
	if after > d.TextRev {
		return TextUpdates{}, problem.New(problem.Invalid, "after", "is revision %d, but the text is at %d: read the markdown tab again", after, d.TextRev)
	}
	if after == d.TextRev {
		return out, nil
	}
	logged, err := s.textLog(ctx, c.Workspace, noteID, after, d.TextRev)
	if err != nil {
		return TextUpdates{}, err
	}
	if len(logged) == 0 || logged[0].Rev != after+1 || logged[len(logged)-1].Rev != d.TextRev {
		out.Resync, out.Text = true, d.Markdown
		return out, nil
	}
	out.Updates, err = s.namedUpdates(ctx, c.Workspace, logged)
	return out, err
}

// textChangesSince is every update of the text made by a write after
// Note version version, oldest first; complete is false when the log no
// longer reaches back that far (or the Note moved on while it was read).
func (s *Service) textChangesSince(ctx context.Context, ws, noteID string, version int64) (ups []TextUpdate, complete bool, err error) {
	logged, err := s.textLog(ctx, ws, noteID, 0, -1)
	if err != nil {
		return nil, false, err
	}
	i := len(logged)
	for i > 0 && logged[i-1].Version > version {
		i--
	}
	// Complete when an update older than the version is still kept, or
	// the first kept one is the text's first.
	complete = i > 0 || (len(logged) > 0 && logged[0].Rev == 1) || len(logged) == 0
	ups, err = s.namedUpdates(ctx, ws, logged[i:])
	return ups, complete, err
}

// textLog reads the kept updates of a Note's text after revision after,
// up to revision upTo (-1: all).
func (s *Service) textLog(ctx context.Context, ws, noteID string, after, upTo int64) ([]textLogged, error) {
	var out []textLogged
	from := ""
	if after > 0 {
		from = textChangeID(noteID, after)
	}
	for {
		objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: ws, Kind: KindTextChange, Parent: noteID, AfterID: from, Limit: textPage})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			var l textLogged
			if err := json.Unmarshal(o.Doc, &l); err != nil {
				return nil, fmt.Errorf("text change %s: %w", o.ID, err)
			}
			if upTo >= 0 && l.Rev > upTo {
				return out, nil
			}
			out = append(out, l)
		}
		if len(objs) < textPage {
			return out, nil
		}
		from = objs[len(objs)-1].ID
	}
}

// namedUpdates decodes logged updates and names their actors.
func (s *Service) namedUpdates(ctx context.Context, ws string, logged []textLogged) ([]TextUpdate, error) {
	actors := make([]string, 0, len(logged))
	for _, l := range logged {
		actors = append(actors, l.Actor)
	}
	names, err := s.Actors(ctx, ws, actors)
	if err != nil {
		return nil, err
	}
	out := make([]TextUpdate, 0, len(logged))
	for _, l := range logged {
		set, err := changeset.Parse(l.Changes)
		if err != nil {
			return nil, fmt.Errorf("text change %d: %w", l.Rev, err)
		}
		out = append(out, TextUpdate{Rev: l.Rev, Version: l.Version, ClientID: l.ClientID, Actor: names.Of(l.Actor), Changes: set})
	}
	return out, nil
}

// liveText gives the feed's events that changed the markdown text their
// updates, read once for every watcher. The feed remembers the newest
// revision it carried, so each read takes only the updates after it.
func (s *Service) liveText(ctx context.Context, f *noteFeed, evs []*LiveEvent) error {
	lo, hi := int64(-1), int64(0)
	for _, e := range evs {
		if slices.Contains(e.Changed, note.TypeMarkdown) {
			if lo < 0 {
				lo = e.Version
			}
			hi = e.Version
		}
	}
	if lo < 0 {
		return nil
	}
	from := f.textRev
	if from == 0 {
		// The first text event this feed sees: start a bounded way back
		// from the text's revision now.
		_, d, err := s.LoadNote(ctx, f.id)
		if err != nil {
			return err
		}
		from = max(0, d.TextRev-liveTextMax)
	}
	logged, err := s.textLog(ctx, f.ws, f.id, from, from+liveTextMax)
	if err != nil {
		return err
	}
	byVersion := map[int64][]textLogged{}
	for _, l := range logged {
		if l.Version > hi {
			break
		}
		f.textRev = l.Rev
		if l.Version >= lo {
			byVersion[l.Version] = append(byVersion[l.Version], l)
		}
	}
	for _, e := range evs {
		ls := byVersion[e.Version]
		size := 0
		for _, l := range ls {
			size += len(l.Changes)
		}
		if len(ls) == 0 || size > liveTextBytes {
			continue
		}
		ups := make([]TextUpdate, 0, len(ls))
		for _, l := range ls {
			set, err := changeset.Parse(l.Changes)
			if err != nil {
				return fmt.Errorf("text change %d: %w", l.Rev, err)
			}
			ups = append(ups, TextUpdate{Rev: l.Rev, Version: l.Version, ClientID: l.ClientID, Actor: e.Actor, Changes: set})
		}
		e.Text = ups
	}
	return nil
}

// fits says whether sets, applied in order to before, make after.
func fits(sets []changeset.ChangeSet, before, after string) bool {
	text := before
	for _, set := range sets {
		var err error
		if text, err = set.Apply(text); err != nil {
			return false
		}
	}
	return text == after
}
