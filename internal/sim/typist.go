package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/changeset"
	"foundry/internal/mcpclient"
	"foundry/internal/note"
)

// Experiment 12: a typist and an agent. A person types in the markdown
// tab at a person's pace, in bursts, with live sync (each keystroke pushed
// as a small change set, rebased on a refused push as an editor peer
// does), while an agent edits the same Note over MCP, thinking 2–20 s
// between its read and its write. Run A: the agent fills a Sheet from the
// Sheet (edit_note_tab sheet_set_range) while a second person now and then
// changes the Sheet. Run B: the agent rewrites its own paragraph of the
// markdown tab (edit_note_text) while the typist types in another one.
// Each run twice: with the Note-level check (no depends_on, as published)
// and with depends_on (run A: the Sheet; run B: []). The clock is virtual:
// think times and keystroke gaps cost no wall time, every read and write
// is a real call.

func init() {
	registerNumbered(12, Experiment{Name: "typist-agent",
		Title: "A typist and an agent: the Note-level check vs depends_on", Run: runTypistAgent})
}

// livePeer is a person's editor with live sync: its load, push and pull.
type livePeer interface {
	LoadText(ctx context.Context, noteID string) (text string, rev, version int64, err error)
	PushText(ctx context.Context, noteID string, rev int64, clientID string, updates []changeset.ChangeSet) (accepted bool, newRev int64, err error)
	PullText(ctx context.Context, noteID string, after int64) (pulledText, error)
}

// pulledText is what a pull answers: the updates after a rev, or (resync)
// the whole text at Rev.
type pulledText struct {
	Rev     int64
	Updates []pulledUpdate
	Resync  bool
	Text    string
}

type pulledUpdate struct {
	Rev      int64
	ClientID string
	Changes  changeset.ChangeSet
}

const (
	typistMarker = "Typist: "
	agentMarker  = "Agent: "
	typistWords  = "the quarterly plan moves to june because the vendor is late and we need two more weeks of tests "
)

// typist types at the end of its line, in bursts, pushing each keystroke.
type typist struct {
	ctx      context.Context
	p        livePeer
	noteID   string
	clientID string
	rng      *rand.Rand
	stop     *bool

	confirmed string               // the text at rev
	rev       int64                // the server's text revision it is based on
	pending   *changeset.ChangeSet // typed, not yet accepted: a change of confirmed
	typed     strings.Builder
	burst     int

	keys, pushes, refused, rebased int
}

func (t *typist) local() (string, error) {
	if t.pending == nil {
		return t.confirmed, nil
	}
	return t.pending.Apply(t.confirmed)
}

func (t *typist) actor(start float64) *evActor {
	a := &evActor{next: start}
	a.step = func(now float64) error {
		if *t.stop {
			a.next = math.Inf(1)
			return nil
		}
		if t.burst == 0 {
			t.burst = 15 + t.rng.IntN(46)
		}
		local, err := t.local()
		if err != nil {
			return err
		}
		at := strings.Index(local, typistMarker)
		if at < 0 {
			return fmt.Errorf("typist: its line is gone from the text: %q", local)
		}
		end := at + strings.IndexByte(local[at:], '\n')
		ch := string(typistWords[t.typed.Len()%len(typistWords)])
		key, err := changeset.Of([]changeset.Change{{From: len16(local[:end]), To: len16(local[:end]), Insert: ch}}, len16(local))
		if err != nil {
			return err
		}
		if t.pending == nil {
			t.pending = &key
		} else {
			c, err := t.pending.Compose(key)
			if err != nil {
				return err
			}
			t.pending = &c
		}
		t.typed.WriteString(ch)
		t.keys++
		if err := t.sync(); err != nil {
			return err
		}
		t.burst--
		if t.burst > 0 {
			a.next = now + 150 + 100*t.rng.Float64() // ~5 characters a second
		} else {
			a.next = now + 1500 + 6500*t.rng.Float64() // a pause to think
		}
		return nil
	}
	return a
}

