package sim

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
)

// Experiment 1 (seed 000): how an agent's handle on a deck survives a person
// working the tab strip. A Note has K slides tabs; the agent lists the tabs,
// picks a deck and keeps a handle to it — its position, its type, its label
// or its exact ID; a person then makes 0–2 changes (move 40%, rename to one
// of five labels 35%, add a slides tab 25%); the agent lists again and
// resolves its handle.
//
// Foundry's write path takes exact IDs only, so position, type and label
// handles are resolved on the client's side, like osFoundry's desktop
// shortcut resolveTabInstanceId(). The full 10,000 trials per K run on an
// in-memory model of the strip (modelled); a sample of the same trials runs
// against Foundry over MCP, with the person's changes made through the
// service: every handle's write is really sent, and its outcome is measured
// by reading the committed Note back from the server and finding the deck that holds
// the handle's slide, so a server that stored anything other than what the
// client meant fails the invariants.

func init() {
	registerNumbered(1, Experiment{Name: "tab-handles", Seed: "000",
		Title: "Tab handles: position, type, label or exact ID while a person edits the strip", Run: runTabHandles})
}

var handleNames = []string{"position", "type", "label", "ID"}

// deckLabels are the five labels a person renames decks to; the first K
// are the decks' labels at the start of a trial.
var deckLabels = []string{"Research", "Pitch", "Draft", "Final", "Appendix"}

// seedHandles are seed 000's published figures: correct, wrong deck, not
// found (percent), per K and handle.
var seedHandles = map[int][4][3]string{
	2: {{"83.7%", "16.3%", "0.0%"}, {"50.7%", "49.3%", "0.0%"}, {"85.6%", "2.1%", "12.3%"}, {"100%", "0", "0"}},
	5: {{"82.7%", "17.3%", "0.0%"}, {"19.7%", "80.3%", "0.0%"}, {"92.1%", "3.0%", "5.0%"}, {"100%", "0", "0"}},
}

type stripTab struct{ id, typ, label string }

// Outcomes of resolving a handle.
const (
	outCorrect = iota
	outWrong
	outNotFound
	outMismatch // measured only: the server's copy shows neither (an acknowledged write missing or doubled)
)

// personAct is one change to the strip: move the tab at index from to
// index to, rename the slides tab with ordinal deck (among slides tabs) to
// label, or add a slides tab labelled label.
type personAct struct {
	kind     string // "move", "rename", "add"
	from, to int
	deck     int
	label    string
}

// handlePlan is one trial: which deck (ordinal among the K decks) and what
// the person does, drawn from the trial's own generator so the model and
// the MCP run replay the same trial.
type handlePlan struct {
	target int
	acts   []personAct
}

func trialRNG(seed int64, k, trial int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(k)<<32|uint64(trial)))
}

// planTrial draws a trial. Acts are drawn against the strip as it evolves,
// so the plan needs the strip's shape (apply acts to the model as you go).
func planTrial(rng *rand.Rand, k int, strip []stripTab, apply func(personAct)) handlePlan {
	p := handlePlan{target: rng.IntN(k)}
	n := rng.IntN(3) // zero to two changes
	for range n {
		var a personAct
		switch r := rng.Float64(); {
		case r < 0.40:
			a = personAct{kind: "move", from: rng.IntN(len(strip)), to: rng.IntN(len(strip))}
		case r < 0.75:
			a = personAct{kind: "rename", deck: rng.IntN(countType(strip, note.TypeSlides)), label: deckLabels[rng.IntN(len(deckLabels))]}
		default:
			a = personAct{kind: "add", label: deckLabels[rng.IntN(len(deckLabels))]}
		}
		p.acts = append(p.acts, a)
		strip = applyAct(strip, a, "")
		if apply != nil {
			apply(a)
		}
	}
	return p
}

func countType(strip []stripTab, typ string) int {
	n := 0
	for _, t := range strip {
		if t.typ == typ {
			n++
		}
	}
	return n
}

