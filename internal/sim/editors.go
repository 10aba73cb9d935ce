package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
	"foundry/internal/problem"
)

// A small discrete-event engine for editors who read, think and write. The
// seeds ran real threads with scaled think times (agent 20–80 ms, person
// 5–40 ms); here the think times are virtual, so a run is deterministic from
// its seed and takes no wall time, while every read and write is a real call
// — over MCP for the agent, through the service for the person — made in
// the order the virtual clock says. A refused write is redone at once (no
// think time), as in the seeds' loops.

// evActor is one editor: its next step's virtual time (ms) and the step.
type evActor struct {
	next float64
	step func(now float64) error
}

// runVirtual steps the actor with the earliest next time (ties: the first
// listed) until every actor's next is +Inf.
func runVirtual(actors []*evActor) error {
	for {
		best := -1
		for i, a := range actors {
			if !math.IsInf(a.next, 1) && (best < 0 || a.next < actors[best].next) {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		if err := actors[best].step(actors[best].next); err != nil {
			return err
		}
	}
}

// uniformMS draws think times in [lo, hi) ms.
func uniformMS(rng *rand.Rand, lo, hi float64) func() float64 {
	return func() float64 { return lo + rng.Float64()*(hi-lo) }
}

// Re-read policies after a version_conflict.
const (
	policyNone    = "none (no check)"
	policyRefresh = "refresh version only"
	policyReapply = "re-read and reapply"
)

// textBackend is where an editor reads and writes the markdown tab.
type textBackend interface {
	read(ctx context.Context) (text string, version int64, err error)
	write(ctx context.Context, expected int64, text string) (conflict bool, version int64, changed []string, err error)
}

// textEditor appends one unique line per edit: read → think → write →
// think, 'edits' times. After a conflict it follows its policy.
type textEditor struct {
	name, prefix string
	edits        int
	think        func() float64
	policy       string
	be           textBackend
	ctx          context.Context

	done, attempts, conflicts, falseConflicts, second, third int
	reading                                                  bool
	text                                                     string
	version                                                  int64
	writerTab                                                string // the tab this editor writes (for false-conflict counting)
}

func (e *textEditor) actor(start float64) *evActor {
	e.reading = true
	a := &evActor{next: start}
	a.step = func(now float64) error {
		if e.reading {
			t, v, err := e.be.read(e.ctx)
			if err != nil {
				return fmt.Errorf("%s read: %w", e.name, err)
			}
			e.text, e.version, e.reading = t, v, false
			a.next = now + e.think()
			return nil
		}
		line := fmt.Sprintf("%s%d", e.prefix, e.done+1)
		payload := e.text + line + "\n"
		for n := 1; ; n++ {
			if n > 10 {
				return fmt.Errorf("%s: edit %d still conflicting after 10 attempts", e.name, e.done+1)
			}
			e.attempts++
			switch n {
			case 2:
				e.second++
			case 3:
				e.third++
			}
			conflict, v, changed, err := e.be.write(e.ctx, e.version, payload)
			if err != nil {
				return fmt.Errorf("%s write: %w", e.name, err)
			}
			if !conflict {
				e.version = v
				break
			}
			e.conflicts++
			if e.writerTab != "" && !slices.Contains(changed, e.writerTab) {
				e.falseConflicts++
			}
			t, v, err := e.be.read(e.ctx)
			if err != nil {
				return fmt.Errorf("%s re-read: %w", e.name, err)
			}
			e.version = v
			if e.policy == policyReapply {
				e.text = t
				payload = t + line + "\n"
			} // refresh version only: the old payload, computed from old text, goes again
		}
		e.done++
		e.reading = true
		if e.done == e.edits {
			a.next = math.Inf(1)
		} else {
			a.next = now + e.think()
		}
		return nil
	}
	return a
}

// countLines counts which of an editor's lines are in the final text.
func countLines(text, prefix string, edits int) int {
	have := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		have[l] = true
	}
	n := 0
	for i := 1; i <= edits; i++ {
		if have[fmt.Sprintf("%s%d", prefix, i)] {
			n++
		}
	}
	return n
}

// memNote is the in-memory model of a Note: markdown, one sheet cell, and
// versions either per Note, per tab, or unchecked.
type memNote struct {
	scope   string // "note", "tab" or "none"
	version int64  // Note-level counter
	tabVer  map[string]int64
	text    string
	cell    any
}

func newMemNote(scope string) *memNote {
	return &memNote{scope: scope, version: 1, tabVer: map[string]int64{"markdown": 1, "sheet": 1}}
}

// ver is the version an editor of tab reads.
func (m *memNote) ver(tab string) int64 {
	if m.scope == "tab" {
		return m.tabVer[tab]
	}
	return m.version
}

// commit applies a write to tab if expected is current (or unchecked).
func (m *memNote) commit(tab string, expected int64, apply func()) (conflict bool, version int64) {
	if m.scope != "none" && expected != m.ver(tab) {
		return true, m.ver(tab)
	}
	apply()
	m.version++
	m.tabVer[tab]++
	return false, m.ver(tab)
}

// memText is a textBackend on a memNote's markdown tab.
type memText struct{ m *memNote }

func (b memText) read(context.Context) (string, int64, error) {
	return b.m.text, b.m.ver("markdown"), nil
}
func (b memText) write(_ context.Context, expected int64, text string) (bool, int64, []string, error) {
	c, v := b.m.commit("markdown", expected, func() { b.m.text = text })
	return c, v, nil, nil
}

// mcpText is an agent on Foundry's markdown tab over MCP; a fresh key for
// every attempt (a re-done write is a new intent).
type mcpText struct {
	cs     *mcp.ClientSession
	noteID string
	tag    string
	n      *int
}

func (b mcpText) read(ctx context.Context) (string, int64, error) {
	return readMarkdown(ctx, b.cs, b.noteID)
}

func (b mcpText) write(ctx context.Context, expected int64, text string) (bool, int64, []string, error) {
	*b.n++
	r, err := mcpclient.Call(ctx, b.cs, "edit_note_tab", map[string]any{"note_id": b.noteID, "tab_id": note.TypeMarkdown, "expected_version": expected,
		"idempotency_key": fmt.Sprintf("%s-%06d", b.tag, *b.n), "operation": "replace_text", "text": text})
	if err != nil {
		return false, 0, nil, err
	}
	if r.Conflict() {
		return true, r.Int("current_version"), changedTabs(r), nil
	}
	if r.IsError {
		return false, 0, nil, fmt.Errorf("edit_note_tab refused: %s", r.Text)
	}
	return false, r.Int("version"), nil, nil
}

// changedTabs is changed_tab_ids of a refused edit_note_tab.
func changedTabs(r mcpclient.Result) []string { return strs(r.Data["changed_tab_ids"]) }

func asList(v any) []any { l, _ := v.([]any); return l }

// personText is a person's editor on Foundry's markdown tab: loads the
// Note, saves with If-Match.
type personText struct {
	p      People
	r      noteReader
	noteID string
}

func (b personText) read(ctx context.Context) (string, int64, error) {
	d, v, err := b.r.Snapshot(ctx, b.noteID)
	return d.Markdown, v, err
}

func (b personText) write(ctx context.Context, expected int64, text string) (bool, int64, []string, error) {
	v, err := b.p.EditMarkdown(ctx, b.noteID, expected, func(string) string { return text })
	if IsConflict(err) {
		return true, 0, conflictChanged(err), nil
	}
	return false, v, nil, err
}

// conflictChanged is changed_tab_ids of a person's refused edit.
func conflictChanged(err error) []string {
	var pr *problem.Problem
	if errors.As(err, &pr) {
		return strs(pr.Details["changed_tab_ids"])
	}
	return nil
}

// strs is the strings of a []string or of a decoded JSON array.
func strs(v any) []string {
	if ids, ok := v.([]string); ok {
		return ids
	}
	var out []string
	for _, x := range asList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