// sync pushes what is pending; a refused push is pulled, rebased and
// pushed again, as the web editor's collab peer does.
func (t *typist) sync() error {
	for n := 0; t.pending != nil; n++ {
		if n == 20 {
			return errors.New("typist: push refused 20 times in a row")
		}
		t.pushes++
		ok, rev, err := t.p.PushText(t.ctx, t.noteID, t.rev, t.clientID, []changeset.ChangeSet{*t.pending})
		if err != nil {
			return fmt.Errorf("typist push: %w", err)
		}
		if ok {
			local, err := t.local()
			if err != nil {
				return err
			}
			t.confirmed, t.rev, t.pending = local, rev, nil
			return nil
		}
		t.refused++
		pull, err := t.p.PullText(t.ctx, t.noteID, t.rev)
		if err != nil {
			return fmt.Errorf("typist pull: %w", err)
		}
		if pull.Resync {
			return fmt.Errorf("typist: the text log no longer reaches rev %d", t.rev)
		}
		for _, u := range pull.Updates {
			if u.ClientID == t.clientID {
				return fmt.Errorf("typist: its own update at rev %d came back on a refused push", u.Rev)
			}
			mapped, err := t.pending.Map(u.Changes, true)
			if err != nil {
				return fmt.Errorf("typist rebase: %w", err)
			}
			if t.confirmed, err = u.Changes.Apply(t.confirmed); err != nil {
				return fmt.Errorf("typist rebase: %w", err)
			}
			t.pending, t.rev = &mapped, u.Rev
			t.rebased++
		}
	}
	return nil
}

// agentWrite is one write the agent got in: the version it read (and sent)
// and the version its write made.
type agentWrite struct{ expected, version int64 }

// typistAgent is the agent: read → think → write, a bounded number of
// attempts per write (a refused one is re-read, re-thought and redone
// with a new key).
type typistAgent struct {
	ctx         context.Context
	cs          *mcp.ClientSession
	noteID      string
	sheetID     string // run A: the Sheet it reads and writes
	text        bool   // run B: its paragraph of the markdown tab
	depends     bool
	writes      int
	maxAttempts int
	think       func() float64
	stop        *bool
	tag         string

	reading                                     bool
	version                                     int64
	seen                                        string // run A: B1 as read; run B: its line as read
	tries                                       int    // attempts of the current write
	accepted                                    []agentWrite
	attempts, refused, refusedOwn, gaveUp, keys int
	last                                        string // run B: the text of its last accepted line
}

func (g *typistAgent) actor(start float64) *evActor {
	g.reading = true
	a := &evActor{next: start}
	a.step = func(now float64) error {
		if g.reading {
			if err := g.read(); err != nil {
				return fmt.Errorf("agent read: %w", err)
			}
			g.reading = false
			a.next = now + g.think()
			return nil
		}
		g.attempts++
		g.tries++
		r, err := g.write()
		if err != nil {
			return fmt.Errorf("agent write: %w", err)
		}
		switch {
		case r.Conflict():
			g.refused++
			if slices.Contains(strs(r.Data["changed_tab_ids"]), g.ownTab()) {
				g.refusedOwn++
			}
			if g.tries == g.maxAttempts {
				g.gaveUp++
				g.tries = 0
			}
		case r.IsError:
			return fmt.Errorf("agent write refused: %s", r.Text)
		default:
			g.accepted = append(g.accepted, agentWrite{g.version, r.Int("version")})
			if g.text {
				g.last = g.line(len(g.accepted))
			}
			g.tries = 0
		}
		g.reading = true
		a.next = now
		if len(g.accepted)+g.gaveUp == g.writes {
			*g.stop = true
			a.next = math.Inf(1)
		}
		return nil
	}
	return a
}

func (g *typistAgent) ownTab() string {
	if g.text {
		return note.TypeMarkdown
	}
	return g.sheetID
}

func (g *typistAgent) line(n int) string { return fmt.Sprintf("%srevision %d", agentMarker, n) }

func (g *typistAgent) read() error {
	if g.text {
		text, v, err := readMarkdown(g.ctx, g.cs, g.noteID)
		if err != nil {
			return err
		}
		g.seen, g.version = lineOf(text, agentMarker), v
		return nil
	}
	r, err := mustTool(g.ctx, g.cs, "read_sheet_range", map[string]any{"note_id": g.noteID, "tab_id": g.sheetID, "start_row": 0, "start_col": 1, "rows": 1, "cols": 1})
	if err != nil {
		return err
	}
	g.seen, g.version = "", r.Int("version")
	if rows := r.List("values"); len(rows) > 0 {
		if row := asList(rows[0]); len(row) > 0 {
			g.seen = fmt.Sprint(row[0])
		}
	}
	return nil
}