// nthOfType is the index in the strip of the n-th tab of a type.
func nthOfType(strip []stripTab, typ string, n int) int {
	for i, t := range strip {
		if t.typ == typ {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// applyAct changes a copy of the strip the way note.MoveTab, RenameTab and
// CreateTab change a Note (newID names an added tab).
func applyAct(strip []stripTab, a personAct, newID string) []stripTab {
	s := append([]stripTab(nil), strip...)
	switch a.kind {
	case "move":
		to := min(max(a.to, 0), len(s)-1)
		t := s[a.from]
		s = append(s[:a.from], s[a.from+1:]...)
		s = append(s[:to], append([]stripTab{t}, s[to:]...)...)
	case "rename":
		s[nthOfType(s, note.TypeSlides, a.deck)].label = a.label
	case "add":
		if newID == "" {
			newID = fmt.Sprintf("slides-new-%d", len(s))
		}
		s = append(s, stripTab{id: newID, typ: note.TypeSlides, label: a.label})
	}
	return s
}

// handles are the four ways to hold on to the deck at strip index i.
type handles struct {
	position   int
	typ, label string
	id         string
}

func takeHandles(strip []stripTab, i int) handles {
	return handles{position: i, typ: strip[i].typ, label: strip[i].label, id: strip[i].id}
}

// resolve finds a handle's tab in the strip the way the desktop shortcut
// does: the first match. It returns the index or -1.
func (h handles) resolve(strip []stripTab, kind int) int {
	switch kind {
	case 0:
		if h.position < len(strip) {
			return h.position
		}
	case 1:
		return slices.IndexFunc(strip, func(t stripTab) bool { return t.typ == h.typ })
	case 2:
		return slices.IndexFunc(strip, func(t stripTab) bool { return t.label == h.label })
	case 3:
		return slices.IndexFunc(strip, func(t stripTab) bool { return t.id == h.id })
	}
	return -1
}

func outcome(strip []stripTab, i int, targetID string) int {
	switch {
	case i < 0:
		return outNotFound
	case strip[i].id == targetID:
		return outCorrect
	}
	return outWrong
}

func initialStrip(k int) []stripTab {
	s := []stripTab{{"markdown", note.TypeMarkdown, "Note"}, {"files", note.TypeFiles, "Files"}, {"sources", note.TypeSources, "Sources"}}
	for i := range k {
		s = append(s, stripTab{fmt.Sprintf("slides-%d", i+1), note.TypeSlides, deckLabels[i]})
	}
	return s
}

// modelTrial runs trial i on the in-memory strip: the outcome per handle.
func modelTrial(seed int64, k, trial int) [4]int {
	rng := trialRNG(seed, k, trial)
	strip := initialStrip(k)
	cur := strip
	plan := planTrial(rng, k, strip, func(a personAct) { cur = applyAct(cur, a, "") })
	target := nthOfType(strip, note.TypeSlides, plan.target)
	h := takeHandles(strip, target)
	var out [4]int
	for kind := range 4 {
		out[kind] = outcome(cur, h.resolve(cur, kind), h.id)
	}
	return out
}

// mcpHandleTrial is what one trial against Foundry found.
type mcpHandleTrial struct {
	outcome      [4]int
	landedWrong  [4]bool // a write landed in another tab than the target and was accepted
	refusedType  [4]bool // resolved to a tab that is not a deck: refused with wrong_tab_type
	misplaced    [4]bool // an acknowledged write is not (only) in the tab it was sent to
	changes      int
	staleRefused bool // the write made with the pre-change version was refused
}

func runTabHandles(ctx context.Context, env *Env) (*Report, error) {
	seed := seedOr(env, 7)
	trials, sample, workers := 10_000, 500, 2
	if env.Quick {
		trials, sample = 1_000, 25
	}
	ks := []int{2, 5}

	// The model: every trial, every K.
	model := map[int][][4]int{}
	for _, k := range ks {
		res := make([][4]int, trials)
		for i := range trials {
			res[i] = modelTrial(seed, k, i)
		}
		model[k] = res
	}

	// Foundry over MCP: the first `sample` trials of each K.
	maker, _ := env.People.(noteMaker)
	reader, _ := env.People.(noteReader)
	canMCP := env.People != nil && maker != nil && reader != nil
	live := map[int][]mcpHandleTrial{}
	if canMCP {
		for _, k := range ks {
			res := make([]mcpHandleTrial, sample)
			err := parallel(ctx, sample, workers, newMeter(env, fmt.Sprintf("tab-handles K=%d over MCP", k), sample), func(trials iter.Seq[int]) error {
				cs, err := dialAgent(ctx, env, nil)
				if err != nil {
					return err
				}
				defer cs.Close()
				for i := range trials {
					if res[i], err = liveHandleTrial(ctx, env, maker, reader, cs, seed, k, i); err != nil {
						return fmt.Errorf("trial %d with K=%d: %w", i, k, err)
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			live[k] = res
		}
	}

	rep := &Report{}
	rep.Table.Header = []string{"K decks", "handle", "modelled: correct", "modelled: wrong deck", "modelled: not found", "seed 000: correct / wrong / not found",
		fmt.Sprintf("measured over MCP (%d trials, Note read back): correct / wrong / not found", sample), "measured: wrong-deck writes the server accepted (version check passed)"}
	rep.CSV = [][]string{{"k", "handle", "model_trials", "model_correct", "model_wrong_deck", "model_not_found", "seed_correct", "seed_wrong_deck", "seed_not_found",
		"mcp_trials", "mcp_correct", "mcp_wrong_deck", "mcp_not_found", "mcp_mismatch", "mcp_wrong_deck_writes_accepted", "mcp_wrong_tab_refused_by_type", "mcp_acknowledged_writes_misplaced"}}
	var cats []string
	var modelCorrect, seedCorrect, liveCorrect, modelWrong []float64
	agree, compared := 0, 0
	idCorrect, idTrials := 0, 0
	staleRefused, withChanges := 0, 0
	misplaced := 0
	for _, k := range ks {
		for kind, hn := range handleNames {
			var c [3]int
			for _, o := range model[k] {
				c[o[kind]]++
			}
			var lc [4]int
			accepted, refusedType := 0, 0
			for i, t := range live[k] {
				lc[t.outcome[kind]]++
				if t.landedWrong[kind] {
					accepted++
				}
				if t.refusedType[kind] {
					refusedType++
				}
				if t.misplaced[kind] {
					misplaced++
				}
				compared++
				if t.outcome[kind] == model[k][i][kind] {
					agree++
				}
				if kind == 3 {
					idTrials++
					if t.outcome[3] == outCorrect {
						idCorrect++
					}
					if t.changes > 0 {
						withChanges++
						if t.staleRefused {
							staleRefused++
						}
					}
				}
			}
			s := seedHandles[k][kind]
			liveCell, passed := "not run (no people's side)", "–"
			if canMCP {
				liveCell = fmt.Sprintf("%s / %s / %s", pct(lc[0], sample), pct(lc[1], sample), pct(lc[2], sample))
				if lc[outMismatch] > 0 {
					liveCell += fmt.Sprintf(" (+%d acknowledged writes missing or doubled)", lc[outMismatch])
				}
				passed = fmt.Sprintf("%d of %d", accepted, lc[outWrong]-refusedType)
				if refusedType > 0 {
					passed += fmt.Sprintf(" (+%d on a non-deck tab, refused: wrong_tab_type)", refusedType)
				}
			}
			ours := [3]string{pct(c[0], trials), pct(c[1], trials), pct(c[2], trials)}
			if kind == 3 && c[0] == trials {
				ours = [3]string{"100%", "0", "0"}
			}
			rep.Table.Rows = append(rep.Table.Rows, []string{itoa(k), hn, ours[0], ours[1], ours[2], s[0] + " / " + s[1] + " / " + s[2], liveCell, passed})
			rep.CSV = append(rep.CSV, []string{itoa(k), hn, itoa(trials), itoa(c[0]), itoa(c[1]), itoa(c[2]), s[0], s[1], s[2],
				itoa(len(live[k])), itoa(lc[0]), itoa(lc[1]), itoa(lc[2]), itoa(lc[outMismatch]), itoa(accepted), itoa(refusedType), itoa(misplacedIn(live[k], kind))})
			cats = append(cats, fmt.Sprintf("K=%d\n%s", k, hn))
			modelCorrect = append(modelCorrect, 100*float64(c[0])/float64(trials))
			seedCorrect = append(seedCorrect, parsePct(s[0]))
			modelWrong = append(modelWrong, 100*float64(c[1])/float64(trials))
			if canMCP {
				liveCorrect = append(liveCorrect, 100*float64(lc[0])/float64(sample))
			}
		}
	}
	series := []barSeries{
		{Name: "correct (model)", Color: colorSim, Values: modelCorrect},
		{Name: "correct (seed 000)", Color: colorSeed, Values: seedCorrect},
	}
	if canMCP {
		series = append(series, barSeries{Name: "correct (measured over MCP)", Color: colorFoundry, Values: liveCorrect})
	}
	series = append(series, barSeries{Name: "wrong deck (model)", Color: colorBad, Values: modelWrong})
	rep.SVG = barChartSVG("Tab handles: share resolved to the right deck (seed 000 setup)", "% of trials", cats, series, 100, "%")
	rep.Notes = []string{
		fmt.Sprintf("Modelled (columns 3–5): an in-memory model of the tab strip, %s trials per K, seed %d. Foundry resolves no handle but the ID; position, type and label are resolved client-side, first match, like osFoundry's resolveTabInstanceId(). "+
			"In the model the ID handle is correct by construction (an ID never moves), so its 100%% is not evidence; the measured column is. "+
			"A trial: K decks labelled %s…; the agent picks one at random; the person makes 0–2 changes (move any tab to any position 40%%, rename a deck to one of %d labels 35%%, add a deck with one of those labels 25%%).",
			commas(trials), seed, strings.Join(deckLabels[:2], ", "), len(deckLabels)),
		fmt.Sprintf("Measured (last two columns): Foundry over MCP, the first %d of those trials per K (the same draws): a fresh Note per trial, the person's changes made through the service, list_note_tabs before and after, "+
			"one slide_add per handle (a slide titled after the handle) to the tab the handle resolved to, sent with the version from the second list; then the committed Note is read back from the server's store and the outcome is the deck that actually holds the handle's slide "+
			"(a write refused with wrong_tab_type because the handle led to a tab that is not a deck counts as wrong). Wrong-deck writes pass the version check: the version proves the agent saw the latest Note, not that it found the right tab.", sample),
	}
	if canMCP {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Measured: the agent's first write of each trial used the version from before the person's changes: Foundry refused %d of the %d such writes that followed a change (version_conflict), then the agent listed again. "+
			"The model and the server's read-back gave the same outcome on %s of %s sampled (trial, handle) pairs. In the model a position that now holds a fixed tab (Note, Files, Sources) counts as a wrong deck, as the seed counts no position failure as not found; over MCP a slide_add there is refused (wrong_tab_type).", staleRefused, withChanges, commas(agree), commas(compared)))
		rep.Invariants = append(rep.Invariants,
			Invariant{Name: "ID handles write to the right deck 100% of the time (measured: the Note read back from the server)", Held: idCorrect == idTrials && idTrials > 0,
				Got: fmt.Sprintf("the target deck, and no other, held the ID handle's slide in %s of %s trials", commas(idCorrect), commas(idTrials))},
			Invariant{Name: "every acknowledged handle write is in the tab it was sent to, once (measured)", Held: misplaced == 0,
				Got: fmt.Sprintf("%d acknowledged writes missing, doubled or elsewhere", misplaced)},
			Invariant{Name: "the tab-strip model predicts what the server did on every sampled trial", Held: agree == compared,
				Got: fmt.Sprintf("%s of %s (trial, handle) outcomes equal (model vs the Note read back)", commas(agree), commas(compared))},
		)
	} else {
		rep.Notes = append(rep.Notes, "The MCP part needs the people's side (an in-process server); only the model ran, and nothing here was measured.")
	}
	return rep, nil
}

func misplacedIn(trials []mcpHandleTrial, kind int) int {
	n := 0
	for _, t := range trials {
		if t.misplaced[kind] {
			n++
		}
	}
	return n
}

func parsePct(s string) float64 {
	var f float64
	fmt.Sscanf(strings.TrimSuffix(s, "%"), "%g", &f)
	return f
}

// liveHandleTrial runs trial i against Foundry.
func liveHandleTrial(ctx context.Context, env *Env, maker noteMaker, reader noteReader, cs *mcp.ClientSession, seed int64, k, i int) (mcpHandleTrial, error) {
	var res mcpHandleTrial
	now := time.Now()
	noteID, err := maker.NewNote(ctx, fmt.Sprintf("Handles K=%d trial %d", k, i), func(d *note.Doc) error {
		for j := range k {
			if _, err := note.CreateTab(d, note.TypeSlides, deckLabels[j], nil, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	tabs, v1, err := listTabs(ctx, cs, noteID)
	if err != nil {
		return res, err
	}
	strip := make([]stripTab, len(tabs))
	for j, t := range tabs {
		strip[j] = stripTab{t.ID, t.Type, t.Label}
	}
	start := append([]stripTab(nil), strip...)

	// The plan is drawn exactly as the model draws it; the person's acts are
	// made for real as they are drawn.
	rng := trialRNG(seed, k, i)
	cur := strip
	var actErr error
	plan := planTrial(rng, k, start, func(a personAct) {
		if actErr != nil {
			return
		}
		newID := ""
		switch a.kind {
		case "move":
			actErr = env.People.MoveTab(ctx, noteID, cur[a.from].id, a.to)
		case "rename":
			actErr = env.People.RenameTab(ctx, noteID, cur[nthOfType(cur, note.TypeSlides, a.deck)].id, a.label)
		case "add":
			newID, actErr = env.People.AddSlidesTab(ctx, noteID, a.label)
		}
		cur = applyAct(cur, a, newID)
	})
	if actErr != nil {
		return res, fmt.Errorf("person: %w", actErr)
	}
	res.changes = len(plan.acts)
	target := nthOfType(start, note.TypeSlides, plan.target)
	h := takeHandles(start, target)

	// A write with the version from before the changes.
	stale, err := mcpclient.Call(ctx, cs, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": h.id, "expected_version": v1,
		"idempotency_key": fmt.Sprintf("stale-%d-%d-%d", k, i, seed), "operation": "slide_add", "title": "stale write"})
	if err != nil {
		return res, err
	}
	res.staleRefused = stale.Conflict()
	if res.changes == 0 && stale.IsError {
		return res, fmt.Errorf("write with an unchanged version refused: %s", stale.Text)
	}

	tabs, v, err := listTabs(ctx, cs, noteID)
	if err != nil {
		return res, err
	}
	now2 := make([]stripTab, len(tabs))
	for j, t := range tabs {
		now2[j] = stripTab{t.ID, t.Type, t.Label}
	}
	if len(now2) != len(cur) {
		return res, fmt.Errorf("strip has %d tabs, the model %d", len(now2), len(cur))
	}
	for j := range now2 {
		if now2[j] != cur[j] {
			return res, fmt.Errorf("strip position %d is %v, the model says %v", j, now2[j], cur[j])
		}
	}
	// Each handle is resolved as the agent would resolve it, and its write
	// is sent to that tab. What happened is then read back from the server.
	sentTo := [4]string{}
	for kind, hn := range handleNames {
		idx := h.resolve(now2, kind)
		if idx < 0 {
			continue // the agent found no tab: nothing is sent
		}
		w, err := mcpclient.Call(ctx, cs, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": now2[idx].id, "expected_version": v,
			"idempotency_key": fmt.Sprintf("h-%s-%d-%d-%d", hn, k, i, seed), "operation": "slide_add", "title": handleSlideTitle(hn)})
		if err != nil {
			return res, err
		}
		switch {
		case !w.IsError:
			v = w.Int("version")
			sentTo[kind] = now2[idx].id
		case w.Code() == note.CodeWrongTabType:
			res.refusedType[kind] = true
		default:
			return res, fmt.Errorf("%s handle's write refused: %s", hn, w.Text)
		}
	}

	// Read the committed Note back from the server's store: which deck holds
	// each handle's slide is what the server did, whatever the client
	// believed it resolved.
	doc, _, err := reader.Snapshot(ctx, noteID)
	if err != nil {
		return res, err
	}
	landed := [4][]string{}
	for _, t := range doc.Tabs {
		for _, sl := range t.Slides {
			for kind, hn := range handleNames {
				if sl.Title == handleSlideTitle(hn) {
					landed[kind] = append(landed[kind], t.ID)
				}
			}
		}
	}
	for kind := range handleNames {
		res.outcome[kind] = measuredOutcome(landed[kind], sentTo[kind], res.refusedType[kind], h.id)
		if res.outcome[kind] == outWrong && len(landed[kind]) > 0 {
			res.landedWrong[kind] = true
		}
		if sentTo[kind] != "" && !slices.Equal(landed[kind], []string{sentTo[kind]}) {
			res.misplaced[kind] = true
		}
	}
	return res, nil
}

func handleSlideTitle(handle string) string { return "via " + handle + " handle" }

// measuredOutcome is a handle's outcome as the server's copy of the Note
// shows it: correct when the target deck, and only it, holds the handle's
// slide; wrong when another deck holds it, or when the server refused the
// write because the handle led to a tab that is not a deck; not found when
// no deck holds it and nothing was refused; outMismatch when an acknowledged
// write is missing or doubled (it never agrees with the model).
func measuredOutcome(landed []string, sentTo string, refusedType bool, targetID string) int {
	switch {
	case refusedType && len(landed) == 0:
		return outWrong
	case len(landed) == 0 && sentTo == "":
		return outNotFound
	case len(landed) == 1 && landed[0] == sentTo && sentTo == targetID:
		return outCorrect
	case len(landed) == 1 && landed[0] == sentTo:
		return outWrong
	}
	return outMismatch
}