func (g *typistAgent) write() (mcpclient.Result, error) {
	g.keys++
	args := map[string]any{"note_id": g.noteID, "expected_version": g.version, "idempotency_key": fmt.Sprintf("%s-%05d", g.tag, g.keys)}
	if g.text {
		args["edits"] = []map[string]string{{"old_text": g.seen, "new_text": g.line(len(g.accepted) + 1)}}
		if g.depends {
			args["depends_on"] = []string{}
		}
		return mcpclient.Call(g.ctx, g.cs, "edit_note_text", args)
	}
	args["tab_id"], args["operation"] = g.sheetID, "sheet_set_range"
	args["start_row"], args["start_col"] = 1+len(g.accepted), 0
	args["values"] = [][]any{{"B1 read as " + g.seen}}
	if g.depends {
		args["depends_on"] = []string{g.sheetID}
	}
	return mcpclient.Call(g.ctx, g.cs, "edit_note_tab", args)
}

// sheetPerson changes B1 of the Sheet now and then (run A), on the
// version it loads.
type sheetPerson struct {
	ctx     context.Context
	p       People
	r       noteReader
	noteID  string
	sheetID string
	rng     *rand.Rand
	stop    *bool
	edits   int
}

func (s *sheetPerson) actor(start float64) *evActor {
	a := &evActor{next: start}
	a.step = func(now float64) error {
		if *s.stop {
			a.next = math.Inf(1)
			return nil
		}
		_, v, err := s.r.Snapshot(s.ctx, s.noteID)
		if err != nil {
			return err
		}
		s.edits++
		if _, err := s.p.EditSheetCell(s.ctx, s.noteID, s.sheetID, v, 0, 1, float64(s.edits)); err != nil {
			return fmt.Errorf("sheet person: %w", err)
		}
		a.next = now + 20000 + 40000*s.rng.Float64()
		return nil
	}
	return a
}

// lineOf is the line of text that starts with marker ("" if none).
func lineOf(text, marker string) string {
	at := strings.Index(text, marker)
	if at < 0 {
		return ""
	}
	line := text[at:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return line
}

func len16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// typistRun is one run's outcome.
type typistRun struct {
	run, check                         string
	writes, accepted, attempts, gaveUp int
	refused, refusedOwn                int
	keys, pushes, pushRefused          int
	sheetEdits                         int
	lostChars                          int  // typed characters not in the final text
	replacement                        bool // run B: the agent's last accepted line is in the final text
	staleAccepted                      int  // run A: accepted writes after the Sheet changed since their expected_version
	virtualS                           float64
}

func (r typistRun) perWrite() float64 {
	if r.accepted == 0 {
		return math.Inf(1)
	}
	return float64(r.attempts) / float64(r.accepted)
}

func typistOnce(ctx context.Context, env *Env, cs *mcp.ClientSession, seed int64, run string, depends bool, writes int) (typistRun, error) {
	out := typistRun{run: run, check: "Note-level", writes: writes}
	if depends {
		out.check = "depends_on"
	}
	peer, _ := env.People.(livePeer)
	maker, _ := env.People.(noteMaker)
	reader, _ := env.People.(noteReader)
	hist, _ := env.People.(historian)
	sheetRun := run == "A"
	noteID, err := maker.NewNote(ctx, fmt.Sprintf("Typist and agent, run %s, %s, seed %d", run, out.check, seed), func(d *note.Doc) error {
		d.Markdown = "# Plan\n\n" + typistMarker + "\n\n" + agentMarker + "revision 0\n"
		if !sheetRun {
			return nil
		}
		t, err := note.CreateTab(d, note.TypeSheet, "Numbers", nil, time.Now())
		if err != nil {
			return err
		}
		_, err = note.SheetSetRange(d, t.ID, "", 0, 0, [][]any{{"B1", 0.0}})
		return err
	})
	if err != nil {
		return out, err
	}
	sheetID := ""
	if sheetRun {
		ts, _, err := listTabs(ctx, cs, noteID)
		if err != nil {
			return out, err
		}
		for _, t := range ts {
			if t.Type == note.TypeSheet {
				sheetID = t.ID
			}
		}
	}
	text, rev, _, err := peer.LoadText(ctx, noteID)
	if err != nil {
		return out, err
	}
	stream := uint64(0x1200_0000)
	if sheetRun {
		stream += 0x10_0000
	}
	rng := func(n uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), stream+n)) }
	stop := false
	ty := &typist{ctx: ctx, p: peer, noteID: noteID, clientID: "typist-" + run, rng: rng(1), stop: &stop, confirmed: text, rev: rev}
	ag := &typistAgent{ctx: ctx, cs: cs, noteID: noteID, sheetID: sheetID, text: !sheetRun, depends: depends, writes: writes, maxAttempts: 5,
		think: uniformMS(rng(2), 2000, 20000), stop: &stop, tag: fmt.Sprintf("ta-%s-%t-%d", run, depends, seed)}
	actors := []*evActor{ty.actor(500), ag.actor(0)}
	var sp *sheetPerson
	if sheetRun {
		sp = &sheetPerson{ctx: ctx, p: env.People, r: reader, noteID: noteID, sheetID: sheetID, rng: rng(3), stop: &stop}
		actors = append(actors, sp.actor(3000))
	}
	var clock float64
	for _, a := range actors {
		step := a.step
		a.step = func(now float64) error { clock = now; return step(now) }
	}
	if err := runVirtual(actors); err != nil {
		return out, err
	}
	out.virtualS = clock / 1000
	out.accepted, out.attempts, out.gaveUp = len(ag.accepted), ag.attempts, ag.gaveUp
	out.refused, out.refusedOwn = ag.refused, ag.refusedOwn
	out.keys, out.pushes, out.pushRefused = ty.keys, ty.pushes, ty.refused
	if sp != nil {
		out.sheetEdits = sp.edits
	}

	// What the server holds: the typist's line has every typed character,
	// and the agent's last replacement is there.
	final, _, _, err := peer.LoadText(ctx, noteID)
	if err != nil {
		return out, err
	}
	got := strings.TrimPrefix(lineOf(final, typistMarker), typistMarker)
	want := ty.typed.String()
	out.lostChars = len(want) - commonPrefix(got, want)
	if !sheetRun {
		out.replacement = ag.last == "" || lineOf(final, agentMarker) == ag.last
	}

	// The cross-tab guarantee, checked from the Note's history alone: no
	// write the agent got in came after a change of the Sheet since the
	// version it read.
	if sheetRun {
		vs, err := hist.History(ctx, noteID)
		if err != nil {
			return out, err
		}
		changed := map[int64][]string{}
		for _, v := range vs {
			changed[v.Version] = v.Changed
		}
		for _, w := range ag.accepted {
			for v := w.expected + 1; v < w.version; v++ {
				if slices.Contains(changed[v], sheetID) {
					out.staleAccepted++
					break
				}
			}
		}
	}
	return out, nil
}

// perWriteCell is attempts per write that got in, for the table.
func perWriteCell(r typistRun) string {
	if r.accepted == 0 {
		return fmt.Sprintf("∞ (%d attempts, none in)", r.attempts)
	}
	return ftoa(r.perWrite(), 2)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func runTypistAgent(ctx context.Context, env *Env) (*Report, error) {
	_, okPeer := env.People.(livePeer)
	_, okMaker := env.People.(noteMaker)
	_, okHist := env.People.(historian)
	_, okReader := env.People.(noteReader)
	if env.People == nil || !okPeer || !okMaker || !okHist || !okReader {
		return nil, errors.New("this experiment needs the people's side (live sync, history): run it in-process, without --url")
	}
	writes := 40
	if env.Quick {
		writes = 10
	}
	seed := seedOr(env, 1)
	cs, err := dialAgent(ctx, env, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var runs []typistRun
	for _, run := range []string{"A", "B"} {
		for _, depends := range []bool{false, true} {
			r, err := typistOnce(ctx, env, cs, seed, run, depends, writes)
			if err != nil {
				return nil, fmt.Errorf("run %s, depends_on %t: %w", run, depends, err)
			}
			progress(env, "run %s %s: %d of %d writes in, %d attempts, %d keystrokes", run, r.check, r.accepted, writes, r.attempts, r.keys)
			runs = append(runs, r)
		}
	}
	return typistReport(runs, seed, writes), nil
}

func typistReport(runs []typistRun, seed int64, writes int) *Report {
	rep := &Report{}
	what := map[string]string{"A": "A: agent fills a Sheet (edit_note_tab), typist in markdown", "B": "B: agent rewrites its paragraph (edit_note_text), typist in another"}
	rep.Table.Header = []string{"run", "check", "agent writes in", "refused (of them: own tab)", "attempts per write in", "gave up (5 attempts)", "typist keystrokes / pushes refused", "typed characters lost"}
	rep.CSV = [][]string{{"run", "check", "seed", "writes", "accepted", "attempts", "refused", "refused_own_tab", "gave_up", "keystrokes", "pushes", "pushes_refused", "sheet_edits", "lost_chars", "stale_accepted", "virtual_s"}}
	for _, r := range runs {
		rep.Table.Rows = append(rep.Table.Rows, []string{what[r.run], r.check, fmt.Sprintf("%d of %d", r.accepted, r.writes), fmt.Sprintf("%d (%d)", r.refused, r.refusedOwn),
			perWriteCell(r), itoa(r.gaveUp), fmt.Sprintf("%s / %d", commas(r.keys), r.pushRefused), itoa(r.lostChars)})
		rep.CSV = append(rep.CSV, []string{r.run, r.check, fmt.Sprint(seed), itoa(r.writes), itoa(r.accepted), itoa(r.attempts), itoa(r.refused), itoa(r.refusedOwn), itoa(r.gaveUp),
			itoa(r.keys), itoa(r.pushes), itoa(r.pushRefused), itoa(r.sheetEdits), itoa(r.lostChars), itoa(r.staleAccepted), ftoa(r.virtualS, 1)})
	}
	rep.Notes = []string{
		fmt.Sprintf("Seed %d, %d agent writes per run, virtual clock. The typist types ~5 characters a second (150–250 ms apart) in bursts of 15–60, pausing 1.5–8 s, and pushes every keystroke as a change set "+
			"(service PushText; a refused push is pulled with TextUpdatesAfter, rebased with changeset.Map and pushed again). The agent reads over MCP, thinks 2–20 s, writes; a refused write is read, thought and redone with a new key, "+
			"at most 5 attempts. In run A a second person sets the Sheet's B1 every 20–60 s. \"Own tab\": refusals whose changed_tab_ids name the tab the agent writes (run A) or the markdown tab (run B).", seed, writes),
		"Measured: every figure is counted from the server's answers or read back from it; the clock is modelled. The cross-tab check reads the Note's history, not the server's answers: for each write the agent got in, no version between the one it read and the one it made changed the Sheet.",
	}
	by := func(run, check string) typistRun {
		for _, r := range runs {
			if r.run == run && r.check == check {
				return r
			}
		}
		return typistRun{}
	}
	for _, run := range []string{"A", "B"} {
		d := by(run, "depends_on")
		n := by(run, "Note-level")
		rep.Invariants = append(rep.Invariants, Invariant{Name: fmt.Sprintf("run %s, depends_on: the agent gets every write in, at most 2 attempts per write, each refusal a change of what it read or replaces", run),
			Held: d.accepted == d.writes && d.gaveUp == 0 && d.perWrite() <= 2 && d.refused == d.refusedOwn,
			Got: fmt.Sprintf("%d of %d in, %s attempts per write, %d of %d refusals named its tab (Note-level: %d in, %d of %d attempts refused)",
				d.accepted, d.writes, ftoa(d.perWrite(), 2), d.refusedOwn, d.refused, n.accepted, n.refused, n.attempts)})
	}
	lost, keys := 0, 0
	for _, r := range runs {
		lost += r.lostChars
		keys += r.keys
	}
	rep.Invariants = append(rep.Invariants, Invariant{Name: "no typed character lost (the typist's line read back, every run)", Held: lost == 0 && keys > 0,
		Got: fmt.Sprintf("%d of %s lost", lost, commas(keys))})
	b := by("B", "depends_on")
	rep.Invariants = append(rep.Invariants, Invariant{Name: "run B: the agent's last replacement is in the text, where it was made", Held: b.replacement && by("B", "Note-level").replacement && b.accepted > 0,
		Got: fmt.Sprintf("depends_on %t, Note-level %t", b.replacement, by("B", "Note-level").replacement)})
	a, an := by("A", "depends_on"), by("A", "Note-level")
	rep.Invariants = append(rep.Invariants, Invariant{Name: "run A: no write with depends_on=[Sheet] got in after the Sheet changed since its expected_version (from history)",
		Held: a.staleAccepted == 0 && an.staleAccepted == 0 && a.sheetEdits > 0 && a.refusedOwn > 0,
		Got:  fmt.Sprintf("%d of %d writes (Note-level: %d of %d); the Sheet changed %d times, refusing %d writes", a.staleAccepted, a.accepted, an.staleAccepted, an.accepted, a.sheetEdits, a.refusedOwn)})
	return rep
}
